"""Timeouts and claims, as the driver enforces them.

Clock and audit claims and the silence timeout run two sessions over memory streams
under trio's autojump clock, so minutes of game time pass in no real time and the
numbers below are exact. Abandonment needs host_game / join_game, which listen on real
sockets: there, short real limits.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import frames
import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.cli import main as cli_main
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.hosting import HostConfig, host_game
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Link, Timeouts
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import ConnectionClosedError, NetError, PeerSilentError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, Phase, RemoteProtocolError, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions, Setup, Termination
from p2pgotg.selfplay import bot_runner
from p2pgotg.testing.pair import DetRand, det_key

SAFETY = 30  # real seconds for the socket tests; virtual ones below are exact
TLS_FP = hashlib.sha256(b"test_net_timers certificate").digest()
SECRET = bytes(range(16))




def new_host(tmp_path: Path, options: RuleOptions, limits: Timeouts) -> GameSession:
    peer = GotgPeer(HOST, det_key("test_net_timers/host"), TLS_FP, options, DetRand("timers-host"))
    return GameSession(peer, tmp_path / "host", SECRET, limits)


def new_joiner(tmp_path: Path, limits: Timeouts) -> GameSession:
    peer = GotgPeer(JOINER, det_key("test_net_timers/joiner"), TLS_FP,
                    None, DetRand("timers-joiner"))
    return GameSession(peer, tmp_path / "joiner", SECRET, limits)


def channel(stream: trio.abc.Stream, limits: Timeouts) -> FramedChannel:
    return FramedChannel(stream, keepalive_interval=limits.keepalive,
                         silence_timeout=limits.silence)


def type_of(data: bytes) -> str:
    return Envelope.decode(data).body().type


def verify(path: Path, capsys) -> tuple[int, str]:
    code = cli_main(["verify", str(path)])
    return code, capsys.readouterr().out


async def wait_until(session: GameSession, condition) -> float:
    """Wait for `condition(session)`; the (virtual) time it became true."""
    while not condition(session):
        await session.wait_changed()
    return trio.current_time()


def never_moves(seat: BotSeat):
    """A seat that accepts and sets up, then never makes a move."""
    def step(peer: GotgPeer):
        return seat.step(peer) if peer.phase in (Phase.HELLO, Phase.SETUP) else None
    return step


def joiners_turn(session: GameSession) -> bool:
    flow = session.peer.flow
    return flow.game is not None and flow.pending is None and not flow.is_over \
        and flow.role_of(flow.game.turn) == JOINER


# -- clocks -------------------------------------------------------------------------------


async def test_a_player_out_of_time_loses_by_the_opponents_claim(tmp_path, capsys,
                                                                 autojump_clock):
    limits = Timeouts()
    host = new_host(tmp_path, RuleOptions(move_seconds=30), limits)
    joiner = new_joiner(tmp_path, limits)
    a, b = trio.testing.memory_stream_pair()
    host.perform(lambda p: p.start())
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)
            nursery.start_soon(drive, joiner, never_moves(BotSeat(random.Random(2))))
            nursery.start_soon(joiner.run_connection, channel(b, limits), 0)
            nursery.start_soon(host.run_connection, channel(a, limits), 0)
            turn = await wait_until(host, joiners_turn)
            claimed = await wait_until(host, lambda s: s.peer.flow.is_over)
    # the host's reading of the joiner's move clock: 30 s, then the claim
    assert claimed - turn == pytest.approx(30, abs=0.01)
    for session in (host, joiner):
        verdict = session.verdict
        assert verdict is not None and verdict.clean
        assert (verdict.termination, verdict.winner) == (Termination.TIME_FORFEIT, HOST)
        # the loser opened its commitments too; the claimant took them after its verdict
        assert verdict.audit_complete
    assert host.verdict == joiner.verdict
    assert host.verdict is not None and host.verdict.claimants == (HOST,)
    mine = [type_of(d) for r, d in parse(host.path.read_bytes()).messages if r == HOST]
    assert "forfeit_claim" in mine
    # the joiner's own reading of its clock agrees: it signs no dispute
    assert "dispute" not in [type_of(d) for r, d in parse(host.path.read_bytes()).messages]
    code, out = verify(host.path, capsys)
    # a clock claim is the claimant's word: never a clean proven result (exit 4)
    assert code == 4 and "host) wins (time forfeit)" in out and "claimant's word" in out


# -- the audit ----------------------------------------------------------------------------


async def refuser(ch: FramedChannel, peer: GotgPeer, rng: random.Random,
                  dropped: list[bytes]) -> None:
    """A joiner that plays along until the game starts, resigns, and never sends its
    audit (the message its GotgPeer made is dropped). It keeps the connection alive."""
    async def flush() -> None:
        for data in peer.data_to_send():
            if type_of(data) == "audit":
                dropped.append(data)
            else:
                await ch.send(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ch.keep_alive)
        while True:
            frame = await ch.receive()
            if frames.fields(frame) is not None:
                continue
            try:
                peer.receive(frame)
            except RemoteProtocolError:
                # its GotgPeer thinks its audit went out, so it takes the host's claim for a
                # message after the end: a cheater does not care, it stays connected
                continue
            if peer.phase is Phase.HELLO and JOINER not in peer.flow.hellos:
                peer.accept()
            elif peer.phase is Phase.SETUP and peer.own_setup is None:
                assert peer.side is not None
                peer.commit_setup(Setup.random(peer.side, rng))
            elif peer.phase is Phase.PLAY:
                peer.resign()
            await flush()


async def test_a_resigner_that_refuses_the_audit_loses_proven_by_the_winners_audit(tmp_path, capsys,
                                                                   autojump_clock):
    limits = Timeouts(audit=60.0, bye=5.0)
    host = new_host(tmp_path, RuleOptions(), limits)
    cheat = GotgPeer(JOINER, det_key("test_net_timers/refuser"), TLS_FP,
                     None, DetRand("timers-refuser"))
    dropped: list[bytes] = []
    a, b = trio.testing.memory_stream_pair()
    host.perform(lambda p: p.start())
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)
            nursery.start_soon(refuser, FramedChannel(b, silence_timeout=None), cheat,
                               random.Random(2), dropped)
            audited = []

            async def watch() -> None:
                audited.append(await wait_until(host, lambda s: HOST in s.peer.flow.audits))
                audited.append(await wait_until(host, lambda s: s.done))

            nursery.start_soon(watch)
            # after its claim the host waits `bye` seconds for a goodbye that never comes,
            # then lets the connection go: it does not hang on a cheater's keepalives
            with pytest.raises(PeerSilentError):
                await host.run_connection(channel(a, limits), 0)
            ended = trio.current_time()
            nursery.cancel_scope.cancel()
    assert [type_of(d) for d in dropped] == ["audit"]
    ours, claimed = audited
    assert claimed - ours == pytest.approx(limits.audit, abs=0.01)
    assert ended - claimed == pytest.approx(limits.bye, abs=0.01)
    verdict = host.verdict
    assert verdict is not None and verdict.clean and not verdict.audit_complete
    # the joiner resigned: its signed resignation and the host's audit prove the result,
    # its refusal to audit changes nothing (SPEC 2.6)
    assert (verdict.termination, verdict.winner, verdict.claimants) == (
        Termination.RESIGNATION, HOST, ())
    assert verdict.winner_audited and verdict.proven
    assert host.link is Link.RECONNECTING  # done, but the claim was never confirmed
    claims = [Envelope.decode(d).body() for r, d in parse(host.path.read_bytes()).messages
              if r == HOST and type_of(d) == "forfeit_claim"]
    assert [c["reason"] for c in claims] == ["audit"]
    host.close()
    code, out = verify(host.path, capsys)
    assert code == 0 and "never opened its own" in out


# -- silence ------------------------------------------------------------------------------


class BlackHole(trio.abc.Stream):
    """A stream that works until `cut`, then swallows what is sent and never delivers
    anything again: a network path that died without a word (no FIN, no reset)."""

    def __init__(self, inner: trio.abc.Stream, cut: trio.Event) -> None:
        self.inner = inner
        self.cut = cut

    async def send_all(self, data) -> None:
        if not self.cut.is_set():
            await self.inner.send_all(data)
        else:
            await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes=None) -> bytes:
        if not self.cut.is_set():
            async with trio.open_nursery() as nursery:
                got: list[bytes] = []

                async def read() -> None:
                    got.append(await self.inner.receive_some(max_bytes))
                    nursery.cancel_scope.cancel()

                async def until_cut() -> None:
                    await self.cut.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(read)
                nursery.start_soon(until_cut)
            if got and not self.cut.is_set():
                return got[0]
        await trio.sleep_forever()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_silent_peer_is_noticed_within_the_silence_limit(tmp_path, autojump_clock):
    limits = Timeouts(keepalive=5.0, silence=20.0)
    host, joiner = new_host(tmp_path, RuleOptions(), limits), new_joiner(tmp_path, limits)
    cut = trio.Event()
    a, b = trio.testing.memory_stream_pair()
    host.perform(lambda p: p.start())
    errors: dict[str, tuple[BaseException, float]] = {}
    both_noticed = trio.Event()

    async def connection(session: GameSession, stream: trio.abc.Stream) -> None:
        try:
            await session.run_connection(channel(BlackHole(stream, cut), limits), 0)
        except NetError as exc:
            errors[session.peer.role] = (exc, trio.current_time())
        if len(errors) == 2:
            both_noticed.set()

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)
            nursery.start_soon(drive, joiner, BotSeat(random.Random(2)).step)
            nursery.start_soon(connection, host, a)
            nursery.start_soon(connection, joiner, b)
            await wait_until(host, lambda s: s.peer.view is not None and s.peer.view.ply >= 6)
            # the game has been idle-free until now; from here on nothing gets through
            cut.set()
            went_dark = trio.current_time()
            await both_noticed.wait()
            nursery.cancel_scope.cancel()
    for role in (HOST, JOINER):
        exc, when = errors[role]
        assert isinstance(exc, PeerSilentError), role
        assert 0 < when - went_dark <= limits.silence
    for session in (host, joiner):
        assert session.link is Link.RECONNECTING and not session.done


# -- abandonment (real sockets, short limits) --------------------------------------------


SHORT = Timeouts(handshake=5.0, keepalive=0.5, silence=5.0, audit=30.0, abandon=0.5, bye=2.0,
               retry=(0.05, 0.1))


def host_config(tmp_path: Path) -> HostConfig:
    cert, key = make_certificate()
    return HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(),
                      tmp_path / "host", port=0, bind="127.0.0.1", limits=SHORT,
                      resume=False)


async def test_a_joiner_gone_for_good_lets_the_host_claim_the_game(tmp_path, capsys):
    statuses: list[str] = []
    sessions: list[GameSession] = []
    async with trio.open_nursery() as nursery:
        async def run_host(task_status=trio.TASK_STATUS_IGNORED) -> None:
            sessions.append(await host_game(host_config(tmp_path), bot_runner(1),
                                            on_status=statuses.append,
                                            task_status=task_status))

        invite = Invite.decode((await nursery.start(run_host)).invites[0])
        joined: list[GameSession] = []
        with trio.fail_after(SAFETY):
            with trio.CancelScope() as gone:
                async def leave_mid_game(session: GameSession) -> None:
                    await wait_until(session, lambda s: s.peer.view is not None
                                     and s.peer.view.ply >= 6)
                    gone.cancel()  # the joiner's program stops for good

                def on_session(session: GameSession) -> None:
                    joined.append(session)
                    nursery.start_soon(leave_mid_game, session)

                await join_game(JoinConfig(Ed25519PrivateKey.generate(), invite,
                                           tmp_path / "joiner", SHORT),
                                bot_runner(2), on_session=on_session)
        # host_game returns by itself once the abandonment limit has passed
    host, = sessions
    assert "the other player stayed away too long: claiming the game" in statuses
    verdict = host.verdict
    assert verdict is not None and verdict.clean and not verdict.audit_complete
    assert (verdict.termination, verdict.winner) == (Termination.ABANDONMENT, HOST)
    assert joined[0].verdict is None  # the joiner never saw the claim
    claims = [Envelope.decode(d).body() for r, d in parse(host.path.read_bytes()).messages
              if r == HOST and type_of(d) == "forfeit_claim"]
    assert [c["reason"] for c in claims] == ["abandoned"]
    code, out = verify(host.path, capsys)
    assert code == 4 and re.search(r"result: .*host\) wins \(abandonment\)", out)


async def test_a_host_gone_for_good_lets_the_joiner_claim_the_game(tmp_path, capsys):
    statuses: list[str] = []
    async with trio.open_nursery() as nursery:
        host_gone = trio.CancelScope()

        async def run_host(task_status=trio.TASK_STATUS_IGNORED) -> None:
            with host_gone:
                await host_game(host_config(tmp_path), bot_runner(1), task_status=task_status)

        invite = Invite.decode((await nursery.start(run_host)).invites[0])

        async def host_leaves(session: GameSession) -> None:
            await wait_until(session, lambda s: s.peer.view is not None
                             and s.peer.view.ply >= 6)
            host_gone.cancel()  # the host's program stops for good

        def on_session(session: GameSession) -> None:
            nursery.start_soon(host_leaves, session)

        with trio.fail_after(SAFETY):
            joiner = await join_game(JoinConfig(Ed25519PrivateKey.generate(), invite,
                                                tmp_path / "joiner", SHORT),
                                     bot_runner(2), on_status=statuses.append,
                                     on_session=on_session)
    assert "the host stayed away too long: claiming the game" in statuses
    verdict = joiner.verdict
    assert verdict is not None and verdict.clean
    assert (verdict.termination, verdict.winner) == (Termination.ABANDONMENT, JOINER)
    code, out = verify(joiner.path, capsys)
    assert code == 4 and re.search(r"result: .*joiner\) wins \(abandonment\)", out)


# -- after a reconnect --------------------------------------------------------------------


class LosesItsAudit(FramedChannel):
    """The connection dies just as this side would send its audit."""

    async def send(self, payload: bytes) -> None:
        if frames.fields(payload) is None and type_of(payload) == "audit":
            await self.aclose()
            raise ConnectionClosedError("(test) the connection died with the audit")
        await super().send(payload)


async def test_a_peer_back_after_the_audit_limit_gets_its_resend_in_first(tmp_path, capsys,
                                                                         autojump_clock):
    """The joiner's audit dies with the connection and it stays away longer than the audit
    limit: when it comes back, its audit (sent again at once) is taken, not a claim made
    the moment the connection opens."""
    limits = Timeouts(audit=60.0)
    host, joiner = new_host(tmp_path, RuleOptions(), limits), new_joiner(tmp_path, limits)
    host.perform(lambda p: p.start())
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)
            nursery.start_soon(drive, joiner, BotSeat(random.Random(2)).step)
            a, b = trio.testing.memory_stream_pair()
            async with trio.open_nursery() as first:
                for session, ch in ((host, channel(a, limits)), (joiner, LosesItsAudit(
                        b, keepalive_interval=limits.keepalive,
                        silence_timeout=limits.silence))):
                    first.start_soon(_expect_loss, session, ch)
            assert JOINER in joiner.peer.flow.audits and JOINER not in host.peer.flow.audits
            await trio.sleep(3 * limits.audit)  # away for longer than the audit limit
            a, b = trio.testing.memory_stream_pair()
            have_h, have_j = host.peer.received_count(), joiner.peer.received_count()
            nursery.start_soon(joiner.run_connection, channel(b, limits), have_h)
            await host.run_connection(channel(a, limits), have_j)
    for session in (host, joiner):
        session.close()
        assert session.verdict is not None and session.verdict.clean
        assert session.verdict.audit_complete
    assert host.verdict == joiner.verdict
    code, out = verify(host.path, capsys)
    assert code == 0 and "audit complete" in out


async def _expect_loss(session: GameSession, ch: FramedChannel) -> None:
    with pytest.raises(NetError):
        await session.run_connection(ch, 0)
