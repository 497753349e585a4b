"""A newcomer's evening (issue 28), each point driven through the real screen under tmux or
the real command line: learning the game, hosting again, names, no tells, and every screen
telling the truth."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2pgotg.rules.primer import primer
from tests.test_ui_tmux import ROOT, Tmux, _command

#: SPEC 1.3's ranks, highest first as a challenge orders them (the Spy's and the Flag's
#: exceptions aside): the codes a newcomer must find, in this order, in the primer.
RANKS_HIGHEST_FIRST = ["5*", "4*", "3*", "2*", "1*", "COL", "LTC", "MAJ", "CPT", "1LT",
                       "2LT", "SGT", "PVT", "SPY", "FLG"]


def p2pgotg(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real command line, in a process of its own, with its own home."""
    return subprocess.run([sys.executable, "-m", "p2pgotg", *args], cwd=ROOT,
                          env={"P2PGOTG_HOME": str(home), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def tmux(tmp_path: Path):
    terminal = Tmux(tmp_path / "tmux.sock")
    yield terminal
    terminal.close()


# -- point 3: nobody was told how to play ---------------------------------------------------

def test_p2pgotg_rules_prints_how_to_play(tmp_path: Path) -> None:
    done = p2pgotg(tmp_path, "rules")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    codes = [c for c in re.findall(r"[0-9A-Z*]+", text) if c in RANKS_HIGHEST_FIRST]
    first_seen = list(dict.fromkeys(codes))
    assert first_seen == RANKS_HIGHEST_FIRST  # the ranks, in order
    for words in ("the Spy beats every officer", "only the Private beats the Spy",
                  "take the enemy Flag", "far back rank", "resigns", "c3 c4"):
        assert words in text.replace("\n", " ").replace("The Spy", "the Spy")
    assert all(len(line) <= 80 for line in text.splitlines())


def test_the_readme_holds_the_primer_verbatim() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert f"```text\n{primer()}```" in readme
    assert readme.index("## How to play") < readme.index("## No arbiter")
    assert "docs/benchmarks.md" in readme and "docs/bot.md" in readme
    assert "| pairing" not in readme and "p50" not in readme  # the tables live in docs/


def test_question_mark_on_the_setup_screen_shows_its_keys_and_how_to_play(
        tmp_path: Path, tmux: Tmux) -> None:
    tmux.start(_command(tmp_path / "home", "play --ascii --seed 3 --think 0.05"))
    tmux.wait_for("the setup screen", lambda s: "Setup - you play" in s, 20)
    tmux.keys("?")
    screen = tmux.wait_for("the help", lambda s: "Keys on this screen" in s)
    assert "ready: commit this setup" in screen and "1  b" not in screen
    assert "How to play Game of the Generals" in screen
    tmux.keys("End")
    screen = tmux.wait_for("the end of the rules", lambda s: "How to win" in s)
    assert "Ctrl-C quits" in screen
    tmux.keys("d")  # under the overlay a key never acts on the screen beneath
    tmux.keys("Escape")
    screen = tmux.wait_for("the help to close", lambda s: "Esc closes this" not in s)
    assert "21 pieces still to place" in screen  # `d` did not commit anything


# -- point 7: the overlay belongs to its screen -----------------------------------------------

def test_the_help_lists_each_screens_own_keys_and_closes_with_its_screen(
        tmp_path: Path, tmux: Tmux) -> None:
    tmux.start(_command(tmp_path / "home", "start --ascii --stun off --no-port-map"))
    tmux.wait_for("the start screen", lambda s: "What would you like to do?" in s, 20)
    tmux.keys("?")
    screen = tmux.wait_for("the help", lambda s: "Keys on this screen" in s)
    assert "host a game" in screen and "join a game" in screen
    assert "commit this setup" not in screen and "move> line" not in screen
    tmux.keys("Escape")
    tmux.wait_for("the help to close", lambda s: "What would you like to do?" in s)
    tmux.keys("2")
    tmux.wait_for("the host screen", lambda s: "hosting a game" in s.splitlines()[0], 20)
    tmux.keys("?")
    screen = tmux.wait_for("the host's help", lambda s: "Keys on this screen" in s)
    assert "stop hosting" in screen and "commit this setup" not in screen
    tmux.keys("C-c")  # back to the start screen, the overlay still up
    screen = tmux.wait_for("the start screen", lambda s: "What would you like to do?" in s)
    assert "Keys on this screen" not in screen
