"""The joiner: connect to an invite (checking the pin before sending a byte), be admitted
with the join secret, play, and reconnect until the game is done or the host is gone."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import equal
from p2pgotg.games import module_for
from p2pgotg.net.play.player_name import shown_name
from p2pgotg.net.play.saved_games import resume_session, unfinished_games
from p2pgotg.net.play.seat import SeatRunner
from p2pgotg.net.play.session import GameSession, Link, Timeouts, lost_words, receive, unwrap
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.reaching.racing import NoPathError
from p2pgotg.net.transport._stream import abort_on_close
from p2pgotg.net.transport.errors import (
    ConnectFailedError,
    HandshakeTimeoutError,
    NetError,
    PinMismatchError,
)
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    open_pinned_connection,
    peer_certificate,
)
from p2pgotg.protocol import HOST, JOINER, control
from p2pgotg.protocol.printable import printable


@dataclass
class JoinConfig:
    key: Ed25519PrivateKey
    invite: Invite
    save_dir: Path
    limits: Timeouts = field(default_factory=Timeouts)
    resume: bool = True
    #: A new game whose host never answered: stop trying after this many seconds.
    give_up: float = 60.0
    # How to open a pinned TLS stream to the host (None: the invite's one address). The
    # racing of a v2 invite's candidates and the short code's PAKE plug in here.
    opener: Callable[[], Awaitable[trio.SSLStream]] | None = None
    name: str | None = None  # ours, sent in `hi` (SPEC 3.4): a label the host shows


@runtime_checkable
class Resumable(Protocol):
    """An opener that wants to know when join_game resumed a saved game (racing's)."""

    def resuming(self) -> None: ...


class TableInvite(SessionError):
    """The host's `ok` says its game is a table of `seats` (SPEC 3.4, 5.4): the joiner
    plays a seat of it (`table_joiner`), not a game of two."""

    def __init__(self, seats: int) -> None:
        super().__init__(f"this invite is a table of {seats} seats")
        self.seats = seats


#: What a joiner holding a game says when a reconnection shows a key other than the pin's.
PIN_MISMATCH_WORDS = ("the host's key does not match the invite: someone between you and "
                      "the host may be pretending to be it (nothing was sent to them)")


def no_answer_words(invite: Invite, exc: NetError | None = None) -> str:
    """What to tell a joiner whose host does not answer (nothing ever connected): what the
    race found when it tried more than one address (every candidate, STUN, punching),
    else the one address."""
    if len(invite.all_candidates()) > 1 and exc is not None and exc.detail:
        return f"the host cannot be reached: {exc.detail}"
    return (f"no host answers at {invite.address}:{invite.port} (is it running? is this the "
            "code of this game?)")


async def join_game(
    config: JoinConfig,
    run_seat: SeatRunner,
    *,
    on_status: Callable[[str], None] = lambda s: None,
    on_session: Callable[[GameSession], None] = lambda s: None,
) -> GameSession:
    """Play the invite's game to its end and return the session. Raises SessionError for
    what retrying cannot fix (wrong pin, wrong secret, busy host, another version, no host
    answering a new game's invite for `config.give_up` seconds)."""
    session = _resume_saved(config, on_status)
    tries = _Tries(config, on_status)
    fatal: SessionError | None = None  # raised once the nursery is closed, not inside it
    box: list[GameSession | None] = [session]
    tries.answered = session is not None  # (a resumed game: its host answered once)
    try:
        async with _closed_at_exit(box), trio.open_nursery() as nursery:
            if session is not None:
                on_session(session)
                nursery.start_soon(run_seat, session)
            while session is None or not session.finished:
                try:
                    await _one_connection(config, box, nursery, run_seat, on_status,
                                          on_session)
                    tries.delay = config.limits.retry[0]
                except (SessionError, NetError) as exc:
                    fatal, again = await tries.failed(exc, box[0])
                    if fatal is not None:
                        break
                    if again:
                        continue
                session = box[0]
                if session is not None and session.finished:
                    break
                fatal, stop = _between_connections(box)
                session = box[0]
                if fatal is not None or stop:
                    break
                await tries.wait()
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # (a SessionError from a task: raised as itself)
        raise unwrap(group) from None
    if session is not None:
        session.close()
    if fatal is not None:
        raise fatal
    assert session is not None
    return session


def _resume_saved(config: JoinConfig, on_status: Callable[[str], None]
                  ) -> GameSession | None:
    """Our unfinished game of this invite (same join secret), when we have one."""
    if not config.resume:
        return None
    for saved in unfinished_games(config.save_dir, JOINER, config.key):
        if saved.join_secret is not None and equal(saved.join_secret, config.invite.secret):
            session = resume_session(saved, config.key, bytes(32), config.limits)
            session.on_claim = _about_the_host(on_status)
            on_status(f"resuming the unfinished game saved in {saved.path.name}")
            if isinstance(config.opener, Resumable):
                config.opener.resuming()
            return session
    return None


def _between_connections(box: list[GameSession | None]) -> tuple[SessionError | None, bool]:
    """After a connection ended: the error to give up with, if any, and whether to stop
    (our game was abandoned too long); a game that never got its id starts afresh."""
    session = box[0]
    if session is not None and session.peer.flow.game_id is None:
        if session.peer_left:
            return SessionError("the host left before the game began: ask for a new "
                                "invite code"), True
        session = box[0] = None  # the handshake never finished: start afresh
    if session is None:
        return None, False
    session.link = Link.RECONNECTING
    if session.away_since is None:
        session.away_since = trio.current_time()
    now = trio.current_time()
    session.claim_overdue(now)  # (deadlines run while it is away)
    return None, session.away_too_long(now)


class _Tries:
    """The joiner's retries: the back-off, and whether the host ever answered (before it
    did, the joiner gives up after `config.give_up` seconds)."""

    def __init__(self, config: JoinConfig, on_status: Callable[[str], None]) -> None:
        self.config = config
        self.on_status = on_status
        self.delay = config.limits.retry[0]
        self.started = trio.current_time()
        self.answered = False

    async def wait(self) -> None:
        await trio.sleep(self.delay)
        self.backoff()

    def backoff(self) -> None:
        self.delay = min(self.delay * 2, self.config.limits.retry[1])

    async def failed(self, exc: SessionError | NetError, session: GameSession | None
                     ) -> tuple[SessionError | None, bool]:
        """What a failed connection means: the error to give up with, if any, and whether
        to try again at once (the count-down waited already)."""
        if isinstance(exc, PinMismatchError):
            return self._pin_mismatch(exc, session), False
        if isinstance(exc, SessionError):
            self.answered = True
            held = session is not None and session.peer.flow.game_id is not None
            if exc.fatal and not (held and isinstance(exc, NoPathError)):
                return exc, False
        elif isinstance(exc, ConnectFailedError | HandshakeTimeoutError) and not self.answered:
            return await self._no_answer(exc), True
        else:
            self.answered = True  # (a connection that failed after the host answered)
        self.on_status(lost_words(exc, session))
        return None, False

    def _pin_mismatch(self, exc: PinMismatchError, session: GameSession | None
                      ) -> SessionError | None:
        if session is None:  # (never admitted: most likely a wrong code)
            return SessionError(f"{exc.user_message}: this is not the host of the invite, "
                                "or the code was mistyped; nothing was sent")
        # A game we hold: the code was right when we began, so this is someone between us
        # and the host. Giving up would let it make the host claim our absence: keep
        # trying the real host (SPEC 3.1).
        self.on_status(f"{PIN_MISMATCH_WORDS}; trying again in {self.delay:g} s")
        return None

    async def _no_answer(self, exc: NetError) -> SessionError | None:
        """No host has answered yet: count down to the next try, or give up."""
        config = self.config
        left = self.started + config.give_up - trio.current_time()
        if left <= 0:
            return SessionError(
                f"{no_answer_words(config.invite, exc)}: gave up after {config.give_up:g} "
                "s. Check that the host is running and shows this code, then run the same "
                "command again")
        await _count_down(self.on_status, no_answer_words(config.invite, exc), self.delay,
                          left)
        self.backoff()
        return None


async def _count_down(on_status: Callable[[str], None], words: str, delay: float,
                      left: float) -> None:
    """Wait `delay` seconds before the next try, saying each second how long is left
    before giving up (`left` seconds from now)."""
    now = trio.current_time()
    give_up, end = now + left, now + min(delay, left)
    while True:
        now = trio.current_time()
        on_status(f"{words}; trying again, giving up in {max(0, math.ceil(give_up - now))} s")
        if now >= end:
            return
        await trio.sleep(min(1.0, end - now))


@asynccontextmanager
async def _closed_at_exit(box: list[GameSession | None]) -> AsyncIterator[None]:
    """Close the session's transcript file however join_game ends, cancelled included."""
    try:
        yield
    finally:
        if box[0] is not None:
            box[0].close()


async def _one_connection(
    config: JoinConfig,
    box: list[GameSession | None],
    nursery: trio.Nursery,
    run_seat: SeatRunner,
    on_status: Callable[[str], None],
    on_session: Callable[[GameSession], None],
) -> None:
    invite, limits = config.invite, config.limits
    session = box[0]
    if config.opener is not None:
        stream = await config.opener()
    else:
        stream = await open_pinned_connection(invite.address, invite.port, invite.pin,
                                              handshake_timeout=limits.handshake)
    channel = FramedChannel(stream, keepalive_interval=limits.keepalive,
                            silence_timeout=limits.silence)
    try:
        gid = session.peer.flow.game_id if session else None
        have = session.peer.received_count() if session else 0
        first = session.peer.flow.first_hash(HOST) if session else None
        try:
            if session is not None:
                await session.durable()  # (what we say we hold must survive a crash)
            with trio.fail_after(limits.handshake):
                await channel.send(control.encode(control.Hi(invite.secret, gid, have, first,
                                                             config.name)))
        except trio.TooSlowError:
            raise SessionError("the host did not take our greeting in time", fatal=False) \
                from None
        ours = session is not None and session.peer.flow.game_id is not None
        try:
            ok = await receive(channel, control.Ok, limits.handshake)
        except SessionError as exc:
            if ours:  # an unsigned frame never makes us give up a game for good (SPEC 3.4)
                raise SessionError(str(exc), fatal=False) from None
            raise
        if ok.seats is not None and session is None:
            raise TableInvite(ok.seats)
        peer_has = ok.have
        if session is not None and peer_has > session.sent_count:
            raise SessionError("the host sent a bad greeting", fatal=not ours)
        if session is not None and gid is not None and ok.game != gid \
                and not _host_awaits_our_hello(session, ok, peer_has):
            raise SessionError("the host does not have our game any more")
        if session is None:
            fingerprint = certificate_fingerprint(peer_certificate(stream))
            try:
                game = module_for(ok.rules)
            except KeyError:
                raise SessionError(f"the host plays {printable(ok.rules, 32)}, a game this "
                                   "version of p2pgotg does not know: update it") from None
            peer = game.peer(JOINER, config.key, fingerprint)
            session = box[0] = GameSession(peer, config.save_dir, invite.secret, limits,
                                           on_claim=_about_the_host(on_status),
                                           own_name=config.name)
            on_session(session)
            nursery.start_soon(_refuse_our_own_key, session)
            nursery.start_soon(run_seat, session)
        session.note_peer_name(shown_name(ok.name))
        on_status("connected to the host")
        try:
            await session.run_connection(channel, peer_has)
        except NetError:  # (lost: its addresses may be punched again at once)
            abort_on_close(stream)
            raise
    finally:
        with trio.move_on_after(2):
            await channel.aclose()


OWN_KEY_WORDS = (
    "the host signs with your own identity key: both seats of a game need keys of their "
    "own. Join from another account, or set P2PGOTG_HOME to another folder for this seat")


async def _refuse_our_own_key(session: GameSession) -> None:
    """The protocol needs two distinct keys: when the host's hello carries ours, say so at
    once instead of waiting on an accept that can never be sent."""
    flow = session.peer.flow
    while (theirs := flow.key_of(HOST)) is None:
        await session.wait_changed()
    if equal(theirs, session.peer.public_key):
        raise SessionError(OWN_KEY_WORDS)


def _host_awaits_our_hello(session: GameSession, ok: control.Ok, peer_has: int) -> bool:
    """The connection dropped after we sent our hello and before the host got it: the
    host (the same one: its first message is the hello we answered) has no game id yet,
    holds none of our messages, and takes our hello again."""
    hello = session.peer.flow.first_hash(HOST)
    return (ok.game is None and peer_has == 0 and hello is not None
            and ok.first is not None and equal(ok.first, hello))


def _about_the_host(on_status: Callable[[str], None]) -> Callable[[str], None]:
    """A claim's words as the joiner says them: the other player is the host."""
    return lambda words: on_status(words.replace("the other player", "the host"))
