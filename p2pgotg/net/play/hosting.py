"""The host: listen (IPv4 and IPv6), print invite codes, admit joiners, play, resume.

One engine, `Host`, serves one game or many; what differs is its `HostPolicy`
(`host_policy`, which also decides every `hi`): the one-game host (`host_game`) plays its
invite's game to its end, the many-game host (`multihost.host_many`) plays up to
`max_games` at once from one invite. The join secret and the TLS key pin are in the
invite; a joiner must know both. When a joiner drops, the host keeps listening; the same
joiner (same secret, same game id) picks its game up where it was, and its new connection
replaces a stale one (SPEC 3.4).

Each game has its own `GameSession`, transcript file and seat. Its slot is free once its
verdict is known or a broken rule ended it; the game ends when its session is finished
(settled), when the joiner of a done game stays away (its last goodbye was lost), or when
the joiner of a game in progress stays away past the abandonment limit (the game is
claimed). A game that has not begun (no joiner hello) within the pre-game limit of its
first connection is dropped; strangers are bounded before admission (`admission`). A game
whose transcript cannot be written stops alone; the others go on.
"""

from __future__ import annotations

import contextlib
import math
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import equal
from p2pgotg.games import module_of
from p2pgotg.net.play.host_invites import Hosting, open_invites
from p2pgotg.net.play.host_policy import (
    INVITE_TAKEN,
    HeldGame,
    HostPolicy,
    HostState,
    NewGame,
    Refuse,
    decide,
)
from p2pgotg.net.play.player_name import shown_name
from p2pgotg.net.play.saved_games import SavedGame, resume_session, unfinished_games
from p2pgotg.net.play.seat import SeatRunner
from p2pgotg.net.play.session import GameSession, Link, Timeouts, lost_words, unwrap
from p2pgotg.net.reaching import rendezvous
from p2pgotg.net.reaching.control_frames import SessionError, expect
from p2pgotg.net.reaching.offer import ReachOptions
from p2pgotg.net.reaching.pake_link import ShortCodeGate, is_pake_frame
from p2pgotg.net.transport._stream import abort_on_close
from p2pgotg.net.transport.admission import (
    AdmissionLimits,
    Gate,
    Ticket,
    serve_admission,
)
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    listening_port,
    server_context,
)
from p2pgotg.protocol import HOST, JOINER, control
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.wire import WireError

__all__ = ["INVITE_TAKEN", "PREGAME_WORDS", "Host", "HostConfig", "HostStats", "Hosting",
           "SeatFactory", "host_game"]

SeatFactory = Callable[[int], SeatRunner]
"""Given a game's number (1, 2, ... in the order games start), the seat that plays it."""

PREGAME_WORDS = "the game did not begin in time (no hello from the joiner): connection dropped"


@dataclass
class HostConfig:
    key: Ed25519PrivateKey
    tls_cert: bytes
    tls_key: bytes
    options: Any  # the game's rule options (Game of the Generals' or Towers')
    save_dir: Path
    port: int = 0
    bind: str | None = None
    limits: Timeouts = field(default_factory=Timeouts)
    resume: bool = True  # pick up our unfinished hosted games, if there are any
    resume_from: Path | None = None  # that one (the player chose it), else the newest
    name: str | None = None  # ours, sent in `ok` (SPEC 3.4): a label the joiner shows
    reach: ReachOptions | None = None  # None: LAN invite codes only (SPEC 3.3, version 1)
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)


@dataclass
class HostStats:
    """Counts over the host's run (what `Host.run` returns)."""

    started: int = 0  # new games admitted
    resumed: int = 0  # unfinished games picked up from disk at the start
    finished: int = 0  # games that ended (finished, or claimed by abandonment)
    dropped: int = 0  # games given up before they had an id (nothing was saved)
    refused_full: int = 0  # new joiners turned away because max_games were in progress
    refused: int = 0  # every other refusal (wrong secret, unknown game, bad greeting...)
    late: int = 0  # games dropped because they did not begin within the pre-game limit
    halted: int = 0  # games stopped because their transcript could not be written
    stalled: int = 0  # games claimed because their joiner made no progress (SPEC 3.6)


async def host_game(
    config: HostConfig,
    run_seat: SeatRunner,
    *,
    on_status: Callable[[str], None] = lambda s: None,
    on_invite: Callable[[str], None] = lambda code: None,
    on_short_code: Callable[[str], None] = lambda code: None,
    task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED,
) -> GameSession:
    """Host one game to its end (verdict or violation) and return its session: the one-game
    policy. ``on_invite`` gets a new invite code for the same game when the one reported at
    the start no longer reaches us (our public mapping moved: SPEC 3.8); ``on_short_code``
    the LAN short code as soon as it is announced, before the invite is ready (SPEC 3.7)."""
    host = Host(config, lambda number: run_seat, HostPolicy(), on_status=on_status,
                on_invite=on_invite, on_short_code=on_short_code)
    await host.run(task_status=task_status)
    assert host.last is not None
    return host.last


@dataclass
class LiveConnection:
    """The connection a joiner is playing over, so that a reconnect can replace it."""

    scope: trio.CancelScope
    gone: trio.Event


@dataclass(eq=False)
class _Game:
    number: int
    session: GameSession
    live: LiveConnection | None = None
    slot: bool = True  # it counts against max_games (until its verdict is known)
    ended: bool = False  # over for good: finished, abandoned or dropped
    begin_by: float = math.inf  # its hellos must be in by then (SPEC 3.4, pre-game limit)
    source: str = ""  # where its first connection came from (`admission.source_of`)
    connected_at: float = 0.0  # when its current connection (`live`) opened
    wake: trio.Event = field(default_factory=trio.Event)

    def __post_init__(self) -> None:
        self.session.on_done = self.poke  # (its watcher frees the slot at once)

    def poke(self) -> None:
        self.wake.set()
        self.wake = trio.Event()

    def held(self) -> HeldGame:
        """What `host_policy.decide` reads of this game."""
        session = self.session
        flow = session.peer.flow
        return HeldGame(
            number=self.number, game_id=flow.game_id,
            host_hello=flow.first_hash(HOST), sent=session.sent_count,
            awaits_joiner_hello=awaits_joiner_hello(session), connected=self.live is not None,
            in_progress=self.slot, ended=self.ended, failed=session.peer.failed is not None,
            halted=session.halted, source=self.source)


class Host:
    """Listens, admits joiners by `host_policy.decide`, and supervises each game."""

    def __init__(self, config: HostConfig, seats: SeatFactory, policy: HostPolicy, *,
                 on_status: Callable[[str], None] = lambda s: None,
                 on_game_end: Callable[[int, GameSession], None] = lambda n, s: None,
                 on_invite: Callable[[str], None] = lambda code: None,
                 on_short_code: Callable[[str], None] = lambda code: None) -> None:
        self.config = config
        self.seats = seats
        self.policy = policy
        self.on_status = on_status
        self.on_game_end = on_game_end
        self.on_invite = on_invite
        self.on_short_code = on_short_code
        #: Each game's limits: the host's, with the policy's limit on any one owed action.
        self.limits = config.limits if policy.action_limit is None else replace(
            config.limits, action=policy.action_limit)
        # source -> until when it starts no new game (a game of its lapsed), oldest first
        self.cooling: OrderedDict[str, float] = OrderedDict()
        self.fingerprint = certificate_fingerprint(config.tls_cert)
        self.join_secret = secrets.token_bytes(16)
        self.listen_port = config.port
        self.games: list[_Game] = []  # every game not yet closed (in progress or lingering)
        self.numbers = 0
        self.stats = HostStats()
        self.last: GameSession | None = None  # the game that ended last
        self.enough = trio.Event()  # games_total games have ended, or told to stop
        self.nursery: trio.Nursery | None = None
        self.strangers = Gate(config.admission)  # (connections not yet admitted)
        self.gates: list[ShortCodeGate] = []  # the short code's, from the moment it is shown
        limits = config.limits
        # A finished game's file stays open this long, for a joiner that missed our bye.
        self.linger = limits.linger
        # A game whose joiner left before the game had an id is dropped after this long.
        self.pending_timeout = limits.handshake + limits.retry[1]
        self.poll = min(1.0, max(0.05, limits.abandon / 4))

    def status(self, game: _Game | None, text: str) -> None:
        """A line for the host's operator; the many-game host says which game."""
        self.on_status(f"game {game.number}: {text}" if game and self.policy.many else text)

    # -- resuming saved games --------------------------------------------------------------

    def resume_saved(self) -> list[_Game]:
        """Our unfinished hosted games that share the newest one's join secret (they were
        hosted together, by one run of this host, so one invite reaches them all); the
        one-game host takes the newest only (or the one the player chose)."""
        config = self.config
        saved = [s for s in unfinished_games(config.save_dir, HOST, config.key)
                 if s.join_secret is not None
                 and config.resume_from in (None, s.path)]
        if not saved:
            return []
        secret = saved[0].join_secret
        assert secret is not None
        self.join_secret = secret
        if not self.listen_port and saved[0].port:
            self.listen_port = saved[0].port  # so that the joiners' invite still reaches us
        same = [s for s in saved if s.join_secret is not None and equal(s.join_secret, secret)]
        return [self._resume(found) for found in same[:None if self.policy.many else 1]]

    def _resume(self, found: SavedGame) -> _Game:
        session = resume_session(found, self.config.key, self.fingerprint, self.limits)
        session.link = Link.RECONNECTING  # the joiner is away at least since we stopped
        session.away_since = trio.current_time()
        game = self._add(session)
        self.stats.resumed += 1
        self.status(game, f"resuming the unfinished game saved in {found.path.name}")
        return game

    def _add(self, session: GameSession, **fields: Any) -> _Game:
        self.numbers += 1
        game = _Game(self.numbers, session, **fields)
        session.on_claim = partial(self.status, game)
        self.games.append(game)
        return game

    # -- admission ---------------------------------------------------------------------------

    def state(self, source: str) -> HostState:
        """What `decide` needs of this host, for a `hi` from `source`."""
        admission = self.config.admission
        return HostState(
            self.join_secret, tuple(game.held() for game in self.games), source,
            cooling=max(0.0, self.cooling.get(source, 0.0) - trio.current_time()),
            cooldown=admission.lapse_cooldown, stopping=self.enough.is_set(),
            pregame_per_source=admission.pregame_per_source,
            games_per_source=admission.games_per_source)

    async def handler(self, stream: trio.SSLStream, ticket: Ticket) -> None:
        limits = self.config.limits
        channel = FramedChannel(stream, keepalive_interval=limits.keepalive,
                                silence_timeout=limits.silence)
        hi = await self._greeting(channel, ticket)
        if hi is None:
            return
        decision = decide(hi, self.state(ticket.address), self.policy)
        if isinstance(decision, Refuse):
            await self._refuse(channel, decision)
            return
        ticket.release()  # (admitted: no longer counts among the strangers)
        if isinstance(decision, NewGame):
            game = self._new_game(ticket, decision.replaces)
        else:
            found = next(g for g in self.games if g.number == decision.number)
            if not await self._replace_stale(found):
                await self._refuse(channel, Refuse("this host is busy with another "
                                                   "connection"))
                return
            game = found
        await self._play(game, channel, hi)

    async def _greeting(self, channel: FramedChannel, ticket: Ticket) -> control.Hi | None:
        """The joiner's `hi` (after the short code's PAKE, when it came by one); None when
        it was refused for want of a valid one in time."""
        limits = self.config.limits
        try:
            with trio.fail_at(min(trio.current_time() + limits.handshake,
                                  ticket.pregame_deadline)):
                first = await channel.receive()
                if is_pake_frame(first):
                    if not self.gates:
                        raise SessionError("this host has no short code: use its invite code")
                    first = await self.gates[0].admit(channel, first, limits.handshake)
                return expect(first, control.Hi)
        except (trio.TooSlowError, NetError, SessionError) as exc:
            reason = ("no greeting in time" if isinstance(exc, trio.TooSlowError)
                      else lost_words(exc) if isinstance(exc, NetError) else str(exc))
            await self._refuse(channel, Refuse(f"no valid greeting: {reason}",
                                               f"a connection was refused: {reason}"))
            return None

    async def _refuse(self, channel: FramedChannel, refusal: Refuse) -> None:
        if refusal.full:
            self.stats.refused_full += 1
        else:
            self.stats.refused += 1
        if refusal.note is not None:
            self.status(None, refusal.note)
        await refuse(channel, refusal.reason)

    async def _replace_stale(self, game: _Game) -> bool:
        """Our joiner is back on a new connection while we still hold its old one (a drop we
        have not noticed yet): the old one is stale, the new one wins. False when another
        connection took the game meanwhile, or the game is gone."""
        if game.live is not None:
            self.status(game, "the other player reconnected: dropping the old connection")
            old = game.live
            old.scope.cancel()
            await old.gone.wait()
            if game.live is not None or game not in self.games:
                return False
        if not game.slot and not game.ended and not game.session.done:
            game.slot = True  # back in progress (an existing game: even beyond max_games)
        return True

    def _new_game(self, ticket: Ticket, replaces: tuple[int, ...]) -> _Game:
        for old in self.games:
            if old.number in replaces:  # (never begun, its joiner gone: given up for this)
                old.ended = True
                old.poke()
        config = self.config
        peer = module_of(config.options).peer(HOST, config.key, self.fingerprint,
                                              config.options)
        session = GameSession(peer, config.save_dir, self.join_secret, self.limits,
                              listen_port=self.listen_port, own_name=config.name)
        game = self._add(session, begin_by=ticket.pregame_deadline, source=ticket.address)
        self.stats.started += 1
        assert self.nursery is not None
        self.nursery.start_soon(self._supervise, game)
        return game

    async def _play(self, game: _Game, channel: FramedChannel, hi: control.Hi) -> None:
        session = game.session
        new = not session.peer.flow.has_hello()
        session.note_peer_name(shown_name(hi.name))
        me = LiveConnection(trio.CancelScope(), trio.Event())
        game.live, game.connected_at = me, trio.current_time()
        assert self.nursery is not None
        lift = before_the_game(session, me.scope, game.begin_by, self.nursery)
        refusal = ""
        try:
            if not await self._admit(session, channel):
                return
            if new:
                session.perform(lambda p: p.start())
            self.status(game, "the other player is connected")
            with me.scope:
                await session.run_connection(channel, 0 if new else _count(hi),
                                             screen=partial(self._one_game_per_key, game))
        except _SecondGame as exc:
            self.stats.refused += 1
            self.status(game, f"the joiner was refused: its key has game {exc.number} here, "
                        "unfinished")
            refusal = str(exc)
        except (NetError, SessionError) as exc:
            if isinstance(exc, NetError):  # (lost: its addresses may be punched again)
                abort_on_close(channel.stream)
            if not session.halted:  # (a halted game's one line comes when it ends)
                self.status(game, lost_words(exc, session))
        finally:
            lift.cancel()
            if not session.finished and session.away_since is None:
                session.away_since = trio.current_time()  # (the ok never got out)
            game.live = None
            me.gone.set()
            game.poke()
        if refusal:
            await refuse(channel, refusal)
        await refuse_if_too_late(me.scope, channel, partial(self.status, game))

    async def _admit(self, session: GameSession, channel: FramedChannel) -> bool:
        """Send `ok` once what it says we hold is on disk; False when the connection is
        gone before it got out."""
        flow = session.peer.flow
        try:
            await session.durable()  # (what we say we hold must survive a crash)
            await channel.send(control.encode(control.Ok(
                game=flow.game_id, have=session.peer.received_count(),
                first=flow.first_hash(HOST), name=self.config.name,
                rules=flow.GAME)))
        except NetError:
            return False
        return True

    def _one_game_per_key(self, game: _Game, frame: bytes) -> None:
        """Look at a game message before `game`'s session takes it, while the game awaits
        the joiner's hello: a hello whose key has an unfinished game here is refused
        before it is applied, so no coin of ours answers it (SPEC 3.4: a toss, once made,
        belongs to its game; a joiner that aborted after seeing it and comes back with the
        same key gets no new one)."""
        if game.session.peer.flow.game_id is not None:
            return  # (its hello is in: this game is the key's own)
        key = _hello_key(frame)
        if key is None:
            return
        for other in self.games:
            theirs = other.session.peer.flow.key_of(JOINER)
            if other is not game and not other.ended and not other.session.done \
                    and theirs is not None and equal(theirs, key):
                raise _SecondGame(other.number)

    # -- one game's life -----------------------------------------------------------------------

    async def _supervise(self, game: _Game) -> None:
        """Run the game's seat until the game is over, free its slot, let it linger, and
        close its transcript."""
        session = game.session
        run_seat = self.seats(game.number)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_seat, session)
            outcome = await self._until_over(game)
            nursery.cancel_scope.cancel()
        self._end(game, outcome)
        if outcome in ("finished", "abandoned"):
            await self._linger(game)
        self.games.remove(game)
        session.close()

    async def _linger(self, game: _Game) -> None:
        """Keep a game that ended open a while, for a joiner that missed our goodbye."""
        close_at = trio.current_time() + self.linger
        while trio.current_time() < close_at:
            with trio.move_on_at(close_at):
                await game.wake.wait()
        live = game.live
        if live is not None:  # a joiner came back late: let it take our goodbye
            with trio.move_on_after(self.config.limits.bye + 1.0):
                await live.gone.wait()
            live.scope.cancel()
            await live.gone.wait()

    async def _until_over(self, game: _Game) -> str:
        """Wait until the game is finished ('finished'); or it is done and its joiner,
        which may well hold everything, has not been back for a while ('unconfirmed');
        or its joiner stayed away too long ('abandoned'); or it never got an id and its
        joiner left, or a new joiner replaced it ('dropped'). The slot is free as soon as
        the verdict is known."""
        session = game.session
        while True:
            if session.finished:
                return "finished"
            if session.halted:
                return "halted"
            if game.ended:
                return "dropped"
            if session.done:
                self._free(game)  # what is left is confirming the end: no game in progress
            if game.live is None and session.away_since is not None:
                outcome = self._while_away(game, trio.current_time() - session.away_since)
                if outcome is not None:
                    return outcome
            if game.live is not None and not session.done:
                await game.wake.wait()  # (poked when the connection ends or the game is done)
                continue
            with trio.move_on_after(self.poll):  # (to see how long the joiner stays away)
                await session.wait_changed()

    def _while_away(self, game: _Game, away: float) -> str | None:
        """How the game ends while its joiner has been away for `away` seconds, if it does."""
        session = game.session
        if not session.peer.flow.has_hello():
            return "dropped"  # our ok never got out: the game never began
        if session.peer.flow.game_id is None:
            self._free(game)  # not a game in progress (it takes a slot again if its
            # joiner, whose hello was lost, comes back to it)
            if away > self.pending_timeout or trio.current_time() > game.begin_by:
                return "dropped"  # nothing was saved: a joiner that left at once
            return None
        if session.done and away > self.linger:
            # The joiner left without confirming our last messages: it had them all (its
            # goodbye was lost), or it would have been back by now.
            return "unconfirmed"
        now = trio.current_time()
        session.claim_overdue(now)  # (deadlines run while it is away)
        return "abandoned" if session.away_too_long(now) else None

    def _free(self, game: _Game) -> None:
        game.slot = False

    def _end(self, game: _Game, outcome: str) -> None:
        game.ended = True
        self._free(game)
        if outcome == "dropped":
            self.stats.dropped += 1
            if trio.current_time() > game.begin_by:
                self.stats.late += 1
                self._cool(game.source)
            self.status(game, "given up: the joiner left before the game began")
            return
        self.last = game.session
        verdict = game.session.verdict
        if verdict is not None and HOST in verdict.claimants:
            self.stats.stalled += 1
            self._cool(game.source)
        if outcome == "halted":
            self._halted(game)
        else:
            self.stats.finished += 1
            self.on_game_end(game.number, game.session)
        total = self.policy.games_total
        if total is not None and self.stats.finished + self.stats.halted >= total:
            self.enough.set()

    def _halted(self, game: _Game) -> None:
        self.stats.halted += 1
        after = ("it resumes from its file when this host runs again"
                 if game.session.path is not None else "it never began: nothing was saved")
        self.status(game, f"stopped: {game.session.storage_failure}; nothing more is sent in "
                    f"it ({after})")

    def _cool(self, source: str) -> None:
        """No new game from `source` for the cool-down (SPEC 3.4): one of its games lapsed.
        Expired entries are dropped as new ones come, so the table stays small."""
        if not source:  # (a game resumed from disk: its source is not known)
            return
        now = trio.current_time()
        while self.cooling and next(iter(self.cooling.values())) <= now:
            self.cooling.popitem(last=False)
        self.cooling.pop(source, None)
        self.cooling[source] = now + self.config.admission.lapse_cooldown

    # -- the whole run --------------------------------------------------------------------------

    async def run(self, stop: trio.Event | None = None,
                  task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED
                  ) -> HostStats:
        """Serve until the policy's `games_total` games have ended, until `stop` is set, or
        until cancelled; then the joiners of games that just ended get a moment to take our
        goodbye, games in progress are left resumable, and the counts are returned."""
        config = self.config
        resumed = self.resume_saved() if config.resume else []
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                for game in resumed:
                    nursery.start_soon(self._supervise, game)
                if stop is not None:
                    nursery.start_soon(self._stop_when, stop)
                context = server_context(config.tls_cert, config.tls_key)
                listeners = await nursery.start(
                    serve_admission, self.handler, context, self.listen_port, config.bind,
                    self.strangers, self.on_status)
                port = listening_port(listeners)
                if not self.listen_port:
                    self.listen_port = port
                hosting = await open_invites(self, nursery, port, context,
                                             away=self._joiner_away)
                hosting.resumed = len(resumed)
                task_status.started(hosting)
                await self.enough.wait()
                # Enough games (or told to stop): the joiners of games that just ended get
                # our goodbye, then we stop; games in progress stay resumable.
                with trio.move_on_after(config.limits.bye + 1.0):
                    while any(g.live is not None for g in self.games if g.ended):
                        await trio.sleep(0.05)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # a ListenError, say: raised as itself
            raise unwrap(group) from None
        finally:  # (cancelled too: every transcript is complete on disk)
            for game in self.games:
                game.session.close()
            self._forget_rendezvous()
        return self.stats

    async def _stop_when(self, stop: trio.Event) -> None:
        await stop.wait()
        self.enough.set()

    def _forget_rendezvous(self) -> None:
        """Nothing left to punch back to: every game we held is finished."""
        reach = self.config.reach
        if reach is not None and self.last is not None and self.last.finished \
                and all(g.session.finished for g in self.games):
            rendezvous.forget(reach.data_dir, self.join_secret, HOST)

    def _joiner_away(self) -> bool:
        """A begun game's joiner is away (so the offer keeps punching back to it)."""
        return any(g.session.peer.flow.game_id is not None and g.live is None
                   and not g.ended and not g.session.finished for g in self.games)


def awaits_joiner_hello(session: GameSession) -> bool:
    """Our hello is out and the joiner's never reached us: a joiner that has our hello and
    sent its own (so it knows the game id) may come back and send it again."""
    flow = session.peer.flow
    return flow.has_hello(HOST) and not flow.has_hello(JOINER)


def before_the_game(session: GameSession, scope: trio.CancelScope, deadline: float,
                    nursery: trio.Nursery) -> trio.CancelScope:
    """Give a connection whose game has no id yet until `deadline` (SPEC 3.4, the pre-game
    limit): `scope` (the connection's) is cancelled then, unless the joiner's hello came
    first. Returns the scope of the watcher, to cancel when the connection ends."""
    watcher = trio.CancelScope()
    if session.peer.flow.game_id is not None:
        return watcher
    scope.deadline = deadline

    async def lift() -> None:
        with watcher:
            while session.peer.flow.game_id is None:
                await session.wait_changed()
            scope.deadline = math.inf

    nursery.start_soon(lift)
    return watcher


async def refuse_if_too_late(scope: trio.CancelScope, channel: FramedChannel,
                             say: Callable[[str], None]) -> None:
    """When `scope` (a connection's, set by `before_the_game`) ended at the pre-game
    limit, and not because a reconnection replaced it: say so, and tell the joiner."""
    if scope.cancelled_caught and trio.current_time() >= scope.deadline:
        say(PREGAME_WORDS)
        await refuse(channel, PREGAME_WORDS)


async def refuse(channel: FramedChannel, reason: str) -> None:
    """Tell the joiner why it is turned away (an `error` frame, best effort) and hang up."""
    with trio.move_on_after(2):
        with contextlib.suppress(NetError):
            await channel.send(control.encode(control.Refusal(reason)))
    await channel.aclose()


def _count(hi: control.Hi) -> int:
    """A game of two's `have` (`decide` refuses a table's counts before this is asked)."""
    assert isinstance(hi.have, int)
    return hi.have


def _hello_key(frame: bytes) -> bytes | None:
    """The key a game message names when it is a hello; None for anything else (what is
    not even a message is for the session to judge)."""
    try:
        body = Envelope.decode(frame).body()
    except WireError:
        return None
    key = body.get("key") if body.type == "hello" else None
    return key if isinstance(key, bytes) else None


class _SecondGame(SessionError):
    """A joiner key with an unfinished game here asked for another (SPEC 3.4)."""

    def __init__(self, number: int) -> None:
        super().__init__("you have an unfinished game on this host, whose coin toss is made: "
                         "it is resumed, not replaced (run the same join command to go on "
                         "with it); a new game can start once it is over")
        self.number = number
