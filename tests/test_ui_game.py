"""The terminal game driven by its keys, through prompt_toolkit's pipe input, against real
opponents over real loopback TLS: the built-in bot as `p2pgotg play` runs it, and bots in
other processes for `host` and `join`.

Every wait is bounded; a test that cannot get where it is going fails with the screen's
state instead of hanging.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pgotg.net.play.session import Timeouts
from p2pgotg.rules import Move, Side, neighbours, square_name
from p2pgotg.ui import board, end_screen, setup_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.runner import UI, Launch
from p2pgotg.ui.state import Mode, Screen

UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
ENTER, CTRL_Q = "\r", "\x11"
ROOT = Path(__file__).resolve().parents[1]


class Driver:
    """Keys in, state out: a person at the keyboard, with a stopwatch."""

    def __init__(self, ui: UI, pipe) -> None:
        self.ui, self.pipe = ui, pipe
        self.state = ui.state

    def press(self, *keys: str) -> None:
        for key in keys:
            self.pipe.send_text(key)

    async def until(self, what: str, cond: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                s = self.state
                raise AssertionError(
                    f"timed out waiting for {what}: screen {s.screen}, status {s.status!r}, "
                    f"fatal {s.fatal!r}, log {[line.text for line in s.log][-6:]}"
                )
            await asyncio.sleep(0.01)

    async def keys(self, *keys: str, then: Callable[[], bool] | None = None,
                   what: str = "the keys to take effect") -> None:
        """Press keys and wait until `then` holds (or a short settle)."""
        self.press(*keys)
        if then is None:
            await asyncio.sleep(0.1)
        else:
            await self.until(what, then, 15.0)  # a safety limit, generous for a loaded machine

    def cursor_keys(self, target: int) -> list[str]:
        col, line = board.position_of(self.state.viewer, self.state.cursor)
        tcol, tline = board.position_of(self.state.viewer, target)
        keys = [RIGHT if tcol > col else LEFT] * abs(tcol - col)
        return keys + [DOWN if tline > line else UP] * abs(tline - line)

    async def move_cursor(self, target: int) -> None:
        await self.keys(*self.cursor_keys(target), then=lambda: self.state.cursor == target,
                        what=f"the cursor on {square_name(target)}")


def run_ui(mode: Mode | None, launch: Launch, scenario) -> str:
    """Run the whole interface with pipe input until `scenario` has quit it."""

    async def main() -> str:
        with create_pipe_input() as pipe:
            ui = UI(mode, launch, ascii=True, input=pipe, output=DummyOutput())
            app_task = asyncio.ensure_future(ui.run())
            driver = Driver(ui, pipe)
            try:
                await asyncio.wait_for(scenario(driver), 30)
                return await asyncio.wait_for(app_task, 10)
            finally:
                if not app_task.done():
                    ui.app.exit()
                    await asyncio.wait_for(app_task, 10)

    return asyncio.run(main())


def launch_for(tmp_path: Path, **kw) -> Launch:
    # (the scenarios were written against the one-ply bot's games: `normal`, not `play`'s
    # default level)
    return Launch(seed=kw.pop("seed", 11), think=kw.pop("think", 0.02),
                  level=kw.pop("level", "normal"),
                  save_dir=tmp_path / "games",
                  identity=kw.pop("identity", Ed25519PrivateKey.generate),
                  limits=Timeouts(handshake=10.0), **kw)


def distance_to_enemy(view, sq: int, me: Side) -> int:
    enemy = [view.square_of(p) for p in view.pieces(me.other)]
    return min(abs(sq % 9 - e % 9) + abs(sq // 9 - e // 9) for e in enemy)


def pick_move(view, me: Side, *, challenge: bool) -> Move:
    """A challenge when one is wanted and possible; else the move that closes in most."""
    moves = view.legal_moves
    if challenge:
        attacks = [m for m in moves if view.is_challenge(m)]
        if attacks:
            return attacks[0]
    quiet = [m for m in moves if not view.is_challenge(m)] or moves
    return min(quiet, key=lambda m: (distance_to_enemy(view, m.to_square, me),
                                     m.from_square, m.to_square))


async def keyboard_setup(d: Driver) -> None:
    """All 21 pieces placed one by one with arrows and Enter, then a swap and a removal."""
    s = d.state
    await d.until("the setup screen", lambda: s.screen is Screen.SETUP and s.editor is not None)
    editor = s.editor
    assert editor is not None
    side = editor.side
    order = ([board.square_at(side, c, 7) for c in range(9)]
             + [board.square_at(side, c, 6) for c in reversed(range(9))]
             + [board.square_at(side, c, 5) for c in range(3)])
    for sq in order:
        await d.move_cursor(sq)
        placed = len(editor.placement) + 1
        await d.keys(ENTER, then=lambda n=placed: len(editor.placement) == n,
                     what=f"a piece placed on {square_name(sq)}")
    assert editor.problems() == []
    flag_square = order[0]
    assert editor.placement[flag_square].code == "FLG"  # the tray starts with the flag
    # swap the flag with the piece in front of it
    front = order[17]
    front_rank = editor.placement[front]
    await d.move_cursor(flag_square)
    await d.keys(ENTER, then=lambda: editor.picked == flag_square)
    await d.move_cursor(front)
    await d.keys(ENTER, then=lambda: editor.picked is None)
    assert editor.placement[front].code == "FLG" and editor.placement[flag_square] == front_rank
    # take one away: not ready, and the screen says why
    await d.keys("x", then=lambda: len(editor.placement) == 20)
    await d.keys("d", then=lambda: s.status_error)
    assert "1 piece still to place" in s.status
    assert s.peer is not None and s.peer.own_setup is None
    await d.keys(ENTER, then=lambda: len(editor.placement) == 21)
    assert editor.placement[front].code == "FLG"


def test_play_a_game_against_the_bot_with_the_keyboard(tmp_path: Path) -> None:
    """`p2pgotg play`, keys only: a keyboard setup, a move by cursor, a typed move, bad
    input, a challenge, resignation, and the end screen's audit."""
    seen: dict[str, object] = {}

    async def scenario(d: Driver) -> None:
        s = d.state
        await keyboard_setup(d)
        await d.keys("d", then=lambda: s.screen is Screen.PLAY, what="the game to start")
        peer = s.peer
        assert peer is not None
        me = peer.side
        assert me is not None
        view = peer.view
        assert view is not None

        def my_moves() -> int:
            return sum(1 for r in view.history if r.side is me)

        async def my_turn() -> None:
            await d.until("our turn", lambda: peer.my_turn, 10)

        # 1. a move by cursor: pick up, the legal squares light up, drop
        await my_turn()
        move = pick_move(view, me, challenge=False)
        await d.move_cursor(move.from_square)
        await d.keys(ENTER, then=lambda: s.selected == move.from_square)
        assert move.to_square in s.targets()
        assert all(t in neighbours(move.from_square) for t in s.targets())
        await d.move_cursor(move.to_square)
        await d.keys(ENTER, then=lambda: my_moves() == 1, what="the cursor move played")
        assert view.history[[r.side for r in view.history].index(me)].move == move

        # 2. bad input changes nothing and says why, in one line
        await my_turn()
        ply = view.ply
        await d.keys("z9 z8", ENTER, then=lambda: s.status_error)
        assert "not a move" in s.status
        mine = next(p for p in view.pieces(me))
        src = view.square_of(mine)
        far = next(sq for sq in range(72) if sq not in neighbours(src) and sq != src)
        await d.keys(f"{square_name(src)} {square_name(far)}", ENTER,
                     then=lambda: "not one square" in s.status)
        await d.keys("dance", ENTER, then=lambda: "unknown command" in s.status)
        assert s.status_error and view.ply == ply and "\n" not in s.status

        # 3. typed moves, heading for a challenge
        typed = 0
        while not any(r.defender is not None and r.side is me for r in view.history):
            await my_turn()
            move = pick_move(view, me, challenge=typed > 0)
            before = my_moves()
            text = f"{square_name(move.from_square)} {square_name(move.to_square)}"
            if typed % 2:
                text = text.replace(" ", "-")
            await d.keys(*text, ENTER,
                         then=lambda n=before + 1: my_moves() == n or peer.flow.is_over,
                         what=f"the typed move {text}")
            typed += 1
            assert not peer.flow.is_over, "the game ended before we challenged"
            assert typed < 60
        record = next(r for r in view.history if r.defender is not None and r.side is me)
        log = "\n".join(line.text for line in s.log)
        assert f"you  {record.move.text()}  x" in log
        assert " vs " in log and "eliminated" in log
        # open mode: both declared ranks are known to the view and named in the log
        assert view.rank_of(record.piece) is not None
        assert view.rank_of(record.defender) is not None
        seen["log"] = log

        # 4. resign; the end screen has the result, every rank, the audit, the file
        await my_turn()
        await d.keys(*"resign", ENTER, then=lambda: s.confirm is not None)
        assert s.screen is Screen.PLAY and "resign this game?" in s.status
        await d.keys("y", then=lambda: s.screen is Screen.END)
        await d.until("the audit", lambda: s.session is not None and s.session.verdict
                      is not None)
        seen["headline"] = fragments_text(end_screen.headline(s))
        seen["final"] = fragments_text(end_screen.board_text(s))
        seen["audit"] = fragments_text(end_screen.audit_text(s))
        seen["panel"] = fragments_text(end_screen.panel_text(s))
        await d.keys("s", then=lambda: s.end_view_setups)
        seen["setups"] = fragments_text(end_screen.board_text(s))
        seen["path"] = s.session.path
        await d.keys("q")

    message = run_ui(Mode.BOT, launch_for(tmp_path), scenario)
    assert "The bot wins: you resigned." in seen["headline"]
    assert "?" not in seen["final"] and "?" not in seen["setups"]
    assert seen["setups"].upper().count("FLG") == 2  # (theirs in lower case)
    assert "Audit clean" in seen["audit"]
    assert "every rank revealed" in seen["panel"]
    path = seen["path"]
    assert isinstance(path, Path) and path.exists() and path.parent.name == "bot"
    assert str(path) in seen["audit"].replace("\n ", "")
    assert "game over" in message and str(path) in message
    verify = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(path)],
                            check=False, capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_own_home_rows_are_at_the_bottom(tmp_path: Path) -> None:
    async def scenario(d: Driver) -> None:
        s = d.state
        await d.until("the setup screen", lambda: s.screen is Screen.SETUP)
        await d.keys("r", then=lambda: not s.editor.problems())
        lines = fragments_text(setup_screen.board_text(s)).splitlines()
        me = s.side
        assert me is not None
        # our own row 1 (White) or row 8 (Black) is the last board line, files from our left
        assert lines[7].startswith(" 1 " if me is Side.WHITE else " 8 ")
        assert lines[8].split() == (list("abcdefghi") if me is Side.WHITE
                                    else list("ihgfedcba"))
        assert sum(lines[i].count("FLG") for i in (5, 6, 7)) == 1
        # formations by name: the shipped ones, and our own saved as files
        await d.keys("l", then=lambda: s.prompt is not None)
        await d.keys(*"balanced", ENTER, then=lambda: s.prompt is None)
        assert "loaded balanced" in s.status and not s.editor.problems()
        assert s.editor.formation().split()[:3] == ["PVT", "3*", "SPY"]  # its front row
        await d.keys("c", then=lambda: not s.editor.placement)
        await d.keys("w", *"empty?", ENTER, then=lambda: s.status_error)
        assert "cannot be a formation name" in s.status and s.prompt is not None
        await d.keys("\x1b", then=lambda: s.prompt is None)
        await d.keys("r", "w", *"mine", ENTER, then=lambda: "saved as mine" in s.status)
        saved = s.editor.formation()
        assert (tmp_path / "home" / "config" / "formations" / "mine.txt").exists()
        await d.keys("c", "l", *"mine", ENTER, then=lambda: "loaded mine" in s.status)
        assert s.editor.formation() == saved
        await d.keys(CTRL_Q, then=lambda: s.confirm_quit)
        assert "offers to resume it" in s.status
        await d.keys("n", then=lambda: not s.confirm_quit)
        await d.keys(CTRL_Q, "y")

    run_ui(Mode.BOT, launch_for(tmp_path, seed=5), scenario)


def test_start_screen_checks_an_invite_code_before_joining(tmp_path: Path) -> None:
    async def scenario(d: Driver) -> None:
        s = d.state
        assert s.screen is Screen.START
        assert s.bot_level == "normal"  # the launch's level
        await d.keys("l", then=lambda: s.bot_level == "hard")
        assert "level hard" in s.status
        await d.keys("l", then=lambda: s.bot_level == "easy")
        await d.keys("3", then=lambda: s.prompt is not None)
        await d.keys(*"gg1-nonsense", ENTER, then=lambda: s.status_error)
        assert "not valid" in s.status and s.screen is Screen.START
        await d.keys("\x1b", then=lambda: s.prompt is None)
        await d.keys("q")

    assert run_ui(None, launch_for(tmp_path), scenario) == ""


def _spawn_bot(args: list[str], home: Path) -> subprocess.Popen:
    env = dict(os.environ, P2PGOTG_HOME=str(home), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "p2pgotg", *args, "--bot", "--seed", "3"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


async def _setup_and_resign(d: Driver) -> None:
    s = d.state
    await d.until("the setup screen", lambda: s.screen is Screen.SETUP)
    await d.keys("r", "d", then=lambda: s.screen is Screen.PLAY, what="the game to start")
    await d.until("our turn", lambda: s.peer.my_turn)
    await d.keys(*"chat good game", ENTER,
                 then=lambda: any("you: good game" in line.text for line in s.log))
    await d.keys(*"resign", ENTER, "y", then=lambda: s.session.verdict is not None)
    await d.keys("q")


def test_host_screen_shows_invites_and_plays_a_joiner(tmp_path: Path) -> None:
    """`p2pgotg host` in a terminal: the invite codes, the rules, then the game with a
    joiner in another process."""
    bot: list[subprocess.Popen] = []

    async def scenario(d: Driver) -> None:
        s = d.state
        await d.until("the invite codes", lambda: bool(s.invites))
        from p2pgotg.ui import lobby_screen

        lobby = fragments_text(lobby_screen.body(s))
        assert "challenges open" in lobby and "waiting for the other player" in lobby
        code = s.invites[0]
        assert code[:40] in lobby
        bot.append(_spawn_bot(["join", code], tmp_path / "joiner"))
        await _setup_and_resign(d)

    try:
        message = run_ui(Mode.HOST, launch_for(tmp_path, bind="127.0.0.1",
                                               tls_identity=_fresh_tls), scenario)
    finally:
        outputs = [_reap(p) for p in bot]
    assert "game over" in message
    assert outputs and not re.search(r"game over: (\w+ \()?host\)? wins \(resignation", outputs[0])
    assert re.search(r"game over: (\w+ \()?joiner\)? wins \(resignation", outputs[0])


def test_join_screen_accepts_the_hosts_rules(tmp_path: Path) -> None:
    """`p2pgotg join CODE`: the host's rules shown, accepted with a key, then the game."""
    host = _spawn_bot(["host", "--bind", "127.0.0.1", "--two-squares"], tmp_path / "host")
    try:
        code = _read_invite(host)

        async def scenario(d: Driver) -> None:
            s = d.state
            await d.until("the host's rules", lambda: s.peer is not None
                          and s.peer.flow.hellos.get("host") is not None)
            from p2pgotg.ui import lobby_screen

            lobby = fragments_text(lobby_screen.body(s))
            assert "The host proposes these rules" in lobby and "two-squares rule" in lobby
            assert "Press a to accept" in lobby
            await d.keys("a")
            await _setup_and_resign(d)

        message = run_ui(Mode.JOIN, launch_for(tmp_path, invite=code), scenario)
    finally:
        _reap(host)
    assert "game over" in message


def _fresh_tls() -> tuple[bytes, bytes]:
    from p2pgotg.net.transport.tls import make_certificate

    return make_certificate()


def _read_invite(proc: subprocess.Popen) -> str:
    deadline = time.monotonic() + 15
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("invite: "):
            return line.split()[1]
        if not line and proc.poll() is not None:
            break
    raise AssertionError("the host printed no invite code")


def _reap(proc: subprocess.Popen) -> str:
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out or ""


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path / "home"))
