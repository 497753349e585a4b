"""A newcomer's evening (issue 28), each point driven through the real screen under tmux or
the real command line: learning the game, hosting again, names, no tells, and every screen
telling the truth."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pgotg.rules.primer import primer
from tests import savedgames
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


# -- point 1: hosting again -------------------------------------------------------------------

def start_p2pgotg(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "p2pgotg", *args], cwd=ROOT,
                            env={"P2PGOTG_HOME": str(home), "PATH": "/usr/bin:/bin",
                                 "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def unfinished_hosted_game(host_home: Path, join_home: Path) -> Path:
    """A game hosted from `host_home` (by its bot seat) and left unfinished: both programs
    are killed mid-game, as a crash or a closed laptop would leave them."""
    host = start_p2pgotg(host_home, "host", "--bot", "--bind", "127.0.0.1", "--bot-delay",
                         "0.3")
    joiner = None
    try:
        assert host.stdout is not None
        code = ""
        for line in host.stdout:
            if line.startswith("invite: "):
                code = line.split()[1]
                break
        joiner = start_p2pgotg(join_home, "join", code, "--bot", "--bot-delay", "0.3")
        games = host_home / "data" / "games"
        deadline = time.monotonic() + 30
        while not any(p.stat().st_size > 3000 for p in games.glob("*.gtr")):
            assert time.monotonic() < deadline, "the hosted game never began"
            time.sleep(0.1)
    finally:
        for process in (host, joiner):
            if process is not None:
                process.kill()
                process.wait()
    (saved,) = games.glob("*.gtr")
    return saved


def test_host_offers_to_resume_or_host_a_new_game_with_the_rules_given(
        tmp_path: Path, tmux: Tmux) -> None:
    home = tmp_path / "host"
    saved = unfinished_hosted_game(home, tmp_path / "joiner")
    tmux.start(_command(home, "host --bind 127.0.0.1 --ascii --flag-rule immediate"))
    screen = tmux.wait_for("the offer", lambda s: "unfinished game that you hosted" in s, 20)
    assert "rules: challenges open, flag rule safe_or_survive" in screen.replace("\n", " ")
    assert "Host a new game, rules: challenges open, flag rule immediate" in \
        " ".join(screen.split())
    tmux.keys("n")
    screen = tmux.wait_for("the new game's lobby", lambda s: "gg1-" in s, 20)
    assert "Rules: challenges open, flag rule immediate" in screen
    assert "resuming" not in screen
    tmux.keys("q")
    tmux.wait_for("the exit", lambda s: "EXITED" in s)
    assert saved.exists()  # the unfinished game stays saved
    # the start screen's Host asks too
    tmux.start(_command(home, "start --ascii --stun off --no-port-map"), name="start")
    tmux.wait_for("the start screen", lambda s: "What would you like" in s, 20, on="start")
    tmux.keys("2", to="start")
    tmux.wait_for("the offer", lambda s: "unfinished game that you hosted" in s, 20,
                  on="start")


def test_headless_host_never_drops_rule_options_for_an_unfinished_game(tmp_path: Path) -> None:
    home = tmp_path / "host"
    unfinished_hosted_game(home, tmp_path / "joiner")
    done = p2pgotg(home, "host", "--bot", "--bind", "127.0.0.1", "--flag-rule", "immediate",
                   timeout=30)
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "has the rules: challenges open, flag rule safe_or_survive" in said
    assert "add --new to host one" in said
    done = p2pgotg(home, "host", "--bot", "--bind", "127.0.0.1", "--resume", "--arbiter",
                   "blind", timeout=30)
    assert done.returncode == 2 and "add --new" in done.stderr
    fresh = p2pgotg(tmp_path / "nobody", "host", "--bot", "--resume", timeout=30)
    assert fresh.returncode == 2 and "no unfinished hosted game" in fresh.stderr


# -- point 4: a game quit in its setup hid an older one; point 11: the status line ---------

def status_line(screen: str) -> str:
    """The status line: the last non-empty line above the input line."""
    lines = screen.splitlines()
    at = next(i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(" move>")) \
        if any(line.startswith(" move>") for line in lines) else len(lines) - 2
    return next((line for line in reversed(lines[:at]) if line.strip()), "")


def test_play_offers_every_unfinished_game_and_the_status_says_where_it_stands(
        tmp_path: Path, tmux: Tmux) -> None:
    home = tmp_path / "home"
    savedgames.play(home, 1, until=lambda person, bot: person.view.ply >= 11)
    play = "play --ascii --seed 5 --think 0.05 --level easy"
    tmux.start(_command(home, play))
    tmux.wait_for("the offer", lambda s: "unfinished game against the bot" in s, 20)
    tmux.keys("n")  # a new game, quit during its setup (Ctrl-C)
    tmux.wait_for("the setup screen", lambda s: "Setup - you play" in s, 20)
    tmux.keys("C-c")
    tmux.wait_for("the question", lambda s: "quit?" in s)
    tmux.keys("y")
    tmux.wait_for("the exit", lambda s: "EXITED" in s, 20)
    tmux.start(_command(home, play), name="again")
    screen = tmux.wait_for("the offer", lambda s: "2 unfinished games" in s, 20, on="again")
    chosen = next(line for line in screen.splitlines() if line.startswith(" > "))
    assert "11 moves played" in chosen
    assert "not begun" in screen  # (listed too, after the game with moves)
    tmux.keys("r", to="again")
    screen = tmux.wait_for("the resumed game", lambda s: "move>" in s and "Resumed" in s, 20,
                           on="again")
    assert status_line(screen).strip().startswith("resumed: ")


def test_the_status_line_says_the_game_is_over_when_a_challenge_ends_it(
        tmp_path: Path, tmux: Tmux) -> None:
    for seed in range(40):  # a game where the bot gets to challenge the person's Flag
        home = tmp_path / f"home{seed}"
        game = savedgames.play(home, seed, take_flag=True)
        if not game.person.peer.flow.is_over:
            break
    else:
        pytest.fail("no game of 40 left the bot a challenge on the person's Flag")
    tmux.start(_command(home, "play --ascii --seed 5 --think 0.05 --level easy"))
    tmux.wait_for("the offer", lambda s: "unfinished game against the bot" in s, 20)
    tmux.keys("r")
    screen = tmux.wait_for("the end", lambda s: "Game over" in s.splitlines()[0], 20)
    screen = tmux.wait_for("the audit", lambda s: "Audit clean" in s, 20)
    status = " ".join(screen.split())
    assert "waiting for the reply" not in status
    assert "game over: The bot wins: your flag was eliminated in a challenge" in status
