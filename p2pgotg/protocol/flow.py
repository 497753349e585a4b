"""The game flow: every message of both sides, checked and applied in order.

One `GameFlow` serves three masters: each peer runs one over its own and the peer's
messages (with its own ranks revealed into the view), and `verify` runs one over a saved
transcript with no secrets at all. Each `process` call is atomic: it checks everything
first and raises `RuleViolation` before changing any state.

Two peers process the same messages in different orders when messages cross on the wire,
and `verify` of either transcript must judge the game the same way. So a message is judged
by what its sender had seen (its own earlier messages and the other side's up to its `ack`),
never by what the receiver happened to have processed: a reveal needs the other's commitment
in its `ack`, a forfeit claim is checked in its claimant's own view, a dispute may name any
claim its sender had received, and a game action that crossed the end of the game on the
wire is judged on the board as its sender saw it.

That board is kept whole: the game's state of play (board, challenge in flight, draw offer)
takes every game action whose sender did not know of the end, so a side's second crossing
action is judged on a board that holds its first, and the result is kept apart from it. An
ending (a resignation or a claim) changes no board, and a side that has ended the game sends
no game action after it; so the board a crossing action meets here is exactly the board its
sender saw. Which ending decides when two cross is a fixed rule (`EndKind`), the same on
both sides whichever arrived first. Only a signed message that itself breaks a rule convicts
its signer; what a file's owner could have left out or reordered (a gap in the sequence, an
`ack` naming nothing held, a message of another game) proves nothing about anyone and is
reported as such (`RuleViolation.signed` False).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from p2pgotg.crypto import (
    coin_commitment,
    equal,
    host_is_white,
    ot,
    piece_commitment,
    setup_hash,
    valid_public_key,
)
from p2pgotg.crypto.commitments import seed_commitment
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.events import (
    AuditCompleted,
    AuditReceived,
    ChallengeStarted,
    ChatReceived,
    ClaimMade,
    ColoursDecided,
    DisputeReceived,
    DrawDeclined,
    DrawOffered,
    Event,
    GameEnded,
    GameIdentified,
    GameStarted,
    MessageIgnored,
    MovePlayed,
    OptionsProposed,
    SetupCommitted,
)
from p2pgotg.protocol.ids import game_id as compute_game_id
from p2pgotg.protocol.limits import over_limit
from p2pgotg.protocol.messages import PROTOCOL_VERSION, Body
from p2pgotg.protocol.verdict import Verdict
from p2pgotg.protocol.wire import WireError
from p2pgotg.rules import (
    ChallengeMode,
    ChallengeResult,
    Game,
    IllegalMoveError,
    Move,
    Outcome,
    Piece,
    Rank,
    RuleOptions,
    RulesError,
    Setup,
    Side,
    Termination,
    home_squares,
    resolve_challenge,
)
from p2pgotg.rules.ranks import composition_errors

HOST, JOINER = "host", "joiner"
ROLES = (HOST, JOINER)


#: The blind mode's outcome indices: what an arbiter would announce, flags apart.
BLIND_OUTCOMES: dict[int, tuple[ChallengeResult, str | None]] = {
    0: (ChallengeResult.ATTACKER_WINS, None),
    1: (ChallengeResult.DEFENDER_WINS, None),
    2: (ChallengeResult.BOTH_ELIMINATED, None),
    3: (ChallengeResult.ATTACKER_WINS, "defender"),  # the defender's flag is captured
    4: (ChallengeResult.DEFENDER_WINS, "attacker"),  # the attacking flag is lost
}


def outcome_index(attacker: Rank, defender: Rank) -> int:
    """The blind outcome of `attacker` challenging `defender` (chapter 1's table)."""
    if defender is Rank.FLAG:
        return 3
    if attacker is Rank.FLAG:
        return 4
    return {ChallengeResult.ATTACKER_WINS: 0, ChallengeResult.DEFENDER_WINS: 1,
            ChallengeResult.BOTH_ELIMINATED: 2}[resolve_challenge(attacker, defender)]


def possible_outcomes(attacker: Rank) -> set[int]:
    """Every outcome an attacker of this rank can get, whatever it challenges."""
    return {outcome_index(attacker, d) for d in Rank}


def other(role: str) -> str:
    return JOINER if role == HOST else HOST


class Phase(enum.Enum):
    HELLO = "hello"
    COIN = "coin"
    COIN_OPEN = "coin_open"
    SETUP = "setup"
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


#: What a side can owe, and which of these have a deadline of seconds (the automatic
#: answers); "setup" has the setup deadline, "move" one only when a clock is set, "audit"
#: the audit timeout.
DUTIES = frozenset({"coin", "coin_open", "reveal", "reply", "blind_reply", "token"})
OWED_WORDS = {
    "coin": "its coin secret", "coin_open": "the opening of its coin", "setup": "its setup",
    "reveal": "the reveal of its setup", "reply": "its reply to a challenge",
    "blind_reply": "its table for a blind challenge", "token": "its outcome token",
    "move": "a move", "audit": "its audit",
}

#: The turn's actions: each needs the turn (or the challenge's answer) in its sender's
#: view, so of two of them from the two sides, one has always seen the other (SPEC 2.4).
TURN_ACTIONS = frozenset({"move", "reply", "blind_reply", "blind_outcome", "blind_proof",
                          "claim_flag", "draw_accept", "draw_decline"})
# Actions on the game: after the end, one whose sender knew of the end breaks `after-end`;
# one that crossed the end on the wire is applied to the board its sender saw, and decides
# the result only if it is itself the stronger ending (`EndKind`).
_GAME_ACTIONS = TURN_ACTIONS | {"resign"}
# The handshake and the setup: after the end, one that crossed the end is still applied
# (so that both sides agree whether both setups were revealed, which decides the audit).
_SETUP_ACTIONS = frozenset({"coin", "coin_open", "setup_commit", "setup_reveal"})


@dataclass
class _Sender:
    """What the chain has seen of one role's messages."""

    key: bytes | None = None
    hashes: list[bytes] = field(default_factory=list)
    envelopes: list[bytes] = field(default_factory=list)
    index_of: dict[bytes, int] = field(default_factory=dict)
    acks: list[int] = field(default_factory=list)  # each message's ack (other role's index)
    last_ack: int = -1  # index into the other role's messages
    chats_in_a_row: int = 0  # chat messages since its last other message (SPEC 2.10)


@dataclass
class _Reveal:
    squares: tuple[int, ...]
    commits: tuple[bytes, ...]
    seed_commit: bytes
    ot: bytes | None = None  # the blind mode's OT sender key S


@dataclass
class _Pending:
    """A challenge waiting for its answer: the defender's opening (open mode), or the
    defender's table and then the attacker's token (blind mode)."""

    attacker: str
    move: Move
    ply: int
    rank: Rank | None  # the attacker's declared rank (open mode)
    n: int = -1  # blind mode: the challenge number
    point: bytes = b""  # blind mode: the attacker's R
    commits: tuple[bytes, ...] = ()  # blind mode: the defender's 5 token commitments
    cts: tuple[bytes, ...] = ()  # blind mode: the defender's 15 ciphertexts
    move_index: int = -1
    reply_index: int = -1
    attacker_pid: int = -1
    defender_pid: int = -1


@dataclass(frozen=True)
class BlindRecord:
    """A finished blind challenge, everything the audit needs to replay it."""

    n: int
    attacker: str
    attacker_pid: int
    defender_pid: int
    point: bytes
    commits: tuple[bytes, ...]
    cts: tuple[bytes, ...]
    token: bytes
    outcome: int
    move_index: int  # transcript index of the attacker's move (its R)
    reply_index: int  # transcript index of the defender's table


Fail = Callable[..., RuleViolation]

#: How many moves back the referee's board can be taken: a flag claim riding on a move is
#: checked on the board after the move, which is then taken back; memory stays flat however
#: long the game.
UNDO_DEPTH = 2


class GameFlow:
    """Checks and applies the messages of both sides in transcript order."""

    def __init__(self, trusted: bool = False) -> None:
        self.trusted = trusted  # every message was checked once already: skip signatures
        self.phase = Phase.HELLO
        self.senders = {HOST: _Sender(), JOINER: _Sender()}
        self.transcript: list[tuple[str, bytes]] = []  # (role, envelope bytes) as processed
        self.options: RuleOptions | None = None
        self.game_id: bytes | None = None
        self.host_tls: bytes | None = None
        self.hellos: dict[str, Body] = {}
        self.host_coin: bytes | None = None
        self.white: str | None = None
        self.setup_commits: dict[str, bytes] = {}
        self.commit_seq: dict[str, int] = {}
        self.reveals: dict[str, _Reveal] = {}
        self.reveal_seq: dict[str, int] = {}
        self.game: Game | None = None
        self.pending: _Pending | None = None  # the challenge in flight (also at the end)
        self.draw_offer: str | None = None
        self.result: tuple[Termination | None, str | None] | None = None
        self.end_role: str | None = None  # whose message decided the end
        self.end_seq: int | None = None
        self.end_kind: EndKind | None = None
        self.endings: dict[str, int] = {}  # role -> its first message that ended the game
        self.claimants: tuple[str, ...] = ()  # the claims the result rests on
        self.claims: dict[str, set[int]] = {HOST: set(), JOINER: set()}  # that took effect
        self.claims_made: dict[str, set[int]] = {HOST: set(), JOINER: set()}  # every one
        self._last_turn: dict[str, int] = {}  # role -> seq of its latest turn action
        self._audit_claimed: set[str] = set()  # roles that made an audit claim
        self._type = ""  # the type of the message being processed
        self.audit_claim: tuple[str, int] | None = None  # (claimant, seq), while it stands
        self.disputes: dict[str, int] = {}  # role -> the other's claim it disputes
        self.audits: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.audit_seq: dict[str, int] = {}
        self.verdict: Verdict | None = None
        self.proof_verdict: Verdict | None = None
        self.blind_log: list[BlindRecord] = []
        self.used_points: set[bytes] = set()
        self._multiples: dict[str, set[bytes]] = {}  # i*S for i in 1..15, per sender key
        self._reveal_index: dict[str, int] = {}
        self._audit_problem: tuple[str, str, str, int] | None = None
        self._audit_replayed = False

    # -- helpers ------------------------------------------------------------------------

    def side_of(self, role: str) -> Side:
        assert self.white is not None
        return Side.WHITE if role == self.white else Side.BLACK

    def role_of(self, side: Side) -> str:
        assert self.white is not None
        return self.white if side is Side.WHITE else other(self.white)

    def key_of(self, role: str) -> bytes | None:
        return self.senders[role].key

    def next_seq(self, role: str) -> int:
        return len(self.senders[role].hashes)

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
            both = len(self.reveals) == 2
            return "audit" if both and role not in self.audits else None
        if self.phase is Phase.COIN:
            return "coin" if role == HOST else None
        if self.phase is Phase.COIN_OPEN:
            return "coin_open" if role == JOINER else None
        if self.phase is Phase.SETUP:
            if role not in self.setup_commits:
                return "setup"
            if len(self.setup_commits) == 2 and role not in self.reveals:
                return "reveal"
            return None
        if self.phase is not Phase.PLAY or self.game is None:
            return None
        pending = self.pending
        if pending is not None:
            if pending.attacker != role:
                if pending.n < 0:
                    return "reply"
                return None if pending.cts else "blind_reply"
            return "token" if pending.n >= 0 and pending.cts else None
        return "move" if self.role_of(self.game.turn) == role else None

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

        try:
            env = Envelope.decode(data)
        except WireError as exc:
            raise fail("malformed-envelope", str(exc), signed=False) from None
        sender = self.senders[role]
        key = sender.key
        body: Body | None = None
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
        elif not trusted and not env.verified_by(key):
            raise fail("bad-signature", "the signature does not verify with the sender's key",
                       signed=False)
        if body is None:
            try:
                body = env.body()
            except WireError as exc:
                raise fail("malformed-message", str(exc)) from None
        # the chain
        seq = body.seq
        seq_of.append(seq)
        if seq < len(sender.hashes):
            if sender.envelopes[seq] == data or equal(sender.hashes[seq], env.hash):
                return [], False  # a resend after a reconnect: already applied
            if seq == 0 or not self._ours(body):
                raise fail("game-id", "a message of another game in the place of one of this "
                           "game's", signed=False)
            raise fail("equivocation", f"a second, different message with sequence {seq}")
        if seq != len(sender.hashes):
            raise fail("sequence", f"sequence {seq} where {len(sender.hashes)} was due: a "
                       "message of the sender is missing here", signed=False)
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

        limit = over_limit(body.type, seq, sender.chats_in_a_row)
        if limit is not None:
            raise fail(*limit)

        if body.type in TURN_ACTIONS:
            theirs = self._last_turn.get(other(role))
            if theirs is not None and ack < theirs:
                raise fail("out-of-turn", f"a {body.type} whose sender had not seen the other "
                           f"side's turn (its message {theirs}): in the sender's view the "
                           "turn was not its own")
        handler: Callable[[str, Body, int, Fail], list[Event]] | None
        handler = getattr(self, f"_on_{body.type}", None)
        assert handler is not None, body.type
        self._type = body.type
        if self.is_over and (body.type in _GAME_ACTIONS or body.type in _SETUP_ACTIONS or (
                body.type == "forfeit_claim" and body["reason"] != "audit")):
            events = self._after_end(role, body, ack, fail, handler)
        else:
            events = handler(role, body, ack, fail)
        # commit the chain state only after the handler accepted the message
        sender.key = key
        sender.hashes.append(env.hash)
        sender.envelopes.append(data)
        sender.index_of[env.hash] = seq
        sender.acks.append(ack)
        sender.last_ack = ack
        sender.chats_in_a_row = sender.chats_in_a_row + 1 if body.type == "chat" else 0
        if body.type in TURN_ACTIONS:
            self._last_turn[role] = seq
        self.transcript.append((role, data))
        events += self._decide()
        return events, True

    # -- hello and coin -----------------------------------------------------------------

    def _on_hello(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if body["role"] != role:
            raise fail("hello-role", f"a {role} sent a hello claiming to be {body['role']}")
        if body["version"] != PROTOCOL_VERSION:
            raise fail("version", f"protocol version {body['version']}; we speak "
                       f"{PROTOCOL_VERSION}")
        try:
            options = RuleOptions.from_dict(body["options"])
        except ValueError as exc:
            raise fail("options", str(exc)) from None
        if role == HOST:
            if self.phase is not Phase.HELLO or HOST in self.hellos:
                raise fail("out-of-turn", "a second hello")
            if body.get("coin") is not None:
                raise fail("hello-fields", "the host's hello carries no coin commitment")
            self.hellos[HOST] = body
            self.options = options
            self.host_tls = body["tls"]
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
                                       PROTOCOL_VERSION, options)
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
        if role != JOINER or self.host_coin is None or self.white is not None:
            raise fail("out-of-turn", "only the joiner opens its coin, once, after the host's")
        assert self.game_id is not None
        joiner = self.hellos[JOINER]
        if not equal(coin_commitment(self.game_id, joiner["key"], body["secret"]),
                     joiner["coin"]):
            raise fail("coin-open", "the coin secret does not open the joiner's commitment")
        self.white = HOST if host_is_white(self.game_id, self.host_coin, body["secret"]) \
            else JOINER
        if not self.is_over:
            self.phase = Phase.SETUP
        return [ColoursDecided(self.white)]

    # -- setup --------------------------------------------------------------------------

    def _on_setup_commit(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if self.white is None or role in self.setup_commits:
            raise fail("out-of-turn", "one setup commitment per side, once the coin is tossed")
        self.setup_commits[role] = body["hash"]
        self.commit_seq[role] = self.next_seq(role)
        return [SetupCommitted(role)]

    def _on_setup_reveal(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if role in self.reveals or self.white is None:
            raise fail("out-of-turn", "one setup reveal per side, in the setup")
        them = other(role)
        if role not in self.setup_commits or them not in self.setup_commits \
                or ack < self.commit_seq[them]:
            raise fail("privacy-screen", "a setup is revealed only after both are committed "
                       "(by what its sender had seen: its ack must reach the other side's "
                       "commitment)")
        assert self.game_id is not None
        squares = tuple(body["squares"])
        commits = tuple(body["commits"][i * 32:(i + 1) * 32] for i in range(21))
        key = self.hellos[role]["key"]
        if not equal(setup_hash(self.game_id, key, body["squares"], commits, body["seed_commit"]),
                     self.setup_commits[role]):
            raise fail("setup-changed", "the revealed setup is not the one committed")
        home = set(home_squares(self.side_of(role)))
        if list(squares) != sorted(set(squares)) or not set(squares) <= home:
            raise fail("setup-squares", "setup squares must be 21 distinct home squares in "
                       "ascending order")
        blind = self.options is not None and self.options.challenge_mode is ChallengeMode.BLIND
        point = body.get("ot")
        if blind:
            if point is None:
                raise fail("setup-fields", "a blind game's setup reveal carries the OT key S")
            try:
                ot.validate_point(point, "the OT key S")
            except ot.OTError as exc:
                raise fail("invalid-point", str(exc)) from None
        elif point is not None:
            raise fail("setup-fields", "an open game's setup reveal carries no OT key")
        self.reveals[role] = _Reveal(squares, commits, body["seed_commit"], point)
        self.reveal_seq[role] = self.next_seq(role)
        self._reveal_index[role] = len(self.transcript)
        events: list[Event] = []
        if len(self.reveals) == 2:
            white, black = self.reveals[self.role_of(Side.WHITE)], self.reveals[
                self.role_of(Side.BLACK)]
            assert self.options is not None
            self.game = Game(white.squares, black.squares, self.options)
            self.game.limit_undo(UNDO_DEPTH)
            if self.result is None:
                self.phase = Phase.PLAY
                events.append(GameStarted())
            else:  # both setups are out, though the game ended first: the audit follows
                self.phase = Phase.AUDIT
        return events

    # -- play ---------------------------------------------------------------------------

    def _check_opening(self, role: str, pid: int, rank: int, salt: bytes, fail: Fail,
                       what: str) -> Rank:
        assert self.game_id is not None
        expected = self.reveals[role].commits[pid]
        got = piece_commitment(self.game_id, self.hellos[role]["key"], pid, rank, salt)
        if not equal(got, expected):
            raise fail("false-opening", f"{what}: rank {Rank(rank).display_name} does not open "
                       f"the commitment of piece {pid}")
        assert self.game is not None
        known = self.game.rank_of(Piece(self.side_of(role), pid))
        if known is not None and known != rank:  # cannot happen unless SHA-256 breaks
            raise fail("false-opening", f"{what}: piece {pid} was already opened as {known}")
        return Rank(rank)

    def _require_turn(self, role: str, fail: Fail, what: str) -> Game:
        if self.game is None or self.game.is_over:
            raise fail("out-of-turn", f"{what} outside play")
        if self.pending is not None:
            raise fail("out-of-turn", f"{what} while a challenge waits for its reply")
        if self.role_of(self.game.turn) != role:
            raise fail("out-of-turn", f"{what} when it is not the sender's turn")
        return self.game

    def _on_move(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        game = self._require_turn(role, fail, "a move")
        if body["ply"] != game.ply:
            raise fail("out-of-turn", f"a move for ply {body['ply']} at ply {game.ply}")
        try:
            move = Move(body["from"], body["to"])
        except RulesError as exc:
            raise fail("illegal-move", str(exc)) from None
        problem = game.move_problem(move)
        if problem:
            raise fail("illegal-move", f"{move.text()}: {problem}")
        side = self.side_of(role)
        piece = game.piece_at(move.from_square)
        assert piece is not None
        challenge = game.is_challenge(move)
        opening = body.get("open")
        claim = body.get("claim")
        assert self.options is not None
        blind = self.options.challenge_mode is ChallengeMode.BLIND
        point = body.get("ot_r")
        rank: Rank | None = None
        if challenge and blind:
            if opening is not None:
                raise fail("opening-extra", "a blind challenge declares no rank")
            if point is None:
                raise fail("opening-missing", "a blind challenge carries the attacker's R")
            if claim is not None:
                raise fail("false-flag-claim", "a flag claim cannot ride on a challenge")
            self._check_point(other(role), point, fail)
        elif challenge:
            if opening is None:
                raise fail("opening-missing", "an open challenge carries the attacker's opening")
            if point is not None:
                raise fail("opening-extra", "an open challenge carries no OT point")
            if claim is not None:
                raise fail("false-flag-claim", "a flag claim cannot ride on a challenge")
            rank = self._check_opening(role, piece.pid, opening[0], opening[1], fail,
                                       "attacker's opening")
        elif opening is not None or point is not None:
            raise fail("opening-extra", "a plain move carries no opening")
        claim_piece = None
        if claim is not None:
            pid, crank, csalt = claim
            claim_piece = Piece(side, pid)
            self._check_opening(role, pid, crank, csalt, fail, "flag claim")
            if crank != Rank.FLAG:
                raise fail("false-flag-claim", f"piece {pid} is not the flag")
            # check the claim on the position after the move, then take the move back
            game.push(move)
            problem = (
                None if game.is_over
                else game.flag_claim_problem(side, claim_piece, rank=Rank.FLAG)
            )
            game.pop()
            if problem:
                raise fail("false-flag-claim", problem)
        # all checks passed: apply
        events: list[Event] = []
        if self.draw_offer == other(role):
            self.draw_offer = None
            events.append(DrawDeclined(other(role)))
        if body.get("draw"):
            self.draw_offer = role
            events.append(DrawOffered(role))
        if challenge:
            target = game.piece_at(move.to_square)
            assert target is not None
            if blind:
                self.used_points.add(point)
                self.pending = _Pending(role, move, game.ply, None, len(self.blind_log), point,
                                        move_index=len(self.transcript),
                                        attacker_pid=piece.pid, defender_pid=target.pid)
            else:
                assert rank is not None
                game.reveal(piece, rank)
                self.pending = _Pending(role, move, game.ply, rank,
                                        move_index=len(self.transcript),
                                        attacker_pid=piece.pid, defender_pid=target.pid)
            events.append(ChallengeStarted(role, move, rank))
            return events
        record = game.push(move)
        events.append(MovePlayed(role, record))
        if claim_piece is not None:
            game.reveal(claim_piece, Rank.FLAG)
        if claim_piece is not None and not game.is_over:
            events += self._end(role, game.claim_flag_run(side, claim_piece), EndKind.RULES)
        elif game.outcome is not None:
            events += self._end(role, game.outcome, EndKind.RULES)
        return events

    def _check_point(self, defender: str, point: bytes, fail: Fail) -> None:
        """A blind challenge's R: a proper group element, never seen before in this game,
        and not i*S of the defender's key (which would make a slot key trivial)."""
        try:
            ot.validate_point(point, "the attacker's R")
        except ot.OTError as exc:
            raise fail("invalid-point", str(exc)) from None
        if point in self.used_points:
            raise fail("replayed-point", "this R was already used in this game")
        S = self.reveals[defender].ot
        assert S is not None
        multiples = self._multiples.get(defender)
        if multiples is None:
            multiples, acc = set(), S
            for _ in range(ot.SLOTS):
                multiples.add(acc)
                acc = ot.add_points(acc, S)
            self._multiples[defender] = multiples
        if point in multiples:
            raise fail("invalid-point", "R is a multiple of the defender's S")

    def _blind_pending(self, role: str, body: Body, fail: Fail, *, attacker: bool,
                       replied: bool) -> _Pending:
        pending = self.pending
        if pending is None or pending.n < 0:
            raise fail("out-of-turn", f"{body.type} without a blind challenge waiting")
        if (pending.attacker == role) != attacker or bool(pending.cts) != replied:
            raise fail("out-of-turn", f"{body.type} from the wrong side or at the wrong step")
        if body["ply"] != pending.ply:
            raise fail("out-of-turn", f"{body.type} for ply {body['ply']}, the challenge is at "
                       f"ply {pending.ply}")
        return pending

    def _on_blind_reply(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        pending = self._blind_pending(role, body, fail, attacker=False, replied=False)
        c, e = body["commits"], body["cts"]
        pending.commits = tuple(c[i * 32:(i + 1) * 32] for i in range(ot.OUTCOMES))
        pending.cts = tuple(e[i * 32:(i + 1) * 32] for i in range(ot.SLOTS))
        pending.reply_index = len(self.transcript)
        return []

    def _on_blind_outcome(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        pending = self._blind_pending(role, body, fail, attacker=True, replied=True)
        assert self.game_id is not None and self.game is not None
        outcome = ot.find_outcome(self.game_id, pending.n, body["token"], pending.commits)
        if outcome is None:
            raise fail("blind-token", "the token opens none of the defender's commitments "
                       "(an attacker who found that should have sent a proof)")
        result, lost = BLIND_OUTCOMES[outcome]
        game = self.game
        defender = game.piece_at(pending.move.to_square)
        attacker = game.piece_at(pending.move.from_square)
        assert defender is not None and attacker is not None
        lost_flag = {"attacker": attacker.side, "defender": defender.side, None: None}[lost]
        try:
            record = game.push(pending.move, result, lost_flag)
        except IllegalMoveError as exc:
            raise fail("blind-outcome", f"the outcome contradicts a known rank: {exc}") from None
        self.blind_log.append(BlindRecord(pending.n, role, attacker.pid, defender.pid,
                                          pending.point, pending.commits, pending.cts,
                                          body["token"], outcome, pending.move_index,
                                          pending.reply_index))
        self.pending = None
        events: list[Event] = [MovePlayed(role, record)]
        if game.outcome is not None:
            events += self._end(role, game.outcome, EndKind.RULES)
        return events

    def _on_blind_proof(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        """The attacker shows the defender's table gave it no valid outcome."""
        pending = self._blind_pending(role, body, fail, attacker=True, replied=True)
        assert self.game_id is not None and self.game is not None
        attacker = self.game.piece_at(pending.move.from_square)
        assert attacker is not None
        rank = self._check_opening(role, attacker.pid, body["open"][0], body["open"][1], fail,
                                   "proof's opening")
        S = self.reveals[other(role)].ot
        assert S is not None
        try:
            if ot.receiver_point(body["x"], S, int(rank) + 1) != pending.point:
                raise fail("false-proof", "x and the opened rank do not give the R sent")
            token = ot.receiver_decrypt(body["x"], S, pending.point, self.game_id, pending.n,
                                        int(rank) + 1, pending.cts)
        except ot.OTError as exc:
            raise fail("false-proof", str(exc)) from None
        outcome = ot.find_outcome(self.game_id, pending.n, token, pending.commits)
        if outcome is not None and outcome in possible_outcomes(rank):
            raise fail("false-proof", "the slot decrypts to a valid outcome for that rank")
        what = ("opens none of its commitments" if outcome is None
                else f"gives outcome {outcome}, impossible for a {rank.display_name}")
        self.pending = None  # (settled by the proof, not by the audit)
        events = self._finish(role, None, role, EndKind.PROOF)
        table_seq = self._locate(other(role), pending.reply_index)[1]
        self.proof_verdict = Verdict(
            None, role, clean=False, audit_complete=False, cheater=other(role),
            rule="blind-bad-token", detail=f"the table of challenge {pending.n} (the "
            f"{other(role)}'s message {table_seq}) {what}; the attacker's proof is its "
            f"message {self.next_seq(role)}", index=pending.reply_index, white=self.white,
            seq=table_seq)
        self.phase = Phase.DONE
        return events

    def _on_reply(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        pending = self.pending
        if pending is None or pending.attacker == role or pending.n >= 0:
            raise fail("out-of-turn", "a reply comes only from the defender of a challenge")
        if body["ply"] != pending.ply:
            raise fail("out-of-turn", f"a reply for ply {body['ply']}, the challenge is at "
                       f"ply {pending.ply}")
        game = self.game
        assert game is not None
        defender = game.piece_at(pending.move.to_square)
        assert defender is not None
        rank = self._check_opening(role, defender.pid, body["open"][0], body["open"][1], fail,
                                   "defender's opening")
        game.reveal(defender, rank)
        record = game.push(pending.move)
        self.pending = None
        events: list[Event] = [MovePlayed(pending.attacker, record, pending.rank, rank)]
        if game.outcome is not None:
            events += self._end(role, game.outcome, EndKind.RULES)
        return events

    def _on_claim_flag(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        game = self._require_turn(role, fail, "a flag claim")
        pid, rank, salt = body["claim"]
        self._check_opening(role, pid, rank, salt, fail, "flag claim")
        side = self.side_of(role)
        piece = Piece(side, pid)
        if rank != Rank.FLAG:
            raise fail("false-flag-claim", f"piece {pid} is not the flag")
        problem = game.flag_claim_problem(side, piece, rank=Rank.FLAG)
        if problem:
            raise fail("false-flag-claim", problem)
        game.reveal(piece, Rank.FLAG)
        return self._end(role, game.claim_flag_run(side, piece), EndKind.RULES)

    def _on_draw_accept(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        game = self._require_turn(role, fail, "accepting a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to accept")
        return self._end(role, game.agree_draw(), EndKind.RULES)

    def _on_draw_decline(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        self._require_turn(role, fail, "declining a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to decline")
        self.draw_offer = None
        return [DrawDeclined(role)]

    def _on_resign(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if self.game is None:
            raise fail("out-of-turn", "resigning before the game has started")
        return self._finish(role, Termination.RESIGNATION, other(role), EndKind.RESIGN)

    def _on_chat(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if self.game_id is None:
            raise fail("out-of-turn", "chat before both hellos")
        return [ChatReceived(role, body["text"])]

    # -- claims -------------------------------------------------------------------------

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
        termination = Termination.TIME_FORFEIT if reason == "time" else Termination.ABANDONMENT
        return self._finish(role, termination, role, EndKind.CLAIM, claimants=(role,),
                            claim=reason)

    def _audit_claim(self, role: str, seq: int, ack: int, fail: Fail) -> list[Event]:
        """`role` says the other side did not open its commitments in time."""
        them = other(role)
        if not self._knew_end(role, ack):
            raise fail("false-claim", "an audit claim before the game was over in the "
                       "claimant's view")
        if len(self.reveals) != 2 or self.reveal_seq[them] > ack:
            raise fail("false-claim", "no audit follows a game whose setups were not both "
                       "revealed in the claimant's view")
        if role not in self.audits:
            raise fail("false-claim", "an audit claim before the claimant's own audit")
        if role in self._audit_claimed:
            raise fail("false-claim", "a second audit claim")
        if them in self.audits:
            if self.audit_seq[them] <= ack:
                raise fail("false-claim", "the other side's audit had reached the claimant")
            self._audit_claimed.add(role)
            return [MessageIgnored(role, "forfeit_claim")]  # crossed by that audit: void
        self._audit_claimed.add(role)
        self.audit_claim = (role, seq)
        self.claims[role].add(seq)
        return [ClaimMade(role, "audit", seq)]

    def view_of(self, role: str, ack: int) -> GameFlow:
        """The flow as `role` saw it when it sent a message with this `ack`: its own earlier
        messages and the other side's up to `ack`, in the order `role` processed them (its
        own acks tell that order). That is this flow itself unless some of the other side's
        messages crossed (were processed here, not yet seen by `role`); then it is rebuilt,
        which is rare (claims only) and costs a replay without signature checks."""
        mine, theirs = self.senders[role], self.senders[other(role)]
        if ack == len(theirs.hashes) - 1:
            return self
        view = GameFlow(trusted=True)
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

    def _end(self, role: str, outcome: Outcome, kind: EndKind) -> list[Event]:
        """An ending on the board (the board itself is over)."""
        winner = None if outcome.winner is None else self.role_of(outcome.winner)
        return self._finish(role, outcome.termination, winner, kind)

    def _finish(self, role: str, termination: Termination | None, winner: str | None,
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
        self.phase = Phase.AUDIT if len(self.reveals) == 2 else Phase.DONE
        winner_side = self.side_of(winner) if winner is not None and self.white else None
        events: list[Event] = [GameEnded(termination, winner, winner_side)]
        if claim is not None:
            events.append(ClaimMade(role, claim, seq))
        return events

    def _after_end(self, role: str, body: Body, ack: int, fail: Fail,
                   handler: Callable[[str, Body, int, Fail], list[Event]]) -> list[Event]:
        """An action after the end: a violation if its sender knew of the end; otherwise it
        crossed the end on the wire and is judged and applied as usual, on the board its
        sender saw (the end changed no board): a setup message as in the setup, a game
        action on the board of play, where an ending it makes decides only if stronger."""
        if self._knew_end(role, ack):
            raise fail("after-end", f"{body.type} after the game ended")
        return handler(role, body, ack, fail)

    def _draw_of_crossing_ends(self, role: str, seq: int, kind: EndKind, claim: str | None
                               ) -> list[Event]:
        """Both sides resigned, or both claimed, without seeing the other's: a draw."""
        assert self.result is not None
        if kind is EndKind.RESIGN:
            termination: Termination | None = Termination.RESIGNATION
            claimants: tuple[str, ...] = ()
        else:  # the host's claim names the termination
            assert claim is not None
            mine = Termination.TIME_FORFEIT if claim == "time" else Termination.ABANDONMENT
            termination = mine if role == HOST else self.result[0]
            claimants = ROLES
            self.claims[role].add(seq)
        self.result = (termination, None)
        self.claimants = claimants
        self.end_role, self.end_seq = role, seq
        events: list[Event] = [GameEnded(termination, None, None)]
        if claim is not None:
            events.append(ClaimMade(role, claim, seq))
        return events

    # -- the audit and the verdict ------------------------------------------------------

    def _on_audit(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        if not self.is_over or not self._knew_end(role, ack):
            raise fail("out-of-turn", "the audit comes after the end of the game")
        them = other(role)
        if role in self.audits:
            raise fail("out-of-turn", "one audit per side")
        if role not in self.reveals or them not in self.reveals or (
                self.reveal_seq[them] > ack):
            raise fail("out-of-turn", "no audit before both setups were revealed")
        assert self.game_id is not None
        ranks, salts, seed = body["ranks"], body["salts"], body["seed"]
        reveal = self.reveals[role]
        key = self.hellos[role]["key"]
        for pid in range(21):
            rank = ranks[pid]
            salt = salts[pid * 32:(pid + 1) * 32]
            if not equal(piece_commitment(self.game_id, key, pid, rank, salt),
                         reveal.commits[pid]):
                raise fail("false-opening", f"audit: piece {pid} does not open to "
                           f"{Rank(rank).display_name}")
        if not equal(seed_commitment(self.game_id, key, seed), reveal.seed_commit):
            raise fail("false-opening", "audit: the seed does not open its commitment")
        wrong = composition_errors([Rank(r) for r in ranks])
        if wrong:
            raise fail("composition", "the committed setup is not the 21-piece set: "
                       + ", ".join(wrong))
        self.audits[role] = (ranks, salts, seed)
        self.audit_seq[role] = self.next_seq(role)
        events: list[Event] = [AuditReceived(role)]
        standing = self.audit_claim
        if standing is not None and standing[0] == them and ack < standing[1]:
            self.audit_claim = None  # this audit crossed the claim: the audit decides
        return events

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

    def _verdict_now(self) -> Verdict | None:
        if self.proof_verdict is not None:
            return self.proof_verdict
        if self.result is None:
            return None
        termination, winner = self.result
        disputed = tuple(r for r in ROLES if r in self.disputes)
        if len(self.reveals) != 2:
            return Verdict(termination, winner, clean=True, audit_complete=False,
                           detail="the game ended before both setups were revealed",
                           claimants=self.claimants, disputed_by=disputed, white=self.white)
        standing = self.audit_claim
        if standing is not None and termination is Termination.RESIGNATION \
                and winner == standing[0]:
            # The loser signed its own defeat: the winner's audit alone proves the result
            # (the loser's missing openings could only hide its own cheating, SPEC 2.6).
            standing = None
            if len(self.audits) < 2:
                return self._resignation_verdict(winner, disputed)
        if len(self.audits) == 2:
            problem = self._audit_replay()
            if problem is not None:
                cheater, rule, detail, index = problem
                index, seq = self._locate(cheater, index)
                return Verdict(None, other(cheater), clean=False, audit_complete=True,
                               cheater=cheater, rule=rule, detail=detail, index=index,
                               white=self.white, seq=seq)
        elif standing is None:
            return None
        if standing is not None:
            claimant = standing[0]
            late = " (it came after the claim)" if len(self.audits) == 2 else ""
            return Verdict(Termination.ABANDONMENT, claimant, clean=True,
                           audit_complete=len(self.audits) == 2, claimants=(claimant,),
                           disputed_by=disputed, white=self.white,
                           detail=f"{other(claimant)} did not open its commitments in time"
                           f"{late}")
        return Verdict(termination, winner, clean=True, audit_complete=True,
                       claimants=self.claimants, disputed_by=disputed, white=self.white)

    def _resignation_verdict(self, winner: str, disputed: tuple[str, ...]) -> Verdict:
        """The loser resigned and never opened its commitments; the winner's are opened
        (checked on arrival) and its part of every blind challenge is replayed."""
        problem = self._replay_blind(only=winner)
        if problem is not None:
            cheater, rule, detail, index = problem
            index, seq = self._locate(cheater, index)
            return Verdict(None, other(cheater), clean=False, audit_complete=False,
                           cheater=cheater, rule=rule, detail=detail, index=index,
                           white=self.white, seq=seq)
        return Verdict(Termination.RESIGNATION, winner, clean=True, audit_complete=False,
                       disputed_by=disputed, white=self.white, winner_audited=True,
                       detail=f"the {other(winner)} resigned and never opened its "
                       "commitments")

    def conclusion(self) -> Verdict | None:
        """The verdict so far: the audit's when it is complete (or a proven violation, or
        a standing audit claim), or, when the game ended by a forfeit claim and a
        claimant's own audit is in, the claimant's result with the audit incomplete."""
        if self.verdict is not None:
            return self.verdict
        if self.result is None or not self.claimants:
            return None
        if not any(c in self.audits for c in self.claimants):
            return None
        termination, winner = self.result
        missing = " and ".join(r for r in ROLES if r not in self.audits)
        return Verdict(termination, winner, clean=True, audit_complete=False,
                       claimants=self.claimants,
                       disputed_by=tuple(r for r in ROLES if r in self.disputes),
                       white=self.white, detail=f"{missing} never opened its commitments")

    def _locate(self, role: str, index: int) -> tuple[int, int]:
        """The message that shows `role`'s violation found at the audit: the one at `index`
        when it is `role`'s (a blind challenge's R or table), else `role`'s own audit,
        whose opened ranks prove it. (This file's index, the sender's seq.)"""
        if not (0 <= index < len(self.transcript) and self.transcript[index][0] == role):
            seq = self.audit_seq[role]
            index = next(i for i, (r, data) in enumerate(self.transcript)
                         if r == role and Envelope.decode(data).body().seq == seq)
        return index, Envelope.decode(self.transcript[index][1]).body().seq

    def _audit_replay(self) -> tuple[str, str, str, int] | None:
        if not self._audit_replayed:
            self._audit_problem = self._replay()
            self._audit_replayed = True
        return self._audit_problem

    def _replay_blind(self, only: str | None = None) -> tuple[str, str, str, int] | None:
        """Every blind challenge again, byte for byte, from the opened seeds and ranks,
        the one in flight when the game ended included. `only`: check that side's part
        alone (its key S, its R as attacker, its tables as defender), from its own audit
        and what the other side made public."""
        assert self.game_id is not None and self.options is not None
        if self.options.challenge_mode is not ChallengeMode.BLIND:
            return None
        audited = ROLES if only is None else (only,)
        for role in audited:
            if self.reveals[role].ot != ot.sender_keypair(self.audits[role][2])[1]:
                return (role, "blind-sender-key", "the OT key S is not the one its seed gives",
                        self._reveal_index[role])
        checks: list[tuple[int, str, int, int, bytes, tuple[bytes, ...], tuple[bytes, ...],
                           int, int]] = [
            (rec.n, rec.attacker, rec.attacker_pid, rec.defender_pid, rec.point, rec.commits,
             rec.cts, rec.move_index, rec.reply_index) for rec in self.blind_log]
        left = self.pending
        if left is not None and left.n >= 0:
            checks.append((left.n, left.attacker, left.attacker_pid, left.defender_pid,
                           left.point, left.commits, left.cts, left.move_index,
                           left.reply_index))
        for n, attacker, a_pid, d_pid, point, commits, cts, move_index, reply_index in checks:
            defender = other(attacker)
            S = self.reveals[defender].ot  # (checked against the defender's seed above,
            assert S is not None  # when its audit is in)
            if attacker in audited:
                a_rank = Rank(self.audits[attacker][0][a_pid])
                if not ot.check_receiver(self.audits[attacker][2], n, S, int(a_rank) + 1,
                                         point):
                    return attacker, "blind-wrong-input", (
                        f"challenge {n}: R is not what the seed and the attacker's committed "
                        f"rank ({a_rank.display_name}) give"), move_index
            if not cts or defender not in audited:
                continue  # (ended before the defender's table came, or not checked here)
            d_rank = Rank(self.audits[defender][0][d_pid])
            d_seed = self.audits[defender][2]
            tokens = ot.outcome_tokens(d_seed, n)
            expected = tuple(ot.token_commitment(self.game_id, n, o, t)
                             for o, t in enumerate(tokens))
            if expected != commits:
                return defender, "blind-wrong-table", (
                    f"challenge {n}: the token commitments are not the seed's"), reply_index
            table = [tokens[outcome_index(Rank(i), d_rank)] for i in range(ot.SLOTS)]
            if not ot.check_sender(d_seed, S, point, self.game_id, n, table, list(cts)):
                return defender, "blind-wrong-table", (
                    f"challenge {n}: the ciphertexts do not encode the rules' outcomes "
                    f"for a defending {d_rank.display_name}"), reply_index
        return None

    def _replay(self) -> tuple[str, str, str, int] | None:
        """Replay every move with every rank known; None when all agrees."""
        assert self.game is not None and self.options is not None
        setups = {}
        for role in ROLES:
            side = self.side_of(role)
            ranks = self.audits[role][0]
            placement = {sq: Rank(ranks[pid]) for pid, sq in enumerate(self.reveals[role].squares)}
            setups[side] = Setup(side, placement)
        problem = self._replay_blind()
        if problem is not None:
            return problem
        full = Game.from_setups(setups[Side.WHITE], setups[Side.BLACK], self.options)
        for record in self.game.history:
            try:
                full.push(record.move, record.result, record.lost_flag)
            except IllegalMoveError as exc:
                defender = self.role_of(record.side.other)
                return (defender, "challenge-result", f"replaying {record.move.text()}: {exc}",
                        len(self.transcript) - 1)
        assert self.result is not None
        termination, winner = self.result
        if termination is Termination.FLAG_REACHED_BACK_RANK:
            assert winner is not None
            side = self.side_of(winner)
            flag = next(p for p in full.pieces(side) if full.rank_of(p) is Rank.FLAG)
            claim_problem_ = full.flag_claim_problem(side, flag)
            if claim_problem_:
                return (winner, "false-flag-claim", claim_problem_, len(self.transcript) - 1)
        return None


def claim_problem(view: GameFlow, role: str, reason: str) -> str | None:
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
        return f"the {role} itself owed {OWED_WORDS[mine]}"
    if reason == "time" and theirs not in DUTIES and theirs != "setup":
        options = view.options
        assert options is not None
        if not (options.clock_seconds or options.move_seconds):
            return f"the {them} owed {OWED_WORDS[theirs]}, which has no time limit (no clock)"
    return None
