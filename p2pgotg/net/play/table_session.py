"""One seat of a table over the network (SPEC 5.4, 5.7, 5.9): its `TableSeat`, its file,
its clocks and claims. The host and each joiner run one; what differs is the connections
(`table_host` relays for many, `table_joiner` holds one to the host).

The seat decides everything; this moves bytes, writes every record before anything is sent
(write-ahead, SPEC 2.8), keeps one clock per seat by its own observations, and makes the
claims SPEC 5.7 gives it when a seat has owed something past its limit (SPEC 3.6).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import public_bytes
from p2pgotg.games.towers.table import restored_seat
from p2pgotg.net.play.clock import Clocks
from p2pgotg.net.play.game_lock import GameInUseError
from p2pgotg.net.play.player_name import BadNameError, checked_name, key_label
from p2pgotg.net.play.saved_games import GameInUse
from p2pgotg.net.play.session import StorageError, Timeouts
from p2pgotg.net.play.table_file import read_table_file
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.table import TableSeat
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.events import ClaimMade
from p2pgotg.protocol.table.transcript import (
    TableRecordReader,
    encode_table_header,
    encode_table_record,
)
from p2pgotg.protocol.table.verify import TableFile
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.protocol.wire import WireError

#: What a seat may owe that the duty limit times (SPEC 5.7): automatic answers.
DUTIES = frozenset({"coin_open", "heads"})


@dataclass
class TableSession:
    """One seat's table, across as many connections as it takes."""

    seat: TableSeat
    key: Ed25519PrivateKey
    role: str  # "host" or "joiner"
    save_dir: Path
    join_secret: bytes
    limits: Timeouts = field(default_factory=Timeouts)
    file: TranscriptFile | None = None
    name: str = "seat"  # how its lines begin, for the operator
    on_status: Callable[[str], None] = lambda text: None
    problem: str | None = None  # the last thing that went wrong, for the user
    failure: str | None = None  # a broken rule ended the table: the words
    storage_failure: str | None = None
    events: list[Event] = field(default_factory=list)
    host_bye: tuple[int, ...] | None = None  # (a joiner's) the counts of the host's last bye
    port: int | None = None  # (the host's) the port it listens on, saved in its file
    #: Each seat's name by the key of its hello (SPEC 3.4 `names`): the host's as its
    #: joiners gave them, a joiner's as the host last said. Never saved: the host says them
    #: on every connection, and a joiner gives its own again in every `hi`.
    names: dict[bytes, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._away_since: float | None = None
        # What we owe by our own record, since when, and how long we were away meanwhile
        # in closed intervals: whether a claim against us is disputed (SPEC 5.7).
        self._mine: tuple[str, Any] | None = None
        self._mine_since = 0.0
        self._my_away_total = 0.0
        self._changed = trio.Event()
        self._outbox: list[bytes] = []  # our messages not yet handed to a connection
        self.mine: list[bytes] = own_messages(self.seat, self.public_key)
        self._owed: dict[tuple[int, str, Any], float] = {}  # (seat, what, progress) -> since
        self._clocks: Clocks | None = None
        self._claimed: set[tuple[int, str, Any]] = set()

    @classmethod
    def resume(cls, path: Path, key: Ed25519PrivateKey, role: str, limits: Timeouts,
               on_status: Callable[[str], None] = lambda text: None) -> TableSession:
        """Our seat again from its file (locked before it is read, SPEC 3.5), ready to
        reconnect. Raises GameInUse while another process has it open."""
        try:
            file, _ = TranscriptFile.open_existing(path, _torn_tail_only)
        except GameInUseError as exc:
            raise GameInUse(exc) from None
        try:
            table = read_table_file(path)
            if not _comes_back(table):
                raise ValueError(f"{path.name} is not a seat's file of a table")
            seat = restored_seat(key, bytes(32), table.records, is_host=role == "host")
        except BaseException:
            file.close()
            raise
        session = cls(seat, key, role, path.parent, table.join, limits, file=file,
                      on_status=on_status, port=table.port)
        session.after([])  # (anything the restore found due is written and queued now)
        return session

    # -- state ------------------------------------------------------------------------------

    @property
    def status(self) -> Any:
        return self.seat.status()

    @property
    def done(self) -> bool:
        """Nothing more can happen at this table: its verdict, or a broken rule."""
        return self.failure is not None or bool(self.status.over)

    @property
    def away_since(self) -> float | None:
        """(A joiner's) since when no connection to the host has been admitted (None: one
        is). Setting it back to None closes an interval of our absence (SPEC 5.7)."""
        return self._away_since

    @away_since.setter
    def away_since(self, value: float | None) -> None:
        if self._away_since is not None and value is None:
            self._my_away_total += self._away_now(trio.current_time())
        self._away_since = value

    def _away_now(self, now: float) -> float:
        """How long the absence going on has lasted while we owed what we owe now."""
        if self._away_since is None:
            return 0.0
        return max(0.0, now - max(self._away_since, self._mine_since))

    @property
    def halted(self) -> bool:
        return self.storage_failure is not None

    @property
    def clocks(self) -> Clocks | None:
        """Each seat's clock by our observations (keyed by the seat as a string), once the
        options are known: what a screen shows."""
        return self._clocks

    @property
    def path(self) -> Path | None:
        return self.file.path if self.file else None

    def have(self) -> tuple[int, ...]:
        return tuple(self.seat.have())

    @property
    def public_key(self) -> bytes:
        return public_bytes(self.key)

    def take_names(self, given: tuple[tuple[bytes, object], ...]) -> None:
        """(A joiner's) the host's `names` (SPEC 3.4): each checked as any name is, a bad
        one said in a status line and left out; they replace what the host said before."""
        names = {}
        for key, value in given:
            try:
                names[key] = checked_name(value)
            except BadNameError as exc:
                self.on_status(f"the host's name for {self._whose(key)} is ignored: {exc}")
        if names != self.names:
            self.names = names
            self.notify()

    def _whose(self, key: bytes) -> str:
        seat = self.seat.flow.seat_of_key(key)
        return key_label(key) if seat is None else f"seat {seat}"

    def first_hash(self) -> bytes | None:
        """The body hash of the host's hello, the table's first message (None before it)."""
        accepted = self.seat.accepted
        return Envelope.decode(accepted[0][1]).hash if accepted else None

    @property
    def settled(self) -> bool:
        """Over, and the host's `bye` shows it holds what we hold (a joiner's end)."""
        return self.done and self.host_bye == self.have()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- acting and taking ------------------------------------------------------------------

    def perform(self, act: Callable[[TableSeat], list[Event]]) -> list[Event]:
        """Do one of our actions now (`act(seat)`: an action, chat, a claim...). Raises
        LocalProtocolError, with nothing changed, when the rules do not allow it."""
        if self.done:
            raise LocalProtocolError("the game is over")
        events = act(self.seat)
        self.after(events)
        return events

    def receive(self, frame: bytes, source: Hashable = None) -> list[Event]:
        """Take a game message from the connection `source`. A signed violation ends the
        table (its evidence is kept and relayed, SPEC 5.2); one that proves nothing is
        raised for the connection to drop (RuleViolation with `signed` false)."""
        try:
            events = self.seat.receive(frame, source)
        except RuleViolation as exc:
            if exc.signed:
                self.failure = str(exc)
                self.after([])
            raise
        self.after(events)
        return events

    def after(self, events: list[Event]) -> None:
        """Write what the seat recorded, queue what it made, keep the clocks, wake all."""
        self._persist()
        made = self.seat.take_outgoing()
        if not self.halted:
            self.mine += made
            self._outbox += made
        self.events += events
        now = trio.current_time()
        disputes = self._disputes(events, now)
        self._time(now)
        if self.file is not None:
            self.file.begin_sync()
        self.notify()
        for claim in disputes:
            try:
                self.perform(partial(_disputing, claim=claim))
            except LocalProtocolError as exc:
                self.problem = f"could not dispute: {exc}"
                continue
            self.on_status(f"seat {claim[0]} claimed against us while we were here: "
                           "disputed (SPEC 5.7)")

    def take_outbox(self) -> list[bytes]:
        out, self._outbox = self._outbox, []
        return out

    def _persist(self) -> None:
        records = self.seat.take_records()
        if self.halted or not records:
            return
        try:
            if self.file is None:
                self.file = TranscriptFile.create(
                    self._new_path(), self.role, self.public_key,
                    header=encode_table_header(self.role, self.public_key))
                records = [("secrets", self._saved_secrets()), *records]
            self.file.append_encoded(b"".join(encode_table_record(r) for r in records))
        except OSError as exc:
            self.storage_failure = f"cannot write this table's file: {exc.strerror or exc}"
            self._outbox.clear()
            self.notify()

    def _saved_secrets(self) -> dict[str, bytes]:
        """What the file keeps to come back: the join secret, and the host's port (SPEC
        3.5: the same invite reaches the host again)."""
        secrets = {"join": self.join_secret}
        if self.port is not None:
            secrets["port"] = self.port.to_bytes(2, "big")
        return secrets

    def listening_on(self, port: int) -> None:
        """The host listens on `port`: saved in its file (a record of its own when the file
        began before the port was known), so that a host resumed from it listens there
        again and the invite its joiners hold still reaches it."""
        if self.port == port and self.file is not None:
            return
        self.port = port
        if self.file is not None and not self.halted:
            try:
                self.file.append_encoded(encode_table_record(
                    ("secrets", {"port": port.to_bytes(2, "big")})))
            except OSError as exc:
                self.storage_failure = f"cannot write this table's file: {exc.strerror or exc}"
                self.notify()

    def _new_path(self) -> Path:
        """Named by the host's hello (the table's first message, unique to it) and our key,
        so that the seats of one table on one account (bots) each have a file."""
        first = self.first_hash()
        assert first is not None  # (nothing is recorded before the host's hello)
        return self.save_dir / f"{first.hex()}-{self.public_key.hex()[:8]}.gtr"

    async def durable(self) -> None:
        """Return once every record so far is on disk: await it before a message or a
        count of what we hold leaves this program."""
        if self.halted:
            raise StorageError(f"{self.storage_failure}; nothing more is sent at this "
                               "table, which resumes from its file when this runs again")
        if self.file is not None:
            try:
                await self.file.sync_in_thread()
            except OSError as exc:
                self.storage_failure = f"cannot write this table's file: {exc}"
                raise StorageError(self.storage_failure) from None

    def close(self) -> None:
        """Close the file, flushing it (a failing flush is kept as the storage failure)."""
        if self.file is not None:
            try:
                self.file.close()
            except OSError as exc:
                self.storage_failure = f"cannot write this table's file: {exc}"

    # -- clocks and claims (SPEC 3.6, 5.7) --------------------------------------------------

    def _time(self, now: float) -> None:
        """Note since when each claimable debt is owed (by our clock: it outlives every
        connection), and run the clock of the seat to act."""
        status = self.status
        options = self.seat.flow.options
        if self._clocks is None and options is not None:
            self._clocks = Clocks(float(options.clock_seconds), float(options.turn_seconds),
                                  used={str(s): 0.0 for s in range(options.seats)})
        if self._clocks is not None:
            acting = status.seat_to_act
            if status.over or acting is None:
                self._clocks.stop(now)
            else:
                self._clocks.switch(str(acting), now)
        debts = {(seat, what, status.ply) for seat, what in self.seat.claimable()}
        self._owed = {debt: self._owed.get(debt, now) for debt in debts}
        mine = self._what_i_owe()
        if mine != self._mine:
            self._mine, self._mine_since, self._my_away_total = mine, now, 0.0

    def _what_i_owe(self) -> tuple[str, Any] | None:
        me, flow = self.seat.my_seat, self.seat.flow
        state = flow.state
        if me is None or state is None:
            return None
        what = flow.owes(me, flow.view_of_all(), state)
        return None if what is None else (what, self.status.ply)

    def my_away_for(self, now: float) -> float:
        """How long we have been away in all (no connection to the host) while owing what
        we owe now, by our record and our clock."""
        return self._my_away_total + self._away_now(now)

    def _disputes(self, events: list[Event], now: float) -> list[tuple[int, int]]:
        """The claims against us that we sign a dispute of (SPEC 5.7): every one, except a
        time claim our own reading of our clock agrees with (within a second), and an
        abandonment claim made while we owed something and had been away that long in all
        (the duty limit for a duty, the abandonment limit otherwise; within a second)."""
        me = self.seat.my_seat
        found = []
        for event in events:
            if not isinstance(event, ClaimMade) or event.seat != me or event.claimant == me:
                continue
            if event.reason == "time" and self._clocks is not None \
                    and self._clocks.flagged(str(me), now + 1.0):
                continue
            if event.reason == "abandoned" and self._mine is not None:
                limit = self.limits.duty if self._mine[0] in DUTIES else self.limits.abandon
                if self.my_away_for(now) >= limit - 1.0:
                    continue
            found.append((event.claimant, event.seq))
        return found

    def deadline(self, now: float) -> tuple[float, int, str] | None:
        """The next claim by our reading: (when, seat, reason); None while nobody we may
        claim against owes anything."""
        found: list[tuple[float, int, str]] = []
        for debt, since in self._owed.items():
            if debt in self._claimed:
                continue
            seat, what, _ = debt
            if what in DUTIES:
                found.append((since + self.limits.duty, seat, "abandoned"))
                continue
            due = self._clocks.deadline(str(seat), now) if self._clocks else None
            if due is not None:
                found.append((due, seat, "time"))
            found.append((since + self.limits.abandon, seat, "abandoned"))
        return min(found) if found else None

    async def run_timers(self) -> None:
        """Claim (SPEC 5.7) whenever a deadline passes; runs while any connection does, and
        while none does (deadlines run while a seat is away)."""
        while not self.done:
            now = trio.current_time()
            due = self.deadline(now)
            if due is None:
                await self.wait_changed()
                continue
            when, seat, reason = due
            if now < when:
                with trio.move_on_at(when):
                    await self.wait_changed()
                continue
            self._claim(seat, reason)

    def _claim(self, seat: int, reason: str) -> None:
        debt = next(d for d in self._owed if d[0] == seat)
        self._claimed.add(debt)
        try:
            self.perform(lambda s: s.claim(seat, reason))
        except LocalProtocolError as exc:
            self.problem = f"could not claim: {exc}"
            return
        words = "ran out of time" if reason == "time" else "stayed away too long"
        self.on_status(f"seat {seat} {words}: claimed (SPEC 5.7)")


def _disputing(seat: TableSeat, claim: tuple[int, int]) -> list[Event]:
    return seat.dispute(claim)


def own_messages(seat: TableSeat, key: bytes) -> list[bytes]:
    """Our messages in the order of our chain (`seq` 0, 1...), so that `mine[k:]` is what a
    host holding k of them lacks (SPEC 5.4). Our hello counts: taken before the roster, it
    stands in the accepted list as nobody's (-1), and a seat restored from its file that
    left it out would skip its first unsent message when it resends."""
    me = seat.my_seat
    return [data for author, data in seat.accepted
            if (author >= 0 and author == me) or (author < 0 and hello_key(data) == key)]


def seat_keys(seat: TableSeat) -> list[bytes]:
    """The keys of the hellos `seat` holds: every seat's by seat once the roster is out,
    before it the host's first, then each waiting joiner's (SPEC 5.3)."""
    flow = seat.flow
    if flow.rostered:
        return [bytes(flow.key_of(n)) for n in range(flow.n)]
    host = [] if flow.host_hello is None else [flow.host_hello.body]
    return [bytes(body["key"]) for body in [*host, *(p.body for p in flow.pending.values())]]


def hello_key(data: bytes) -> bytes | None:
    """The identity key of a table's hello (None for any other message, or garbage)."""
    try:
        body = TableBody.decode(Envelope.decode(data).body_bytes)
    except WireError:
        return None
    return bytes(body["key"]) if body.type == "hello" else None


def _torn_tail_only(data: bytes) -> Transcript:
    """What `TranscriptFile.open_existing` needs of a table's file: whether its last record
    is torn (the records themselves are read by `read_table_file`)."""
    reader = TableRecordReader()
    reader.feed_table(data)
    return Transcript(role="", key=b"", records=[], torn_tail=reader.finish())


def _comes_back(table: TableFile) -> bool:
    """Whether a seat can resume from this file: it saved the join secret it comes back
    with (SPEC 3.5)."""
    return len(table.join) == 16


def _over(table: TableFile) -> bool:
    """Nothing more can happen at the table of this file: its verdict, or a broken rule."""
    seat = restored_seat(Ed25519PrivateKey.generate(), bytes(32), table.records, False)
    return bool(seat.status().over) or seat.failed is not None


def unfinished_tables(directory: Path, role: str, key: Ed25519PrivateKey) -> list[Path]:
    """Our unfinished seats' files in `directory` for `role`, newest first; files of games
    of two, damaged files and finished tables are skipped (never touched)."""
    mine = public_bytes(key)
    found = []
    paths = sorted(directory.glob("*.gtr"), key=lambda p: p.stat().st_mtime, reverse=True) \
        if directory.is_dir() else []
    for path in paths:
        try:
            table = read_table_file(path)
            if (table.role == role and table.key == mine and _comes_back(table)
                    and not _over(table)):
                found.append(path)
        except (OSError, ValueError, RuleViolation):
            continue  # (not a table's file, or damaged)
    return found
