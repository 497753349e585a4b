"""The trio driver: one game's `Peer` over whatever connection is up, and its transcript.

The protocol object decides everything; this module moves bytes, writes the transcript
before anything is sent or acted on, keeps the clocks, and owns every timeout. A dropped
connection is normal: the session outlives it, and the next connection resends what the
other side has not seen (each side says how many of the other's messages it holds).
"""

from __future__ import annotations

import contextlib
import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import trio

from p2pgotg.net.clock import Clocks
from p2pgotg.net.errors import NetError, PeerSilentError
from p2pgotg.net.framing import FramedChannel
from p2pgotg.net.transcript_file import TranscriptFile
from p2pgotg.protocol import (
    LocalProtocolError,
    Peer,
    Phase,
    RemoteProtocolError,
    Verdict,
)
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import HOST, JOINER

SESSION_VERSION = 1
#: Why a side says it is leaving (the `leave` control frame): the joiner declined the host's
#: rules, or the player quit a game that can be resumed.
LEAVE_REASONS = ("declined", "quit")
Action = Callable[[Peer], list[Event]]


class SessionError(Exception):
    """A reason this game cannot go on over this connection; `str()` is for the user.
    `fatal` errors (wrong pin, wrong secret, another protocol version, a busy host) are not
    retried."""

    def __init__(self, message: str, fatal: bool = True) -> None:
        super().__init__(message)
        self.fatal = fatal


class Link(enum.Enum):
    """What the connection is doing, as a user would want to see it."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass
class Limits:
    """Every timeout of the driver, in seconds."""

    handshake: float = 30.0  # connect, TLS, admission and hellos
    keepalive: float = 5.0  # send something at least this often
    silence: float = 20.0  # hear nothing this long and the connection counts as lost
    audit: float = 60.0  # after our audit, the peer's must come within this
    duty: float = 30.0  # an automatic answer the peer owes (a challenge's reply, its token)
    abandon: float = 180.0  # a peer away this long loses by abandonment
    bye: float = 5.0  # at the end, how long to wait for the peer's goodbye
    grace: float = 5.0  # after (re)connecting, no claim before the peer's resends are in
    retry: tuple[float, float] = (0.5, 5.0)  # reconnect back-off, first and longest


def control(kind: str, **fields: Any) -> bytes:
    """A session control frame (not part of the signed game): hi, ok, error, bye."""
    return msgpack.packb({"ctl": kind, "v": SESSION_VERSION, **fields}, use_bin_type=True)


def parse_control(frame: bytes) -> dict[str, Any] | None:
    """The control frame's map, or None for a game message."""
    try:
        value = msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=65536,
                                max_str_len=65536, max_array_len=64, max_map_len=16,
                                max_ext_len=0)
    except Exception:  # noqa: BLE001  (any undecodable frame is a game message to judge)
        return None
    if isinstance(value, dict) and isinstance(value.get("ctl"), str):
        return value
    return None


@dataclass
class GameSession:
    """One game, across as many connections as it takes."""

    peer: Peer
    save_dir: Path
    join_secret: bytes
    limits: Limits = field(default_factory=Limits)
    file: TranscriptFile | None = None
    link: Link = Link.CONNECTING
    events: list[Event] = field(default_factory=list)
    problem: str | None = None  # the last thing that went wrong, for the user
    away_since: float | None = None
    peer_said_bye: bool = False
    listen_port: int = 0  # the host's port, saved so that a resumed host listens there again
    peer_has: int = 0  # how many of our messages the peer said it holds (greeting, then bye)
    peer_left: str | None = None  # the other side said it is going: one of LEAVE_REASONS
    on_done: Callable[[], None] | None = None  # called once, when the game becomes done

    def __post_init__(self) -> None:
        self._buffer: list = []
        self._outbox: list[bytes] = []
        self._wake_writer = trio.Event()
        self._changed = trio.Event()
        self.clocks = Clocks(0, 0)  # until the options are known (the host's hello)
        self._clocks_set = False
        self._audit_since: float | None = None
        self._owed: tuple[str, int, bool] | None = None  # who owes which challenge step
        self._owed_since = 0.0
        self._bye_have: int | None = None  # the `have` of our last bye on this connection
        self._done_at: float | None = None  # when this connection saw the game done
        self._timed: tuple = ()  # what `_timers` computes its deadlines from
        self._retime = trio.Event()  # set when that changes
        self._done_seen = trio.Event()  # set once the game is done

    # -- state for seats and screens ----------------------------------------------------

    @property
    def verdict(self) -> Verdict | None:
        return self.peer.flow.conclusion()

    @property
    def done(self) -> bool:
        """Nothing more can happen in this game: a verdict, or a broken rule."""
        return self.verdict is not None or self.peer.failed is not None

    @property
    def sent_count(self) -> int:
        """How many messages we have sent in this game (resends not counted)."""
        return len(self.peer.flow.senders[self.peer.role].envelopes)

    @property
    def settled(self) -> bool:
        """Done, and the peer said it holds every message of ours: its transcript is
        complete too, so neither side needs the other again."""
        return self.done and self.peer_has >= self.sent_count

    @property
    def finished(self) -> bool:
        """Nothing is left to do over any connection: settled, or a broken rule ended it.
        A game that is done but not settled still needs a connection, so that the peer
        gets our last messages (else it could never finish its audit)."""
        return self.peer.failed is not None or self.settled

    @property
    def path(self) -> Path | None:
        return self.file.path if self.file else None

    async def wait_changed(self) -> None:
        """Return after the next change of state (a message, an action, the link)."""
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()
        if not self._done_seen.is_set() and self.done:
            self._done_seen.set()
            if self.on_done is not None:
                self.on_done()

    # -- acting -------------------------------------------------------------------------

    def perform(self, action: Action) -> list[Event]:
        """Do a local action now (a move, a resignation...). Raises LocalProtocolError,
        with nothing changed, when the rules or the protocol do not allow it."""
        events = action(self.peer)
        self._after(events)
        return events

    def _after(self, events: list[Event]) -> None:
        self._persist()  # write-ahead: written now, durable before anything is sent
        self._outbox += self.peer.data_to_send()
        self.events += events
        now = trio.current_time()
        self._update_clocks(now)
        flow = self.peer.flow
        if flow.phase is Phase.AUDIT and self._audit_since is None:
            self._audit_since = now
        owed = self._who_owes()
        if owed != self._owed:
            self._owed, self._owed_since = owed, now
        timing = self._timing()
        if timing != self._timed:  # (most messages change no deadline: `_timers` sleeps on)
            self._timed = timing
            self._retime.set()
            self._retime = trio.Event()
        if self._outbox or self.done:  # (something to send, or a goodbye to say)
            if self.file is not None:
                self.file.begin_sync()  # (the flush runs while the writer waits its turn)
            self._wake_writer.set()
        self._notify()

    def _persist(self) -> None:
        records = self.peer.take_records()
        if self.file is not None:
            self.file.append(records)
            return
        self._buffer += records
        gid = self.peer.flow.game_id
        if gid is not None:
            path = self.save_dir / f"{gid.hex()}.gtr"
            try:
                self.file = TranscriptFile.create(path, self.peer.role, self.peer.public_key)
            except FileExistsError:  # both seats on one account: the other seat's file
                path = self.save_dir / f"{gid.hex()}-{self.peer.role}.gtr"
                self.file = TranscriptFile.create(path, self.peer.role, self.peer.public_key)
            first: dict[str, bytes] = {"join": self.join_secret}
            if self.listen_port:
                first["port"] = self.listen_port.to_bytes(2, "big")
            self.file.append([("secrets", first), *self._buffer])
            self._buffer = []

    async def durable(self) -> None:
        """Return once every transcript record so far is on disk (the fsync runs on a
        worker thread). Await it before sending a message, or a count of the peer's
        messages we hold: the peer must never see what a crash could make us forget."""
        if self.file is not None:
            await self.file.sync_in_thread()

    def _update_clocks(self, now: float) -> None:
        flow = self.peer.flow
        if not self._clocks_set and flow.options is not None:
            self.clocks = Clocks(flow.options.clock_seconds, flow.options.move_seconds)
            self._clocks_set = True
        game = flow.game
        if game is None or flow.is_over:
            self.clocks.stop(now)
            return
        if flow.pending is not None:  # the defender's reply is automatic: nobody thinks
            self.clocks.stop(now)
            return
        self.clocks.switch(flow.role_of(game.turn), now)

    # -- one connection -----------------------------------------------------------------

    async def run_connection(self, channel: FramedChannel, peer_has: int) -> None:
        """Play over `channel` until the game is over and the peer holds all of it
        (returns), or the connection breaks (raises NetError or SessionError). Once the
        game is done, the peer has `limits.bye` seconds to confirm that it holds every
        message of ours (its goodbye); then the connection counts as lost."""
        self.link = Link.CONNECTED
        self.away_since = None
        self.problem = None
        self.peer_has = peer_has
        self.peer_said_bye = False
        self._bye_have = None
        self._done_at = None
        self._outbox = self.peer.messages_since(peer_has)
        self._wake_writer.set()
        self._notify()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(channel.keep_alive)
                nursery.start_soon(self._writer, channel)
                nursery.start_soon(self._timers)
                nursery.start_soon(self._reader, channel, nursery.cancel_scope)
                await self._until_settled()
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            raise unwrap(group) from None
        finally:
            self.link = Link.CLOSED if self.finished else Link.RECONNECTING
            if not self.finished and self.away_since is None:
                self.away_since = trio.current_time()
            self._notify()

    async def _until_settled(self) -> None:
        """Return once the game is done, the peer confirmed holding all our messages, and
        our own goodbye (confirming all of the peer's) is sent. A done game whose peer
        does not confirm within `limits.bye` raises PeerSilentError."""
        while True:
            if self.peer.failed is None and self.settled \
                    and self._bye_have == self.peer.received_count():
                return
            if self.done:
                if self._done_at is None:
                    self._done_at = trio.current_time()
                with trio.move_on_at(self._done_at + self.limits.bye):
                    await self.wait_changed()
                    continue
                if self.peer.failed is None:
                    raise PeerSilentError(
                        f"the other player did not confirm the end of the game within "
                        f"{self.limits.bye:g} s")
                await self.wait_changed()
            else:
                await self._done_seen.wait()  # (until then there is nothing to settle)

    async def _reader(self, channel: FramedChannel, scope: trio.CancelScope) -> None:
        while True:
            try:
                frame = await channel.receive()
            except NetError:
                if self.peer.failed is None and self.settled:
                    scope.cancel()  # the peer left after confirming everything: fine
                    return
                raise
            await self._take(frame, channel)

    async def _take(self, frame: bytes, channel: FramedChannel) -> None:
        ctl = parse_control(frame)
        if ctl is not None:
            if ctl["ctl"] == "bye":
                self.peer_said_bye = True
                have = ctl.get("have")
                if isinstance(have, int) and not isinstance(have, bool) and have >= 0:
                    self.peer_has = have
                self._notify()
                return
            if ctl["ctl"] == "leave":  # (a code, never text: nothing of the peer's is shown)
                why = ctl.get("why")
                self.peer_left = why if why in LEAVE_REASONS else "quit"
                self._notify()
                return
            if ctl["ctl"] == "error":
                raise SessionError(f"the other player stopped: {ctl.get('reason', '?')}")
            return
        if self.peer.failed is not None:
            return  # a broken rule ended the game: nothing more to take
        # Messages after our verdict are still taken (a resend changes nothing; the
        # loser's audit after a claim completes the audit), so both transcripts end equal.
        try:
            events = self.peer.receive(frame)
        except RemoteProtocolError as exc:
            self._after([])  # keep the signed evidence
            self.problem = str(exc)
            with trio.move_on_after(2):
                await channel.send(control("error", reason=f"you broke the protocol: {exc}"))
            where = f"; the evidence is kept in {self.path}" if self.path else ""
            raise SessionError(f"the other player broke the protocol: {exc}{where}") from None
        self._after(events)

    async def _writer(self, channel: FramedChannel) -> None:
        while True:
            await self._wake_writer.wait()
            self._wake_writer = trio.Event()
            while self._outbox:
                await self.durable()  # (the record of every message in the box is written)
                await channel.send(self._outbox[0])
                self._outbox.pop(0)
            if self.done and self.peer.failed is None:
                have = self.peer.received_count()
                if have != self._bye_have:  # (again) tell what we hold, after the end
                    await self.durable()
                    await channel.send(control("bye", have=have))
                    self._bye_have = have
                    self._notify()

    def _timing(self) -> tuple:
        """Everything `_timers` derives its deadlines from (besides the time itself)."""
        flow, clocks = self.peer.flow, self.clocks
        clock = (clocks.running, clocks.since) if clocks.limit or clocks.per_move else None
        return (self.done, flow.phase, self._owed, self._owed_since, self._audit_since,
                len(flow.audits), clock)

    def _who_owes(self) -> tuple[str, int, bool] | None:
        """(role, ply, replied) of the automatic challenge answer now awaited, if any."""
        pending = self.peer.flow.pending
        if pending is None or self.peer.flow.is_over:
            return None
        replied = bool(pending.cts)
        if pending.n >= 0 and replied:
            return pending.attacker, pending.ply, replied  # the attacker's token
        defender = HOST if pending.attacker == JOINER else JOINER
        return defender, pending.ply, replied  # the defender's opening or table

    async def _timers(self) -> None:
        """Claim the game when the opponent's time runs out, when it withholds the answer a
        challenge needs, or when it will not be audited. Runs with each connection, and
        claims nothing in its first `limits.grace` seconds: what the peer did while the
        connection was down (a move, an answer, its audit) is being sent again right now,
        and must not lose to a claim made the instant the connection opened."""
        me, them = self.peer.role, self.peer.peer_role
        grace_end = trio.current_time() + self.limits.grace
        while not self.done:
            now = trio.current_time()
            flow = self.peer.flow
            dues: list[tuple[float, str]] = []  # (when, the claim's reason)
            owed = self._owed
            if flow.phase is Phase.PLAY and owed is not None and owed[0] == them:
                dues.append((self._owed_since + self.limits.duty, "time"))
            if flow.phase is Phase.PLAY:
                if self.clocks.flagged(them, now):
                    dues.append((now, "time"))
                else:
                    theirs = self.clocks.deadline(them, now)
                    if theirs is not None:
                        dues.append((theirs, "time"))
            elif flow.phase is Phase.AUDIT and self._audit_since is not None \
                    and me in flow.audits and them not in flow.audits:
                dues.append((self._audit_since + self.limits.audit, "abandoned"))
            deadline = math.inf
            for due, reason in sorted(dues):
                due = max(due, grace_end)
                if now >= due:
                    self._claim(reason)
                    break
                deadline = min(deadline, due)
            else:
                with trio.move_on_at(deadline):
                    await self._retime.wait()

    def _claim(self, reason: str) -> None:
        with contextlib.suppress(LocalProtocolError):  # the game ended in the meantime
            self.perform(lambda p: p.claim_forfeit(reason))

    def claim_abandonment(self) -> None:
        """The peer stayed away past the limit: claim the game (recorded, and sent if it
        ever comes back)."""
        if not self.done and self.peer.flow.game_id is not None:
            self._claim("abandoned")

    async def leave(self, why: str, timeout: float = 2.0) -> None:
        """Tell the other side we are going (`declined` its rules, or `quit`), so that it
        can say so in words instead of seeing a dropped connection; best effort, waiting at
        most `timeout` seconds for the frame to go out."""
        assert why in LEAVE_REASONS
        if self.link is not Link.CONNECTED or self.finished:
            return
        frame = control("leave", why=why)
        self._outbox.append(frame)
        self._wake_writer.set()
        with trio.move_on_after(timeout):
            while self.link is Link.CONNECTED and any(f is frame for f in self._outbox):
                await trio.sleep(0.01)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def lost_words(exc: BaseException, session: GameSession | None = None) -> str:
    """Why a connection ended, in words for the player: what the other side said when it
    left, else the error's own user-facing summary (never a library's text)."""
    if session is not None and session.peer_left == "declined":
        return "the other player declined the rules"
    if session is not None and session.peer_left == "quit":
        return "the other player quit"
    if isinstance(exc, NetError):
        text = exc.summary().split(". ")[0].rstrip(".")
        return f"connection lost: {text[:1].lower()}{text[1:]}"
    return f"connection lost: {exc}"


def unwrap(group: BaseExceptionGroup) -> BaseException:
    """The one exception that matters in a nursery's group: a NetError or SessionError
    (the connection's fate) before anything else; the group itself if it holds a bug."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    for leaf in leaves:
        if isinstance(leaf, (SessionError, NetError)):
            return leaf
    if all(isinstance(leaf, trio.Cancelled) for leaf in leaves):
        return leaves[0]
    return group


# -- admission: who may play this game ------------------------------------------------------

def hello_frame(join_secret: bytes, game_id: bytes | None, have: int,
                first: bytes | None = None) -> bytes:
    """The joiner's greeting; `first`: the body hash of the host's hello it holds."""
    return control("hi", secret=join_secret, game=game_id, have=have, first=first)


def check_control(frame: bytes, kind: str) -> dict[str, Any]:
    """The peer's control frame of `kind`, or a SessionError saying what came instead."""
    ctl = parse_control(frame)
    if ctl is None:
        raise SessionError("the other side does not speak the p2pgotg session protocol")
    if ctl.get("v") != SESSION_VERSION:
        raise SessionError(f"the other side speaks p2pgotg session version {ctl.get('v')!r}; "
                           f"this program speaks version {SESSION_VERSION}: update one of them")
    if ctl["ctl"] == "error":
        raise SessionError(str(ctl.get("reason", "refused")))
    if ctl["ctl"] != kind:
        raise SessionError(f"expected {kind}, got {ctl['ctl']}")
    return ctl


async def receive_control(channel: FramedChannel, kind: str, timeout: float) -> dict[str, Any]:
    try:
        with trio.fail_after(timeout):
            frame = await channel.receive()
    except trio.TooSlowError:
        raise SessionError("no answer in time", fatal=False) from None
    except NetError as exc:
        raise SessionError(lost_words(exc), fatal=False) from None
    return check_control(frame, kind)


ROLES = (HOST, JOINER)
