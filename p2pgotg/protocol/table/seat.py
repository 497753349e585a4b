"""One seat's end of a table (SPEC chapter 5), sans-IO like the two-party `Peer`.

It holds the seat's flow, key and coin secret; it signs only messages its own flow accepts,
and makes the automatic ones itself: the host's roster once N-1 joiners' hellos are in,
its coin opening once its view holds the roster, and its heads after each turn (5.6). A
message that is not ready (it acknowledges something not held yet) waits, at most 4,096
(5.4). Records for the file come out write-ahead (`take_records`): the driver writes and
fsyncs them before it sends `take_outgoing()`.
"""

from __future__ import annotations

import secrets as _secrets
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import equal, public_bytes, sign
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import LocalProtocolError, ProtocolError
from p2pgotg.protocol.events import Event, MessageIgnored
from p2pgotg.protocol.limits import CHATS_IN_A_ROW, MAX_PLAY_MESSAGES
from p2pgotg.protocol.messages import MAX_CHAT, PROTOCOL_VERSION
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.coin import seat_coin_commitment, table_game_id
from p2pgotg.protocol.table.events import WhisperReceived
from p2pgotg.protocol.table.flow import TableFlow, TableViolation
from p2pgotg.protocol.table.replay import Replay
from p2pgotg.protocol.table.rules import TableRules
from p2pgotg.protocol.table.talk import open_whisper, seal_whisper
from p2pgotg.protocol.transcript import TranscriptError
from p2pgotg.protocol.wire import WireError

RandBytes = Callable[[int], bytes]
#: Messages that may wait for what they acknowledge (SPEC 5.4).
MAX_WAITING = 4096

SecretsRecord = tuple[Literal["secrets"], dict[str, bytes]]
SeatRecord = tuple[Literal["seat"], int]
#: ("msg", author seat or None for a joiner's hello not seated yet, envelope bytes)
MessageRecord = tuple[Literal["msg"], int | None, bytes]
TableRecord = SecretsRecord | SeatRecord | MessageRecord


@dataclass(frozen=True)
class TableStatus:
    """A seat's picture of the table, as a value (SPEC 5.5 to 5.7)."""

    phase: str  # "hellos", "coin", "play", "over"
    game_id: bytes | None
    seats: int
    my_seat: int | None
    order: tuple[int, ...] | None  # order[colour] = seat
    seat_to_act: int | None
    owes: dict[int, str]  # seat -> what it owes (SPEC 5.7's words: coin_open, choice, ...)
    left: dict[int, str]  # seat -> termination
    over: bool
    winners: tuple[int, ...]
    termination: str | None
    ply: int


class TableSeat:
    """One seat: its flow, its key, its coin secret, and what it sends."""

    def __init__(self, rules: TableRules, key: Ed25519PrivateKey, tls: bytes,
                 randbytes: RandBytes = _secrets.token_bytes) -> None:
        self.rules = rules
        self._key = key
        self.public_key = public_bytes(key)
        self._tls = tls
        self._rand = randbytes
        self.flow = TableFlow(rules)
        self._options: Any = None
        self._coin: bytes | None = None
        self._out: list[bytes] = []
        self._records: list[TableRecord] = []
        self._waiting: list[tuple[Hashable, bytes]] = []  # (source, message)
        self._error: ProtocolError | None = None
        self._my_hello: bytes | None = None
        self._seat_recorded = False
        self.is_host = False

    # -- making a seat ----------------------------------------------------------------------

    @classmethod
    def host(cls, rules: TableRules, key: Ed25519PrivateKey, options: Any, tls: bytes,
             randbytes: RandBytes = _secrets.token_bytes) -> TableSeat:
        seat = cls(rules, key, tls, randbytes)
        seat.is_host = True
        seat._options = options
        return seat

    @classmethod
    def joiner(cls, rules: TableRules, key: Ed25519PrivateKey, host_hello: bytes,
               tls_seen: bytes, randbytes: RandBytes = _secrets.token_bytes) -> TableSeat:
        """A joiner that took the host's hello on a connection that showed the certificate
        `tls_seen`: refused (LocalProtocolError) when the hello names another, or is not a
        host's hello of a table this program plays."""
        seat = cls(rules, key, tls_seen, randbytes)
        try:
            body = Envelope.decode(host_hello).body_bytes
            tls = TableBody.decode(body).get("tls")
        except WireError as exc:
            raise LocalProtocolError(f"the host's hello is not a table hello: {exc}") from None
        if tls is None or not equal(tls, tls_seen):
            raise LocalProtocolError("the host's hello names another TLS certificate than "
                                     "the one the connection showed (tls-binding)")
        try:
            seat.flow.process(host_hello)
        except TableViolation as exc:
            raise LocalProtocolError(f"the host's hello is refused: {exc}") from None
        seat._records.append(("msg", 0, host_hello))
        return seat

    @classmethod
    def restore(cls, rules: TableRules, key: Ed25519PrivateKey, tls: bytes,
                records: Sequence[TableRecord], is_host: bool,
                randbytes: RandBytes = _secrets.token_bytes) -> TableSeat:
        """A seat rebuilt from its file's records (resume): every message taken again in
        the file's order, the coin secret back. It sends nothing until asked: the driver
        resends what the other side lacks (`lacking`, our own from its count). Raises
        TableViolation for a message that proves nothing (a damaged file), TranscriptError
        for a saved coin secret that does not open our hello."""
        seat = cls(rules, key, tls, randbytes)
        seat.is_host = is_host
        seat._seat_recorded = True
        for record in records:
            if record[0] == "secrets":
                seat._coin = record[1].get("coin", seat._coin)
            elif record[0] == "msg":
                data = record[2]
                try:
                    seat.flow.process(data)
                except TableViolation as exc:
                    if exc.signed:
                        seat._error = exc
                        break
                    raise
                if seat._my_hello is None and _hello_key(data) == seat.public_key:
                    seat._my_hello = data
        if seat.flow.options is not None:
            seat._options = seat.flow.options
        seat._check_saved_coin()
        if is_host:  # (every joiner comes back on a new connection and sends its hello again)
            for hello in list(seat.flow.pending.values()):
                seat.flow.withdraw(hello.env)
        seat._duties()
        return seat

    def _check_saved_coin(self) -> None:
        """Our saved coin secret must open our hello's commitment (SPEC 5.9): a damaged
        one could never be opened, and the seat would owe what it cannot make."""
        host = self.flow.host_hello
        if self._coin is None or self._my_hello is None or host is None:
            return
        hello = TableBody.decode(Envelope.decode(self._my_hello).body_bytes)
        if not equal(seat_coin_commitment(host.body["nonce"], self.public_key, self._coin),
                     hello["coin"]):
            raise TranscriptError("the saved coin secret does not open our hello's "
                                  "commitment: the file is damaged")

    # -- reading ------------------------------------------------------------------------------

    @property
    def failed(self) -> ProtocolError | None:
        return self._error

    @property
    def my_seat(self) -> int | None:
        if self.is_host:
            return 0
        return self.flow.seat_of_key(self.public_key) if self.flow.rostered else None

    @property
    def accepted(self) -> Sequence[tuple[int, bytes]]:
        """(author seat, envelope) in the order taken, ours and violations included (-1: a
        joiner's hello before the roster): what the host forwards."""
        return self.flow.accepted

    @property
    def game(self) -> Any:
        state = self.flow.state
        return None if state is None or state.game is None else state.game

    def status(self) -> TableStatus:
        flow, state = self.flow, self.flow.state
        if state is None:
            return TableStatus("hellos", None, flow.n, self.my_seat, None, None, {}, {},
                               flow.violation is not None, (), None, -1)
        view = flow.view_of_all()
        owes = {s: w for s in range(flow.n) if (w := flow.owes(s, view, state)) is not None}
        over = flow.over
        termination, winners = flow.ending(state) if state.over else (None, ())
        phase = "over" if over else "coin" if state.order is None else "play"
        return TableStatus(phase, flow.game_id, flow.n, self.my_seat, state.order,
                           state.seat_to_act(), owes, dict(state.left), over, winners,
                           termination, state.ply)

    def have(self) -> list[int]:
        return self.flow.have()

    def lacking(self, have: Sequence[int]) -> list[bytes]:
        """The messages a seat that holds `have[j]` messages of each seat j lacks, in the
        order we took them (SPEC 5.4)."""
        out = []
        for seat, data in self.flow.accepted:
            taken = self.flow.by_hash.get(Envelope.decode(data).hash)
            if taken is None:
                if seat == -1:
                    out.append(data)  # (a hello waiting for the roster: always resent)
                continue
            # (a joiner's hello taken before the roster is that seat's message 0 now)
            held = have[taken.seat] if taken.seat < len(have) else 0
            if taken.seq >= held:
                out.append(data)
        return out

    def withdraw_hello(self, data: bytes) -> bool:
        """(The host's) the joiner that sent the hello `data` left before the roster: its
        place is open again, and the hello is relayed no more (SPEC 5.3). False when that
        changes nothing (the roster is out, or the hello is not held)."""
        return self.is_host and self.flow.withdraw(data)

    def seat_of_hello(self, data: bytes) -> int | None:
        """Which seat the roster gave the hello `data` (None: none yet)."""
        try:
            taken = self.flow.by_hash.get(Envelope.decode(data).hash)
        except WireError:
            return None
        return None if taken is None or taken.seq != 0 else taken.seat

    def claimable(self) -> list[tuple[int, str]]:
        """(seat, what it owes) that we may claim now: we are the first seat still in after
        it (the driver decides when its time is up: SPEC 3.6)."""
        me, state = self.my_seat, self.flow.state
        if me is None or state is None or self.flow.over or me in state.left:
            return []
        view = self.flow.view_of_all()
        return [(s, w) for s in range(self.flow.n) if s != me
                and (w := self.flow.owes(s, view, state)) is not None
                and state.next_in(s) == me]

    # -- input ---------------------------------------------------------------------------------

    def receive(self, data: bytes, source: Hashable = None) -> list[Event]:
        """Take a frame from the connection `source`: it waits until every message it
        acknowledges is held, then it and whatever became ready are taken, and our automatic
        answers made. At most MAX_WAITING messages of one source wait (SPEC 5.4: per
        connection, so one joiner's flood costs no other joiner its connection). Raises
        TableViolation (signed: kept, and the table stops; unsigned: for `data` alone)."""
        self._check_usable()
        if not self.flow.ready(data):
            if sum(1 for s, _ in self._waiting if s == source) >= MAX_WAITING:
                raise TableViolation(None, "sequence", f"more than {MAX_WAITING} messages "
                                     "wait for what they acknowledge", None, False)
            self._waiting.append((source, data))
            return []
        return self._take(data) + self._take_waiting()

    def _take_waiting(self) -> list[Event]:
        """Whatever became ready among the waiting messages, in turn. One that proves
        nothing when its turn comes is dropped: it came earlier, perhaps on another
        connection, and is no reason to refuse the message just taken (SPEC 5.4). A signed
        violation stops the table, as always."""
        events: list[Event] = []
        progress = True
        while progress and self._waiting and self._error is None:
            progress = False
            for i, (_, waiting) in enumerate(self._waiting):
                if self.flow.ready(waiting):
                    del self._waiting[i]
                    try:
                        events += self._take(waiting)
                    except TableViolation as exc:
                        if exc.signed:
                            raise
                    progress = True
                    break
        return events

    def forget(self, source: Hashable) -> None:
        """The connection `source` is gone: what waited from it is dropped (it is sent again
        on the next connection, SPEC 5.4)."""
        self._waiting = [(s, d) for s, d in self._waiting if s != source]

    def _take(self, data: bytes) -> list[Event]:
        try:
            events = self.flow.process(data)
        except TableViolation as exc:
            if exc.signed:
                self._records.append(("msg", exc.seat, data))
                self._error = exc
            raise
        if all(isinstance(e, MessageIgnored) for e in events) and events:
            return events  # (a resend of what we hold: nothing new to keep)
        self._note_seat()
        taken = self.flow.by_hash.get(Envelope.decode(data).hash)
        self._records.append(("msg", None if taken is None else taken.seat, data))
        if taken is not None and taken.body.type == "whisper" \
                and taken.body["to"] == self.my_seat:
            text = open_whisper(self._key, self.flow.key_of(taken.seat), taken.body["box"])
            if text is not None and (any(ord(c) < 32 for c in text) or len(text) > MAX_CHAT):
                text = None  # (breaks chat's rules: unreadable, SPEC 5.8)
            events.append(WhisperReceived(taken.seat, text))
        return events + self._duties()

    # -- our own messages ------------------------------------------------------------------------

    def start(self) -> list[Event]:
        """Our hello (the host's first; a joiner's once it took the host's)."""
        if self._my_hello is not None:
            raise LocalProtocolError("the hello is made already")
        self._coin = self._rand(32)
        self._records.append(("secrets", {"coin": self._coin}))
        if self.is_host:
            nonce = self._rand(32)
            fields: dict[str, Any] = {
                "version": PROTOCOL_VERSION, "role": "host", "rules": self.rules.name,
                "options": self._options.to_dict(), "nonce": nonce, "key": self.public_key,
                "tls": self._tls, "coin": seat_coin_commitment(nonce, self.public_key,
                                                               self._coin)}
        else:
            host = self.flow.host_hello
            assert host is not None
            fields = {
                "version": PROTOCOL_VERSION, "role": "joiner", "rules": self.rules.name,
                "options": host.body["options"], "nonce": self._rand(32),
                "key": self.public_key, "tls": self._tls,
                "coin": seat_coin_commitment(host.body["nonce"], self.public_key, self._coin),
                "host": host.hash}
        body = TableBody("hello", 0, ZERO_HASH, None, None, None, fields)
        data = self._seal(body)
        self._my_hello = data
        events = self.flow.process(data)
        self._records.append(("msg", 0 if self.is_host else None, data))
        self._out.append(data)
        return events + self._duties()

    def act(self, action: Any) -> list[Event]:
        """One action (a setup choice or one of a turn's two): refused with the rule's words
        when it is not our turn or the rules forbid it."""
        state = self._state()
        me = self.my_seat
        if state.game is None or state.seat_to_act() != me or self.flow.over:
            raise LocalProtocolError("it is not your turn")
        problem = state.game.problem(action.code())
        if problem is not None:
            raise LocalProtocolError(f"{action.text()}: {problem}")
        return self._send("action", {"ply": state.game.ply, "code": action.code()})

    def resign(self) -> list[Event]:
        return self._send("resign", {})

    def chat(self, text: str) -> list[Event]:
        """A line to the table (control characters dropped), refused as 2.10 limits it."""
        text = self._chat_text(text)
        return self._send("chat", {"text": text})

    def whisper(self, to: int, text: str) -> list[Event]:
        """A line to seat `to` alone, sealed end to end (SPEC 5.8)."""
        text = self._chat_text(text)
        if to == self.my_seat or not 0 <= to < self.flow.n or not self.flow.rostered:
            raise LocalProtocolError(f"no other seat {to} to whisper to")
        box = seal_whisper(self._key, self.flow.key_of(to), text, self._rand(24))
        return self._send("whisper", {"to": to, "box": box})

    def claim(self, seat: int, reason: str) -> list[Event]:
        """Claim that `seat` ran out of time or went away (the driver's word, SPEC 5.7);
        refused when our own view contradicts it."""
        return self._send("forfeit_claim", {"seat": seat, "reason": reason})

    def dispute(self, claim: tuple[int, int]) -> list[Event]:
        return self._send("dispute", {"claim": list(claim)})

    # -- internals ---------------------------------------------------------------------

    def take_outgoing(self) -> list[bytes]:
        out, self._out = self._out, []
        return out

    def take_records(self) -> list[TableRecord]:
        records, self._records = self._records, []
        return records

    def _check_usable(self) -> None:
        if self._error is not None:
            raise ProtocolError(f"the table has stopped: {self._error}")

    def _state(self) -> Replay:
        state = self.flow.state
        if state is None:
            raise LocalProtocolError("the roster is not made yet")
        return state

    def _chat_text(self, text: str) -> str:
        text = "".join(c for c in text if ord(c) >= 32)
        if len(text) > MAX_CHAT:
            raise LocalProtocolError(f"not sent: {len(text)} characters, and a line holds at "
                                     f"most {MAX_CHAT}")
        me = self.my_seat
        if me is None or not self.flow.rostered:
            raise LocalProtocolError("not sent: the roster is not made yet")
        chain = self.flow.chains[me]
        if len(chain) >= MAX_PLAY_MESSAGES:
            raise LocalProtocolError("not sent: the game's limit of messages for moves and "
                                     "chat is reached")
        if chain[-1].chats_in_a_row >= CHATS_IN_A_ROW:
            raise LocalProtocolError(f"not sent: {CHATS_IN_A_ROW} lines in a row is the most "
                                     "until your next other message")
        return text

    def _seal(self, body: TableBody) -> bytes:
        data = body.encode()
        return Envelope(data, sign(self._key, data)).encode()

    def _send(self, type_: str, fields: dict[str, Any]) -> list[Event]:
        self._check_usable()
        me = self.my_seat
        flow = self.flow
        if me is None or flow.game_id is None:
            raise LocalProtocolError("the roster is not made yet")
        chain = flow.chains[me]
        acks = tuple(ZERO_HASH if j == me or not flow.chains[j] else flow.chains[j][-1].hash
                     for j in range(flow.n))
        body = TableBody(type_, len(chain), chain[-1].hash, me, acks, flow.game_id, fields)
        return self._own(body)

    def _own(self, body: TableBody) -> list[Event]:
        data = self._seal(body)
        try:
            events = self.flow.process(data)
        except TableViolation as exc:
            if exc.signed:
                self.flow.violation = None  # (we never send what breaks a rule)
                self.flow.accepted.pop()
            raise LocalProtocolError(exc.detail) from None
        self._note_seat()
        self._records.append(("msg", body.seat, data))
        self._out.append(data)
        return events + self._duties()

    def _note_seat(self) -> None:
        """The file's `seat` record, once the roster gives us one (SPEC 5.9)."""
        if not self._seat_recorded and self.flow.rostered and self.my_seat is not None:
            self._records.append(("seat", self.my_seat))
            self._seat_recorded = True

    def _duties(self) -> list[Event]:
        """What we owe and decide nothing about: the roster, our coin opening, heads."""
        flow = self.flow
        if self._error is not None or flow.violation is not None or self._my_hello is None:
            return []
        if self.is_host and not flow.rostered and flow.n and len(flow.pending) == flow.n - 1:
            acks = (ZERO_HASH, *flow.pending)
            host = flow.chains[0][0]
            game = table_game_id(PROTOCOL_VERSION, self.rules.options_bytes(flow.options),
                                 [host.hash, *flow.pending])
            return self._own(TableBody("roster", 1, host.hash, 0, acks, game, {}))
        state, me = flow.state, self.my_seat
        if state is None or me is None or flow.over:
            if state is not None and me is not None and state.over:
                return self._heads_if_owed(state, me)
            return []
        view = flow.view_of_all()
        owed = flow.owes(me, view, state)
        if owed == "coin_open" and self._coin is not None:
            return self._send("coin_open", {"secret": self._coin})
        return self._heads_if_owed(state, me)

    def _heads_if_owed(self, state: Replay, me: int) -> list[Event]:
        end = state.last_turn_end
        flow = self.flow
        if end is None or end.seat == me or me in state.left or state.seat_to_act() == me:
            return []
        chain = flow.chains[me]
        if chain[-1].view[end.seat] > end.seq:
            return []
        return self._send("heads", {})


def _hello_key(data: bytes) -> bytes | None:
    try:
        body = TableBody.decode(Envelope.decode(data).body_bytes)
    except WireError:
        return None
    return body.get("key") if body.type == "hello" else None
