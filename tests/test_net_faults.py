"""Faults at connecting and while playing, on real loopback sockets.

Connecting: a wrong pin, a wrong join secret, a second joiner, another session version,
garbage and oversized input each end with a clear message on both sides, never a
traceback or a hang, and no saved game is created or touched. Playing: a fault-injecting
proxy between the joiner and the host cuts, stalls, half-closes and slows the connection,
and the games still end clean with the same transcripts on both sides.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from functools import partial
from pathlib import Path

import frames
import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hostkit import FAST, SAFETY

from p2pgotg.cli import main as cli_main
from p2pgotg.net.play.hosting import HostConfig, Hosting, host_game
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    make_certificate,
    open_pinned_connection,
    public_key_pin,
    serve_tls,
    server_context,
)
from p2pgotg.protocol import HOST, JOINER, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions
from p2pgotg.selfplay import bot_runner
from p2pgotg.testing.faultproxy import (
    CUT,
    DOWN,
    HALF_CLOSE,
    STALL,
    UP,
    FaultProxy,
    Plan,
    fixed_plans,
    random_plans,
)

# -- helpers ------------------------------------------------------------------------------


class Host:
    """host_game running in a nursery, with what it said and what it returned."""

    def __init__(self, save_dir: Path, limits: Timeouts, seat) -> None:
        cert, key = make_certificate()
        self.config = HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(),
                                 save_dir, port=0, bind="127.0.0.1", limits=limits,
                                 resume=False)
        self.seat = seat
        self.statuses: list[str] = []
        self.said = trio.Event()
        self.session: GameSession | None = None
        self.done = trio.Event()
        self.invite: Invite | None = None

    def status(self, text: str) -> None:
        self.statuses.append(text)
        self.said.set()
        self.said = trio.Event()

    async def wait_status(self, start: str) -> None:
        while not any(s.startswith(start) for s in self.statuses):
            await self.said.wait()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            self.session = await host_game(self.config, self.seat, on_status=self.status,
                                           task_status=task_status)
        finally:
            self.done.set()

    async def start(self, nursery: trio.Nursery) -> Invite:
        hosting: Hosting = await nursery.start(self.run)
        self.invite = Invite.decode(hosting.invites[0])
        return self.invite


async def idle_seat(session: GameSession) -> None:
    await trio.sleep_forever()


def joiner_config(invite: Invite, save_dir: Path, limits: Timeouts) -> JoinConfig:
    return JoinConfig(Ed25519PrivateKey.generate(), invite, save_dir, limits, resume=False)


def saved_games(root: Path) -> list[Path]:
    return sorted(root.rglob("*.gtr"))


def messages_by_sender(path: Path) -> dict[str, list[bytes]]:
    transcript = parse(path.read_bytes())
    assert not transcript.torn_tail
    return {role: [data for sender, data in transcript.messages if sender == role]
            for role in (HOST, JOINER)}


def assert_same_clean_game(host: GameSession, joiner: GameSession, capsys) -> None:
    for session in (host, joiner):
        assert session.verdict is not None, f"{session.peer.role}: no verdict"
        assert session.verdict.clean and session.verdict.audit_complete
    assert host.verdict == joiner.verdict
    host_file, joiner_file = messages_by_sender(host.path), messages_by_sender(joiner.path)
    assert host_file == joiner_file
    for role, envelopes in host_file.items():  # nothing lost, nothing applied twice
        seqs = [Envelope.decode(data).body().seq for data in envelopes]
        assert seqs == list(range(len(seqs))), f"{role}: {seqs}"
    for path in (host.path, joiner.path):
        assert cli_main(["verify", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err


def flip(data: bytes) -> bytes:
    return bytes([data[0] ^ 0x01]) + data[1:]


async def raw_client(port: int, pin: bytes, payload: bytes) -> list[dict]:
    """Connect over TLS, send raw bytes, and read frames until the host closes: the
    control frames it sent back (the connection must end, or the safety net fails)."""
    stream = await open_pinned_connection("127.0.0.1", port, pin)
    channel = FramedChannel(stream, keepalive_interval=None, silence_timeout=None)
    got = []
    await stream.send_all(payload)
    with trio.fail_after(SAFETY):
        while True:
            try:
                frame = await channel.receive()
            except NetError:
                break  # the host ended this connection
            got.append(frames.fields(frame))
    await channel.aclose()
    return got


# -- connecting errors --------------------------------------------------------------------


async def test_wrong_pin_stops_the_joiner_before_it_sends_anything(tmp_path):
    host = Host(tmp_path / "host", Timeouts(), idle_seat)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        bad = dataclasses.replace(invite, pin=flip(invite.pin))
        with trio.fail_after(SAFETY), pytest.raises(SessionError) as caught:
            await join_game(joiner_config(bad, tmp_path / "joiner", Timeouts()), idle_seat)
        message = str(caught.value)
        assert "not the host" in message and "nothing was sent" in message
        # the host saw a TLS handshake and then a close: never a greeting
        with trio.fail_after(SAFETY):
            await host.wait_status("a connection was refused")
        nursery.cancel_scope.cancel()
    assert len(host.statuses) == 1
    assert host.statuses[0].startswith("a connection was refused")
    assert "closed" in host.statuses[0]
    assert "secret" not in host.statuses[0]
    assert saved_games(tmp_path) == []


async def test_wrong_join_secret_is_refused_on_both_sides(tmp_path):
    host = Host(tmp_path / "host", Timeouts(), idle_seat)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        bad = dataclasses.replace(invite, secret=flip(invite.secret))
        with trio.fail_after(SAFETY), pytest.raises(SessionError, match="wrong join secret"):
            await join_game(joiner_config(bad, tmp_path / "joiner", Timeouts()), idle_seat)
        nursery.cancel_scope.cancel()
    assert host.statuses == ["a joiner with a wrong join secret was refused"]
    assert saved_games(tmp_path) == []


async def test_a_second_joiner_is_told_the_host_is_playing(tmp_path, capsys):
    """While a game is on, another joiner with the same invite is refused; the game goes
    on unharmed and ends clean."""
    go = trio.Event()

    async def gated_bot(session: GameSession) -> None:
        await go.wait()
        await bot_runner(1)(session)

    host = Host(tmp_path / "host", Timeouts(), gated_bot)
    first: list[GameSession] = []
    joined = trio.Event()

    def on_session(session: GameSession) -> None:
        first.append(session)
        joined.set()

    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)

        async def first_joiner() -> None:
            first.append(await join_game(
                joiner_config(invite, tmp_path / "first", Timeouts()), bot_runner(2),
                on_session=on_session))

        nursery.start_soon(first_joiner)
        with trio.fail_after(SAFETY):
            await joined.wait()
            while first[0].peer.flow.game_id is None:  # its hello is out: a game id
                await first[0].wait_changed()
        with trio.fail_after(SAFETY), pytest.raises(SessionError, match="already playing"):
            await join_game(joiner_config(invite, tmp_path / "second", Timeouts()), idle_seat)
        # (before or after the host took the first joiner's hello: either words say it)
        assert any(status in host.statuses for status in (
            "a second joiner was refused: a game is in progress",
            "a joiner asking for a new game was refused: a game is in progress"))
        assert saved_games(tmp_path / "second") == []
        go.set()
        with trio.fail_after(SAFETY):
            await host.done.wait()
    assert len(saved_games(tmp_path / "host")) == 1
    assert_same_clean_game(host.session, first[-1], capsys)


async def test_another_session_version_gets_an_error_naming_both_versions(tmp_path):
    host = Host(tmp_path / "host", Timeouts(), idle_seat)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        hello = msgpack.packb({"ctl": "hi", "v": 2, "secret": invite.secret, "game": None,
                               "have": 0}, use_bin_type=True)
        got = await raw_client(invite.port, invite.pin, len(hello).to_bytes(4, "big") + hello)
        nursery.cancel_scope.cancel()
    assert len(got) == 1 and got[0]["ctl"] == "error"
    assert "version 2" in got[0]["reason"] and "version 1" in got[0]["reason"]
    assert any("version 2" in s for s in host.statuses)
    assert saved_games(tmp_path) == []


async def test_a_host_speaking_another_version_is_a_clear_error_for_the_joiner(tmp_path):
    cert, key = make_certificate()

    async def future_host(stream: trio.SSLStream) -> None:
        channel = FramedChannel(stream, keepalive_interval=None, silence_timeout=None)
        await channel.receive()  # the joiner's greeting
        await channel.send(msgpack.packb({"ctl": "ok", "v": 2, "game": None, "have": 0}))

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(serve_tls, future_host,
                                                server_context(cert, key), 0, "127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        invite = Invite.new("127.0.0.1", port, public_key_pin(cert))
        with trio.fail_after(SAFETY), pytest.raises(SessionError) as caught:
            await join_game(joiner_config(invite, tmp_path / "joiner", Timeouts()), idle_seat)
        nursery.cancel_scope.cancel()
    assert "version 2" in str(caught.value) and "version 1" in str(caught.value)
    assert saved_games(tmp_path) == []


async def test_garbage_and_oversized_input_end_only_that_connection(tmp_path, capsys):
    """Each bad client gets its connection closed (with an error frame when it spoke TLS),
    promptly and without a traceback; then a real joiner plays a whole game."""
    limits = Timeouts(handshake=1.0)
    host = Host(tmp_path / "host", limits, bot_runner(5))
    rng = random.Random(1)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        port, pin = invite.port, invite.pin
        # not TLS at all: the TLS handshake fails and the handler never runs
        tcp = await trio.open_tcp_stream("127.0.0.1", port)
        await tcp.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + rng.randbytes(300))
        with trio.fail_after(SAFETY):
            while await _receive_or_eof(tcp):
                pass
        await tcp.aclose()
        cases = {
            "oversized length": b"\xff\xff\xff\xff" + rng.randbytes(100),
            "just over the limit": (64 * 1024 + 1).to_bytes(4, "big") + bytes(64),
            "not msgpack": (8).to_bytes(4, "big") + b"\xc1" * 8,
            "msgpack, not a greeting": _frame(msgpack.packb([1, 2, 3])),
            "random bytes": rng.randbytes(2000),
            "half a frame, then nothing": (100).to_bytes(4, "big") + b"x" * 10,
        }
        for name, payload in cases.items():
            got = await raw_client(port, pin, payload)
            assert [c["ctl"] for c in got] == ["error"], name
            assert got[0]["reason"].startswith("no valid greeting"), name
        assert len(host.statuses) == len(cases)
        assert all(s.startswith("a connection was refused") for s in host.statuses)
        # the host is still there for a real joiner
        with trio.fail_after(SAFETY):
            joiner = await join_game(joiner_config(invite, tmp_path / "joiner", limits),
                                     bot_runner(6))
            await host.done.wait()
    assert_same_clean_game(host.session, joiner, capsys)
    assert len(saved_games(tmp_path)) == 2


async def _receive_or_eof(stream: trio.abc.ReceiveStream) -> bytes:
    try:
        return await stream.receive_some(4096)
    except trio.BrokenResourceError:
        return b""


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


# -- faults while playing: the proxy -------------------------------------------------------


async def play_through_proxy(tmp_path: Path, planner, seed: int, limits: Timeouts = FAST,
                             ) -> tuple[GameSession, GameSession, FaultProxy]:
    """A bot host, a bot joiner whose invite points at the proxy, one whole game."""
    host = Host(tmp_path / "host", limits, bot_runner(seed * 2))
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        proxy = FaultProxy("127.0.0.1", invite.port, planner, seed=seed)
        proxy_port = await nursery.start(proxy.serve)
        routed = dataclasses.replace(invite, port=proxy_port)
        statuses: list[str] = []
        with trio.fail_after(SAFETY):
            joiner = await join_game(joiner_config(routed, tmp_path / "joiner", limits),
                                     bot_runner(seed * 2 + 1), on_status=statuses.append)
            await host.done.wait()
        nursery.cancel_scope.cancel()
    assert host.session is not None
    return host.session, joiner, proxy


@pytest.mark.parametrize("seed", [1, 2])
async def test_games_survive_cuts_at_random_points_and_delayed_frames(tmp_path, capsys, seed):
    faults = 4
    planner = random_plans(faults=faults, kinds=(CUT,), after=(300, 3000), delay=0.003)
    host, joiner, proxy = await play_through_proxy(tmp_path, planner, seed)
    assert_same_clean_game(host, joiner, capsys)
    # every planned cut happened (a game is longer than the bytes they need), each on its
    # own connection, and the game went on over the next one
    assert proxy.faults(CUT) == faults
    assert [c.faulted for c in proxy.connections[:faults]] == [CUT] * faults
    assert len(proxy.connections) > faults


@pytest.mark.slow
async def test_games_survive_stalls_half_closes_and_dripping(tmp_path, capsys):
    planner = fixed_plans([
        Plan(drip=3, drip_interval=0.0005, fault=CUT, after=4000),
        Plan(fault=STALL, after=3000, stall_for=5.0),
        Plan(fault=HALF_CLOSE, direction=UP, after=2500),
        Plan(fault=HALF_CLOSE, direction=DOWN, after=3500),
        Plan(fault=STALL, after=200, stall_for=5.0),  # in the middle of the TLS handshake
    ], then=Plan(delay=0.002))
    # The dripped handshake takes about 0.5 s idle and past 1.5 s on a loaded machine; the
    # stall inside a handshake (5 s) must still outlast the limit, to be cut by it.
    limits = dataclasses.replace(FAST, handshake=3.0)
    host, joiner, proxy = await play_through_proxy(tmp_path, planner, seed=3, limits=limits)
    assert_same_clean_game(host, joiner, capsys)
    assert [c.faulted for c in proxy.connections[:5]] == [CUT, STALL, HALF_CLOSE,
                                                          HALF_CLOSE, STALL]


# -- the proxy itself ------------------------------------------------------------------------


async def start_server(nursery: trio.Nursery, handler) -> int:
    listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
    return listeners[0].socket.getsockname()[1]


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    got = bytearray()
    while True:
        try:
            data = await stream.receive_some(65536)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            break  # a reset ends it too
        if not data:
            break
        got += data
    return bytes(got)


async def echo(stream: trio.SocketStream) -> None:
    while data := await stream.receive_some(65536):
        await stream.send_all(data)
    await stream.send_eof()


async def test_proxy_keeps_order_under_delays_and_dripping():
    payload = random.Random(5).randbytes(50_000)
    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, echo)
        proxy = FaultProxy("127.0.0.1", port, fixed_plans([], then=Plan(
            delay=0.003, drip=777, drip_interval=0.0001)), seed=1)
        client = await trio.open_tcp_stream("127.0.0.1", await nursery.start(proxy.serve))
        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as inner:
                async def send() -> None:
                    for i in range(0, len(payload), 1000):
                        await client.send_all(payload[i:i + 1000])
                    await client.send_eof()

                inner.start_soon(send)
                back = await read_all(client)
        nursery.cancel_scope.cancel()
    assert back == payload
    log, = proxy.connections
    assert log.forwarded == {UP: len(payload), DOWN: len(payload)} and log.faulted is None


@pytest.mark.parametrize("after", [0, 1, 999, 1000, 4096])
async def test_proxy_cuts_after_exactly_that_many_bytes(after):
    received = []
    sunk = trio.Event()

    async def sink(stream: trio.SocketStream) -> None:
        received.append(await read_all(stream))
        sunk.set()

    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, sink)
        proxy = FaultProxy("127.0.0.1", port, fixed_plans([Plan(fault=CUT, after=after)]))
        client = await trio.open_tcp_stream("127.0.0.1", await nursery.start(proxy.serve))
        with trio.fail_after(SAFETY):
            # (the reset may come back while we are still sending)
            with contextlib.suppress(trio.BrokenResourceError):
                await client.send_all(bytes(range(256)) * 40)  # 10240 bytes
            assert await read_all(client) == b""
            await sunk.wait()
        nursery.cancel_scope.cancel()
    assert received == [(bytes(range(256)) * 40)[:after]]
    assert proxy.connections[0].faulted == CUT and proxy.connections[0].closed


async def test_proxy_half_close_ends_one_direction_only():
    async def answer_at_eof(stream: trio.SocketStream) -> None:
        got = await read_all(stream)
        await stream.send_all(b"heard %d" % len(got))
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, answer_at_eof)
        proxy = FaultProxy("127.0.0.1", port, fixed_plans([
            Plan(fault=HALF_CLOSE, direction=UP, after=1500)]))
        client = await trio.open_tcp_stream("127.0.0.1", await nursery.start(proxy.serve))
        with trio.fail_after(SAFETY):
            await client.send_all(b"x" * 4000)  # the rest is swallowed, not refused
            assert await read_all(client) == b"heard 1500"
        nursery.cancel_scope.cancel()
    assert proxy.connections[0].faulted == HALF_CLOSE


def test_random_plans_are_bounded_and_the_same_for_the_same_seed():
    planner = random_plans(faults=3, kinds=(CUT, STALL), after=(10, 20), delay=0.5)

    def plans(seed: int) -> list[Plan]:
        return [planner(i, random.Random(f"{seed}/{i}")) for i in range(6)]

    assert plans(7) == plans(7) and plans(7) != plans(8)
    faulty = [p for p in plans(7) if p.fault is not None]
    assert [p.fault for p in faulty] == [CUT, STALL, CUT]
    assert all(10 <= p.after <= 20 for p in faulty)
    assert all(p.delay == 0.5 for p in plans(7))
    with pytest.raises(ValueError):
        Plan(fault="explode")
