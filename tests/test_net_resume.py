"""Losing the connection is normal: every game is saved, and playing on resumes it.

Real processes killed with SIGKILL mid-game and started again with the same command; a
joiner that went away and came back (while a second joiner was turned away); and the
worst moments to lose a connection: the joiner's hello before the host got it, and each
side's last message (its audit) at the very end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.cli import main as cli_main
from p2pgotg.games import replay
from p2pgotg.net.play import hosting, joining
from p2pgotg.net.play.hosting import HostConfig, host_game
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import ConnectionClosedError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.protocol import HOST, JOINER, Finding, encode_record, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions
from p2pgotg.selfplay import bot_runner

REPO = Path(__file__).resolve().parent.parent
SAFETY = 30  # seconds: a net against hangs, never a measure of speed
QUICK = Timeouts(handshake=5.0, keepalive=1.0, silence=5.0, audit=30.0, abandon=20.0, bye=2.0,
               retry=(0.02, 0.2))


def messages_by_sender(path: Path) -> dict[str, list[bytes]]:
    transcript = parse(path.read_bytes())
    assert not transcript.torn_tail
    return {role: [data for sender, data in transcript.messages if sender == role]
            for role in (HOST, JOINER)}


def message_count(path: Path) -> int:
    try:
        return len(parse(path.read_bytes()).messages)
    except Exception:  # noqa: BLE001  (being written right now: look again later)
        return 0


def assert_same_clean_files(host_path: Path, joiner_path: Path, capsys) -> None:
    assert host_path.name == joiner_path.name
    host_file, joiner_file = messages_by_sender(host_path), messages_by_sender(joiner_path)
    assert host_file == joiner_file
    for role, envelopes in host_file.items():  # nothing lost, nothing applied twice
        seqs = [Envelope.decode(data).body().seq for data in envelopes]
        assert seqs == list(range(len(seqs))), f"{role}: {seqs}"
    for path in (host_path, joiner_path):
        assert cli_main(["verify", str(path)]) == 0
        out, _ = capsys.readouterr()
        assert ("audit complete" in out or "nothing hidden" in out) and "clean" in out


# -- SIGKILL of a real process, then the same command again ------------------------------


class Player:
    """`python -m p2pgotg ...` as a child process with its own P2PGOTG_HOME."""

    def __init__(self, home: Path, *args: str) -> None:
        self.home = home
        self.args = args
        self.out = bytearray()
        self.err = bytearray()
        self.changed = trio.Event()
        self.process: trio.Process | None = None

    @property
    def games(self) -> Path:
        return self.home / "data" / "games"

    async def start(self, nursery: trio.Nursery) -> None:
        env = {**os.environ, "P2PGOTG_HOME": str(self.home), "PYTHONPATH": str(REPO),
               "PYTHONUNBUFFERED": "1"}
        self.out.clear()
        self.err.clear()
        self.process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "p2pgotg", *self.args], cwd=REPO, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        nursery.start_soon(self._pump, self.process.stdout, self.out)
        nursery.start_soon(self._pump, self.process.stderr, self.err)

    async def _pump(self, stream: trio.abc.ReceiveStream, into: bytearray) -> None:
        async with stream:
            while data := await stream.receive_some(65536):
                into += data
                self.changed.set()
                self.changed = trio.Event()

    async def line_starting(self, prefix: str) -> str:
        while True:
            for line in self.out.decode(errors="replace").splitlines():
                if line.startswith(prefix):
                    return line[len(prefix):].strip()
            if self.process.returncode is not None:
                raise AssertionError(f"exited before saying {prefix!r}:\n{self.log()}")
            with trio.move_on_after(0.5):  # (also look again after the process exits)
                await self.changed.wait()

    async def wait_for_messages(self, at_least: int) -> Path:
        """Its saved game, once it holds `at_least` messages. Files written by another
        process give no event to wait on: look every few milliseconds."""
        while True:
            files = list(self.games.glob("*.gtr")) if self.games.is_dir() else []
            if files and message_count(files[0]) >= at_least:
                return files[0]
            assert self.process.returncode is None, f"exited early:\n{self.log()}"
            await trio.sleep(0.005)

    async def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        assert await self.process.wait() == -signal.SIGKILL

    async def exit_code(self) -> int:
        return await self.process.wait()

    def log(self) -> str:
        return (f"$ p2pgotg {' '.join(self.args)}\n{self.out.decode(errors='replace')}"
                f"{self.err.decode(errors='replace')}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


BOT_DELAY = "0.01"  # seconds the bots think before each move: a game takes a few seconds
KILL_AFTER = 16  # messages in the victim's file: hellos, coin, setups, and a few moves


async def host_and_joiner(tmp_path: Path, nursery: trio.Nursery,
                          bot_delay: str) -> tuple[Player, Player, str]:
    """`host --bot` and `join CODE --bot`, each a process with a home of its own, started
    and playing; and the invite code."""
    host = Player(tmp_path / "host-home", "host", "--bot", "--bind", "127.0.0.1",
                  "--port", str(free_port()), "--seed", "1", "--bot-delay", bot_delay)
    await host.start(nursery)
    code = await host.line_starting("invite:")
    joiner = Player(tmp_path / "joiner-home", "join", code, "--bot", "--seed", "2",
                    "--bot-delay", bot_delay)
    await joiner.start(nursery)
    return host, joiner, code


def unfinished(path: Path) -> bool:
    return replay(parse(path.read_bytes())).finding is Finding.UNFINISHED


def tear_last_record(path: Path) -> bytes:
    """Leave what a crash in the middle of writing a record leaves: the start of a record
    (here a copy of the file's last one, cut in half) that was never sent (write-ahead).
    Returns the intact bytes before it."""
    intact = path.read_bytes()
    last = encode_record(parse(intact).records[-1])
    path.write_bytes(intact + last[: len(last) // 2])
    return intact


@pytest.mark.slow
@pytest.mark.parametrize("victim", [JOINER, HOST, "torn " + HOST])
async def test_sigkill_mid_game_then_the_same_command_resumes(tmp_path, capsys, victim):
    """`torn host`: the host is killed while it writes a record (issue 13, finding 7): its
    saved game must still be found and resumed, with nothing lost."""
    torn = victim.startswith("torn ")
    victim = victim.removeprefix("torn ")
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            host, joiner, code = await host_and_joiner(tmp_path, nursery, BOT_DELAY)
            player = host if victim == HOST else joiner
            saved = await player.wait_for_messages(KILL_AFTER)
            await player.kill()
        assert unfinished(saved), "the game ended before the kill: make it slower"
        if torn:
            intact = tear_last_record(saved)
            assert parse(saved.read_bytes()).torn_tail
        with trio.fail_after(SAFETY):
            await player.start(nursery)
            if victim == HOST:  # the same key, port and secret: the same invite
                assert await host.line_starting("invite:") == code
            host_exit, joiner_exit = await host.exit_code(), await joiner.exit_code()
    assert (host_exit, joiner_exit) == (0, 0), host.log() + joiner.log()
    # the restarted process picked up the same game, not a new one
    assert f"resuming the unfinished game saved in {saved.name}" in player.err.decode()
    assert [p.name for p in player.games.iterdir()] == [saved.name]
    if torn:  # the torn half record was cut off; everything before it was kept
        assert saved.read_bytes().startswith(intact)
    host_file, = host.games.glob("*.gtr")
    joiner_file, = joiner.games.glob("*.gtr")
    for p in (host, joiner):
        assert "game over:" in p.out.decode() and "audit complete" in p.out.decode(), p.log()
        assert "Traceback" not in p.err.decode(), p.log()
    assert_same_clean_files(host_file, joiner_file, capsys)


# -- in one process -----------------------------------------------------------------------


class Host:
    def __init__(self, save_dir: Path, limits: Timeouts, seed: int) -> None:
        cert, key = make_certificate()
        self.config = HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(),
                                 save_dir, port=0, bind="127.0.0.1", limits=limits,
                                 resume=False)
        self.seed = seed
        self.statuses: list[str] = []
        self.said = trio.Event()
        self.session: GameSession | None = None
        self.done = trio.Event()

    def status(self, text: str) -> None:
        self.statuses.append(text)
        self.said.set()
        self.said = trio.Event()

    async def wait_status(self, start: str) -> None:
        while not any(s.startswith(start) for s in self.statuses):
            await self.said.wait()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            self.session = await host_game(self.config, bot_runner(self.seed),
                                           on_status=self.status, task_status=task_status)
        finally:
            self.done.set()

    async def start(self, nursery: trio.Nursery) -> Invite:
        hosting_info = await nursery.start(self.run)
        return Invite.decode(hosting_info.invites[0])


async def wait_until(session: GameSession, condition) -> None:
    while not condition(session):
        await session.wait_changed()


async def test_a_joiner_that_left_comes_back_and_no_one_else_takes_its_place(
        tmp_path, capsys):
    host = Host(tmp_path / "host", QUICK, seed=7)
    key = Ed25519PrivateKey.generate()
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        config = JoinConfig(key, invite, tmp_path / "joiner", QUICK)
        first: list[GameSession] = []
        with trio.fail_after(SAFETY):
            with trio.CancelScope() as gone:
                async def leave_mid_game(session: GameSession) -> None:
                    await wait_until(session, lambda s: s.peer.view is not None
                                     and s.peer.view.ply >= 10)
                    gone.cancel()  # the joiner's program stops: its connection drops

                def on_session(session: GameSession) -> None:
                    first.append(session)
                    nursery.start_soon(leave_mid_game, session)

                await join_game(config, bot_runner(8), on_session=on_session)
            saved = first[0].path
            assert saved is not None and unfinished(saved)
            await host.wait_status("connection lost")
            # someone else with the invite, while our joiner is away: turned away
            with pytest.raises(SessionError, match="already playing"):
                await join_game(JoinConfig(Ed25519PrivateKey.generate(), invite,
                                           tmp_path / "other", QUICK), bot_runner(9))
            assert not (tmp_path / "other").exists() or not any((tmp_path / "other").iterdir())
            statuses: list[str] = []
            joiner = await join_game(config, bot_runner(8), on_status=statuses.append)
            await host.done.wait()
    assert f"resuming the unfinished game saved in {saved.name}" in statuses
    assert joiner.path == saved
    assert [p.name for p in (tmp_path / "joiner").iterdir()] == [saved.name]
    assert host.session.verdict == joiner.verdict
    assert_same_clean_files(host.session.path, joiner.path, capsys)


def losing(kind: str):
    """A FramedChannel whose connection dies, once, just as it would send the first signed
    message of type `kind`: that message never leaves."""

    class Losing(FramedChannel):
        lost: ClassVar[list[bytes]] = []

        async def send(self, payload: bytes) -> None:
            if not Losing.lost and _type_of(payload) == kind:
                Losing.lost.append(payload)
                await self.aclose()
                raise ConnectionClosedError("(test) the connection died with this message")
            await super().send(payload)

    return Losing


def _type_of(payload: bytes) -> str | None:
    try:
        return Envelope.decode(payload).body().type
    except Exception:  # noqa: BLE001  (a control frame)
        return None


@pytest.mark.parametrize("side, kind", [
    (HOST, "audit"),  # the host's last message; it may already have the joiner's
    (JOINER, "audit"),  # the joiner's last message
    (JOINER, "hello"),  # the joiner has a game id and a saved file; the host has neither
])
async def test_a_message_lost_with_the_connection_is_sent_again(
        tmp_path, capsys, monkeypatch, side, kind):
    """Nothing is lost: the side whose message died with the connection sends it again on
    the next one, even at the very end of the game, and both transcripts end equal."""
    channel = losing(kind)
    monkeypatch.setattr(hosting if side == HOST else joining, "FramedChannel", channel)
    host = Host(tmp_path / "host", QUICK, seed=3)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            joiner = await join_game(JoinConfig(Ed25519PrivateKey.generate(), invite,
                                                tmp_path / "joiner", QUICK), bot_runner(4))
            await host.done.wait()
    assert len(channel.lost) == 1
    assert host.session.verdict == joiner.verdict
    assert joiner.verdict is not None and joiner.verdict.audit_complete
    assert_same_clean_files(host.session.path, joiner.path, capsys)


# -- one process per game file (issue 23, finding 2; SPEC 3.5) ----------------------------

SLOW_BOTS = "0.15"  # seconds a move


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "P2PGOTG_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "p2pgotg", *args], cwd=REPO, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=SAFETY)


@pytest.mark.slow
@pytest.mark.parametrize("twice", [JOINER, HOST])
async def test_the_same_command_twice_stops_the_second_and_nothing_is_signed_twice(
        tmp_path, capsys, twice):
    """The same `join CODE` (or `host`) run again from the same account while the first
    still plays (a window thought hung, a second terminal): the second says which process
    holds the game and exits 75 without touching it; `verify`, `show` and `games` read
    the file meanwhile; the first plays on to a clean end, no sequence number signed
    twice (before, both resumed the file and each signed its own next message)."""
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY * 8):  # (a whole game: up to some 300 plies of 0.15 s)
            host, joiner, _ = await host_and_joiner(tmp_path, nursery, SLOW_BOTS)
            first = host if twice == HOST else joiner
            other = joiner if twice == HOST else host
            saved = await first.wait_for_messages(KILL_AFTER)
            # The other player stands still while we look, so that the first process still
            # holds an unfinished game however slowly this machine starts the commands.
            os.kill(other.process.pid, signal.SIGSTOP)
            second = Player(first.home, *first.args)
            await second.start(nursery)
            assert await second.exit_code() == 75, second.log()
            readers: dict[str, subprocess.CompletedProcess] = {}

            async def read(*args: str) -> None:
                readers[args[0]] = await trio.to_thread.run_sync(run_cli, first.home, *args)

            async with trio.open_nursery() as reading:  # (while the game is held)
                reading.start_soon(read, "verify", str(saved))
                reading.start_soon(read, "show", "--text", str(saved))
                reading.start_soon(read, "games")
            assert first.process.returncode is None, "the game ended too soon"
            os.kill(other.process.pid, signal.SIGCONT)
            verify, show, games = readers["verify"], readers["show"], readers["games"]
            host_exit, joiner_exit = await host.exit_code(), await joiner.exit_code()
    said = second.err.decode()
    assert f"this game ({saved.name}) is open in another p2pgotg process " \
           f"(pid {first.process.pid})" in said, second.log()
    assert "Traceback" not in said and "resuming" not in said
    assert verify.returncode == 3 and "unfinished" in verify.stdout, verify
    assert show.returncode == 2 and "Traceback" not in show.stderr, show  # (not over yet)
    assert games.returncode == 0 and "1 unfinished" in games.stdout, games
    assert (host_exit, joiner_exit) == (0, 0), host.log() + joiner.log()
    assert [p.name for p in first.games.iterdir()] == [saved.name]
    host_file, = host.games.glob("*.gtr")
    joiner_file, = joiner.games.glob("*.gtr")
    assert_same_clean_files(host_file, joiner_file, capsys)  # (each seq exactly once)
