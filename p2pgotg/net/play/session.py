"""The trio driver: one game's `Peer` over whatever connection is up, and its transcript.

The protocol object decides everything; this module moves bytes, writes the transcript
before anything is sent or acted on, keeps the clocks, and owns every timeout. A dropped
connection is normal: the session outlives it, and the next connection resends what the
other side has not seen (each side says how many of the other's messages it holds).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import trio

from p2pgotg.net.play.clock import Clocks
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.reaching.control_frames import SHOWN, Expected, SessionError, expect
from p2pgotg.net.transport.errors import NetError, PeerSilentError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.protocol import LocalProtocolError, Peer, RemoteProtocolError, Verdict, control
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.events import ClaimMade, Event
from p2pgotg.protocol.peer import Action
from p2pgotg.protocol.printable import printable

P = TypeVar("P", bound=Peer)


class StorageError(SessionError):
    """The game's transcript cannot be written (a full disk, no file descriptors left):
    nothing more is sent in this game, since nothing may be sent that is not saved first."""


class Link(enum.Enum):
    """What the connection is doing, as a user would want to see it."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass
class Timeouts:
    """Every timeout of the driver, in seconds."""

    handshake: float = 30.0  # connect, TLS, admission and hellos
    keepalive: float = 5.0  # send something at least this often
    silence: float = 20.0  # hear nothing this long and the connection counts as lost
    audit: float = 60.0  # after our audit, the peer's must come within this
    duty: float = 30.0  # an automatic answer the peer owes (coin, reveal, reply, token)
    setup: float = 300.0  # the peer must commit its setup within this
    abandon: float = 180.0  # a peer that owes something, away this long in all, loses
    bye: float = 5.0  # at the end, how long to wait for the peer's goodbye
    grace: float = 5.0  # a claim waits this long after a (re)connection, once in all
    #: A host's own limit on any one thing the peer owes (a move with or without a clock
    #: included), connected or not: a policy, enforced by the protocol's abandonment claim
    #: (SPEC 3.6). None: no such limit (the default of one-to-one games).
    action: float | None = None
    retry: tuple[float, float] = (0.5, 5.0)  # reconnect back-off, first and longest

    @property
    def linger(self) -> float:
        """How long a host keeps a cleanly ended game for a joiner that missed our last
        messages: the joiner notices the loss (silence), waits its longest back-off and
        reconnects (handshake)."""
        return self.silence + self.handshake + self.retry[1]


@dataclass
class GameSession(Generic[P]):
    """One game, across as many connections as it takes (of whatever game: `peer` is the
    game's own peer)."""

    peer: P
    save_dir: Path
    join_secret: bytes
    limits: Timeouts = field(default_factory=Timeouts)
    file: TranscriptFile | None = None
    link: Link = Link.CONNECTING
    events: list[Event] = field(default_factory=list)
    problem: str | None = None  # the last thing that went wrong, for the user
    away_since: float | None = None
    peer_said_bye: bool = False
    listen_port: int = 0  # the host's port, saved so that a resumed host listens there again
    peer_has: int = 0  # how many of our messages the peer said it holds (greeting, then bye)
    peer_left: str | None = None  # the other side said it is going: a LEAVE_REASONS word
    on_done: Callable[[], None] | None = None  # called once, when the game becomes done
    #: Called with the words for the user whenever we claim the game (a limit passed).
    on_claim: Callable[[str], None] | None = None
    #: Why the transcript cannot be written; set once, and from then on nothing is sent or
    #: saved in this run (the file stays as it was: at most a torn last record, never sent).
    storage_failure: str | None = None
    own_name: str | None = None  # our name, sent in `hi` or `ok` and saved (SPEC 3.4)
    peer_name: str | None = None  # the name the other side gave: a label, never trusted
    peer_name_saved: bool = False  # the transcript holds a name of the other side

    def __post_init__(self) -> None:
        self._buffer: list = []
        self._outbox: list[bytes] = []
        self._wake_writer = trio.Event()
        self._changed = trio.Event()
        self.clocks = Clocks(0, 0)  # until the options are known (the host's hello)
        self._clocks_set = False
        # What the peer owes us now (SPEC 3.6) and since when, by our reading. It outlives
        # connections: no reconnect, resend or grace period restarts a deadline.
        self._owed: tuple[object, ...] | None = None
        self._owed_since = 0.0
        self._away_total = 0.0  # time the peer was away while owing it, closed intervals
        # The same for what we owe: absence belongs to the party that owes, so a claim that
        # we abandoned the game is judged by our own record (`_disputes`).
        self._mine: tuple[object, ...] | None = None
        self._mine_since = 0.0
        self._my_away_total = 0.0
        self._connected_at: float | None = None  # when the current connection opened
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
        return self.peer.flow.next_seq(self.peer.role)

    @property
    def settled(self) -> bool:
        """Done, and the peer said it holds every message of ours: its transcript is
        complete too, so neither side needs the other again."""
        return self.done and self.peer_has >= self.sent_count

    @property
    def released(self) -> bool:
        """A clean end: our verdict rests on a complete audit, so we hold all we need,
        and the peer said its goodbye (whatever count it gave): it is finished with us.
        Nobody waits for anything more (SPEC 3.4, `bye`)."""
        verdict = self.verdict
        return (self.peer.failed is None and self.peer_said_bye and verdict is not None
                and verdict.audit_complete)

    @property
    def finished(self) -> bool:
        """Nothing is left to do over any connection: settled, released, or a broken rule
        ended it. A game that is done but neither still needs a connection, so that the
        peer gets our last messages (else it could never finish its audit)."""
        return self.peer.failed is not None or self.settled or self.released

    @property
    def halted(self) -> bool:
        """The transcript cannot be written: this run can do nothing more in this game
        (it resumes from its file when the program runs again)."""
        return self.storage_failure is not None

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

    def perform(self, action: Action[P]) -> list[Event]:
        """Do a local action now (a move, a resignation...). Raises LocalProtocolError,
        with nothing changed, when the rules or the protocol do not allow it."""
        events = action(self.peer)
        self._after(events)
        return events

    def _after(self, events: list[Event]) -> None:
        self._persist()  # write-ahead: written now, durable before anything is sent
        if self.halted:  # (not saved, so never sent: SPEC 3.5)
            self.peer.data_to_send()
        else:
            self._outbox += self.peer.data_to_send()
        self.events += events
        now = trio.current_time()
        disputes = self._disputes(events, now)
        self._update_clocks(now)
        owed = self._what_peer_owes()
        if owed != self._owed:
            self._owed, self._owed_since, self._away_total = owed, now, 0.0
        mine = self._what_we_owe()
        if mine != self._mine:
            self._mine, self._mine_since, self._my_away_total = mine, now, 0.0
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
        for claim in disputes:
            with contextlib.suppress(LocalProtocolError):
                self.perform(_disputing(claim))

    def _disputes(self, events: list[Event], now: float) -> list[int]:
        """The peer's claims against us that we sign a dispute of (SPEC 2.6): every one,
        except a clock claim that our own reading of our clock agrees with (within a
        second), and an abandonment claim while we owed something (by our own record) and
        had been away, with no working connection, that long in all (within a second).
        Absence is the owing party's: the peer's away time says nothing about ours."""
        me, them = self.peer.role, self.peer.other_role
        found = []
        for event in events:
            if not isinstance(event, ClaimMade) or event.role != them:
                continue
            if event.reason == "time" and self.clocks.flagged(me, now + 1.0):
                continue
            if event.reason == "abandoned" and self._mine is not None \
                    and self.my_away_for(now) >= self.limits.abandon - 1.0:
                continue
            found.append(event.seq)
        return found

    def _persist(self) -> None:
        records = self.peer.take_records()
        if self.halted:
            return  # (nothing more is written: the file ends where the failure left it)
        try:
            self._write(records)
        except OSError as exc:
            self._halt(exc)

    def _halt(self, exc: OSError) -> None:
        """A write or flush failed: stop writing and sending for good in this run. The
        writer says why (one line, through the connection's SessionError)."""
        if self.storage_failure is None:
            what = "write the transcript" if self.file is not None else \
                "create a transcript file"
            self.storage_failure = f"cannot {what} of this game: {exc.strerror or exc}"
            self._outbox.clear()
            self._wake_writer.set()
            self._notify()

    def _write(self, records: list) -> None:
        if self.file is not None:
            self.file.append(records)
            return
        self._buffer += records
        flow = self.peer.flow
        gid = flow.game_id
        if gid is None and self.peer.failed is not None and flow.transcript:
            # a hello that broke a rule: kept as evidence although no game id exists; the
            # file is named by the hash of the first hello instead
            gid = Envelope.decode(flow.transcript[0][1]).hash
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
            for field_name, name in (("name", self.own_name), ("peer_name", self.peer_name)):
                if name:
                    first[field_name] = name.encode()
            self.peer_name_saved = bool(self.peer_name)
            self.file.append([("secrets", first), *self._buffer])
            self._buffer = []

    def note_peer_name(self, name: str | None) -> None:
        """The name the other side gave in its `hi` or `ok`, already made safe to show:
        shown from now on, and saved in the transcript the first time only (a side that
        renames itself at every reconnection cannot grow the file)."""
        if not name or name == self.peer_name:
            return
        self.peer_name = name
        if self.file is not None and not self.halted and not self.peer_name_saved:
            self.peer_name_saved = True
            try:
                self.file.append([("secrets", {"peer_name": name.encode()})])
            except OSError as exc:
                self._halt(exc)

    async def durable(self) -> None:
        """Return once every transcript record so far is on disk (the fsync runs on a
        worker thread). Await it before sending a message, or a count of the peer's
        messages we hold: the peer must never see what a crash could make us forget."""
        if self.halted:
            raise self._storage_error()
        if self.file is not None:
            try:
                await self.file.sync_in_thread()
            except OSError as exc:
                self._halt(exc)
                raise self._storage_error() from None

    def _storage_error(self) -> StorageError:
        where = f" ({self.path.name})" if self.path else ""
        return StorageError(f"{self.storage_failure}{where}; nothing more is sent in this "
                            "game, which resumes from its saved file when this runs again")

    def _update_clocks(self, now: float) -> None:
        flow = self.peer.flow
        if not self._clocks_set and flow.options is not None:
            self.clocks = Clocks(*flow.clock_limits())
            self._clocks_set = True
        runs = None if flow.is_over else flow.clock_runs()
        if runs is None:  # (no clock runs in a setup, nor while an automatic answer is due)
            self.clocks.stop(now)
            return
        self.clocks.switch(runs, now)

    # -- one connection -----------------------------------------------------------------

    async def run_connection(self, channel: FramedChannel, peer_has: int,
                             screen: Callable[[bytes], None] | None = None) -> None:
        """Play over `channel` until the game is over and the peer holds all of it
        (returns), or the connection breaks (raises NetError or SessionError). Once the
        game is done, the peer has `limits.bye` seconds to confirm that it holds every
        message of ours (its goodbye); then the connection counts as lost. `screen`, when
        given, sees every frame before the game does, and may refuse it by raising."""
        self.link = Link.CONNECTED
        now = trio.current_time()
        if self.away_since is not None:
            self._away_total += max(0.0, now - max(self.away_since, self._owed_since))
            self._my_away_total += max(0.0, now - max(self.away_since, self._mine_since))
        self._connected_at = now
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
                nursery.start_soon(self._reader, channel, nursery.cancel_scope, screen)
                await self._until_settled()
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            raise unwrap(group) from None
        finally:
            now = trio.current_time()
            self._connected_at = None
            self.link = Link.CLOSED if self.finished else Link.RECONNECTING
            if not self.finished and self.away_since is None:
                self.away_since = now
            self._notify()

    async def _until_settled(self) -> None:
        """Return once the game is done, the peer confirmed holding all our messages, and
        our own goodbye (confirming all of the peer's) is sent. A done game whose peer
        does not confirm within `limits.bye` raises PeerSilentError."""
        while True:
            if self.peer.failed is None and (self.settled or self.released) \
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
            elif not self._done_seen.is_set():
                await self._done_seen.wait()  # (until then there is nothing to settle)
            else:  # (done once, then not: a setup reveal that had crossed the end came, and
                await self.wait_changed()  # the audit follows after all, SPEC 2.4)

    async def _reader(self, channel: FramedChannel, scope: trio.CancelScope,
                      screen: Callable[[bytes], None] | None) -> None:
        while True:
            try:
                frame = await channel.receive()
            except NetError:
                if self.peer.failed is None and (self.settled or self.released):
                    scope.cancel()  # the peer left after confirming everything: fine
                    return
                raise
            if screen is not None:
                screen(frame)
            await self._take(frame, channel)

    async def _take(self, frame: bytes, channel: FramedChannel) -> None:
        try:
            ctl = control.decode(frame)
        except control.ControlError as exc:  # (unsigned: proves nothing; drop, resume)
            self.problem = f"a malformed control frame from the other player: {exc}"
            raise SessionError(f"{self.problem}; the connection is dropped and the game "
                               "resumes", fatal=False) from None
        if isinstance(ctl, control.Bye):
            if isinstance(ctl.have, tuple):  # (a table's counts: no game of two sends them)
                raise SessionError("a bye frame with a table's counts in a game of two; the "
                                   "connection is dropped and the game resumes", fatal=False)
            self.peer_said_bye, self.peer_has = True, ctl.have
            self._notify()
            return
        if isinstance(ctl, control.Leave):  # (a code, never text: nothing of theirs shown)
            self.peer_left = ctl.why
            self._notify()
            return
        if isinstance(ctl, control.Refusal):
            # unsigned: it proves nothing and never ends the game (SPEC 3.4)
            raise SessionError(f"the other player stopped: {printable(ctl.reason, SHOWN)}",
                               fatal=False)
        if ctl is not None:
            return  # (another kind: nothing for a game in play)
        if self.peer.failed is not None:
            return  # a broken rule ended the game: nothing more to take
        # Messages after our verdict are still taken (a resend changes nothing; the
        # loser's audit after a claim completes the audit), so both transcripts end equal.
        try:
            events = self.peer.receive(frame)
        except RemoteProtocolError as exc:
            said = printable(str(exc), SHOWN)  # (it may quote the peer's bytes)
            if not exc.violation.signed:  # proves nothing: drop this connection, resume
                self.problem = f"unreadable input from the other player: {said}"
                with trio.move_on_after(2):
                    await channel.send(control.encode(control.Refusal(
                        f"dropping the connection: {exc}")))
                raise SessionError(f"{self.problem}; the connection is dropped and the game "
                                   "resumes", fatal=False) from None
            self._after([])  # keep the signed evidence
            self.problem = said
            with trio.move_on_after(2):
                await channel.send(control.encode(control.Refusal(
                    f"you broke the protocol: {exc}")))
            where = f"; the evidence is kept in {self.path}" if self.path else ""
            raise SessionError(f"the other player broke the protocol: {said}{where}") \
                from None
        self._after(events)

    async def _writer(self, channel: FramedChannel) -> None:
        while True:
            await self._wake_writer.wait()
            self._wake_writer = trio.Event()
            if self.halted:
                raise self._storage_error()
            while self._outbox:
                await self.durable()  # (the record of every message in the box is written)
                await channel.send(self._outbox[0])
                self._outbox.pop(0)
            if self.done and self.peer.failed is None:
                have = self.peer.received_count()
                if have != self._bye_have:  # (again) tell what we hold, after the end
                    await self.durable()
                    await channel.send(control.encode(control.Bye(have)))
                    self._bye_have = have
                    self._notify()

    def _timing(self) -> tuple:
        """Everything `_timers` derives its deadlines from (besides the time itself). A move
        owed in a game without a clock has no deadline: the timers sleep through moves."""
        flow, clocks = self.peer.flow, self.clocks
        clocked = bool(clocks.limit or clocks.per_move)
        clock = (clocks.running, clocks.since) if clocked else None
        owed = self._owed
        if owed is not None and flow.timed_by_clock(str(owed[0])) and not clocked \
                and self.limits.action is None:
            owed = None
        return (self.done, owed, self._owed_since if owed else None, len(flow.audit_seq),
                clock)

    def _what_peer_owes(self) -> tuple[object, ...] | None:
        """What the peer owes, identified so that a new obligation of the same kind (the
        next move, the next challenge) is a new one; None when nothing or we owe first."""
        flow = self.peer.flow
        owed = flow.owes(self.peer.other_role)
        if owed is None or (not flow.is_over and flow.owes(self.peer.role) is not None):
            return None
        return self._obligation(owed)

    def _what_we_owe(self) -> tuple[object, ...] | None:
        """What we owe, identified as `_what_peer_owes` identifies the peer's; None when
        nothing."""
        owed = self.peer.flow.owes(self.peer.role)
        return None if owed is None else self._obligation(owed)

    def _obligation(self, owed: str) -> tuple[object, ...]:
        """(what, the phase, how far the game has come): every game message accepted makes
        what follows a new obligation; chat changes nothing."""
        flow = self.peer.flow
        return (owed, flow.phase, flow.progress)

    def deadline(self, now: float) -> tuple[float, str] | None:
        """When, by our reading, a claim against the peer falls due, and its reason
        ("time", "audit", or "abandoned" for the host's action limit); None when no limit
        runs (SPEC 3.6). Every deadline is a fixed moment: it runs whether or not a
        connection is up."""
        owed, flow, limits = self._owed, self.peer.flow, self.limits
        if owed is None:
            return None
        kind, since = str(owed[0]), self._owed_since
        ours_in = self.peer.role in flow.audit_seq
        found: list[tuple[float, str]] = []
        if kind == "audit":
            if ours_in and flow.audit_claim is None:
                found.append((since + limits.audit, "audit"))
        elif kind in flow.DUTIES:
            found.append((since + limits.duty, "time"))
        elif not flow.timed_by_clock(kind):  # (its setup)
            found.append((since + limits.setup, "time"))
        else:  # a move: when the clock ran out, a moment past, never "now"
            due = self.clocks.deadline(self.peer.other_role, now)
            if due is not None:
                found.append((due, "time"))
        if limits.action is not None and not (kind == "audit" and (
                not ours_in or flow.audit_claim is not None)):
            found.append((since + limits.action, "audit" if kind == "audit" else "abandoned"))
        return min(found) if found else None

    def overdue(self, now: float) -> str | None:
        """The claim due now against a peer that is away (no connection up), or None: a
        deadline that has passed (deadlines run while it is away too, SPEC 3.6), or away
        time over the abandonment limit. While a connection is up, its timers claim."""
        if self.done or self.away_since is None or self.peer.flow.game_id is None:
            return None
        due = self.deadline(now)
        if due is not None and now >= due[0]:
            return due[1]
        if self._owed is not None and self.away_for(now) > self.limits.abandon:
            return "audit" if self.peer.flow.is_over else "abandoned"
        return None

    def claim_due(self, now: float) -> float | None:
        """When, by our reading, the game is claimed for us should the peer stay as it is:
        its next deadline, or, while it is away, the moment its away time reaches the
        abandonment limit; None while it owes nothing (SPEC 3.6). For a countdown."""
        if self.done or self._owed is None or self.peer.flow.game_id is None:
            return None
        moments = []
        due = self.deadline(now)
        if due is not None:
            moments.append(due[0])
        if self.away_since is not None:
            moments.append(now + max(0.0, self.limits.abandon - self.away_for(now)))
        return min(moments) if moments else None

    def claim_overdue(self, now: float) -> bool:
        """Make the claim `overdue` finds; False when nothing is due, or our own view refused
        it (the game moved on)."""
        reason = self.overdue(now)
        return reason is not None and self._claim(reason)

    def _claim_words(self, reason: str, now: float) -> str:
        owed = self._owed
        names = self.peer.flow.OWED_WORDS
        what = names.get(str(owed[0]), "its part") if owed is not None else "its part"
        limit = self.limits.action
        away = "away and " if self.away_since is not None else ""
        if reason == "time":
            words = f"the other player is {away}has not sent {what} in time"
        elif limit is not None and owed is not None and now >= self._owed_since + limit:
            words = f"the other player has owed {what} for {limit:g} s (this host's limit)"
        elif reason == "audit" and self.away_since is None:
            words = "the other player has not opened its commitments in time"
        else:
            words = "the other player stayed away too long"
        return f"{words}: claiming the game"

    def away_for(self, now: float) -> float:
        """How long the peer has been away (no working connection) in all while owing
        what it owes now, across reconnects. A connection that brings input proving
        nothing is dropped at once: the time until it drops is not away time, the time
        after is (SPEC 3.6)."""
        total = self._away_total
        if self.away_since is not None:
            total += max(0.0, now - max(self.away_since, self._owed_since))
        return total

    def my_away_for(self, now: float) -> float:
        """How long we have been away in all while owing what we owe now, by our record
        and our clock."""
        total = self._my_away_total
        if self.away_since is not None:
            total += max(0.0, now - max(self.away_since, self._mine_since))
        return total

    def away_too_long(self, now: float) -> bool:
        """Time to give up waiting for the peer: it owes us something and has been away
        for the abandonment limit in all (claim the game: `claim_overdue`), or the game
        is done and it has not come back for our last messages within that limit."""
        if self.done:
            return self.away_since is not None and now - self.away_since > self.limits.abandon
        return self._owed is not None and self.away_for(now) > self.limits.abandon

    async def _timers(self) -> None:
        """Claim the game when a limit on what the peer owes has passed by our reading
        (its automatic answers, its setup, its clock, its audit). Runs with each
        connection, but the deadlines do not restart with it. A claim waits until the
        connection is `limits.grace` seconds old, so that what the peer sent while it was
        away (its resends) arrives first, but never beyond the deadline plus one grace:
        reconnecting again and again does not postpone it."""
        grace = self.limits.grace
        while not self.done:
            now = trio.current_time()
            due = self.deadline(now)
            if due is None:
                await self._retime.wait()
                continue
            when, reason = due
            opened = self._connected_at if self._connected_at is not None else now
            if opened + grace > when:
                when = min(opened + grace, when + grace)
            if now >= when:
                if not self._claim(reason):  # (refused: wait until something changes)
                    await self._retime.wait()
                continue
            with trio.move_on_at(when):
                await self._retime.wait()

    def _claim(self, reason: str) -> bool:
        """Make the claim, and say so (`on_claim`); False when our own view refuses it (the
        game ended meanwhile)."""
        words = self._claim_words(reason, trio.current_time())
        try:
            self.perform(lambda p: p.claim_forfeit(reason))
        except LocalProtocolError:
            return False
        if self.on_claim is not None:
            self.on_claim(words)
        return True

    async def leave(self, why: str, timeout: float = 2.0) -> None:
        """Tell the other side we are going (`declined` its rules, or `quit`), so that it
        can say so in words instead of seeing a dropped connection; best effort, waiting at
        most `timeout` seconds for the frame to go out."""
        assert why in control.LEAVE_REASONS
        if self.link is not Link.CONNECTED or self.finished:
            return
        frame = control.encode(control.Leave(why))
        self._outbox.append(frame)
        self._wake_writer.set()
        with trio.move_on_after(timeout):
            while self.link is Link.CONNECTED and any(f is frame for f in self._outbox):
                await trio.sleep(0.01)

    def close(self) -> None:
        """Close the transcript file, flushing it; a failing flush is not raised (the
        file keeps what reached the disk; what did not was never sent)."""
        if self.file is not None:
            try:
                self.file.close()
            except OSError as exc:
                self._halt(exc)


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


def _disputing(claim: int) -> Action[Peer]:
    return lambda peer: peer.dispute(claim)


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


# -- admission: the control frames a connection begins with (SPEC 3.4) ---------------------

async def receive(channel: FramedChannel, kind: type[Expected], timeout: float) -> Expected:
    """The peer's next control frame, of `kind`, within `timeout`; a silent or lost
    connection is a SessionError that may be retried."""
    try:
        with trio.fail_after(timeout):
            frame = await channel.receive()
    except trio.TooSlowError:
        raise SessionError("no answer in time", fatal=False) from None
    except NetError as exc:
        raise SessionError(lost_words(exc), fatal=False) from None
    return expect(frame, kind)


