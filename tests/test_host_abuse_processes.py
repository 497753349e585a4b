"""Hosts under abuse (issue 13) as real `p2pgotg host` processes: a descriptor limit the
flood runs into, and an operator whose terminal stops reading. The joiners play in this
process over real TLS; each run is bounded in count and time."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import frames
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_host_abuse import assert_clean, bot_until  # (the same seats and checks)

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.lines import LineWriter
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import open_pinned_connection

SAFETY = 60  # seconds: a net against hangs, never a measure of speed
F_SETPIPE_SZ = 1031  # (fcntl, Linux)
NASTY = "\x1b]0;owned\x07\x1b[2K"
JOIN_LIMITS = Timeouts(retry=(0.1, 1.0))


def start_host(home: Path, *args: str, nofile: int | None = None,
               stderr: int | Path) -> tuple[subprocess.Popen, Path]:
    """`p2pgotg host --bot ... ARGS` in its own process (with at most `nofile` open
    descriptors); its standard output goes to a file, read for the invite."""
    limit = "" if nofile is None else (
        f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile}))\n")
    script = f"{limit}import sys\nfrom p2pgotg.cli import main\nsys.exit(main(sys.argv[1:]))"
    out = home / "host.out"
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, P2PGOTG_HOME=str(home), PYTHONUNBUFFERED="1")
    with open(out, "wb") as o, contextlib.ExitStack() as stack:
        err = stderr if isinstance(stderr, int) else stack.enter_context(open(stderr, "wb"))
        process = subprocess.Popen(
            [sys.executable, "-c", script, "host", "--bot", "--bind", "127.0.0.1", "--port",
             "0", "--seed", "7", *args], stdout=o, stderr=err, stdin=subprocess.DEVNULL,
            env=env)
    return process, out


async def invite_of(process: subprocess.Popen, out: Path) -> Invite:
    with trio.fail_after(SAFETY):
        while process.poll() is None:
            for line in out.read_text().splitlines():
                if line.startswith("invite: "):
                    return Invite.decode(line.split()[1])
            await trio.sleep(0.05)
    raise AssertionError(f"the host exited: {out.read_text()}")


def joiner(invite: Invite, save_dir: Path) -> JoinConfig:
    return JoinConfig(Ed25519PrivateKey.generate(), invite, save_dir, JOIN_LIMITS,
                      resume=False)


async def say_once(invite: Invite, frame: bytes) -> None:
    """One connection that sends `frame` and waits until the host hangs up."""
    stream = await open_pinned_connection(invite.address, invite.port, invite.pin)
    channel = FramedChannel(stream, keepalive_interval=None, silence_timeout=None)
    with contextlib.suppress(Exception):
        await channel.send(frame)
        while True:
            await channel.receive()
    await channel.aclose()


def stop(process: subprocess.Popen, interrupt: bool = True) -> int:
    """Its exit code, once it exits (interrupted first, when `interrupt`)."""
    if interrupt and process.poll() is None:
        process.send_signal(2)  # SIGINT: games in progress stay resumable
    try:
        return process.wait(SAFETY)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


@pytest.mark.slow
async def test_a_descriptor_flood_stops_new_work_and_the_game_in_play_goes_on(tmp_path):
    # The host may hold 40 descriptors (it needs some 14 with no game). Plain TCP connects
    # fill the rest; then a new joiner is let in through one freed descriptor, so that its
    # transcript cannot be opened (EMFILE). SPEC 3.4 and 3.5: accepting pauses with one
    # line, the new game stops with one line, the game in play goes on to its end, and new
    # games are taken once the flood is gone.
    err = tmp_path / "host.err"
    host, out = start_host(tmp_path / "host", "--max-games", "3", nofile=40, stderr=err)
    accepted: list[trio.SocketStream] = []

    def descriptors() -> int:
        return len(os.listdir(f"/proc/{host.pid}/fd"))

    try:
        invite = await invite_of(host, out)
        gate, reached = trio.Event(), trio.Event()
        results = []
        async with trio.open_nursery() as nursery:
            async def play(seed: int, **gated) -> None:
                results.append(await join_game(joiner(invite, tmp_path / f"j{seed}"),
                                               bot_until(seed, **gated)))

            with trio.fail_after(SAFETY):
                await say_once(invite, frames.raw(NASTY))  # a terminal escape, as a frame kind
                nursery.start_soon(lambda: play(1, gate=gate, reached=reached))
                await reached.wait()  # a game in play, its transcript open
                while "cannot take new connections" not in err.read_text():
                    before = descriptors()
                    tcp = await trio.open_tcp_stream(
                        "127.0.0.1", invite.port,
                        local_address=f"127.0.0.{2 + len(accepted) // 8}")
                    with trio.move_on_after(1.0):
                        while descriptors() == before \
                                and "cannot take new" not in err.read_text():
                            await trio.sleep(0.01)
                    if descriptors() > before:
                        accepted.append(tcp)
                    else:
                        await tcp.aclose()  # (it waits in the backlog; gone when taken)
                late = JoinConfig(Ed25519PrivateKey.generate(), invite, tmp_path / "late",
                                  JOIN_LIMITS, resume=False)
                nursery.start_soon(join_game, late, bot_until(9))  # it keeps trying
                await accepted.pop(0).aclose()  # one descriptor frees: the late joiner's
                while "cannot create a transcript" not in err.read_text():
                    await trio.sleep(0.05)
                gate.set()  # the game in play goes on during the flood, to its end
                while not results:
                    await trio.sleep(0.05)
                for tcp in accepted:
                    await tcp.aclose()
                accepted.clear()
                await play(2)  # a new game once the flood is gone
                nursery.cancel_scope.cancel()  # (the late joiner's game never began here)
    finally:
        for tcp in accepted:
            with contextlib.suppress(Exception):
                await tcp.aclose()
        code = stop(host)
    text = err.read_text()
    assert code == 0, text
    assert "Traceback" not in text
    paused, resumed = text.count("cannot take new connections"), text.count("taking new con")
    assert 1 <= paused <= resumed + 1 and paused <= 5, text  # one line per episode
    assert text.count("cannot create a transcript") == 1, text
    assert "\x1b" not in text and "got \\x1b]0;owned\\x07\\x1b[2K" in text
    assert len(results) == 2
    for game in results:
        assert_clean(game)


@pytest.mark.slow
async def test_an_operator_who_stops_reading_freezes_no_game(tmp_path):
    # The host's status lines go to a pipe of one page that nobody reads: 200 refused
    # joiners write some 9 KB of lines. Its game must still be played to the end.
    reader, writer = os.pipe()
    fcntl.fcntl(writer, F_SETPIPE_SZ, 4096)
    host, out = start_host(tmp_path / "host", stderr=writer)
    os.close(writer)
    drained: list[bytes] = []
    try:
        invite = await invite_of(host, out)
        with trio.fail_after(SAFETY):
            wrong = frames.hi(bytes(16), None, 0)
            for _ in range(200):
                await say_once(invite, wrong)
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(3))
    finally:
        def drain() -> None:
            while chunk := os.read(reader, 65536):
                drained.append(chunk)

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()  # (now the operator reads again: the host can finish and exit)
        code = stop(host, interrupt=False)  # (a one-game host leaves after its game)
        thread.join(SAFETY)
        os.close(reader)
    assert_clean(game)
    assert code == 0
    text = b"".join(drained).decode()
    assert text.count("a joiner with a wrong join secret was refused") == 200
    assert "game over" in out.read_text()


def test_lines_for_a_reader_that_stopped_are_dropped_and_counted_never_waited_for():
    reader, writer = os.pipe()
    fcntl.fcntl(writer, F_SETPIPE_SZ, 4096)
    stream = os.fdopen(writer, "w")
    lines = LineWriter(capacity=100)

    def flood() -> None:
        for n in range(5000):
            lines.write(stream, f"line {n:04d} " + "x" * 40)

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    thread.join(SAFETY)
    assert not thread.is_alive()  # 5000 lines into a full pipe: never blocked
    got: list[bytes] = []
    drainer = threading.Thread(target=lambda: got.extend(iter(
        lambda: os.read(reader, 65536), b"")), daemon=True)
    drainer.start()  # the reader comes back
    assert lines.drain(SAFETY)
    stream.close()
    drainer.join(SAFETY)
    os.close(reader)
    text = b"".join(got).decode().splitlines()
    assert text[0].startswith("line 0000 ")
    assert "not shown" in text[-1]  # (the count of the last lines dropped, too)
    shown = [line for line in text if line.startswith("line ")]
    dropped = sum(int(line.split()[0].lstrip("(")) for line in text if "not shown" in line)
    assert len(shown) + dropped == 5000 and dropped > 4000  # every line shown or counted
    assert shown == sorted(shown)  # (in order)
