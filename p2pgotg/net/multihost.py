"""A host that plays many games at once: one listener, one invite, one join secret.

The same TLS certificate, pin, invite code and admission as `hosting.host_game` (SPEC 3.4),
with one difference: a `hi` without a game id starts a new game of its own instead of being
told the host is busy, as long as fewer than `max_games` games are in progress; beyond that
the joiner gets an `error` frame saying the host is full. A `hi` with the id of one of our
games re-attaches to that game's session (resume); a stale connection of the same game is
replaced, as in `host_game`. Each game has its own `GameSession`, its own transcript file
(named by its game id) and its own seat. Its slot is free once its verdict is known
or a broken rule ended it; the game itself ends when its session is
finished (settled: the joiner confirmed holding all our messages), when the joiner of a
done game stays away (its last goodbye was lost), or when the joiner of a game in progress
stays away past the abandonment limit (the game is claimed).

A finished game lingers for a short while before its transcript file is closed, so that a
joiner whose connection broke just before our last goodbye reached it can come back and
complete its own transcript.

Before a game holds a slot its joiner is bounded like any stranger (`admission`), and a
game that has not begun (no joiner hello) within the pre-game limit is dropped. Once it has
begun, the host's limit per owed action (SPEC 3.6) ends it by our abandonment claim when
the joiner has owed the same thing (a move, its setup, an answer) that long, clocked or
not, connected or not, and the duty and setup limits run while the joiner is away too: a
slot is held only by a joiner that makes progress. One source holds at most
`games_per_source` games in progress, and a source whose game lapsed waits
`lapse_cooldown` before it starts another. A joiner key with an unfinished game here gets
no second game (SPEC 3.4): a toss, once made, belongs to that game, so a joiner that dislikes
it cannot abort and rejoin for a fresh one. A game whose transcript cannot be written stops
alone; the others go on.

    stats = await host_many(config, lambda n: bot_runner(seat_seed(None, n)), max_games=200,
                            task_status=task_status)    # runs until cancelled
"""

from __future__ import annotations

import gc
import hmac
import math
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import trio

from p2pgotg.crypto import equal
from p2pgotg.games import module_of
from p2pgotg.net.admission import Gate, Ticket, serve_admission
from p2pgotg.net.errors import NetError
from p2pgotg.net.framing import FramedChannel
from p2pgotg.net.games import resume_session, unfinished_games
from p2pgotg.net.hosting import (
    HostConfig,
    LiveConnection,
    SeatRunner,
    awaits_joiner_hello,
    before_the_game,
    refuse,
    refuse_if_too_late,
)
from p2pgotg.net.invite import Invite, reachable_addresses
from p2pgotg.net.session import (
    GameSession,
    Link,
    SessionError,
    expect,
    lost_words,
    unwrap,
)
from p2pgotg.net.tls import (
    certificate_fingerprint,
    listening_port,
    public_key_pin,
    server_context,
)
from p2pgotg.protocol import HOST, JOINER, control
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.wire import WireError

SeatFactory = Callable[[int], SeatRunner]
"""Given a game's number (1, 2, ... in the order games start), the seat that plays it."""

FULL = "this host is full"  # the start of the refusal a joiner gets beyond max_games
#: The host's limit per owed action (SPEC 3.6), seconds: a joiner that has owed one thing
#: this long loses the game by our claim. The longest the setup may take, for anything.
ACTION_LIMIT = 300.0


@dataclass
class MultiHosting:
    """What `host_many` reports through `task_status.started`: the invite codes."""

    port: int
    invites: list[str]
    resumed: int = 0


@dataclass
class MultiHostStats:
    """Counts over the host's run (what `host_many` returns)."""

    started: int = 0  # new games admitted
    resumed: int = 0  # unfinished games picked up from disk at the start
    finished: int = 0  # games that ended (finished, or claimed by abandonment)
    dropped: int = 0  # games given up before they had an id (nothing was saved)
    refused_full: int = 0  # new joiners turned away because max_games were in progress
    refused: int = 0  # every other refusal (wrong secret, unknown game, bad greeting...)
    late: int = 0  # games dropped because they did not begin within the pre-game limit
    halted: int = 0  # games stopped because their transcript could not be written
    stalled: int = 0  # games claimed because their joiner made no progress (SPEC 3.6)


def tune_collector_for_many_games() -> None:
    """Call once at the start of a process that holds many games, for shorter pauses.

    Every game's history and signed messages make a large long-lived heap, and each full
    garbage collection pauses every game at once: 150-250 ms at 200 games, several times a
    minute with Python's defaults. The middle generation is mostly trio's waiting tasks
    (coroutines, cancel scopes), some 10 ms a collection with the defaults. So: startup's
    objects are frozen (never garbage, never scanned again); the middle generation is
    collected after 3 young collections instead of 10 (pauses of about 5 ms); a full
    collection waits for 700 of those instead of 10, minutes apart under load. Cyclic
    garbage is still reclaimed, only later; the games free almost everything by reference
    counting. (Raising the youngest threshold instead made each pause slower out of
    proportion.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 3, 700)


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


class _MultiHost:
    def __init__(self, config: HostConfig, factory: SeatFactory, max_games: int,
                 games_total: int | None, on_status: Callable[[str], None],
                 on_game_end: Callable[[int, GameSession], None],
                 action_limit: float = ACTION_LIMIT) -> None:
        self.config = config
        self.factory = factory
        self.max_games = max_games
        self.action_limit = action_limit
        #: Each game's limits: the host's, with its own limit on any one owed action.
        self.limits = replace(config.limits, action=action_limit)
        # source -> until when it starts no new game (a game of its lapsed), oldest first
        self.cooling: OrderedDict[str, float] = OrderedDict()
        self.games_total = games_total
        self.on_status = on_status
        self.on_game_end = on_game_end
        self.fingerprint = certificate_fingerprint(config.tls_cert)
        self.join_secret = secrets.token_bytes(16)
        self.listen_port = config.port
        self.games: list[_Game] = []  # every game not yet closed (in progress or lingering)
        self.active = 0  # games holding a slot (admitted and not ended), reservations too
        self.numbers = 0
        self.stats = MultiHostStats()
        self.enough = trio.Event()  # games_total games have ended
        self.nursery: trio.Nursery | None = None
        limits = config.limits
        # A finished game's file stays open this long, for a joiner that missed our bye.
        self.linger = limits.linger
        # A game whose joiner left before the game had an id is dropped after this long.
        self.pending_timeout = limits.handshake + limits.retry[1]
        self.poll = min(1.0, max(0.05, limits.abandon / 4))

    def status(self, game: _Game | None, text: str) -> None:
        self.on_status(f"game {game.number}: {text}" if game else text)

    # -- resuming saved games --------------------------------------------------------------

    def resume_saved(self) -> list[_Game]:
        """Our unfinished hosted games that share the newest one's join secret (they were
        hosted together, by one run of this host, so one invite reaches them all)."""
        config = self.config
        saved = [s for s in unfinished_games(config.save_dir, HOST, config.key)
                 if s.join_secret is not None]
        if not saved:
            return []
        secret = saved[0].join_secret
        assert secret is not None
        self.join_secret = secret
        if not self.listen_port and saved[0].port:
            self.listen_port = saved[0].port  # so that the joiners' invite still reaches us
        resumed = []
        for found in saved:
            if found.join_secret is None or not equal(found.join_secret, secret):
                continue
            session = resume_session(found, config.key, self.fingerprint, self.limits)
            session.link = Link.RECONNECTING
            session.away_since = trio.current_time()
            self.numbers += 1
            game = _Game(self.numbers, session)
            session.on_claim = partial(self.status, game)
            self.games.append(game)
            self.active += 1
            self.stats.resumed += 1
            resumed.append(game)
            self.status(game, f"resuming the unfinished game saved in {found.path.name}")
        return resumed

    # -- admission ---------------------------------------------------------------------------

    def _find(self, wanted: bytes, first: bytes | None = None) -> _Game | None:
        """Our game with that id; or, when the joiner's hello never reached us (SPEC 3.4:
        it resends), the game without a connection that awaits a joiner's hello and whose
        hello has the body hash `first` the joiner holds. Without `first`, none: that hash
        went only to the joiner we admitted, so another holder of the one invite cannot
        take over a game whose joiner's hello was lost."""
        for game in self.games:
            if game.session.peer.flow.game_id == wanted:
                return game
        if first is None:
            return None
        return next((g for g in self.games if not g.ended and g.live is None
                     and awaits_joiner_hello(g.session)
                     and equal(g.session.peer.flow.senders[HOST].hashes[0], first)), None)

    async def handler(self, stream: trio.SSLStream, ticket: Ticket) -> None:
        config = self.config
        limits = config.limits
        channel = _JoinerChannel(stream, keepalive_interval=limits.keepalive,
                                 silence_timeout=limits.silence)
        try:
            with trio.fail_at(min(trio.current_time() + limits.handshake,
                                  ticket.pregame_deadline)):
                hi = expect(await channel.receive(), control.Hi)
        except (trio.TooSlowError, NetError, SessionError) as exc:
            self.stats.refused += 1
            reason = ("no greeting in time" if isinstance(exc, trio.TooSlowError)
                      else lost_words(exc) if isinstance(exc, NetError) else str(exc))
            self.status(None, f"a connection was refused: {reason}")
            await refuse(channel, f"no valid greeting: {reason}")
            return
        wanted, first, have = hi.game, hi.first, hi.have
        if not hmac.compare_digest(hi.secret, self.join_secret):
            self.stats.refused += 1
            self.status(None, "a joiner with a wrong join secret was refused")
            await refuse(channel, "wrong join secret: check the invite code")
            return
        ticket.release()  # (admitted: no longer counts among the strangers)
        if wanted is None and first is not None:  # (a new game's `first` names no hello)
            self.stats.refused += 1
            await refuse(channel, "bad greeting")
            return
        if wanted is None:
            await self._new_game(channel, ticket)
            return
        game = self._find(wanted, first)
        if game is None:
            self.stats.refused += 1
            await refuse(channel, "this host does not have that game (it may be over)")
            return
        if game.session.peer.failed is not None:
            self.stats.refused += 1
            await refuse(channel, "this game is over")
            return
        if have > game.session.sent_count:  # (more than we ever sent: SPEC 3.4)
            self.stats.refused += 1
            await refuse(channel, "bad greeting")
            return
        if game.live is not None:
            # Our joiner is back on a new connection while we still hold its old one (a
            # drop we have not noticed yet): the old one is stale, the new one wins.
            self.status(game, "the other player reconnected: dropping the old connection")
            old = game.live
            old.scope.cancel()
            await old.gone.wait()
            if game.live is not None or game not in self.games:
                self.stats.refused += 1
                await refuse(channel, "this host is busy with another connection")
                return
        if game.session.halted:
            self.stats.refused += 1
            await refuse(channel, "this host cannot save that game right now: try later")
            return
        if not game.slot and not game.ended and not game.session.done:
            game.slot = True  # back in progress (an existing game: even beyond max_games)
            self.active += 1
        await self._play(game, channel, have, new=False)

    async def _new_game(self, channel: _JoinerChannel, ticket: Ticket) -> None:
        if self.enough.is_set():
            self.stats.refused += 1
            await refuse(channel, "this host is not starting new games any more")
            return
        refusal = self._source_refusal(ticket.address)
        if refusal is not None:
            said, told = refusal
            self.stats.refused += 1
            self.status(None, f"a new joiner was refused: {said}")
            await refuse(channel, told)
            return
        if self.active >= self.max_games:
            self.stats.refused_full += 1
            self.status(None, f"a new joiner was refused: {self.max_games} games in progress")
            await refuse(channel, f"{FULL}: {self.max_games} games are in progress; "
                          "try again later")
            return
        self.active += 1  # the slot is ours from here (no other handler can take it)
        config = self.config
        peer = module_of(config.options).peer(HOST, config.key, self.fingerprint,
                                              config.options)
        session = GameSession(peer, config.save_dir, self.join_secret, self.limits,
                              listen_port=self.listen_port)
        self.numbers += 1
        game = _Game(self.numbers, session, begin_by=ticket.pregame_deadline,
                     source=ticket.address)
        session.on_claim = partial(self.status, game)
        self.games.append(game)
        self.stats.started += 1
        assert self.nursery is not None
        self.nursery.start_soon(self._supervise, game)
        await self._play(game, channel, 0, new=True)

    def _source_refusal(self, source: str) -> tuple[str, str] | None:
        """Why `source` may not start a new game now (SPEC 3.4), in the words for the
        host's operator and for the joiner; None when it may."""
        admission = self.config.admission
        wait = self.cooling.get(source, 0.0) - trio.current_time()
        if wait > 0:  # (a squatter cut at a limit would otherwise be back in a slot at once)
            return (f"a game from its address lapsed {admission.lapse_cooldown - wait:.0f} s "
                    "ago", "a game from your address made no progress in time: this host "
                    f"takes new games from it again in {math.ceil(wait)} s")
        mine = [g for g in self.games if g.source == source and not g.ended]
        waiting = sum(1 for g in mine if g.session.peer.flow.game_id is None)
        if waiting >= admission.pregame_per_source:
            # An invite is a bearer token: one holder could otherwise fill every slot with
            # games it never begins, each for the whole pre-game limit.
            return (f"{waiting} games from its address have not begun yet",
                    f"{waiting} games from your address have not begun yet: accept or leave "
                    "one of them first")
        playing = sum(1 for g in mine if g.slot)
        if playing >= admission.games_per_source:
            # Begun games count too: one holder could otherwise hold every slot with games
            # it plays as slowly as the limits allow.
            return (f"{playing} games from its address are in progress",
                    f"{playing} games from your address are in progress, the most this host "
                    "plays with one address at once: finish one first")
        return None

    async def _play(self, game: _Game, channel: _JoinerChannel, have: int, new: bool) -> None:
        session = game.session
        me = LiveConnection(trio.CancelScope(), trio.Event())
        game.live, game.connected_at = me, trio.current_time()
        channel.before_hello = partial(self._one_game_per_key, game)
        assert self.nursery is not None
        lift = before_the_game(session, me.scope, game.begin_by, self.nursery)
        refusal = ""
        try:
            hellos = session.peer.flow.senders[HOST].hashes
            held = session.peer.received_count()
            try:
                await session.durable()  # (what we say we hold must survive a crash)
                await channel.send(control.encode(control.Ok(
                    game=session.peer.flow.game_id, have=held,
                    first=hellos[0] if hellos else None, rules=session.peer.flow.GAME)))
            except NetError:
                return
            if new:
                session.perform(lambda p: p.start())
            self.status(game, "the other player is connected")
            with me.scope:
                await session.run_connection(channel, have)
        except _SecondGame as exc:
            self.stats.refused += 1
            self.status(game, f"the joiner was refused: its key has game {exc.number} here, "
                        "unfinished")
            refusal = str(exc)
        except (NetError, SessionError) as exc:
            if not session.halted:  # (a halted game's one line comes when it ends)
                self.status(game, f"connection lost: {exc}")
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
            hello = other.session.peer.flow.hellos.get(JOINER)
            if other is not game and not other.ended and not other.session.done \
                    and hello is not None and equal(hello["key"], key):
                raise _SecondGame(other.number)

    # -- one game's life -----------------------------------------------------------------------

    async def _supervise(self, game: _Game) -> None:
        """Run the game's seat until the game is over, free its slot, let it linger, and
        close its transcript."""
        session = game.session
        run_seat = self.factory(game.number)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_seat, session)
            outcome = await self._until_over(game)
            nursery.cancel_scope.cancel()
        self._end(game, outcome)
        if outcome in ("finished", "abandoned"):
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
        self.games.remove(game)
        session.close()

    async def _until_over(self, game: _Game) -> str:
        """Wait until the game is finished ('finished'); or it is done and its joiner,
        which may well hold everything, has not been back for a while ('unconfirmed');
        or its joiner stayed away too long ('abandoned'); or it never got an id and its
        joiner left ('dropped'). The slot is free as soon as the verdict is known."""
        session = game.session
        while True:
            if session.finished:
                return "finished"
            if session.halted:
                return "halted"
            if session.done:
                self._free(game)  # what is left is confirming the end: no game in progress
            if game.live is None and session.away_since is not None:
                away = trio.current_time() - session.away_since
                if not session.peer.flow.hellos:
                    return "dropped"  # our ok never got out: the game never began
                if session.peer.flow.game_id is None:
                    self._free(game)  # not a game in progress (it takes a slot again if
                    # its joiner, whose hello was lost, comes back to it)
                    if away > self.pending_timeout or trio.current_time() > game.begin_by:
                        return "dropped"  # nothing was saved: a joiner that left at once
                elif session.done and away > self.linger:
                    # The joiner left without confirming our last messages: it had them
                    # all (its goodbye was lost), or it would have been back by now.
                    return "unconfirmed"
                else:
                    now = trio.current_time()
                    session.claim_overdue(now)  # (deadlines run while it is away)
                    if session.away_too_long(now):
                        return "abandoned"
            if game.live is not None and not session.done:
                await game.wake.wait()  # (poked when the connection ends or the game is done)
                continue
            with trio.move_on_after(self.poll):  # (to see how long the joiner stays away)
                await session.wait_changed()

    def _free(self, game: _Game) -> None:
        if game.slot:
            game.slot = False
            self.active -= 1

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
        verdict = game.session.verdict
        if verdict is not None and HOST in verdict.claimants:
            self.stats.stalled += 1
            self._cool(game.source)
        if outcome == "halted":
            self.stats.halted += 1
            after = ("it resumes from its file when this host runs again"
                     if game.session.path is not None else "it never began: nothing was saved")
            self.status(game, f"stopped: {game.session.storage_failure}; nothing more is "
                        f"sent in it ({after})")
            return
        self.stats.finished += 1
        self.on_game_end(game.number, game.session)
        if self.games_total is not None and self.stats.finished >= self.games_total:
            self.enough.set()

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

    async def run(self, stop: trio.Event | None,
                  task_status: trio.TaskStatus[MultiHosting]) -> MultiHostStats:
        config = self.config
        resumed = self.resume_saved() if config.resume else []
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                for game in resumed:
                    nursery.start_soon(self._supervise, game)
                if stop is not None:
                    nursery.start_soon(self._stop_when, stop)
                listeners = await nursery.start(
                    serve_admission, self.handler,
                    server_context(config.tls_cert, config.tls_key), self.listen_port,
                    config.bind, Gate(config.admission), self.on_status)
                port = listening_port(listeners)
                if not self.listen_port:
                    self.listen_port = port
                pin = public_key_pin(config.tls_cert)
                invites = [Invite(address, port, pin, self.join_secret).encode()
                           for address in reachable_addresses(config.bind)]
                task_status.started(MultiHosting(port, invites, len(resumed)))
                await self.enough.wait()
                # Enough games (or told to stop): the joiners of games that just ended get
                # our goodbye, then we stop; games in progress stay resumable.
                with trio.move_on_after(config.limits.bye + 1.0):
                    while any(g.live is not None for g in self.games if g.ended):
                        await trio.sleep(0.05)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # a ListenError, say: raised as itself
            raise unwrap(group) from None
        finally:
            for game in self.games:  # (cancelled: every transcript is complete on disk)
                game.session.close()
        return self.stats

    async def _stop_when(self, stop: trio.Event) -> None:
        await stop.wait()
        self.enough.set()


async def host_many(
    config: HostConfig,
    run_seat_factory: SeatFactory,
    max_games: int,
    *,
    games_total: int | None = None,
    action_limit: float = ACTION_LIMIT,
    on_status: Callable[[str], None] = lambda s: None,
    on_game_end: Callable[[int, GameSession], None] = lambda n, s: None,
    stop: trio.Event | None = None,
    task_status: trio.TaskStatus[MultiHosting] = trio.TASK_STATUS_IGNORED,
) -> MultiHostStats:
    """Host up to `max_games` games at once, each played by `run_seat_factory(number)`,
    until cancelled, until `stop` is set, or, with `games_total`, until that many games
    have ended; then the joiners of games that just ended get a moment to take our
    goodbye, games in progress are left resumable, and the counts are returned. With
    `config.resume`, unfinished hosted games saved under the newest one's join secret are
    picked up first (they count against `max_games`). `on_game_end(number, session)` is
    called as each game ends; the session's transcript file is still open then. A joiner
    that has owed the same thing for `action_limit` seconds loses its game by our claim
    (SPEC 3.6)."""
    if max_games < 1:
        raise ValueError("max_games is at least 1")
    host = _MultiHost(config, run_seat_factory, max_games, games_total, on_status,
                      on_game_end, action_limit)
    return await host.run(stop, task_status)


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


class _JoinerChannel(FramedChannel):
    """A joiner's connection; `before_hello`, when set, sees every frame before the game
    does (`_MultiHost._one_game_per_key`), and may refuse the joiner by raising."""

    before_hello: Callable[[bytes], None] | None = None

    async def receive(self) -> bytes:
        frame = await super().receive()
        if self.before_hello is not None:
            self.before_hello(frame)
        return frame
