"""Two terminals of one account on one machine, as a new player first tries it: under tmux
at 80x24, the host's invite copied off its screen as it is shown and pasted into a shell
in the other terminal; the joiner declines once (the host says so in words), joins again,
quits mid-game (the host says so, and when the game will be claimed), and comes back to
finish. Both seats share the account's keys and games folder."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_ui_tmux import ROOT, Tmux, forward_move

BIN = str(Path(sys.executable).parent)


def _shell(tmux: Tmux, name: str, home: Path) -> None:
    """A plain shell in a new 80x24 window, with this tree's p2pgotg on its PATH (and a
    player's name for it, so that the first game does not ask for one)."""
    env = (f"env P2PGOTG_HOME={shlex.quote(str(home))} PYTHONPATH={shlex.quote(str(ROOT))} "
           f"P2PGOTG_NAME={name} "
           f"PATH={shlex.quote(BIN)}:{shlex.quote(os.environ.get('PATH', ''))} "
           "PS1='$ ' bash --norc --noprofile")
    tmux.start(env, name=name)


def _paste(tmux: Tmux, text: str, to: str) -> None:
    """Paste as a terminal does (no bracketed paste: a line break is a real Enter)."""
    tmux.run("set-buffer", "--", text)
    tmux.run("paste-buffer", "-t", to)


def _invite_lines(screen: str) -> list[str]:
    lines = screen.splitlines()
    first = next(i for i, line in enumerate(lines) if "p2pgotg join '" in line)
    block = [lines[first]]
    while not block[-1].rstrip().endswith("'"):
        block.append(lines[first + len(block)])
    return [line.rstrip() for line in block]


@pytest.mark.slow
def test_host_and_join_from_one_account_with_a_pasted_invite(tmp_path: Path) -> None:
    tmux = Tmux(tmp_path / "tmux.sock")
    home = tmp_path / "home"  # one account: one set of keys, one games folder
    try:
        _shell(tmux, "host", home)
        tmux.keys("p2pgotg host --bind 127.0.0.1 --ascii --abandon 10m; echo EXITED $?",
                  "Enter", to="host")
        screen = tmux.wait_for("the invite", lambda s: "p2pgotg join '" in s, 30, on="host")
        invite = _invite_lines(screen)
        assert all(len(line) <= 80 for line in screen.splitlines())
        assert "copy all of it" in screen

        # 1. the joiner declines the rules: the host says so, and waits on
        _shell(tmux, "join", home)
        _paste(tmux, "\n".join(invite), to="join")
        tmux.keys(" --ascii", "Enter", to="join")
        tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 30, on="join")
        tmux.keys("q", to="join")
        tmux.wait_for("the joiner's shell", lambda s: "$ " in s.splitlines()[-1] or
                      s.rstrip().endswith("$"), 15, on="join")
        screen = tmux.wait_for("the decline", lambda s: "declined your rules" in s, 15,
                               on="host")
        assert "the invite code still works" in " ".join(screen.split())
        assert "SSL" not in screen and "p2pgotg join '" in screen

        # 2. joining again (the same paste), accepting, playing; then quitting mid-game
        tmux.keys("clear", "Enter", to="join")
        _paste(tmux, "\n".join(invite), to="join")
        tmux.keys(" --ascii", "Enter", to="join")
        tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 30, on="join")
        tmux.keys("a", to="join")
        for name in ("host", "join"):
            tmux.wait_for("the setup", lambda s: "Setup - you play" in s, 20, on=name)
            tmux.keys("r", to=name)
            tmux.wait_for("a formation", lambda s: "All 21 placed" in s, on=name)
            tmux.keys("d", to=name)
        screens = {n: tmux.wait_for("the game", lambda s: "move>" in s, 20, on=n)
                   for n in ("host", "join")}
        white = next(n for n, s in screens.items() if "YOUR MOVE" in s.splitlines()[0])
        move = forward_move(screens[white])
        tmux.keys(move, literal=True, to=white)
        tmux.keys("Enter", to=white)
        text = move.replace(" ", "-")
        tmux.wait_for("the move on both", lambda s: text in s, on="join")
        hints = screens["host"].splitlines()[-1]
        assert hints.rstrip().endswith("? keys")  # the footer is whole at 80 columns
        tmux.keys("C-q", to="join")
        tmux.wait_for("the question", lambda s: "quit? The game is saved" in s, on="join")
        tmux.keys("y", to="join")
        screen = tmux.wait_for("the joiner gone", lambda s: "quit. The game is saved" in s,
                               20, on="host")
        if "YOUR MOVE" in screen.splitlines()[0]:  # (no claim comes while they owe nothing:
            tmux.keys(forward_move(screen), literal=True, to="host")  # the coin made the
            tmux.keys("Enter", to="host")  # joiner White; once we move, they owe one)
        screen = tmux.wait_for("the countdown to the claim", lambda s: "claimed for you" in
                               " ".join(s.split()), 20, on="host")
        flat = " ".join(screen.split())
        assert "quit. The game is saved" in flat and "SSL" not in flat and "EOF" not in flat

        # 3. the joiner comes back (its seat's second key finds its saved game) and resigns
        tmux.keys("clear", "Enter", to="join")
        _paste(tmux, "\n".join(invite), to="join")
        tmux.keys(" --ascii", "Enter", to="join")
        tmux.wait_for("the resumed game", lambda s: "Resumed: you are" in s, 30, on="join")
        tmux.wait_for("our turn or theirs", lambda s: "move>" in s, on="join")
        tmux.keys("resign", literal=True, to="join")
        tmux.keys("Enter", to="join")
        tmux.wait_for("the question", lambda s: "resign this game?" in s, on="join")
        tmux.keys("y", to="join")
        for name in ("host", "join"):
            tmux.wait_for("the audit", lambda s: "Audit clean" in s, 30, on=name)
            tmux.keys("q", to=name)
            screen = tmux.wait_for("the exit", lambda s: "EXITED" in s or "$ " in s, on=name)
            assert "Traceback" not in screen
    finally:
        tmux.close()
    games = sorted((home / "data" / "games").glob("*.gtr"))
    assert len(games) == 2  # both seats' transcripts of the one game, side by side
    for path in games:
        done = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(path)],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr
