"""Hosts under abuse (issue 13), in this process on real loopback TLS.

Each test does the abuse for real, bounded in count and time, and asserts what a player or
the host's operator would see: the real joiner gets in, the game in play ends clean, the
peer's text arrives escaped, nothing unsaved is sent. Expected values come from SPEC 3.4
and 3.5 (the limits before admission, the pre-game limit, `first`, `bye`, write-ahead).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import random
import ssl
from functools import partial
from pathlib import Path

import frames
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hostkit import FAST, SAFETY, assert_clean, joiner

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play import joining
from p2pgotg.net.play.hosting import INVITE_TAKEN, PREGAME_WORDS, HostConfig, host_game
from p2pgotg.net.play.hosting import Hosting as MultiHosting
from p2pgotg.net.play.hosting import HostStats as MultiHostStats
from p2pgotg.net.play.joining import PIN_MISMATCH_WORDS, join_game
from p2pgotg.net.play.multihost import ACTION_LIMIT, FULL, host_many
from p2pgotg.net.play.seat import drive_async
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.admission import AdmissionLimits, source_of
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import HEADER, FramedChannel, encode_frame
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    client_context,
    make_certificate,
    peer_certificate,
    serve_tls,
    server_context,
)
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, Phase, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions, Termination
from p2pgotg.selfplay import bot_runner


def config(save_dir: Path, limits: Timeouts = FAST,
           admission: AdmissionLimits | None = None,
           options: RuleOptions | None = None) -> HostConfig:
    cert, key = make_certificate()
    return HostConfig(Ed25519PrivateKey.generate(), cert, key, options or RuleOptions(),
                      save_dir, port=0, bind="127.0.0.1", limits=limits, resume=False,
                      admission=admission or AdmissionLimits())


class Many:
    """host_many in a nursery: what it said, the games that ended, its counts."""

    def __init__(self, save_dir: Path, max_games: int, action_limit: float = ACTION_LIMIT,
                 **kwargs: object) -> None:
        self.config = config(save_dir, **kwargs)  # type: ignore[arg-type]
        self.max_games = max_games
        self.action_limit = action_limit
        self.statuses: list[str] = []
        self.ended: dict[int, GameSession] = {}
        self.stats: MultiHostStats | None = None
        self.stop = trio.Event()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        self.stats = await host_many(
            self.config, lambda n: bot_runner(1000 + n), self.max_games,
            action_limit=self.action_limit, on_status=self.statuses.append,
            on_game_end=self.ended.__setitem__, stop=self.stop, task_status=task_status)

    async def start(self, nursery: trio.Nursery) -> Invite:
        hosting: MultiHosting = await nursery.start(self.run)
        return Invite.decode(hosting.invites[0])


def bot_until(seed: int, plies: int = 24, gate: trio.Event | None = None,
              at: int = 4, reached: trio.Event | None = None):
    """The bot, resigning at `plies` (a short game with both audits); with `gate`, it
    waits for the gate at ply `at` (the game is then in play, with its id)."""
    seat = BotSeat(random.Random(seed))

    async def decide(peer):
        view = peer.view
        if view is not None and peer.phase is Phase.PLAY and not peer.flow.is_over:
            if gate is not None and view.ply >= at and not gate.is_set():
                if reached is not None:
                    reached.set()
                await gate.wait()
            if view.ply >= plies:
                return lambda p: p.resign()
        return seat.step(peer)

    async def run(session: GameSession) -> None:
        await drive_async(session, decide)

    return run


async def tls_channel(invite: Invite, source: str | None = None) -> FramedChannel:
    """A raw TLS connection to the host (no pin check needed here: it is ours)."""
    tcp = await trio.open_tcp_stream(invite.address, invite.port, local_address=source)
    stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
    await stream.do_handshake()
    return FramedChannel(stream, keepalive_interval=0.2, silence_timeout=None)


async def wait_for(condition, poll: float = 0.02) -> None:
    while not condition():
        await trio.sleep(poll)


# -- finding 1: a slot is held only by an admitted player who makes progress --------------

async def test_hi_then_only_keepalives_loses_the_slot_at_the_pregame_limit(tmp_path):
    host = Many(tmp_path / "host", max_games=2, admission=AdmissionLimits(pregame=2.0))
    heard: list[dict] = []
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)

        async def squat(*, task_status=trio.TASK_STATUS_IGNORED) -> None:
            channel = await tls_channel(invite, source="127.0.0.2")  # (it cools down after)
            await channel.send(frames.hi(invite.secret, None, 0))
            frames.expect_kind(await channel.receive(), "ok")
            task_status.started()
            async with trio.open_nursery() as inner:
                inner.start_soon(channel.keep_alive)  # alive, but never a hello
                try:
                    while True:
                        ctl = frames.fields(await channel.receive())
                        if ctl is not None:
                            heard.append(ctl)
                except NetError:
                    pass
                inner.cancel_scope.cancel()
            await channel.aclose()

        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as squatters:
                for _ in range(2):
                    await squatters.start(squat)
                third = await tls_channel(invite)  # both slots are held right now
                await third.send(frames.hi(invite.secret, None, 0))
                full = frames.fields(await third.receive())
                await third.aclose()
            # (the squatters' connections are closed by the host: the slots are free)
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(1))
        host.stop.set()
    assert full is not None and full["ctl"] == "error" and full["reason"].startswith(FULL)
    assert [c.get("reason") for c in heard if c["ctl"] == "error"] == [PREGAME_WORDS] * 2
    assert_clean(game)
    assert host.stats is not None and host.stats.late == 2 and host.stats.started == 3


async def test_the_one_game_host_drops_a_squatter_at_the_pregame_limit_too(tmp_path):
    cfg = config(tmp_path / "host", admission=AdmissionLimits(pregame=2.0))
    async with trio.open_nursery() as nursery:
        hosting = await nursery.start(lambda task_status: host_game(
            cfg, bot_until(4), task_status=task_status))
        invite = Invite.decode(hosting.invites[0])
        with trio.fail_after(SAFETY):
            squatter = await tls_channel(invite)
            await squatter.send(frames.hi(invite.secret, None, 0))
            frames.expect_kind(await squatter.receive(), "ok")
            said = []
            async with trio.open_nursery() as inner:
                inner.start_soon(squatter.keep_alive)  # alive, but never a hello
                try:
                    while True:
                        said.append(frames.fields(await squatter.receive()))
                except NetError:
                    pass
                inner.cancel_scope.cancel()
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(5))
        nursery.cancel_scope.cancel()
    assert {"ctl": "error", "v": 1, "reason": PREGAME_WORDS} in said
    assert_clean(game)


# -- finding 10: no takeover of a game whose joiner hello was lost; pin mismatch retried ----

async def test_a_lost_joiner_hello_cannot_be_used_to_take_the_game_over(tmp_path):
    # (a game awaiting its joiner's hello is kept handshake + longest retry: 10 s here)
    host = Many(tmp_path / "host", max_games=3,
                limits=dataclasses.replace(FAST, handshake=10.0))
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            first_joiner = await tls_channel(invite)
            await first_joiner.send(frames.hi(invite.secret, None, 0))
            frames.expect_kind(await first_joiner.receive(), "ok")
            frame = await first_joiner.receive()  # the host's hello
            ours = Envelope.decode(frame).hash
            await first_joiner.aclose()  # our own hello is "lost" with this connection
            await wait_for(lambda: any("game 1: connection lost" in s for s in host.statuses))
            answers = []
            for first in (None, bytes(32)):  # another holder of the invite tries it
                other = await tls_channel(invite)
                await other.send(frames.hi(invite.secret, os.urandom(32), 0, first))
                answers.append(frames.fields(await other.receive()))
                await other.aclose()
            back = await tls_channel(invite)  # the joiner we admitted comes back
            await back.send(frames.hi(invite.secret, os.urandom(32), 0, ours))
            ok = frames.expect_kind(await back.receive(), "ok")
            await back.aclose()
        host.stop.set()
    for answer in answers:
        assert answer is not None and answer["ctl"] == "error", answer
        assert "does not have that game" in answer["reason"]
    assert ok["first"] == ours and ok["game"] is None


class SwitchingProxy:
    """A TCP relay on loopback whose target can be switched: connections opened while it
    points at the impostor reach a TLS server with another key (someone on the path)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.scopes: set[trio.CancelScope] = set()

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self.relay, listeners)

    async def relay(self, client: trio.SocketStream) -> None:
        with trio.CancelScope() as scope:
            self.scopes.add(scope)
            try:
                server = await trio.open_tcp_stream("127.0.0.1", self.target)
                async with client, server, trio.open_nursery() as nursery:
                    nursery.start_soon(self.pump, client, server, nursery.cancel_scope)
                    nursery.start_soon(self.pump, server, client, nursery.cancel_scope)
            except OSError:
                pass
            finally:
                self.scopes.discard(scope)

    @staticmethod
    async def pump(a: trio.SocketStream, b: trio.SocketStream, scope) -> None:
        try:
            async for data in a:
                await b.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()

    def switch(self, target: int) -> None:
        self.target = target
        for scope in list(self.scopes):
            scope.cancel()


async def test_a_joiner_keeps_trying_through_an_impostor_and_finishes(tmp_path):
    cfg = config(tmp_path / "host")
    impostor_cert, impostor_key = make_certificate()  # another key: the pin will not match
    gate, reached = trio.Event(), trio.Event()
    statuses: list[str] = []

    async def nothing(stream: trio.SSLStream) -> None:
        await trio.sleep(SAFETY)

    async with trio.open_nursery() as nursery:
        hosting = await nursery.start(lambda task_status: host_game(
            cfg, bot_until(2), task_status=task_status))
        impostor = await nursery.start(serve_tls, nothing,
                                       server_context(impostor_cert, impostor_key), 0,
                                       "127.0.0.1")
        real = Invite.decode(hosting.invites[0])
        proxy = SwitchingProxy(real.port)
        invite = dataclasses.replace(real, port=await nursery.start(proxy.serve))
        result: list[GameSession] = []

        async def play() -> None:
            result.append(await join_game(joiner(invite, tmp_path / "joiner"),
                                          bot_until(3, gate=gate, reached=reached),
                                          on_status=statuses.append))

        with trio.fail_after(SAFETY):
            nursery.start_soon(play)
            await reached.wait()  # the game is in play, with its id
            proxy.switch(impostor[0].socket.getsockname()[1])
            await wait_for(lambda: sum(PIN_MISMATCH_WORDS in s for s in statuses) >= 3)
            proxy.switch(real.port)
            gate.set()
            await wait_for(lambda: bool(result))
        nursery.cancel_scope.cancel()
    assert_clean(result[0])


# -- finding 4: refused connections leave nothing behind, whatever the collector -----------

def server_tls_objects() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, ssl.SSLObject) and o.server_side)


@pytest.mark.slow
async def test_refused_connections_leave_no_tls_objects_behind_with_the_collector_off(
        tmp_path):
    host = Many(tmp_path / "host", max_games=2,
                limits=dataclasses.replace(FAST, handshake=0.3),
                admission=AdmissionLimits(unadmitted=64, per_address=64))
    rounds, kinds = 12, 25  # 300 refused connections, 25 at once, 5 kinds
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        gc.collect()
        before = server_tls_objects()
        gc.disable()
        try:
            async def refused(kind: int) -> None:
                tcp = await trio.open_tcp_stream(invite.address, invite.port)
                if kind == 0:  # plain TCP, no TLS at all
                    await tcp.aclose()
                    return
                stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
                try:
                    await stream.do_handshake()
                    if kind == 2:
                        await stream.send_all(encode_frame(frames.hi(bytes(16), None, 0)))
                    elif kind == 3:
                        await stream.send_all(encode_frame(b"\x93garbage"))
                    elif kind == 4:
                        await stream.send_all(HEADER.pack(1 << 30))  # oversized
                    # (kind 1: TLS, then nothing: the hi deadline)
                    while await stream.receive_some(4096):
                        pass
                except (trio.BrokenResourceError, ssl.SSLError):
                    pass
                finally:
                    await trio.aclose_forcefully(stream)

            with trio.fail_after(SAFETY):
                for _ in range(rounds):
                    async with trio.open_nursery() as batch:
                        for kind in range(kinds):
                            batch.start_soon(refused, kind % 5)
                # every refusal is over once the host has said so for each
                await wait_for(lambda: host.statuses.count(
                    "a joiner with a wrong join secret was refused") >= rounds * kinds // 5)
                await wait_for(lambda: server_tls_objects() <= before)
            left = server_tls_objects()
        finally:
            gc.enable()
        host.stop.set()
    assert left <= before
    assert host.stats is not None and host.stats.refused >= rounds * kinds * 4 // 5


# -- finding 5: a peer's text reaches the operator escaped -----------------------------------

async def test_the_peers_text_reaches_the_host_operator_escaped(tmp_path):
    host = Many(tmp_path / "host", max_games=2)
    nasty = "\x1b]0;owned\x07\x1b[2K\u202efake line\r\n"
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            for frame in (frames.raw(nasty), frames.raw("error", reason=nasty),
                          msgpack_control(v=nasty)):
                channel = await tls_channel(invite)
                await channel.send(frame)
                with_reason = frames.fields(await channel.receive())
                await channel.aclose()
                assert with_reason is not None and "\x1b" not in with_reason["reason"]
            await wait_for(lambda: len([s for s in host.statuses if "refused" in s]) >= 3)
        host.stop.set()
    refusals = [s for s in host.statuses if "refused" in s]
    assert len(refusals) == 3
    for line in refusals:
        assert not any(ch in line for ch in "\x1b\x07\r\n\u202e"), line
        assert "\\x1b]0;owned\\x07" in line, line


def msgpack_control(**fields: object) -> bytes:
    import msgpack

    return msgpack.packb({"ctl": "hi", **fields}, use_bin_type=True)


async def test_a_joiner_shows_the_hosts_refusal_escaped(tmp_path):
    cert, key = make_certificate()

    async def refusing(stream: trio.SSLStream) -> None:
        channel = FramedChannel(stream)
        await channel.receive()
        await channel.send(frames.raw("error", reason="\x1b]52;c;cm0gLXJm\x07 go away"))

    from p2pgotg.net.transport.tls import public_key_pin

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(serve_tls, refusing, server_context(cert, key), 0,
                                        "127.0.0.1")
        invite = Invite("127.0.0.1", listeners[0].socket.getsockname()[1],
                        public_key_pin(cert), bytes(16))
        with trio.fail_after(SAFETY):
            try:
                await join_game(joiner(invite, tmp_path / "joiner"), bot_until(1))
            except SessionError as exc:
                said = str(exc)
        nursery.cancel_scope.cancel()
    assert "\x1b" not in said and "\\x1b]52;c;cm0gLXJm\\x07 go away" in said


# -- finding 9: after a clean end the host leaves as soon as it holds what it needs --------

class ShortByeChannel(FramedChannel):
    """A joiner whose goodbye counts none of the host's messages (another implementation,
    or one whose count crossed the host's last message)."""

    async def send(self, payload: bytes) -> None:
        ctl = frames.fields(payload)
        if ctl is not None and ctl["ctl"] == "bye":
            payload = frames.raw("bye", have=0)
        await super().send(payload)


async def test_a_clean_end_with_a_short_bye_lets_the_host_leave_at_once(tmp_path,
                                                                        monkeypatch):
    # abandonment 180 s and a linger of 55 s (silence + handshake + longest retry): a host
    # that waited for either would outlast SAFETY
    limits = Timeouts(handshake=30.0, keepalive=0.2, silence=20.0, bye=2.0, retry=(0.02, 5.0))
    monkeypatch.setattr(joining, "FramedChannel", ShortByeChannel)
    cfg = config(tmp_path / "host", limits)
    async with trio.open_nursery() as nursery:
        done: list[GameSession] = []

        async def host(*, task_status=trio.TASK_STATUS_IGNORED) -> None:
            done.append(await host_game(cfg, bot_until(4), task_status=task_status))

        hosting = await nursery.start(host)
        invite = Invite.decode(hosting.invites[0])
        with trio.fail_after(SAFETY):
            game = await join_game(joiner(invite, tmp_path / "joiner", limits), bot_until(5))
            await wait_for(lambda: bool(done))
    assert_clean(game)
    assert_clean(done[0])
    assert done[0].peer_has == 0 and done[0].finished  # (the short bye, taken as final)


# -- write-ahead under a failing disk: that game stops, the others go on -------------------

def fd_of(path: Path) -> int:
    for entry in Path("/proc/self/fd").iterdir():
        try:
            if os.readlink(entry) == str(path):
                return int(entry.name)
        except OSError:
            continue
    raise AssertionError(f"{path} is not open")


async def test_a_transcript_that_cannot_be_written_stops_its_game_and_only_it(tmp_path):
    host = Many(tmp_path / "host", max_games=2)
    gates = [trio.Event(), trio.Event()]
    reached = [trio.Event(), trio.Event()]
    sessions: list[GameSession] = []
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        finished: list[GameSession] = []

        async def play(i: int) -> None:
            finished.append(await join_game(
                joiner(invite, tmp_path / f"joiner-{i}"),
                bot_until(10 + i, gate=gates[i], reached=reached[i]),
                on_session=sessions.append))

        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as players:
                players.start_soon(play, 0)
                await reached[0].wait()
                players.start_soon(play, 1)
                await reached[1].wait()
                victim = sessions[1]
                gid = victim.peer.flow.game_id
                assert gid is not None
                host_file = tmp_path / "host" / f"{gid.hex()}.gtr"
                full = os.open("/dev/full", os.O_WRONLY)  # every write: ENOSPC
                os.dup2(full, fd_of(host_file))
                os.close(full)
                gates[1].set()  # its next move makes the host write: the write fails
                await wait_for(lambda: any("game 2: stopped" in s for s in host.statuses))
                gates[0].set()  # the other game plays on to its end
                await wait_for(lambda: 1 in host.ended)
                players.cancel_scope.cancel()  # (the stopped game's joiner keeps trying)
        host.stop.set()
    assert_clean(host.ended[1])
    stopped = [s for s in host.statuses if s.startswith("game 2:") and "space" in s]
    assert len(stopped) == 1 and "No space left on device" in stopped[0]
    assert host.stats is not None and host.stats.halted == 1
    # nothing the host could not save was sent: the joiner holds no host message that
    # is not in the host's file
    saved = parse(host_file.read_bytes())
    saved_host = [m for role, m in saved.messages if role == HOST]
    held = victim.peer.flow.senders[HOST].envelopes
    assert 0 < len(held) <= len(saved_host)


# -- finding 2: the bound on strangers, overall and per address ------------------------------

async def test_a_flood_from_one_address_cannot_lock_out_a_joiner_from_another(tmp_path):
    admission = AdmissionLimits(unadmitted=6, per_address=3, tls_handshake=SAFETY)
    host = Many(tmp_path / "host", max_games=2, admission=admission)
    closed: dict[str, int] = {}
    held: list[trio.SocketStream] = []

    async def stranger(source: str) -> None:
        tcp = await trio.open_tcp_stream("127.0.0.1", invite.port, local_address=source)
        held.append(tcp)
        try:
            data = await tcp.receive_some(1)  # we never speak: only the host ends it
        except trio.BrokenResourceError:
            data = b""
        if not data:
            closed[source] = closed.get(source, 0) + 1

    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as flood:
                for _ in range(20):
                    flood.start_soon(stranger, "127.0.0.2")
                await wait_for(lambda: closed.get("127.0.0.2") == 17)
                game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(6))
                for _ in range(3):
                    flood.start_soon(stranger, "127.0.0.3")  # 6 strangers: the overall bound
                await wait_for(lambda: len(held) == 23)
                for _ in range(3):
                    flood.start_soon(stranger, "127.0.0.4")
                await wait_for(lambda: closed.get("127.0.0.4") == 3)
                assert closed.get("127.0.0.2") == 17 and "127.0.0.3" not in closed
                flood.cancel_scope.cancel()
        for tcp in held:
            await tcp.aclose()
        host.stop.set()
    assert_clean(game)
    turned_away = [s for s in host.statuses if s.startswith("connections turned away")]
    assert 1 <= len(turned_away) <= 2  # (said once per ten seconds, with a count)


@pytest.mark.parametrize(("address", "source"), [
    ("192.0.2.7", "192.0.2.7"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),  # the same home's /64
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),  # the next /64: another source
    ("::ffff:192.0.2.7", "192.0.2.7"),  # IPv4 on a dual-stack socket
    ("fe80::1%eth0", "fe80::/64"),
])
def test_strangers_are_counted_per_ipv4_address_or_ipv6_64(address: str, source: str) -> None:
    """Anyone on IPv6 holds a /64 or more: one source per /64, or the bound bounds nothing."""
    assert source_of(address) == source


async def test_one_invite_holder_cannot_fill_the_slots_with_games_it_never_begins(tmp_path):
    """An invite is a bearer token: a holder that opens games and never sends its hello
    holds at most `pregame_per_source` of them, and the rest stay free for others."""
    host = Many(tmp_path / "host", max_games=4,
                admission=AdmissionLimits(pregame_per_source=2))
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        held: list[FramedChannel] = []
        with trio.fail_after(SAFETY):
            for _ in range(2):
                channel = await tls_channel(invite, source="127.0.0.2")
                await channel.send(frames.hi(invite.secret, None, 0))
                frames.expect_kind(await channel.receive(), "ok")
                nursery.start_soon(channel.keep_alive)
                held.append(channel)
            third = await tls_channel(invite, source="127.0.0.2")
            await third.send(frames.hi(invite.secret, None, 0))
            refused = frames.fields(await third.receive())
            await third.aclose()
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(2))
        host.stop.set()
        for channel in held:
            await channel.aclose()
    assert refused is not None and refused["ctl"] == "error"
    assert "2 games from your address have not begun yet" in refused["reason"]
    assert_clean(game)


# -- issue 23, finding 5: no slot held by a joiner that makes no progress ------------------

def run_verify(path: Path | None) -> int:
    from p2pgotg.cli import main as cli_main

    return cli_main(["verify", str(path)])


def from_source(invite: Invite, source: str):
    """A joiner's opener that connects from `source` (a loopback address of its own)."""
    async def open_stream() -> trio.SSLStream:
        tcp = await trio.open_tcp_stream(invite.address, invite.port, local_address=source)
        stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
        await stream.do_handshake()
        return stream

    return open_stream


def joiner_from(invite: Invite, save_dir: Path, source: str):
    return dataclasses.replace(joiner(invite, save_dir), opener=from_source(invite, source))


def never_moves(seed: int):
    """A joiner's program that accepts the rules and commits its setup, then makes no move
    (its automatic answers still go out), and stays connected."""
    seat = BotSeat(random.Random(seed))

    async def decide(peer):
        return None if peer.phase is Phase.PLAY else seat.step(peer)

    async def run(session: GameSession) -> None:
        await drive_async(session, decide)

    return run


async def ask_for_a_game(invite: Invite, source: str = "127.0.0.1") -> dict:
    """A `hi` for a new game: the host's answer (`ok`, or an `error` with its reason)."""
    channel = await tls_channel(invite, source=source)
    await channel.send(frames.hi(invite.secret, None, 0))
    answer = frames.fields(await channel.receive())
    await channel.aclose()
    assert answer is not None
    return answer


@pytest.mark.parametrize("clock", [0, 3600], ids=["no clock", "an hour's clock"])
async def test_joiners_that_never_move_lose_their_slots_at_the_action_limit(tmp_path, clock):
    """Two joiners that accept, commit a setup and never move hold both slots of a
    two-game host until the host's limit per owed action; then the host claims both games
    (abandonment, its word: exit 4), their slots are free, a real joiner gets in, and
    their address waits the cool-down for a new game. With a clock too: the limit is the
    host's, per action, whatever the clock leaves."""
    host = Many(tmp_path / "host", max_games=2, action_limit=1.5,
                options=RuleOptions(clock_seconds=clock),
                admission=AdmissionLimits(lapse_cooldown=SAFETY * 2))
    squatters: list[GameSession] = []
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            for i in range(2):
                nursery.start_soon(partial(
                    join_game, joiner_from(invite, tmp_path / f"squatter-{i}", "127.0.0.2"),
                    never_moves(i), on_session=squatters.append))
            await wait_for(lambda: len(squatters) == 2 and all(
                s.peer.phase is Phase.PLAY for s in squatters))
            full = await ask_for_a_game(invite)  # both slots are held right now
            await wait_for(lambda: all(s.done for s in squatters))
            # (the host books the lapse when its side of the game ends, which a loaded
            # machine can put after the joiner has seen the claim)
            await wait_for(lambda: len(host.ended) == 2)
            again = await ask_for_a_game(invite, source="127.0.0.2")
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(1))
        host.stop.set()
    assert full["ctl"] == "error" and full["reason"].startswith(FULL)
    assert again["ctl"] == "error" and "made no progress in time" in again["reason"]
    assert_clean(game)
    assert host.stats is not None and host.stats.stalled == 2
    claimed = [s for n, s in host.ended.items() if s.peer.flow.game_id in
               {q.peer.flow.game_id for q in squatters}]
    assert len(claimed) == 2
    for session in claimed:
        verdict = session.verdict
        assert verdict is not None and verdict.clean and verdict.winner == HOST
        assert verdict.termination is Termination.ABANDONMENT and verdict.claimants == (HOST,)
        assert run_verify(session.path) == 4  # (the claimant's word)
    assert sum("(this host's limit): claiming the game" in s for s in host.statuses) == 2


async def test_one_source_holds_at_most_its_share_of_games_begun_or_not(tmp_path):
    """Games that have begun count against the per-source cap too: a third game from one
    address is refused while its two are in play, and a joiner from elsewhere gets in."""
    host = Many(tmp_path / "host", max_games=4,
                admission=AdmissionLimits(games_per_source=2))
    gate = trio.Event()
    reached = [trio.Event(), trio.Event()]
    played: list[GameSession] = []
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as pair:
                for i in range(2):
                    async def play(i: int = i) -> None:
                        played.append(await join_game(
                            joiner_from(invite, tmp_path / f"same-{i}", "127.0.0.2"),
                            bot_until(10 + i, gate=gate, reached=reached[i])))
                    pair.start_soon(play)
                for event in reached:
                    await event.wait()  # (both games have begun: they are in play)
                third = await ask_for_a_game(invite, source="127.0.0.2")
                other = await join_game(joiner(invite, tmp_path / "other"), bot_until(3))
                gate.set()
        host.stop.set()
    assert third["ctl"] == "error"
    assert "2 games from your address are in progress" in third["reason"]
    for session in [*played, other]:
        assert_clean(session)


async def test_a_squatter_cut_at_the_pregame_limit_is_not_admitted_again_at_once(tmp_path):
    host = Many(tmp_path / "host", max_games=2,
                admission=AdmissionLimits(pregame=1.0, lapse_cooldown=SAFETY * 2))
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            squatter = await tls_channel(invite, source="127.0.0.2")
            await squatter.send(frames.hi(invite.secret, None, 0))
            frames.expect_kind(await squatter.receive(), "ok")
            heard = []
            with contextlib.suppress(NetError):
                while True:  # (it answers nothing: the host cuts it at the pre-game limit)
                    heard.append(frames.fields(await squatter.receive()))
            await squatter.aclose()
            await wait_for(lambda: host.stats is not None or any(
                "given up" in s for s in host.statuses))
            back = await ask_for_a_game(invite, source="127.0.0.2")
            game = await join_game(joiner(invite, tmp_path / "joiner"), bot_until(2))
        host.stop.set()
    assert {"ctl": "error", "v": 1, "reason": PREGAME_WORDS} in heard
    assert back["ctl"] == "error" and "made no progress in time" in back["reason"]
    assert_clean(game)


# -- issue 23, finding 12: the coin cannot be ground by rejoining --------------------------

async def see_the_toss(invite: Invite, key: Ed25519PrivateKey) -> dict | str:
    """A joiner's program that accepts the rules (its hello commits its coin), waits for
    the host's answer and hangs up without opening its coin: the host's `coin` tells it
    who will be White. Returns what came after its hello: the type of the host's message
    (`coin`: a toss), or the host's `error` frame."""
    tcp = await trio.open_tcp_stream(invite.address, invite.port)
    stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
    await stream.do_handshake()
    channel = FramedChannel(stream, keepalive_interval=0.2, silence_timeout=None)
    peer = GotgPeer(JOINER, key, certificate_fingerprint(peer_certificate(stream)))
    try:
        await channel.send(frames.hi(invite.secret, None, 0))
        admitted = frames.fields(await channel.receive())
        if admitted is None or admitted["ctl"] != "ok":
            return admitted or {}
        peer.receive(await channel.receive())  # the host's hello
        peer.accept()
        for data in peer.data_to_send():
            await channel.send(data)
        answer = await channel.receive()
    finally:
        await channel.aclose()  # (the abort: its coin_open is never sent)
    ctl = frames.fields(answer)
    return ctl if ctl is not None else Envelope.decode(answer).body().type


async def test_a_joiner_that_aborts_after_the_toss_gets_no_new_one_by_rejoining(tmp_path):
    """The many-game host (one invite, many joiners): a key with an unfinished game gets
    no second game, so no second toss; the aborted game is claimed at the duty limit
    (the joiner is away), and only then can that key start another. A fresh key still
    gets a game, and a toss (SPEC 3.4 says what that buys: a new toss for a game lost)."""
    limits = dataclasses.replace(FAST, duty=1.0)
    host = Many(tmp_path / "host", max_games=4, limits=limits)
    key = Ed25519PrivateKey.generate()
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY):
            first = await see_the_toss(invite, key)
            again = await see_the_toss(invite, key)  # the same key, at once: no new toss
            fresh = await see_the_toss(invite, Ed25519PrivateKey.generate())
            await wait_for(lambda: len(host.ended) == 2)  # (both aborted games, claimed)
        host.stop.set()
    assert first == "coin" and fresh == "coin"
    assert isinstance(again, dict) and again["ctl"] == "error"
    assert "you have an unfinished game on this host, whose coin toss is made" in again[
        "reason"]
    for session in host.ended.values():
        verdict = session.verdict
        assert verdict is not None and verdict.winner == HOST
        assert verdict.termination is Termination.TIME_FORFEIT and not verdict.audit_complete
        assert run_verify(session.path) == 4
    assert sum("has not sent the opening of its coin in time" in s
               for s in host.statuses) == 2


async def test_the_one_game_host_gives_its_invite_to_the_game_whose_toss_is_made(tmp_path):
    """The one-game host: once the toss is made, a `hi` for a new game with the invite is
    refused in words that say so: the invite belongs to that game."""
    cfg = config(tmp_path / "host")
    key = Ed25519PrivateKey.generate()
    async with trio.open_nursery() as nursery:
        hosting = await nursery.start(lambda task_status: host_game(
            cfg, bot_runner(5), task_status=task_status))
        invite = Invite.decode(hosting.invites[0])
        with trio.fail_after(SAFETY):
            first = await see_the_toss(invite, key)
            again = await see_the_toss(invite, key)
        nursery.cancel_scope.cancel()
    assert first == "coin"
    assert again == {"ctl": "error", "v": 1, "reason": INVITE_TAKEN}


async def test_a_new_game_hi_naming_our_hello_is_a_bad_greeting(tmp_path):
    """SPEC 3.4: a `hi` for a new game with a `first` that is not nil names no hello and is
    refused as a bad greeting, even when `first` is our hello's hash: the one-game host let
    it in (and gave the game awaiting its joiner's hello to a new one) before it took its
    decisions from the many-game host's rules."""
    cfg = config(tmp_path / "host")
    async with trio.open_nursery() as nursery:
        hosting = await nursery.start(lambda task_status: host_game(
            cfg, bot_runner(5), task_status=task_status))
        invite = Invite.decode(hosting.invites[0])
        with trio.fail_after(SAFETY):
            first_joiner = await tls_channel(invite)
            await first_joiner.send(frames.hi(invite.secret, None, 0))
            frames.expect_kind(await first_joiner.receive(), "ok")
            ours = Envelope.decode(await first_joiner.receive()).hash  # the host's hello
            await first_joiner.aclose()
            other = await tls_channel(invite)
            await other.send(frames.hi(invite.secret, None, 0, ours))
            answer = frames.fields(await other.receive())
            await other.aclose()
        nursery.cancel_scope.cancel()
    assert answer == {"ctl": "error", "v": 1, "reason": "bad greeting"}
