"""End to end in a real terminal: `p2pgotg play` under tmux at 80x24, keys sent as a person
would type them, the screen read back with capture-pane.

tmux is required (CI's setup script installs it): without it this test fails and says so,
rather than skipping and leaving the terminal game untested.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^ ([1-8]) ")


class Tmux:
    """One private tmux server (its own socket); windows of 80x24 unless asked."""

    def __init__(self, socket: Path) -> None:
        exe = shutil.which("tmux")
        if exe is None:
            pytest.fail("tmux is not installed, and the end-to-end test of the terminal game "
                        "needs it: install it (apt-get install tmux; CI's setup script does)")
        self.base = [exe, "-S", str(socket)]

    def run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], check=False, capture_output=True,
                              text=True, timeout=10)
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def start(self, command: str, name: str = "game", size: tuple[int, int] = (80, 24),
              cwd: Path = ROOT) -> None:
        self.run("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", name,
                 "-c", str(cwd), command)

    def keys(self, *keys: str, literal: bool = False, to: str = "game") -> None:
        self.run("send-keys", "-t", to, *(["-l"] if literal else []), *keys)

    def screen(self, name: str = "game") -> str:
        return self.run("capture-pane", "-p", "-t", name)

    def wait_for(self, what: str, test, timeout: float = 15.0, on: str = "game") -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen(on)
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen}")
            time.sleep(0.05)

    def army_ready(self, on: str = "game") -> str:
        """On the setup screen: a random army (`r`), then ready (`d`); the screen then."""
        self.wait_for("the setup screen", lambda s: "Setup - you play" in s, 20, on=on)
        self.keys("r", to=on)
        self.wait_for("a random army", lambda s: "All 21 placed" in s, on=on)
        self.keys("d", to=on)
        return self.screen(on)

    def resign(self, on: str = "game") -> None:
        """Type `resign` at the move line and say yes."""
        self.keys("resign", literal=True, to=on)
        self.keys("Enter", to=on)
        self.wait_for("the question", lambda s: "resign this game?" in s, on=on)
        self.keys("y", to=on)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], check=False, capture_output=True,
                       timeout=10)


def forward_move(screen: str) -> str:
    """A move of one of our pieces one square up the screen (towards the opponent) onto
    an empty square, front pieces first: what a person might type."""
    lines = screen.splitlines()
    rows = [line for line in lines if ROW.match(line) and "|" in line]
    letters_line = lines[lines.index(rows[-1]) + 1]
    letters = letters_line.split("|")[0].split()
    names = [[f"{f}{ROW.match(line).group(1)}" for f in letters] for line in rows]
    cells = [[line[3 + 5 * c: 8 + 5 * c] for c in range(9)] for line in rows]
    for line in range(1, 8):
        for col in range(9):
            cell, above = cells[line][col], cells[line - 1][col]
            label = cell[1:4].strip()
            mine = label not in ("", ".", "+", "?") and cell[0] in " [>" and cell[4] in " ]<"
            if mine and above == "  .  ":
                return f"{names[line][col]} {names[line - 1][col]}"
    raise AssertionError(f"no forward move found on:\n{screen}")


@pytest.mark.slow
def test_play_against_the_bot_in_a_terminal(tmp_path: Path) -> None:
    tmux = Tmux(tmp_path / "tmux.sock")
    home = tmp_path / "home"
    command = _command(home, "play --ascii --seed 7 --think 0.2")
    try:
        tmux.start(command)
        screen = tmux.wait_for("the setup screen", lambda s: "Setup - you play" in s, 20)
        assert "Pieces to place" in screen and "21 pieces still to place" in screen
        tmux.army_ready()
        played: list[str] = []
        for _ in range(3):
            screen = tmux.wait_for("our move", lambda s: "YOUR MOVE" in s.splitlines()[0])
            move = forward_move(screen)
            tmux.keys(move, literal=True)
            tmux.keys("Enter")
            text = move.replace(" ", "-")
            screen = tmux.wait_for(f"{text} in the log", lambda s, t=text: f"you  {t}" in s)
            played.append(text)
        # a bad move: one line in the status area says why, and the board stays as it was
        tmux.wait_for("our move", lambda s: "YOUR MOVE" in s.splitlines()[0])
        tmux.keys("a1 a9", literal=True)
        tmux.keys("Enter")
        screen = tmux.wait_for("the explanation", lambda s: "is not a move" in s)
        lines = screen.splitlines()
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert lines[0].startswith(" You, ") and "vs the bot, " in lines[0]
        assert "YOUR MOVE" in lines[0]
        assert "connected" in lines[0]
        assert lines[22].startswith(" move>")
        board_lines = [line for line in lines if ROW.match(line)]
        assert len(board_lines) == 8
        assert "Moves" in lines[1]
        for text in played:
            assert f"you  {text}" in screen
        assert "You lost (" in screen and "You took (" in screen
        assert "( ? )" in screen  # the opponent's pieces, ranks hidden
        print(screen)  # for the record (pytest -s)
        tmux.keys("C-q")
        tmux.wait_for("the question", lambda s: "quit? The game is saved: p2pgotg play" in s)
        tmux.keys("y")
        screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
        assert "EXITED 0" in screen and "Traceback" not in screen
        assert "saved game:" in screen.replace("\n", "")
    finally:
        tmux.close()


def _command(home: Path, args: str, name: str | None = "Tester") -> str:
    """`p2pgotg ARGS` in a home of its own; `name` for this run (None: the name kept in
    that home, or the question asked the first time)."""
    named = f"P2PGOTG_NAME={shlex.quote(name)} " if name else ""
    return (f"env P2PGOTG_HOME={shlex.quote(str(home))} PYTHONPATH={shlex.quote(str(ROOT))} "
            f"{named}{shlex.quote(sys.executable)} -m p2pgotg {args}; echo EXITED $?; "
            "sleep 30")


@pytest.mark.slow
def test_two_terminals_play_each_other(tmp_path: Path) -> None:
    """`p2pgotg host` in one terminal, `p2pgotg join CODE` in another: Ana and Bo."""
    tmux = Tmux(tmp_path / "tmux.sock")
    names = {"host": "Ana", "join": "Bo"}
    try:
        tmux.start(_command(tmp_path / "a", "host --bind 127.0.0.1 --ascii", name="Ana"),
                   name="host")
        screen = tmux.wait_for("the invite", lambda s: "gg1-" in s, 20, on="host")
        lines = screen.splitlines()
        first = next(i for i, line in enumerate(lines) if "gg1-" in line)
        code = "".join(line.strip() for line in lines[first:first + 2])
        assert "Rules: challenges open" in screen
        tmux.start(_command(tmp_path / "b", f"join {code} --ascii", name="Bo"), name="join")
        tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 20, on="join")
        tmux.keys("a", to="join")
        for name in ("host", "join"):
            tmux.army_ready(on=name)
        screens = {n: tmux.wait_for("the game", lambda s: "move>" in s, on=n)
                   for n in ("host", "join")}
        white = next(n for n, s in screens.items() if "YOUR MOVE" in s.splitlines()[0])
        black = "join" if white == "host" else "host"
        move = forward_move(screens[white])
        tmux.keys(move, literal=True, to=white)
        tmux.keys("Enter", to=white)
        text = move.replace(" ", "-")
        tmux.wait_for("the move on the other screen",
                      lambda s: f"{names[white]:<4} {text}" in s and "YOUR MOVE" in s,
                      on=black)
        tmux.keys("chat hello there", literal=True, to=black)
        tmux.keys("Enter", to=black)
        tmux.wait_for("the chat", lambda s: f"{names[black]}: hello there" in s, on=white)
        tmux.resign(on=black)
        for name, head in ((white, "You win: they resigned."),
                           (black, f"{names[white]} wins: you resigned.")):
            screen = tmux.wait_for("the end screen", lambda s, h=head: h in s, on=name)
            tmux.wait_for("the audit", lambda s: "Audit clean" in s, on=name)
            tmux.keys("q", to=name)
            screen = tmux.wait_for("the exit", lambda s: "EXITED" in s, on=name)
            assert "EXITED 0" in screen and "Traceback" not in screen
    finally:
        tmux.close()
