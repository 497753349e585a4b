"""The protocol kernel: every message of both sides, checked and applied in order, for any
game.

One flow serves three masters: each peer runs one over its own and the peer's messages,
and `verify` runs one over a saved transcript with no secrets at all. Each `process` call
is atomic: it checks everything first and raises `RuleViolation` before changing any state.

The kernel knows the chain (signatures, sequence numbers, `prev`, `ack`, equivocation,
limits), the table (hellos, the game id, the coin), the endings (resignations, claims and
disputes, endings that cross, the verdict) and talk. A game is a subclass (`GAME`): its
message types and handlers (`MESSAGES`, a table, not names looked up), what each side owes
in play, its turn actions, and, when it has secrets, its audit (SPEC 2.4, 2.6; Game of the
Generals is `p2pgotg.games.gotg.flow.GotgFlow`).

Two peers process the same messages in different orders when messages cross on the wire,
and `verify` of either transcript must judge the game the same way. So a message is judged
by what its sender had seen (its own earlier messages and the other side's up to its `ack`),
never by what the receiver happened to have processed: a claim is checked in its claimant's
own view, a dispute may name any claim its sender had received, a turn action that misses
the other side's turn action was out of turn, and a game action that crossed the end of
the game on the wire is judged on the board as its sender saw it.

That board is kept whole: the game's state of play takes every game action whose sender did
not know of the end, so a side's second crossing action is judged on a board that holds its
first, and the result is kept apart from it. An ending (a resignation or a claim) changes
no board, and a side that has ended the game sends no game action after it; so the board a
crossing action meets is exactly the board its sender saw. Which ending decides when two
cross is a fixed rule (`EndKind`), the same on both sides whichever arrived first. Only a
signed message that itself breaks a rule convicts its signer; what a file's owner could
have left out or reordered (a gap in the sequence, an `ack` naming nothing held, a message
of another game) proves nothing about anyone and is reported as such
(`RuleViolation.signed` False).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from p2pgotg.crypto import coin_commitment, equal, host_is_white, valid_public_key
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.events import (
    AuditCompleted,
    ChatReceived,
    ClaimMade,
    ColoursDecided,
    DisputeReceived,
    DrawDeclined,
    DrawOffered,
    Event,
    GameEnded,
    GameIdentified,
    MessageIgnored,
    OptionsProposed,
)
from p2pgotg.protocol.ids import game_id as compute_game_id
from p2pgotg.protocol.limits import over_limit
from p2pgotg.protocol.messages import PROTOCOL_VERSION, Body
from p2pgotg.protocol.verdict import Verdict
from p2pgotg.protocol.wire import WireError

HOST, JOINER = "host", "joiner"
ROLES = (HOST, JOINER)


def other(role: str) -> str:
    return JOINER if role == HOST else HOST


class Phase(enum.Enum):
    HELLO = "hello"
    COIN = "coin"
    COIN_OPEN = "coin_open"
    SETUP = "setup"  # the game's own setup (Game of the Generals: commit and reveal)
    PLAY = "play"
    AUDIT = "audit"
    DONE = "done"


class EndKind(enum.IntEnum):
    """How strong an ending is when two endings cross on the wire (neither sender had seen
    the other's): a proof of cheating beats the rules, an ending by the rules beats a
    resignation, and a resignation (a fact) beats a forfeit claim (a word). Two crossing
    resignations, or two crossing claims, make a draw."""

    CLAIM = 1
    RESIGN = 2
    RULES = 3
    PROOF = 4


#: What a side can owe at the kernel's own phases (a game adds its kinds, `OWED_WORDS`).
KERNEL_DUTIES = frozenset({"coin", "coin_open"})
KERNEL_OWED_WORDS = {"coin": "its coin secret", "coin_open": "the opening of its coin",
                     "audit": "its audit"}


@dataclass
class Sender:
    """What the chain has seen of one role's messages."""

    key: bytes | None = None
    hashes: list[bytes] = field(default_factory=list)
    envelopes: list[bytes] = field(default_factory=list)
    index_of: dict[bytes, int] = field(default_factory=dict)
    acks: list[int] = field(default_factory=list)  # each message's ack (other role's index)
    last_ack: int = -1  # index into the other role's messages
    chats_in_a_row: int = 0  # chat messages since its last other message (SPEC 2.10)


Fail = Callable[..., RuleViolation]
Handler = Callable[[Any, str, Body, int, Fail], list[Event]]
#: A violation found at the audit: (cheater, rule, detail, index of the message showing it)
Problem = tuple[str, str, str, int]


@dataclass(frozen=True)
class Status:
    """What a driver needs to know of a game, as a value (the read API: drivers never
    reach into a flow): its id, its phase, what each side owes and whether that has a
    time limit without a clock, whose clock runs, and the verdict so far."""

    game_id: bytes | None
    phase: Phase
    owes: Mapping[str, str | None]
    timed: Mapping[str, bool]  # the owed thing has a deadline of its own (duty, setup)
    clock: str | None  # the role whose clock runs, if a clock is set and running
    over: bool
    progress: int  # game messages accepted: a new value is a new obligation
    verdict: Verdict | None


class Flow:
    """Checks and applies the messages of both sides in transcript order (the kernel; a
    game is a subclass)."""

    #: The game's name in the hello's `rules` (None: the hello names none, which means Game
    #: of the Generals, whose hellos carry no name so that its bytes never changed).
    GAME: ClassVar[str | None] = None
    #: Each message type this flow takes, and its handler (the kernel's and the game's).
    MESSAGES: ClassVar[Mapping[str, Handler]] = {}
    #: The game's turn actions: each needs the turn (or a challenge's answer) in its
    #: sender's view, so of two of them from the two sides one has always seen the other.
    TURN_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    #: The game's setup messages: after the end, one that crossed it is applied as usual.
    SETUP_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    #: The game's messages a side may send without end (limited with chat, SPEC 2.10).
    PLAY_MESSAGES: ClassVar[frozenset[str]] = frozenset()
    #: The game's message that opens a side's secrets after the end, if it has secrets.
    AUDIT: ClassVar[str | None] = None
    #: What each owed kind is called, and which kinds are automatic answers (the duty limit).
    OWED_WORDS: ClassVar[Mapping[str, str]] = KERNEL_OWED_WORDS
    DUTIES: ClassVar[frozenset[str]] = KERNEL_DUTIES
    #: The names of the first and the second seat (who moves first: the coin decides).
    COLOURS: ClassVar[tuple[str, str]] = ("first", "second")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.MESSAGES = {**_KERNEL_MESSAGES, **cls.__dict__.get("MESSAGES", {})}

    def __init__(self, trusted: bool = False) -> None:
        self.trusted = trusted  # every message was checked once already: skip signatures
        self.phase = Phase.HELLO
        self.senders = {HOST: Sender(), JOINER: Sender()}
        self.transcript: list[tuple[str, bytes]] = []  # (role, envelope bytes) as processed
        self.options: Any = None
        self.game_id: bytes | None = None
        self.hellos: dict[str, Body] = {}
        self.host_coin: bytes | None = None
        self.first: str | None = None  # the role that moves first, once the coin is open
        self.result: tuple[enum.Enum | None, str | None] | None = None
        self.end_role: str | None = None  # whose message decided the end
        self.end_seq: int | None = None
        self.end_kind: EndKind | None = None
        self.endings: dict[str, int] = {}  # role -> its first message that ended the game
        self.claimants: tuple[str, ...] = ()  # the claims the result rests on
        self.claims: dict[str, set[int]] = {HOST: set(), JOINER: set()}  # that took effect
        self.claims_made: dict[str, set[int]] = {HOST: set(), JOINER: set()}  # every one
        self.audit_claim: tuple[str, int] | None = None  # (claimant, seq), while it stands
        self.disputes: dict[str, int] = {}  # role -> the other's claim it disputes
        self.draw_offer: str | None = None  # the role whose draw offer stands
        self.audit_seq: dict[str, int] = {}  # role -> seq of its audit
        self.verdict: Verdict | None = None
        self.proof_verdict: Verdict | None = None  # a proof of cheating ended the game
        self.progress = 0  # game messages accepted (turn and setup actions)
        self._last_turn: dict[str, int] = {}  # role -> seq of its latest turn action
        self._audit_claimed: set[str] = set()  # roles that made an audit claim
        self._type = ""  # the type of the message being processed

    # -- the game's part (a subclass gives each) ------------------------------------------

    def parse_options(self, raw: dict[str, Any]) -> Any:
        """The game's rule options from a hello's `options` map; ValueError if invalid."""
        raise NotImplementedError

    def options_bytes(self, options: Any) -> bytes:
        """The options' fixed-length bytes in the game id."""
        raise NotImplementedError

    def game_id_tag(self) -> bytes:
        raise NotImplementedError

    def begin(self) -> list[Event]:
        """The coin is open (`first` is known): the game's setup begins. Called even when
        the game already ended by a message this coin crossed: the sender's next messages
        crossed it too, and are judged on the game as it saw it (its phase unchanged)."""
        return []

    def game_owes(self, role: str) -> str | None:
        """What `role` owes in the game's setup or play (a key of `OWED_WORDS`), or None."""
        raise NotImplementedError

    def timed_by_clock(self, kind: str) -> bool:
        """Whether what is owed has a limit only when a clock is set (a move)."""
        return kind not in self.DUTIES and kind != "setup"

    def clocked(self) -> bool:
        """Whether the game's options set a clock or a move time."""
        return any(self.clock_limits())

    def clock_limits(self) -> tuple[float, float]:
        """(total seconds per side, seconds per move) of the game's clock; 0: none."""
        return 0.0, 0.0

    def clock_runs(self) -> str | None:
        """The role whose clock runs now (the side to move in play), or None."""
        return None

    def audit_follows(self) -> bool:
        """Whether an audit follows the end (the game has secrets, and both were bound)."""
        return False

    def audit_problem(self, only: str | None = None) -> Problem | None:
        """Replay the game with every secret opened (or, `only`: that side's part, from its
        own audit and what the other made public); the first violation found, or None."""
        return None

    def secrets_problem(self, role: str, key: bytes, secrets: dict[str, bytes]) -> str:
        """Why the owner's saved secrets disagree with its signed messages ("" if not)."""
        joiner_hello = self.hellos.get(JOINER)
        if "coin" in secrets and role == JOINER and joiner_hello is not None:
            assert self.game_id is not None
            if not equal(coin_commitment(self.game_id, key, secrets["coin"]),
                         joiner_hello["coin"]):
                return "the saved coin secret does not open the joiner's commitment"
        return ""

    def require_turn(self, role: str, fail: Fail, what: str) -> None:
        """Raise `out-of-turn` (through `fail`) unless it is `role`'s turn in play."""
        raise NotImplementedError

    def agree_draw(self, role: str) -> list[Event]:
        """`role` accepted the standing draw offer: end the game as a draw agreed."""
        raise NotImplementedError

    def colours(self) -> tuple[str, str]:
        """What the first and the second player are called in words (their colours)."""
        return self.COLOURS

    def summary(self) -> list[tuple[str, str]]:
        """The game's own lines for `verify` (Game of the Generals: how many moves)."""
        return []

    def termination(self, value: str) -> enum.Enum:
        """The game's termination for a kernel ending: "resignation", "time_forfeit",
        "abandonment"."""
        raise NotImplementedError

    # -- reading the state ----------------------------------------------------------------

    def key_of(self, role: str) -> bytes | None:
        return self.senders[role].key

    def next_seq(self, role: str) -> int:
        """How many messages of `role` this flow holds (the next one's seq)."""
        return len(self.senders[role].hashes)

    def first_hash(self, role: str) -> bytes | None:
        """The hash of `role`'s first message, its hello (a resume names it: SPEC 3.4)."""
        hashes = self.senders[role].hashes
        return hashes[0] if hashes else None

    def has_hello(self, role: str | None = None) -> bool:
        """Whether `role`'s hello is in (with no role: either side's)."""
        return role in self.hellos if role is not None else bool(self.hellos)

    def last_hash(self, role: str) -> bytes:
        hashes = self.senders[role].hashes
        return hashes[-1] if hashes else ZERO_HASH

    @property
    def is_over(self) -> bool:
        return self.result is not None

    def owes(self, role: str) -> str | None:
        """What `role` owes next in this flow's view (a key of `OWED_WORDS`), or None.
        Claims are judged with it in the claimant's view, and the driver times it."""
        if self.game_id is None:
            return None
        if self.is_over:
            audited = role in self.audit_seq
            return "audit" if self.audit_follows() and not audited else None
        if self.phase is Phase.COIN:
            return "coin" if role == HOST else None
        if self.phase is Phase.COIN_OPEN:
            return "coin_open" if role == JOINER else None
        return self.game_owes(role)

    def status(self) -> Status:
        owes = {role: self.owes(role) for role in ROLES}
        timed = {role: kind is not None and not self.timed_by_clock(kind)
                 for role, kind in owes.items()}
        clock = self.clock_runs() if self.clocked() and not self.is_over else None
        return Status(self.game_id, self.phase, owes, timed, clock, self.is_over,
                      self.progress, self.conclusion())

    def _ours(self, body: Body) -> bool:
        return equal(body.game or b"", self.game_id or b"")

    def _knew_end(self, role: str, ack: int) -> bool:
        """Whether the game was over in the view of `role`'s message with this `ack`: it
        had ended the game itself, or had seen the other side's message that did."""
        theirs = self.endings.get(other(role))
        return role in self.endings or (theirs is not None and ack >= theirs)

    # -- the entry point ----------------------------------------------------------------

    def process(self, role: str, data: bytes, sealed_here: bool = False
                ) -> tuple[list[Event], bool]:
        """Check and apply one message from `role`. Returns (events, recorded); a verbatim
        resend of a message already processed returns ([], False). `sealed_here`: this
        process has just signed `data` with `role`'s key, so the signature check is skipped
        (every other check still runs)."""
        index = len(self.transcript)
        seq_of: list[int] = []  # (the message's seq, once its body is read)

        def fail(rule: str, detail: str, signed: bool = True) -> RuleViolation:
            return RuleViolation(role, rule, detail, index, signed,
                                 seq_of[0] if seq_of else None)

        env, body, key = self._signed(role, data, sealed_here, fail)
        seq = body.seq
        seq_of.append(seq)
        sender = self.senders[role]
        if seq < len(sender.hashes):
            if sender.envelopes[seq] == data or equal(sender.hashes[seq], env.hash):
                return [], False  # a resend after a reconnect: already applied
            if seq == 0 or not self._ours(body):
                raise fail("game-id", "a message of another game in the place of one of this "
                           "game's", signed=False)
            raise fail("equivocation", f"a second, different message with sequence {seq}")
        ack = self._chained(role, body, fail)
        if body.type not in self.MESSAGES:
            raise fail("malformed-message", f"{_a(body.type)} is not a message of this game")
        limit = over_limit(body.type, seq, sender.chats_in_a_row, self.PLAY_MESSAGES)
        if limit is not None:
            raise fail(*limit)
        if body.type in self.TURN_ACTIONS:
            theirs = self._last_turn.get(other(role))
            if theirs is not None and ack < theirs:
                raise fail("out-of-turn", f"{_a(body.type)} whose sender had not seen the other "
                           f"side's turn (its message {theirs}): in the sender's view the "
                           "turn was not its own")
        self._type = body.type
        if self.is_over and self._after_end_matters(body) and self._knew_end(role, ack):
            raise fail("after-end", f"{body.type} after the game ended")
        events = self.MESSAGES[body.type](self, role, body, ack, fail)
        # commit the chain state only after the handler accepted the message
        sender.key = key
        sender.hashes.append(env.hash)
        sender.envelopes.append(data)
        sender.index_of[env.hash] = seq
        sender.acks.append(ack)
        sender.last_ack = ack
        sender.chats_in_a_row = sender.chats_in_a_row + 1 if body.type == "chat" else 0
        if body.type in self.TURN_ACTIONS:
            self._last_turn[role] = seq
        if body.type in self.TURN_ACTIONS or body.type in self.SETUP_ACTIONS:
            self.progress += 1
        self.transcript.append((role, data))
        events += self._decide()
        return events, True

    def _signed(self, role: str, data: bytes, sealed_here: bool, fail: Fail
                ) -> tuple[Envelope, Body, bytes]:
        """SPEC 2.3 steps 1 to 3: the envelope, the signature (after the key, for the
        sender's first message: its hello), the body."""
        try:
            env = Envelope.decode(data)
        except WireError as exc:
            raise fail("malformed-envelope", str(exc), signed=False) from None
        key = self.senders[role].key
        trusted = sealed_here or self.trusted
        if key is None:  # the sender's first message must be its hello, carrying the key
            try:
                body = env.body()
            except WireError as exc:
                raise fail("malformed-message", str(exc), signed=False) from None
            if body.type != "hello":
                raise fail("hello-first", f"the first message must be hello, not {body.type}",
                           signed=False)
            key = body["key"]
            if not valid_public_key(key):  # (before the signature: under such a key,
                # anyone can make one, so the hello proves nothing about anyone)
                raise fail("bad-key", "the hello's key is not a proper Ed25519 public key "
                           "(small order, outside the prime-order subgroup, or not canonical): "
                           "its signatures prove nothing", signed=False)
            if not trusted and not env.verified_by(key):
                raise fail("bad-signature", "the signature does not verify with the key in "
                           "the hello", signed=False)
            return env, body, key
        if not trusted and not env.verified_by(key):
            raise fail("bad-signature", "the signature does not verify with the sender's key",
                       signed=False)
        try:
            return env, env.body(), key
        except WireError as exc:
            raise fail("malformed-message", str(exc)) from None

    def _chained(self, role: str, body: Body, fail: Fail) -> int:
        """SPEC 2.3 steps 4 to 7 (after the resend check): sequence, game, `prev`, `ack`;
        the index of the other side's message the `ack` names (-1 for none)."""
        sender = self.senders[role]
        if body.seq != len(sender.hashes):
            raise fail("sequence", f"sequence {body.seq} where {len(sender.hashes)} was due: "
                       "a message of the sender is missing here", signed=False)
        if body.type != "hello" and not self._ours(body):
            raise fail("game-id", "the message belongs to another game", signed=False)
        if not equal(body.prev, self.last_hash(role)):
            raise fail("chain-prev", "prev is not the hash of the sender's previous message")
        peer = self.senders[other(role)]
        if equal(body.ack, ZERO_HASH):
            ack = -1
        elif body.ack in peer.index_of:
            ack = peer.index_of[body.ack]
        else:
            raise fail("chain-ack", "ack names no message of the other side held here",
                       signed=False)
        if ack < sender.last_ack:
            raise fail("chain-ack", "ack goes back to an older message than the sender's "
                       "previous ack")
        return ack

    def _after_end_matters(self, body: Body) -> bool:
        """A game action or a setup message after the end: its sender must not have known
        of the end (`after-end`); one that crossed the end is judged and applied as usual,
        on the board its sender saw (the end changed no board)."""
        return (body.type in self.TURN_ACTIONS or body.type in self.SETUP_ACTIONS
                or body.type in ("resign", "coin", "coin_open")
                or (body.type == "forfeit_claim" and body["reason"] != "audit"))

    # -- hello and coin -----------------------------------------------------------------

    def _on_hello(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if body["role"] != role:
            raise fail("hello-role", f"a {role} sent a hello claiming to be {body['role']}")
        if body["version"] != PROTOCOL_VERSION:
            raise fail("version", f"protocol version {body['version']}; we speak "
                       f"{PROTOCOL_VERSION}")
        if body.get("rules") != self.GAME:
            raise fail("options", f"a hello for the game {body.get('rules')!r} in a game of "
                       f"{self.GAME or 'Game of the Generals'}")
        try:
            options = self.parse_options(body["options"])
        except ValueError as exc:
            raise fail("options", str(exc)) from None
        if role == HOST:
            if self.phase is not Phase.HELLO or HOST in self.hellos:
                raise fail("out-of-turn", "a second hello")
            if body.get("coin") is not None:
                raise fail("hello-fields", "the host's hello carries no coin commitment")
            self.hellos[HOST] = body
            self.options = options
            return [OptionsProposed(options, body["key"])]
        if HOST not in self.hellos or JOINER in self.hellos:
            raise fail("out-of-turn", "the joiner's hello comes once, after the host's")
        host = self.hellos[HOST]
        if options != self.options:
            raise fail("options", "the joiner's hello does not accept the host's rule options")
        if body.get("coin") is None:
            raise fail("hello-fields", "the joiner's hello lacks its coin commitment")
        if not equal(body["tls"], host["tls"]):
            raise fail("tls-binding", "the joiner saw another TLS certificate than the host's")
        if equal(body["key"], host["key"]) or equal(body["nonce"], host["nonce"]):
            raise fail("hello-fields", "the two sides need distinct keys and nonces")
        self.hellos[JOINER] = body
        self.game_id = compute_game_id(host["nonce"], body["nonce"], host["key"], body["key"],
                                       PROTOCOL_VERSION, self.options_bytes(options),
                                       self.game_id_tag())
        self.phase = Phase.COIN
        return [GameIdentified(self.game_id, options)]

    def _on_coin(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if role != HOST or JOINER not in self.hellos or self.host_coin is not None:
            raise fail("out-of-turn", "only the host sends coin, once, after both hellos")
        self.host_coin = body["secret"]
        if not self.is_over:
            self.phase = Phase.COIN_OPEN
        return []

    def _on_coin_open(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if role != JOINER or self.host_coin is None or self.first is not None:
            raise fail("out-of-turn", "only the joiner opens its coin, once, after the host's")
        assert self.game_id is not None
        joiner = self.hellos[JOINER]
        if not equal(coin_commitment(self.game_id, joiner["key"], body["secret"]),
                     joiner["coin"]):
            raise fail("coin-open", "the coin secret does not open the joiner's commitment")
        self.first = HOST if host_is_white(self.game_id, self.host_coin, body["secret"]) \
            else JOINER
        events: list[Event] = [ColoursDecided(self.first)]
        if not self.is_over:
            self.phase = Phase.SETUP
        return events + self.begin()

    # -- talk, resignations, claims and disputes ----------------------------------------

    def _on_chat(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if self.game_id is None:
            raise fail("out-of-turn", "chat before both hellos")
        return [ChatReceived(role, body["text"])]

    def _on_resign(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if not self.in_play():
            raise fail("out-of-turn", "resigning before the game has started")
        return self.finish(role, self.termination("resignation"), other(role), EndKind.RESIGN)

    def in_play(self) -> bool:
        """Whether play has begun (a resignation is a move of play)."""
        return False

    def offer_or_decline(self, role: str, body: Body) -> list[Event]:
        """A message of play by `role` declines the other side's standing draw offer, and
        makes `role`'s own when it carries `draw` (SPEC 2.4)."""
        events: list[Event] = []
        if self.draw_offer == other(role):
            self.draw_offer = None
            events.append(DrawDeclined(other(role)))
        if body.get("draw"):
            self.draw_offer = role
            events.append(DrawOffered(role))
        return events

    def _on_draw_accept(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        self.require_turn(role, fail, "accepting a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to accept")
        return self.agree_draw(role)

    def _on_draw_decline(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        self.require_turn(role, fail, "declining a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to decline")
        self.draw_offer = None
        return [DrawDeclined(role)]

    def _on_forfeit_claim(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        reason = body["reason"]
        seq = self.next_seq(role)
        if reason == "audit":
            events = self._audit_claim(role, seq, ack, fail)
            self.claims_made[role].add(seq)
            return events
        view = self.view_of(role, ack)
        problem = claim_problem(view, role, reason)
        if problem:
            raise fail("false-claim", problem)
        self.claims_made[role].add(seq)
        termination = self.termination("time_forfeit" if reason == "time" else "abandonment")
        return self.finish(role, termination, role, EndKind.CLAIM, claimants=(role,),
                           claim=reason)

    def _audit_claim(self, role: str, seq: int, ack: int, fail: Fail) -> list[Event]:
        """`role` says the other side did not open its commitments in time."""
        them = other(role)
        if not self._knew_end(role, ack):
            raise fail("false-claim", "an audit claim before the game was over in the "
                       "claimant's view")
        if not self.audit_follows() or not self.audit_due_in_view(role, ack):
            raise fail("false-claim", "no audit follows a game whose setups were not both "
                       "revealed in the claimant's view")
        if role not in self.audit_seq:
            raise fail("false-claim", "an audit claim before the claimant's own audit")
        if role in self._audit_claimed:
            raise fail("false-claim", "a second audit claim")
        if them in self.audit_seq:
            if self.audit_seq[them] <= ack:
                raise fail("false-claim", "the other side's audit had reached the claimant")
            self._audit_claimed.add(role)
            return [MessageIgnored(role, "forfeit_claim")]  # crossed by that audit: void
        self._audit_claimed.add(role)
        self.audit_claim = (role, seq)
        self.claims[role].add(seq)
        return [ClaimMade(role, "audit", seq)]

    def audit_due_in_view(self, role: str, ack: int) -> bool:
        """Whether, in the view of `role`'s message with this `ack`, an audit follows (the
        game's secrets of both sides were bound before it)."""
        return self.audit_follows()

    def view_of(self, role: str, ack: int) -> Flow:
        """The flow as `role` saw it when it sent a message with this `ack`: its own earlier
        messages and the other side's up to `ack`, in the order `role` processed them (its
        own acks tell that order). That is this flow itself unless some of the other side's
        messages crossed (were processed here, not yet seen by `role`); then it is rebuilt,
        which is rare (claims only) and costs a replay without signature checks."""
        mine, theirs = self.senders[role], self.senders[other(role)]
        if ack == len(theirs.hashes) - 1:
            return self
        view = type(self)(trusted=True)
        placed = 0
        try:
            for k, data in enumerate(mine.envelopes):
                while placed <= mine.acks[k]:
                    view.process(other(role), theirs.envelopes[placed])
                    placed += 1
                view.process(role, data)
            while placed <= ack:
                view.process(other(role), theirs.envelopes[placed])
                placed += 1
        except RuleViolation:  # (every message passed once: an order no peer had)
            return self
        return view

    def _on_dispute(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        claim, them = body["claim"], other(role)
        if claim > ack or claim not in self.claims_made[them]:
            raise fail("out-of-turn", "a dispute names a claim of the other side that its "
                       "sender had received")
        if role in self.disputes:
            raise fail("out-of-turn", "one dispute per side")
        self.disputes[role] = claim
        return [DisputeReceived(role, claim)]

    # -- the end ------------------------------------------------------------------------

    def finish(self, role: str, termination: enum.Enum | None, winner: str | None,
               kind: EndKind, claimants: tuple[str, ...] = (), claim: str | None = None
               ) -> list[Event]:
        """`role`'s message ends the game as its sender saw it (`termination` None: ended
        by a proven violation; `claim`: the reason of a forfeit claim). When the game had
        already ended here by the other side's message, which this one crossed, the
        stronger ending decides (`EndKind`): the same on both sides, whichever came first."""
        seq = self.next_seq(role)
        self.endings.setdefault(role, seq)
        current = self.end_kind
        if current is not None and kind in (EndKind.RESIGN, EndKind.CLAIM) and kind == current:
            return self._draw_of_crossing_ends(role, seq, kind, claim)
        if current is not None and kind <= current:
            return [MessageIgnored(role, self._type)]
        self.result = (termination, winner)
        self.end_role, self.end_seq, self.end_kind = role, seq, kind
        self.claimants = claimants
        if claim is not None:
            self.claims[role].add(seq)
        self.phase = Phase.AUDIT if self.audit_follows() else Phase.DONE
        events: list[Event] = [GameEnded(termination, winner)]
        if claim is not None:
            events.append(ClaimMade(role, claim, seq))
        return events

    def _draw_of_crossing_ends(self, role: str, seq: int, kind: EndKind, claim: str | None
                               ) -> list[Event]:
        """Both sides resigned, or both claimed, without seeing the other's: a draw."""
        assert self.result is not None
        if kind is EndKind.RESIGN:
            termination: enum.Enum | None = self.termination("resignation")
            claimants: tuple[str, ...] = ()
        else:  # the host's claim names the termination
            assert claim is not None
            mine = self.termination("time_forfeit" if claim == "time" else "abandonment")
            termination = mine if role == HOST else self.result[0]
            claimants = ROLES
            self.claims[role].add(seq)
        self.result = (termination, None)
        self.claimants = claimants
        self.end_role, self.end_seq = role, seq
        events: list[Event] = [GameEnded(termination, None)]
        if claim is not None:
            events.append(ClaimMade(role, claim, seq))
        return events

    # -- the audit and the verdict ------------------------------------------------------

    def audited(self, role: str, ack: int) -> None:
        """The game accepted `role`'s audit (its message with this `ack`): an audit claim
        of the other side that it crossed (its `ack` does not reach the claim) is void."""
        self.audit_seq[role] = self.next_seq(role)
        standing = self.audit_claim
        if standing is not None and standing[0] == other(role) and ack < standing[1]:
            self.audit_claim = None  # this audit crossed the claim: the audit decides

    def _decide(self) -> list[Event]:
        """The verdict, whenever what it rests on changed; an event when it is new."""
        verdict = self._verdict_now()
        if verdict == self.verdict:
            return []
        self.verdict = verdict
        if verdict is not None:
            self.phase = Phase.DONE
            return [AuditCompleted(verdict)]
        return []

    def _names(self) -> dict[str, Any]:
        return {"first": self.first, "colours": self.colours()}

    def _verdict_now(self) -> Verdict | None:
        if self.proof_verdict is not None:
            return self.proof_verdict
        if self.result is None:
            return None
        termination, winner = self.result
        disputed = tuple(r for r in ROLES if r in self.disputes)
        if self.AUDIT is None:  # no secrets: nothing to open, the transcript is the game
            return Verdict(termination, winner, clean=True, audit_complete=True,
                           claimants=self.claimants, disputed_by=disputed,
                           nothing_hidden=True, **self._names())
        if not self.audit_follows():
            return Verdict(termination, winner, clean=True, audit_complete=False,
                           detail="the game ended before both setups were revealed",
                           claimants=self.claimants, disputed_by=disputed, **self._names())
        standing = self.audit_claim
        if standing is not None and termination is self.termination("resignation") \
                and winner == standing[0]:
            # The loser signed its own defeat: the winner's audit alone proves the result
            # (the loser's missing openings could only hide its own cheating, SPEC 2.6).
            standing = None
            if len(self.audit_seq) < 2:
                assert winner is not None
                return self._resignation_verdict(winner, disputed)
        if len(self.audit_seq) == 2:
            problem = self._audit_replay()
            if problem is not None:
                return self._violation(problem)
        elif standing is None:
            return None
        if standing is not None:
            claimant = standing[0]
            late = " (it came after the claim)" if len(self.audit_seq) == 2 else ""
            return Verdict(self.termination("abandonment"), claimant, clean=True,
                           audit_complete=len(self.audit_seq) == 2, claimants=(claimant,),
                           disputed_by=disputed, **self._names(),
                           detail=f"{other(claimant)} did not open its commitments in time"
                           f"{late}")
        return Verdict(termination, winner, clean=True, audit_complete=True,
                       claimants=self.claimants, disputed_by=disputed, **self._names())

    def _violation(self, problem: Problem, audit_complete: bool = True) -> Verdict:
        cheater, rule, detail, index = problem
        index, seq = self.locate(cheater, index)
        return Verdict(None, other(cheater), clean=False, audit_complete=audit_complete,
                       cheater=cheater, rule=rule, detail=detail, index=index, seq=seq,
                       **self._names())

    def _resignation_verdict(self, winner: str, disputed: tuple[str, ...]) -> Verdict:
        """The loser resigned and never opened its commitments; the winner's are opened
        (checked on arrival) and its part of the game is replayed from them."""
        problem = self.audit_problem(only=winner)
        if problem is not None:
            return self._violation(problem, audit_complete=False)
        return Verdict(self.termination("resignation"), winner, clean=True,
                       audit_complete=False, disputed_by=disputed, winner_audited=True,
                       **self._names(), detail=f"the {other(winner)} resigned and never "
                       "opened its commitments")

    def conclusion(self) -> Verdict | None:
        """The verdict so far: the audit's when it is complete (or a proven violation, or
        a standing audit claim), or, when the game ended by a forfeit claim and a
        claimant's own audit is in, the claimant's result with the audit incomplete."""
        if self.verdict is not None:
            return self.verdict
        if self.result is None or not self.claimants:
            return None
        if not any(c in self.audit_seq for c in self.claimants):
            return None
        termination, winner = self.result
        missing = " and ".join(r for r in ROLES if r not in self.audit_seq)
        return Verdict(termination, winner, clean=True, audit_complete=False,
                       claimants=self.claimants,
                       disputed_by=tuple(r for r in ROLES if r in self.disputes),
                       **self._names(), detail=f"{missing} never opened its commitments")

    def locate(self, role: str, index: int) -> tuple[int, int]:
        """The message that shows `role`'s violation found at the audit: the one at `index`
        when it is `role`'s (a blind challenge's R or table), else `role`'s own audit,
        whose opened ranks prove it. (This file's index, the sender's seq.)"""
        if not (0 <= index < len(self.transcript) and self.transcript[index][0] == role):
            seq = self.audit_seq[role]
            index = next(i for i, (r, data) in enumerate(self.transcript)
                         if r == role and Envelope.decode(data).body().seq == seq)
        return index, Envelope.decode(self.transcript[index][1]).body().seq

    def _audit_replay(self) -> Problem | None:
        if not self._audit_replayed:
            self._audit_found = self.audit_problem()
            self._audit_replayed = True
        return self._audit_found

    _audit_replayed = False
    _audit_found: Problem | None = None


_KERNEL_MESSAGES: Mapping[str, Handler] = {
    "hello": Flow._on_hello, "coin": Flow._on_coin, "coin_open": Flow._on_coin_open,
    "chat": Flow._on_chat, "resign": Flow._on_resign,
    "forfeit_claim": Flow._on_forfeit_claim, "dispute": Flow._on_dispute,
    "draw_accept": Flow._on_draw_accept, "draw_decline": Flow._on_draw_decline,
}


def claim_problem(view: Flow, role: str, reason: str) -> str | None:
    """Why `role`'s forfeit claim ("time" or "abandoned") is false in `view` (the flow as
    the claimant saw it), or None: the other side must owe something, the claimant nothing,
    and a time claim needs a limit on what is owed (an automatic answer, the setup, or a
    move when a clock is set)."""
    them = other(role)
    if view.is_over:
        return "the game was already over in the claimant's view"
    if view.game_id is None:
        return "nothing to claim before both hellos"
    theirs, mine = view.owes(them), view.owes(role)
    if theirs is None:
        return f"the {them} owed nothing when the {role} claimed"
    if mine is not None:
        return f"the {role} itself owed {view.OWED_WORDS[mine]}"
    if reason == "time" and view.timed_by_clock(theirs) and not view.clocked():
        return (f"the {them} owed {view.OWED_WORDS[theirs]}, which has no time limit (no "
                "clock)")
    return None


def _a(word: str) -> str:
    """`word` with its indefinite article: a move, an action."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"
