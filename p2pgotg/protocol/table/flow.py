"""The table's state machine (SPEC 5.2 to 5.9), sans-IO: one per seat, and one in `verify`.

It takes signed messages one at a time, in any order that respects their `prev` and `acks`
(`ready` says whether one may be taken now), checks each in its author's view (the
author's own earlier messages and, of every other seat, the messages up to its `acks`
entry) and keeps them. Every judgement depends on the message and its view only, and the
game is the canonical replay of its events (`replay`), so every seat and `verify` judge
alike whatever order they took the messages in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2pgotg.crypto import equal, valid_public_key
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import ProtocolError, RuleViolation
from p2pgotg.protocol.events import Event, GameIdentified, MessageIgnored
from p2pgotg.protocol.limits import over_limit
from p2pgotg.protocol.messages import PROTOCOL_VERSION
from p2pgotg.protocol.table.body import TableBody, author_of
from p2pgotg.protocol.table.coin import seat_coin_commitment, table_game_id
from p2pgotg.protocol.table.events import (
    ActionMade,
    ActionVoided,
    ChatSaid,
    ClaimMade,
    DisputeMade,
    HelloHeld,
    OrderDecided,
    SeatLeft,
    SeatTaken,
    TableEnded,
)
from p2pgotg.protocol.table.replay import ACTION, LEAVE, OPEN, GameEvent, Replay, replay
from p2pgotg.protocol.table.rules import TableRules
from p2pgotg.protocol.wire import WireError, unpack

#: Types a seat may still send after it left, or after the game ended (SPEC 5.6).
AFTER_END_OK = frozenset({"chat", "whisper", "heads", "dispute"})
#: Types that count as chat towards SPEC 2.10's limit, and as play (5.2 step 6).
CHATTY = frozenset({"chat", "whisper"})
PLAY = frozenset({"action"})
#: A claim's reason and the termination it makes (SPEC 5.7).
CLAIM_TERMINATION = {"time": "time_forfeit", "abandoned": "abandonment"}
#: What a seat may owe, in words.
OWED_WORDS = {"coin_open": "its coin opening", "choice": "its setup choice",
              "action": "an action", "heads": "its heads"}
#: Duties timed by the duty limit (SPEC 3.6) whether or not a clock is set.
DUTIES = frozenset({"coin_open", "heads"})


class TableViolation(RuleViolation):
    """A message of seat `seat` (None: a hello not seated yet) that breaks `rule`."""

    def __init__(self, seat: int | None, rule: str, detail: str, index: int | None,
                 signed: bool, seq: int | None = None) -> None:
        self.seat = seat
        super().__init__(seat_words(seat), rule, detail, index, signed, seq)


def seat_words(seat: int | None) -> str:
    return "a joiner not seated yet" if seat is None else f"seat {seat}"


@dataclass
class Taken:
    """One message taken: its author, place, exact bytes, body and view (how many of each
    seat's messages the author had; its own entry is its `seq`)."""

    seat: int
    seq: int
    env: bytes
    body: TableBody
    hash: bytes
    view: tuple[int, ...]
    chats_in_a_row: int = 0  # chat and whisper messages in a row, this one included


@dataclass
class _Pending:
    """A joiner's hello taken before the roster seated it."""

    env: bytes
    body: TableBody
    hash: bytes


#: The author mark, in `accepted`, of a joiner's hello the host withdrew before the roster
#: (its joiner left, SPEC 5.3): it keeps its place in the list, so that the relay's
#: positions hold, and is relayed no more.
WITHDRAWN = -2


@dataclass
class TableFlow:
    """Checks and applies the messages of every seat (SPEC 5.2 to 5.9)."""

    rules: TableRules
    chains: list[list[Taken]] = field(default_factory=list)
    pending: dict[bytes, _Pending] = field(default_factory=dict)  # hash -> unseated hello
    host_hello: Taken | None = None
    options: Any = None
    n: int = 0
    game_id: bytes | None = None
    by_hash: dict[bytes, Taken] = field(default_factory=dict)
    #: (author seat, envelope) in the order taken, violations included; -1: a joiner's
    #: hello taken before the roster seated it; WITHDRAWN: one withdrawn since.
    accepted: list[tuple[int, bytes]] = field(default_factory=list)
    events: list[GameEvent] = field(default_factory=list)  # in canonical order
    violation: TableViolation | None = None
    disputes: list[tuple[int, tuple[int, int]]] = field(default_factory=list)
    _state: Replay | None = None

    # -- reading the state ----------------------------------------------------------------

    @property
    def rostered(self) -> bool:
        return bool(self.chains) and len(self.chains[0]) >= 2

    @property
    def state(self) -> Replay | None:
        """The game as every message taken so far makes it (None before the roster)."""
        return self._state

    @property
    def over(self) -> bool:
        return self.violation is not None or (self._state is not None and self._state.over)

    def key_of(self, seat: int) -> bytes:
        key: bytes = self.chains[seat][0].body["key"]
        return key

    def count(self, seat: int) -> int:
        return len(self.chains[seat]) if seat < len(self.chains) else 0

    def have(self) -> list[int]:
        """How many messages of each seat are taken (SPEC 5.4's `have`)."""
        if not self.rostered:
            return [1 if self.host_hello is not None else 0]
        return [len(chain) for chain in self.chains]

    def withdraw(self, data: bytes) -> bool:
        """Before the roster, let go of the held joiner's hello `data` (its joiner left, SPEC
        5.3): the roster cannot seat it, and it is not relayed again. False when there is
        none such to let go (the roster is out, or it is not held)."""
        if self.rostered:
            return False
        try:
            h = Envelope.decode(data).hash
        except WireError:
            return False
        if self.pending.pop(h, None) is None:
            return False
        for i, (author, held) in enumerate(self.accepted):
            if author == -1 and held == data:
                self.accepted[i] = (WITHDRAWN, held)
        return True

    def seat_of_key(self, key: bytes) -> int | None:
        for seat, chain in enumerate(self.chains):
            if chain and equal(chain[0].body["key"], key):
                return seat
        return None

    # -- taking messages ------------------------------------------------------------------

    def ready(self, data: bytes) -> bool:
        """Every message `data` acknowledges is held: it may be taken now. A hello, a resend
        of a place already filled and anything unreadable are always ready (`process` says
        what is wrong)."""
        try:
            env = Envelope.decode(data)
            raw = unpack(env.body_bytes)
        except WireError:
            return True
        if not isinstance(raw, dict) or raw.get("t") == "hello":
            return True
        seat, seq, acks = raw.get("from"), raw.get("seq"), raw.get("acks")
        if (not isinstance(seat, int) or not isinstance(seq, int) or seat < 0
                or not isinstance(acks, list)):
            return True
        if self.host_hello is None:
            return False
        if seat >= self.n:
            return True
        if raw.get("t") == "roster" and seat == 0 and seq == 1:
            return all(a == ZERO_HASH or a in self.pending or a in self.by_hash
                       for a in acks if isinstance(a, bytes))
        if seq > self.count(seat):
            return False
        if seq < self.count(seat):
            return True
        return all(not isinstance(a, bytes) or a == ZERO_HASH or a in self.by_hash
                   for a in acks)

    def process(self, data: bytes) -> list[Event]:
        """Take one message (ours or another seat's): checked whole before anything
        changes. Raises TableViolation: `signed` ones are kept (in `accepted`) and stop the
        table; the others prove nothing and change nothing."""
        if self.violation is not None:
            raise ProtocolError(f"the table stopped on a violation: {self.violation}")
        try:
            env = Envelope.decode(data)
        except WireError as exc:
            raise TableViolation(None, "malformed-envelope", str(exc), None, False) from None
        seat = author_of(env.body_bytes)
        if seat is None:
            return self._hello(env, data)
        return self._message(seat, env, data)

    # -- hellos and the roster (SPEC 5.3) ----------------------------------------------------

    def _hello(self, env: Envelope, data: bytes) -> list[Event]:
        def refuse(rule: str, detail: str) -> TableViolation:
            return TableViolation(0 if self.host_hello is None else None, rule, detail, None,
                                  False, 0)

        try:
            raw = unpack(env.body_bytes)
        except WireError as exc:
            raise refuse("malformed-message", str(exc)) from None
        if not isinstance(raw, dict) or raw.get("t") != "hello":
            raise refuse("hello-first", "a message with no `from` must be a hello")
        key = raw.get("key")
        if not isinstance(key, bytes) or not valid_public_key(key):
            raise refuse("bad-key", "the hello's key is not a valid identity key")
        if not env.verified_by(key):
            raise refuse("bad-signature", "the hello is not signed by its own key")
        h = env.hash
        if h in self.pending or (self.host_hello is not None and h == self.host_hello.hash) \
                or (h in self.by_hash):
            return [MessageIgnored(seat_words(None), "hello")]
        try:
            body = TableBody.decode(env.body_bytes)
        except WireError as exc:
            raise refuse("malformed-message", str(exc)) from None
        if body.seq != 0 or not equal(body.prev, ZERO_HASH):
            raise refuse("malformed-message", "a hello is its author's message 0")
        if body["version"] != PROTOCOL_VERSION:
            raise refuse("version", f"protocol version {body['version']}")
        if self.host_hello is None:
            return self._host_hello(env, data, body)
        problem = self._joiner_hello_problem(body)
        if problem is not None:
            raise refuse(*problem)
        self.pending[h] = _Pending(data, body, h)
        self.accepted.append((-1, data))
        return [HelloHeld(body["key"])]

    def _joiner_hello_problem(self, body: TableBody) -> tuple[str, str] | None:
        """(rule, detail) when a joiner's hello cannot be seated at this table (SPEC 5.3)."""
        assert self.host_hello is not None
        host = self.host_hello.body
        if body["role"] != "joiner":
            return "hello-role", "a second hello must be a joiner's"
        if body.get("host") is None or not equal(body["host"], self.host_hello.hash):
            return "hello-fields", "the hello names another table's host hello"
        if self.rostered:
            return "hello-fields", "the roster is made: this hello has no seat"
        if body["rules"] != host["rules"] or body["options"] != host["options"]:
            return "options", "the hello does not repeat the host's rules and options"
        if not equal(body["tls"], host["tls"]):
            return "tls-binding", "the joiner saw another TLS certificate than the host's"
        held = [host, *(p.body for p in self.pending.values())]
        if any(equal(o["key"], body["key"]) or equal(o["nonce"], body["nonce"]) for o in held):
            return "hello-fields", "a key or nonce repeats one of a hello held"
        return None

    def _host_hello(self, env: Envelope, data: bytes, body: TableBody) -> list[Event]:
        def refuse(rule: str, detail: str) -> TableViolation:
            return TableViolation(0, rule, detail, None, False, 0)

        if body["role"] != "host" or body.get("host") is not None:
            raise refuse("hello-role", "the first hello of a table is the host's")
        if body["rules"] != self.rules.name:
            raise refuse("options", f"a table of {body['rules']!r}, not {self.rules.name!r}")
        try:
            options = self.rules.parse_options(body["options"])
        except ValueError as exc:
            raise refuse("options", str(exc)) from None
        self.options, self.n = options, self.rules.seats(options)
        self.chains = [[] for _ in range(self.n)]
        taken = Taken(0, 0, data, body, env.hash, (0,) * self.n)
        self.host_hello = taken
        self._keep(taken)
        return []

    def _roster(self, body: TableBody, acks: Sequence[bytes], fail: Any) -> list[Taken]:
        if body.type != "roster" or body.seat != 0 or body.seq != 1:
            raise fail("out-of-turn", "the host's message 1 is the roster, and only it")
        hellos = []
        for seat in range(1, self.n):
            hello = self.pending.get(acks[seat])
            if hello is None:
                raise fail("chain-ack", f"the roster names for seat {seat} no hello held",
                           signed=False)
            hellos.append(Taken(seat, 0, hello.env, hello.body, hello.hash, (0,) * self.n))
        if len({t.hash for t in hellos}) != len(hellos):
            raise fail("malformed-message", "the roster seats one hello twice")
        return hellos

    # -- every other message (SPEC 5.2) ------------------------------------------------------

    def _authentic(self, seat: int, env: Envelope, data: bytes) -> TableBody:
        """The body of a message signed by seat `seat`, matching its schema (SPEC 5.2 steps
        1 and 2)."""
        index = len(self.accepted)

        def fail(rule: str, detail: str, signed: bool = True,
                 seq: int | None = None) -> TableViolation:
            return TableViolation(seat, rule, detail, index, signed, seq)

        if self.host_hello is None or not 0 <= seat < self.n:
            raise fail("malformed-envelope", f"no seat {seat} at this table", False)
        if seat != 0 and not self.rostered:
            raise fail("sequence", f"seat {seat} before the roster seated anyone", False)
        if not env.verified_by(self.key_of(seat)):
            raise fail("bad-signature", f"not signed by seat {seat}'s key", False)
        if not self._names_this_table(env.body_bytes):
            raise fail("game-id", "a message of another table", False)
        try:
            body = TableBody.decode(env.body_bytes)
        except WireError as exc:
            raise self._signed(fail("malformed-message", str(exc)), data) from None
        if body.type == "hello":
            raise self._signed(fail("malformed-message", "a hello carries no from",
                                    seq=body.seq), data)
        assert body.acks is not None
        if len(body.acks) != self.n:
            raise self._signed(fail("malformed-message", f"acks holds {len(body.acks)} heads, "
                                    f"not {self.n}", seq=body.seq), data)
        return body

    def _names_this_table(self, body_bytes: bytes) -> bool:
        """Whether a message is one of this table's (SPEC 5.2 step 1): its `game` is the
        table's id or, before the roster that makes the id, it chains to the host's hello.
        One key may sit at other tables: what it signed there, whatever its shape, is no
        evidence here."""
        raw = unpack(body_bytes)  # (its author was read from it: it unpacks)
        if self.game_id is not None:
            game = raw.get("game")
            return isinstance(game, bytes) and equal(game, self.game_id)
        assert self.host_hello is not None
        prev = raw.get("prev")
        return isinstance(prev, bytes) and equal(prev, self.host_hello.hash)

    def _message(self, seat: int, env: Envelope, data: bytes) -> list[Event]:
        body = self._authentic(seat, env, data)
        index, seq = len(self.accepted), body.seq

        def fail_at(rule: str, detail: str, signed: bool = True) -> TableViolation:
            return TableViolation(seat, rule, detail, index, signed, seq)

        assert body.game is not None
        chain = self.chains[seat]
        if seq < len(chain):
            if equal(chain[seq].hash, env.hash):
                return [MessageIgnored(seat_words(seat), body.type)]
            raise self._signed(fail_at("equivocation", f"a second message {seq}, different "
                                       "from the one held"), data)
        if seq > len(chain):
            raise fail_at("sequence", f"message {seq} when {len(chain)} is next", False)
        roster_hellos, game = self._game_of(body, fail_at, data)
        if not equal(body.game, game):
            raise fail_at("game-id", "another table's game id", False)
        if not equal(body.prev, chain[-1].hash):
            raise self._signed(fail_at("chain-prev", "prev is not the hash of its author's "
                                       "previous message"), data)
        view = self._view(seat, seq, body, roster_hellos, fail_at, data)
        mine = chain[-1]
        chats = (mine.chats_in_a_row + 1) if body.type in CHATTY else 0
        limit = over_limit("chat" if body.type in CHATTY else body.type, seq,
                           mine.chats_in_a_row if body.type in CHATTY else 0, PLAY)
        if limit is not None:
            raise self._signed(fail_at(*limit), data)
        taken = Taken(seat, seq, data, body, env.hash, view, chats)
        try:
            event = self._check(taken, bool(roster_hellos), fail_at)
        except TableViolation as v:
            raise self._signed(v, data) from None
        events: list[Event] = []
        if roster_hellos:
            events += self._seat(roster_hellos, game)
        self._keep(taken)
        events += self._effects(taken, event)
        return events

    def _game_of(self, body: TableBody, fail: Any, data: bytes) -> tuple[list[Taken], bytes]:
        """The hellos a roster seats (none for any other message) and the game id the
        message must carry: a roster's makes it (SPEC 5.3)."""
        if body.seq != 1 or body.seat != 0:
            return [], self.game_id if self.game_id is not None else ZERO_HASH
        assert body.acks is not None
        try:
            hellos = self._roster(body, body.acks, fail)
        except TableViolation as v:
            raise self._signed(v, data) from None
        game = table_game_id(PROTOCOL_VERSION, self.rules.options_bytes(self.options),
                             [self.chains[0][0].hash, *(t.hash for t in hellos)])
        return hellos, game

    def _signed(self, violation: TableViolation, data: bytes) -> TableViolation:
        """A signed violation is kept (the evidence, relayed to every seat) and stops the
        table; one that proves nothing changes nothing."""
        if violation.signed:
            self.violation = violation
            self.accepted.append((violation.seat if violation.seat is not None else -1, data))
        return violation

    def _view(self, seat: int, seq: int, body: TableBody, roster_hellos: list[Taken],
              fail: Any, data: bytes) -> tuple[int, ...]:
        """The counts of each seat's messages in the author's view (SPEC 5.2 step 5)."""
        assert body.acks is not None
        if not equal(body.acks[seat], ZERO_HASH):
            raise self._signed(fail("malformed-message", "its own acks entry is not zero"),
                               data)
        if roster_hellos:
            return tuple([1] + [1] * (self.n - 1))
        view = []
        for j, head in enumerate(body.acks):
            if j == seat:
                view.append(seq)
            elif equal(head, ZERO_HASH):
                view.append(0)
            else:
                acked = self.by_hash.get(head)
                if acked is None or acked.seat != j:
                    raise fail("chain-ack", f"acks names for seat {j} a message not held",
                               signed=False)
                view.append(acked.seq + 1)
        previous = self.chains[seat][seq - 1].view
        for j in range(self.n):
            if j != seat and view[j] < previous[j]:
                raise self._signed(fail("chain-ack", f"acks names an older message of seat "
                                        f"{j} than its previous message did"), data)
        for j in range(self.n):
            if j == seat or view[j] == 0:
                continue
            named = self.chains[j][view[j] - 1]
            for k in range(self.n):
                if named.view[k] > view[k]:
                    raise self._signed(fail(
                        "chain-ack", f"it acknowledges seat {j}'s message {named.seq} "
                        f"without seat {k}'s message {named.view[k] - 1} that it "
                        "acknowledged"), data)
        return tuple(view)

    def _keep(self, taken: Taken) -> None:
        self.chains[taken.seat].append(taken)
        self.by_hash[taken.hash] = taken
        self.accepted.append((taken.seat, taken.env))

    def _seat(self, hellos: list[Taken], game: bytes) -> list[Event]:
        events: list[Event] = []
        for taken in hellos:
            del self.pending[taken.hash]
            self.chains[taken.seat].append(taken)
            self.by_hash[taken.hash] = taken
            events.append(SeatTaken(taken.seat, taken.body["key"]))
        self.pending.clear()  # (hellos the roster did not seat have no place here)
        self.game_id = game
        self._state = Replay(self.rules, self.options, self.n, game)
        events.append(GameIdentified(game, self.options))
        return events

    # -- views ---------------------------------------------------------------------------

    def _state_in(self, view: tuple[int, ...]) -> Replay:
        """The game in a view: the replay of the events its messages hold."""
        assert self._state is not None and self.game_id is not None
        inside = [e for e in self.events if e.seq < view[e.seat]]
        if len(inside) == len(self.events):
            return self._state
        return replay(self.rules, self.options, self.n, self.game_id, inside)

    def view_of_all(self) -> tuple[int, ...]:
        return tuple(len(chain) for chain in self.chains)

    def owes(self, seat: int, view: tuple[int, ...], state: Replay) -> str | None:
        """What `seat` owes in a view (SPEC 5.7), None for nothing."""
        if state.over or seat in state.left or view[0] < 2:
            return None
        if state.order is None:
            return None if seat in state.opened else "coin_open"
        game = state.game
        assert game is not None
        if state.seat_to_act() == seat:
            return game.owed()
        end = state.last_turn_end
        if end is None or seat == end.seat:
            return None
        held = view[seat]
        if held == 0 or self.chains[seat][held - 1].view[end.seat] <= end.seq:
            return "heads"
        return None

    # -- the checks of each type (SPEC 5.3 to 5.8) ---------------------------------------

    def _check(self, m: Taken, is_roster: bool, fail: Any) -> GameEvent | None:
        body, seat = m.body, m.seat
        t = body.type
        if is_roster:
            return None
        if t == "roster":
            raise fail("out-of-turn", "a second roster")
        if not self.rostered or m.view[0] < 2:
            raise fail("out-of-turn", f"a {t} before the roster in its view")
        if t in ("chat", "heads"):
            return None
        if t == "whisper":
            if body["to"] == seat or body["to"] >= self.n:
                raise fail("malformed-message", "a whisper is to another seat of the table")
            return None
        if t == "dispute":
            self._check_dispute(m, fail)
            return None
        return self._check_game(m, fail)

    def _check_game(self, m: Taken, fail: Any) -> GameEvent:
        """The checks of the messages that change the game, in the author's view."""
        body, seat, t = m.body, m.seat, m.body.type
        state = self._state_in(m.view)
        gone = seat in state.left
        if state.over or gone:
            raise fail("after-end", f"a {t} after "
                       + ("its author left" if gone else "the game ended") + " in its view")
        place = state.ply if state.order is not None else -1
        opened = any(o.body.type == "coin_open" for o in self.chains[seat][:m.seq])
        if t == "coin_open":
            if opened:
                raise fail("out-of-turn", "a second coin opening")
            hello = self.chains[seat][0].body
            host = self.chains[0][0].body
            if not equal(seat_coin_commitment(host["nonce"], hello["key"], body["secret"]),
                         hello["coin"]):
                raise fail("coin-open", "the secret does not open the hello's coin")
            return GameEvent(OPEN, seat, m.seq, -1, body["secret"])
        if t == "resign":
            if not opened:
                raise fail("out-of-turn", "a resignation before its own coin opening")
            return GameEvent(LEAVE, seat, m.seq, place, (seat, "resignation"))
        if t == "forfeit_claim":
            self._check_claim(m, state, fail)
            target, reason = body["seat"], body["reason"]
            return GameEvent(LEAVE, seat, m.seq, place, (target, CLAIM_TERMINATION[reason]))
        if t == "action":
            return self._check_action(m, state, fail)
        raise fail("malformed-message", f"a table does not take {t!r}")

    def _check_claim(self, m: Taken, state: Replay, fail: Any) -> None:
        target, reason = m.body["seat"], m.body["reason"]
        if target >= self.n or target == m.seat:
            raise fail("false-claim", "a claim names another seat of the table")
        if target in state.left:
            raise fail("false-claim", f"seat {target} has left already in the claim's view")
        owed = self.owes(target, m.view, state)
        if owed is None:
            raise fail("false-claim", f"seat {target} owes nothing in the claim's view")
        if state.next_in(target) != m.seat:
            raise fail("false-claim", f"seat {state.next_in(target)}, not seat {m.seat}, is "
                       f"the first seat still in after seat {target}")
        if reason == "time" and owed not in DUTIES and not self.rules.clock_set(self.options):
            raise fail("false-claim", f"a time claim for {OWED_WORDS[owed]} with no clock set")

    def _check_dispute(self, m: Taken, fail: Any) -> None:
        claimant, seq = m.body["claim"]
        if claimant >= self.n or seq >= m.view[claimant]:
            raise fail("out-of-turn", "a dispute of a claim not in its view")
        claim = self.chains[claimant][seq].body
        if claim.type != "forfeit_claim" or claim["seat"] != m.seat:
            raise fail("out-of-turn", "a dispute of a message that is no claim against it")
        if any(o.body.type == "dispute" and o.body["claim"] == (claimant, seq)
               for o in self.chains[m.seat][:m.seq]):
            raise fail("out-of-turn", "a second dispute of one claim")

    def _check_action(self, m: Taken, state: Replay, fail: Any) -> GameEvent:
        game = state.game
        ply, code = m.body["ply"], m.body["code"]
        if game is None:
            raise fail("out-of-turn", "an action before the turn order is known")
        if state.seat_to_act() != m.seat:
            raise fail("out-of-turn", f"an action when seat {state.seat_to_act()} is to act")
        if ply != game.ply:
            raise fail("out-of-turn", f"an action for ply {ply} at ply {game.ply}")
        problem = game.problem(code)
        if problem is not None:
            raise fail("illegal-action", problem)
        return GameEvent(ACTION, m.seat, m.seq, ply, (ply, code))

    # -- effects ---------------------------------------------------------------------------

    def _effects(self, m: Taken, event: GameEvent | None) -> list[Event]:
        body = m.body
        events: list[Event] = []
        if body.type == "chat":
            events.append(ChatSaid(m.seat, body["text"]))
        elif body.type == "dispute":
            self.disputes.append((m.seat, body["claim"]))
            events.append(DisputeMade(m.seat, body["claim"]))
        elif body.type == "forfeit_claim":
            events.append(ClaimMade(m.seat, body["seat"], body["reason"], m.seq))
        if event is not None:
            events += self._add_event(event)
        return events

    def _add_event(self, event: GameEvent) -> list[Event]:
        """Put a game event in its canonical place; replay when it is not the last."""
        before = self._state
        assert before is not None and self.game_id is not None
        at = len(self.events)
        while at > 0 and self.events[at - 1].key > event.key:
            at -= 1
        self.events.insert(at, event)
        if at == len(self.events) - 1:
            state = before
            marks = _marks(state)
            state.apply(event)
        else:
            marks = _marks(before)
            state = replay(self.rules, self.options, self.n, self.game_id, self.events)
            self._state = state
        return self._news(marks, state)

    def _news(self, marks: tuple[Any, ...], state: Replay) -> list[Event]:
        """Events for what changed between `marks` (of the state before) and `state`."""
        applied, left, order, over = marks
        events: list[Event] = []
        if order is None and state.order is not None:
            events.append(OrderDecided(state.order))
        for e in state.void:
            if e.kind == ACTION and (e.seat, e.seq) in applied:
                events.append(ActionVoided(e.seat, self.rules.decode_action(e.value[1])))
        for e in state.applied:
            if (e.seat, e.seq) not in applied:
                events.append(ActionMade(e.seat, self.rules.decode_action(e.value[1])))
        for seat, termination in state.left.items():
            if seat not in left:
                events.append(SeatLeft(seat, termination))
        if state.over and not over:
            events.append(TableEnded(*self.ending(state)))
        return events

    def ending(self, state: Replay) -> tuple[str | None, tuple[int, ...]]:
        """(termination, winning seats) of a game that is over."""
        if state.ended_early is not None:
            return state.ended_early[0], ()
        assert state.game is not None and state.order is not None
        order = state.order
        return state.game.termination(), tuple(sorted(order[c] for c in state.game.winners()))


def _marks(state: Replay) -> tuple[Any, ...]:
    return ({(e.seat, e.seq) for e in state.applied}, dict(state.left), state.order,
            state.over)


