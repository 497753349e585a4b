"""Fair play at the edges, as the driver enforces it: deadlines that outlive connections,
one grace period in all, the coin and the setup on a deadline, away time that adds up
across reconnects, and input that proves nothing never ending a game.

Two sessions (or a session and a scripted cheater) over memory streams under trio's
autojump clock: minutes pass in no real time and the numbers are exact.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import random
from collections.abc import Callable
from pathlib import Path

import frames
import pytest
import trio
import trio.testing

from p2pgotg.cli import main as cli_main
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, Phase, RemoteProtocolError, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions, Setup, Termination
from p2pgotg.testing.pair import DetRand, det_key

TLS_FP = hashlib.sha256(b"test_net_fairplay certificate").digest()
SECRET = bytes(range(16))




def new_host(tmp_path: Path, limits: Timeouts, options: RuleOptions | None = None
             ) -> GameSession:
    peer = GotgPeer(HOST, det_key("test_net_fairplay/host"), TLS_FP, options or RuleOptions(),
                DetRand("fairplay-host"))
    return GameSession(peer, tmp_path / "host", SECRET, limits)


def type_of(data: bytes) -> str:
    return Envelope.decode(data).body().type


def framed(limits: Timeouts, stream: trio.abc.Stream) -> FramedChannel:
    return FramedChannel(stream, keepalive_interval=limits.keepalive,
                         silence_timeout=limits.silence)


class Cheater:
    """A joiner driven by hand: a GotgPeer that plays along (the bot's setup) but holds back
    the messages `withhold` picks, and connects to the host's session when told to."""

    def __init__(self, withhold: Callable[[bytes], bool], commit: bool = True) -> None:
        self.peer = GotgPeer(JOINER, det_key("test_net_fairplay/cheater"), TLS_FP,
                             None, DetRand("cheater"))
        self.withhold = withhold
        self.commit = commit
        self.held: list[bytes] = []
        self.frames: list[bytes] = []  # control frames the host sent
        # The peer as it was before the message it last took, and before the message that
        # gave it the turn: what it can still sign as if that message had not come.
        self.fork: GotgPeer = copy.deepcopy(self.peer)
        self.before_turn: GotgPeer | None = None

    async def connect(self, host: GameSession, limits: Timeouts, nursery: trio.Nursery,
                      stay: float, send_first: list[bytes] | None = None,
                      send_last: list[bytes] | None = None) -> None:
        """One connection of `stay` seconds: resend what the host lacks, then play; at
        the end, send `send_last`."""
        a, b = trio.testing.memory_stream_pair()
        ours = framed(limits, b)
        done = trio.Event()

        async def host_side() -> None:
            with contextlib.suppress(Exception):  # (the connection's end, whatever it is)
                await host.run_connection(framed(limits, a), self.peer.received_count())
            done.set()

        nursery.start_soon(host_side)
        async def keep_alive() -> None:
            with contextlib.suppress(NetError):
                await ours.keep_alive()

        if send_last:
            async def last_words() -> None:
                await trio.sleep(stay - 0.5)
                for data in send_last:
                    with contextlib.suppress(NetError):
                        await ours.send(data)

            nursery.start_soon(last_words)
        with trio.move_on_after(stay):
            async with trio.open_nursery() as inner:
                inner.start_soon(keep_alive)
                for data in self.peer.messages_since(host.peer.received_count()):
                    if data not in self.held:
                        await ours.send(data)
                for data in send_first or []:
                    await ours.send(data)
                while True:
                    try:
                        frame = await ours.receive()
                    except NetError:  # (the host hung up, or went quiet after the end)
                        inner.cancel_scope.cancel()
                        break
                    if frames.fields(frame) is not None:
                        self.frames.append(frame)
                        continue
                    try:
                        self.peer.receive(frame)
                    except RemoteProtocolError:  # (it answers a message we forged aside)
                        continue
                    self.act()
                    for data in self.peer.data_to_send():
                        if self.withhold(data):
                            self.held.append(data)
                        else:
                            await ours.send(data)
        await ours.aclose()
        await done.wait()

    def act(self) -> None:
        peer = self.peer
        if not peer.my_turn:
            self.before_turn = None
        elif self.before_turn is None:
            self.before_turn = copy.deepcopy(self.fork)  # (as it was before its turn came)
        self.fork = copy.deepcopy(peer)
        if peer.phase is Phase.HELLO and JOINER not in peer.flow.hellos:
            peer.accept()
        elif self.commit and peer.phase is Phase.SETUP and peer.own_setup is None \
                and peer.side is not None:
            peer.commit_setup(Setup.random(peer.side, random.Random(5)))


def claims_in(session: GameSession) -> list[tuple[str, str]]:
    out = []
    for role, data in parse(session.path.read_bytes()).messages:
        body = Envelope.decode(data).body()
        if body.type == "forfeit_claim":
            out.append((role, body["reason"]))
    return out


async def until(session: GameSession, condition) -> float:
    while not condition(session):
        await session.wait_changed()
    return trio.current_time()


# -- deadlines that outlive connections ------------------------------------------------------


@pytest.mark.parametrize("stay", [2.9, 0.4])
async def test_reconnecting_over_and_over_postpones_a_claim_by_one_grace_in_all(
        tmp_path, capsys, autojump_clock, stay):
    """The joiner has seen the host's coin (so it knows who plays White) and never opens
    its own; it reconnects every 3 s, staying 2.9 s or only 0.4 s. The host claims once the
    duty limit has passed, at most one grace period later (plus, when no connection is up
    at that moment, until the next one opens): churn does not hold the claim off."""
    limits = Timeouts(duty=4.0, grace=5.0)
    host = new_host(tmp_path, limits)
    cheater = Cheater(lambda d: type_of(d) == "coin_open")
    host.perform(lambda p: p.start())
    coin_at: list[float] = []
    claim_at: list[float] = []

    async def watch() -> None:
        coin_at.append(await until(host, lambda s: s.peer.flow.host_coin is not None))
        claim_at.append(await until(host, lambda s: s.peer.flow.is_over))

    connections = 0
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            while not host.done:
                connections += 1
                await cheater.connect(host, limits, nursery, stay)
                await trio.sleep(3.0 - stay)
            nursery.cancel_scope.cancel()
    waited = claim_at[0] - coin_at[0]
    assert connections >= 3
    assert limits.duty <= waited <= limits.duty + limits.grace + (3.0 - stay) + 0.01
    assert claims_in(host) == [(HOST, "time")]
    verdict = host.verdict
    assert verdict is not None and verdict.winner == HOST and verdict.claimants == (HOST,)
    assert verdict.termination is Termination.TIME_FORFEIT
    host.close()
    # refusing to open one's coin after seeing the other's loses: on the host's word
    assert cli_main(["verify", str(host.path)]) == 4
    assert "host wins (time forfeit)" in capsys.readouterr().out


async def test_a_setup_never_committed_loses_at_the_setup_deadline(tmp_path, capsys,
                                                                  autojump_clock):
    limits = Timeouts(setup=300.0)
    host = new_host(tmp_path, limits)
    cheater = Cheater(lambda d: False, commit=False)
    host.perform(lambda p: p.start())
    started: list[float] = []
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)

            async def watch() -> None:
                started.append(await until(host, lambda s: s.peer.phase is Phase.SETUP))

            nursery.start_soon(watch)
            await cheater.connect(host, limits, nursery, 400.0)
            nursery.cancel_scope.cancel()
    assert claims_in(host) == [(HOST, "time")]
    verdict = host.verdict
    assert verdict is not None and verdict.winner == HOST
    assert verdict.termination is Termination.TIME_FORFEIT
    ended = [e for e in host.events if type(e).__name__ == "ClaimMade"]
    assert len(ended) == 1
    host.close()
    assert cli_main(["verify", str(host.path)]) == 4  # the claimant's word
    out = capsys.readouterr().out
    assert "before both setups were revealed" in out


async def test_away_time_adds_up_across_reconnects(tmp_path, autojump_clock):
    """The joiner owes its coin opening and pops in for 0.5 s every 3 s: what counts is the
    time away in all, so the abandonment limit is reached although it keeps coming back."""
    limits = Timeouts(duty=10_000.0, abandon=30.0)  # (no duty claim here: abandonment only)
    host = new_host(tmp_path, limits)
    cheater = Cheater(lambda d: type_of(d) == "coin_open")
    host.perform(lambda p: p.start())
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            while not host.away_too_long(trio.current_time()):
                await cheater.connect(host, limits, nursery, 0.5)
                await trio.sleep(2.5)
            nursery.cancel_scope.cancel()
    now = trio.current_time()
    assert host.away_for(now) > limits.abandon
    assert now < limits.abandon * 3 / 2.5 + 10  # (away 5/6 of the time)
    host.claim_overdue(trio.current_time())
    assert claims_in(host) == [(HOST, "abandoned")]


def joiner_owes_a_move(session: GameSession) -> bool:
    flow = session.peer.flow
    return flow.game is not None and flow.pending is None and not flow.is_over \
        and flow.role_of(flow.game.turn) == JOINER


@pytest.mark.parametrize("stay", [2.9, 0.4])
async def test_a_move_clock_runs_out_however_often_its_owner_reconnects(tmp_path, capsys,
                                                                       autojump_clock, stay):
    """The side to move under `--move-time` reconnects every 3 s and never moves. Once its
    time has run out, the deadline is that moment, not "now" at each new connection: the
    claim comes at most one grace period after it (third review, finding 4: 45 s against
    a 16 s bound before)."""
    limits = Timeouts(grace=5.0)
    host = new_host(tmp_path, limits, RuleOptions(move_seconds=10))
    cheater = Cheater(lambda d: False)
    host.perform(lambda p: p.start())
    turn_at: list[float] = []
    claim_at: list[float] = []
    with trio.fail_after(300):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(3)).step)

            async def watch() -> None:
                turn_at.append(await until(host, joiner_owes_a_move))
                claim_at.append(await until(host, lambda s: s.peer.flow.is_over))

            nursery.start_soon(watch)
            while not host.done:
                await cheater.connect(host, limits, nursery, stay)
                await trio.sleep(3.0 - stay)
            nursery.cancel_scope.cancel()
    claimed = claim_at[0]
    assert claims_in(host) == [(HOST, "time")]
    # out of time at turn + 10 s; claimed within one grace period of that (plus, when no
    # connection is up at that moment, until the next one opens)
    assert claimed - turn_at[0] <= 10 + limits.grace + (3.0 - stay) + 0.01
    verdict = host.verdict
    assert verdict is not None and (verdict.termination, verdict.winner) == (
        Termination.TIME_FORFEIT, HOST)


async def test_a_staller_that_claims_abandonment_is_disputed_and_not_booked_away(
        tmp_path, capsys, autojump_clock):
    """Third review, finding 3. No clock; the joiner owes a move, stays connected and silent
    past the abandonment limit, sends one undecodable frame, comes back and signs an
    abandonment claim whose ack stops before the host's last move (valid in its view: the
    host owed that move). The host was there all along: the silent connection is not the
    joiner's absence, and the claim against it is disputed, because by the host's own
    record it owed nothing when the claim came."""
    limits = Timeouts(abandon=30.0, silence=1000.0, keepalive=1.0)
    host = new_host(tmp_path, limits)
    cheater = Cheater(lambda d: False)
    host.perform(lambda p: p.start())
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(3)).step)
            await cheater.connect(host, limits, nursery, 2.0)  # hellos, coin, setups
            await cheater.connect(host, limits, nursery, 2.0)
            if not joiner_owes_a_move(host):  # the joiner is White: it moves once
                view = cheater.peer.view
                assert view is not None and cheater.peer.my_turn
                cheater.peer.move(next(m for m in view.legal_moves
                                       if not view.is_challenge(m)))
                cheater.act()
                await cheater.connect(host, limits, nursery, 2.0)
            assert joiner_owes_a_move(host) and cheater.before_turn is not None
            # connected and silent for twice the limit, then garbage: the host drops it
            await cheater.connect(host, limits, nursery, 2 * limits.abandon,
                                  send_last=[b"\xc1 not a message"])
            await trio.sleep(1.0)
            assert host.away_for(trio.current_time()) < 5.0, "silence booked as absence"
            claim = cheater.before_turn.claim_forfeit("abandoned")
            assert claim  # (its view: the host owed the move)
            forged = cheater.before_turn.messages_since(cheater.peer.flow.next_seq(JOINER))
            assert [type_of(d) for d in forged] == ["forfeit_claim", "audit"]
            await cheater.connect(host, limits, nursery, 3.0, send_first=forged)
            nursery.cancel_scope.cancel()
    assert claims_in(host) == [(JOINER, "abandoned")]
    mine = [type_of(d) for r, d in parse(host.path.read_bytes()).messages if r == HOST]
    assert mine[-1] == "dispute" or "dispute" in mine
    host.close()
    code = cli_main(["verify", str(host.path)])
    out = capsys.readouterr().out
    assert code == 4 and "disputed by" in out and "wins (abandonment)" in out


# -- input that proves nothing ----------------------------------------------------------------


async def test_garbage_drops_the_connection_and_the_game_goes_on(tmp_path, autojump_clock):
    limits = Timeouts()
    host = new_host(tmp_path, limits)
    cheater = Cheater(lambda d: False)
    host.perform(lambda p: p.start())
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            await cheater.connect(host, limits, nursery, 5.0,
                                  send_first=[b"\xc1 not a message"])
            assert host.peer.failed is None and not host.done
            assert any(frames.fields(f)["ctl"] == "error" and "malformed-envelope" in
                       frames.fields(f)["reason"] for f in cheater.frames)
            await cheater.connect(host, limits, nursery, 5.0)
            nursery.cancel_scope.cancel()
    assert host.peer.phase is Phase.SETUP  # the game went on after the garbage
    assert host.peer.failed is None


async def test_an_unsigned_error_frame_never_ends_a_game(tmp_path, autojump_clock):
    limits = Timeouts()
    host = new_host(tmp_path, limits)
    host.perform(lambda p: p.start())
    a, b = trio.testing.memory_stream_pair()
    theirs = framed(limits, b)
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            async def say_stop() -> None:
                await theirs.receive()  # the host's hello
                await theirs.send(frames.raw("error", reason="go away"))

            nursery.start_soon(say_stop)
            with pytest.raises(SessionError) as caught:
                await host.run_connection(framed(limits, a), 0)
            assert not caught.value.fatal  # drop this connection; the game waits
    assert not host.done and host.peer.failed is None


def test_a_bad_signature_leaves_the_peer_usable_and_unrecorded() -> None:
    from protocol.scenarios import bad_signature

    result = bad_signature(1)
    assert isinstance(result.error, RemoteProtocolError)
    assert result.honest.failed is None
    before = len(result.honest.flow.senders[result.honest.role].envelopes)
    result.honest.chat("still here")  # it still acts
    assert len(result.honest.flow.senders[result.honest.role].envelopes) == before + 1


# -- a joiner with a saved game never gives it up for an unsigned frame --------------------


async def test_a_host_that_only_says_error_cannot_make_the_joiner_give_its_game_up(tmp_path):
    """The joiner holds a saved game in which the host owes a move; the host (a stand-in
    that answers every `hi` with an `error` frame) refuses it again and again. The joiner
    does not give up for good on an unsigned frame: it keeps coming back until the host has
    been away for the abandonment limit in all, then claims the game."""
    from functools import partial

    from p2pgotg.net.play.joining import JoinConfig, join_game
    from p2pgotg.net.play.transcript_file import TranscriptFile
    from p2pgotg.net.reaching.invite import Invite
    from p2pgotg.net.transport.tls import (
        make_certificate,
        public_key_pin,
        serve_tls,
        server_context,
    )
    from p2pgotg.testing.pair import Pair

    pair = Pair.new(seed="error-host")
    pair.handshake(rng=random.Random(1))
    while not pair.joiner.my_turn:  # the joiner moves: then the host owes a move
        view = pair.host.view
        assert view is not None
        pair.host.move(next(m for m in view.legal_moves if not view.is_challenge(m)))
        pair.deliver()
    view = pair.joiner.view
    assert view is not None
    pair.joiner.move(next(m for m in view.legal_moves if not view.is_challenge(m)))
    pair.joiner.data_to_send()  # (never reached the host)
    secret = bytes(range(16))
    games = tmp_path / "joiner"
    games.mkdir()
    saved = TranscriptFile.create(games / "saved.gtr", JOINER, pair.joiner.public_key)
    saved.append([("secrets", {"join": secret}), *pair.joiner.take_records()])
    saved.close()

    cert, key = make_certificate()
    refusals = []

    async def refusing_host(stream: trio.SSLStream) -> None:
        channel = FramedChannel(stream, keepalive_interval=None, silence_timeout=None)
        await channel.receive()  # the joiner's `hi`
        refusals.append(trio.current_time())
        await channel.send(frames.raw("error", reason="go away"))
        await channel.aclose()

    limits = Timeouts(handshake=2.0, abandon=1.0, retry=(0.05, 0.1))
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(serve_tls, refusing_host,
                                                server_context(cert, key), 0, "127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        invite = Invite("127.0.0.1", port, public_key_pin(cert), secret)
        with trio.fail_after(30):
            session = await join_game(JoinConfig(pair.joiner._key, invite, games, limits),
                                      lambda s: trio.sleep_forever())
        nursery.cancel_scope.cancel()
    assert len(refusals) >= 3  # it came back again and again
    assert claims_in(session) == [(JOINER, "abandoned")]
    verdict = session.verdict
    assert verdict is not None and verdict.winner == JOINER and verdict.claimants == (JOINER,)


async def test_a_hello_that_breaks_a_rule_is_kept_as_evidence(tmp_path, capsys,
                                                            autojump_clock):
    """No game id exists before both hellos, yet the violating hello is saved (named by the
    hash of the host's hello) and verify names the rule."""
    from p2pgotg.testing.forging import tamper

    limits = Timeouts()
    host = new_host(tmp_path, limits)
    host.perform(lambda p: p.start())
    joiner = GotgPeer(JOINER, det_key("test_net_fairplay/bad-hello"), TLS_FP,
                      None, DetRand("bad-hello"))
    a, b = trio.testing.memory_stream_pair()
    theirs = framed(limits, b)

    async def send_bad_hello() -> None:
        joiner.receive(await theirs.receive())
        joiner.accept()
        (hello,) = joiner.data_to_send()
        await theirs.send(tamper(joiner, hello, version=2))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_bad_hello)
            with pytest.raises(SessionError):
                await host.run_connection(framed(limits, a), 0)
            nursery.cancel_scope.cancel()
    assert host.peer.failed is not None and host.path is not None
    expected = Envelope.decode(host.peer.flow.transcript[0][1]).hash.hex()
    assert host.path.name == f"{expected}.gtr"
    host.close()
    assert cli_main(["verify", str(host.path)]) == 1
    assert "joiner broke rule version" in capsys.readouterr().out
