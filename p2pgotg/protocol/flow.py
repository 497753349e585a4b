"""The game flow: every message of both sides, checked and applied in order.

One `GameFlow` serves three masters: each peer runs one over its own and the peer's
messages (with its own ranks revealed into the view), and `verify` runs one over a saved
transcript with no secrets at all. Each `process` call is atomic: it checks everything
first and raises `RuleViolation` before changing any state.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p2pgotg.crypto import coin_commitment, equal, host_is_white, ot, piece_commitment, setup_hash
from p2pgotg.crypto.commitments import seed_commitment
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.events import (
    AuditCompleted,
    AuditReceived,
    ChallengeStarted,
    ChatReceived,
    ColoursDecided,
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


# Message types that act on the game and so may not follow its end knowingly.
_GAME_ACTIONS = {"move", "reply", "claim_flag", "draw_accept", "draw_decline", "resign",
                 "forfeit_claim", "setup_commit", "setup_reveal", "coin", "coin_open"}


@dataclass
class _Sender:
    """What the chain has seen of one role's messages."""

    key: bytes | None = None
    hashes: list[bytes] = field(default_factory=list)
    envelopes: list[bytes] = field(default_factory=list)
    index_of: dict[bytes, int] = field(default_factory=dict)
    last_ack: int = -1  # index into the other role's messages


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


class GameFlow:
    """Checks and applies the messages of both sides in transcript order."""

    def __init__(self) -> None:
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
        self.reveals: dict[str, _Reveal] = {}
        self.game: Game | None = None
        self.pending: _Pending | None = None
        self.draw_offer: str | None = None
        self.end_role: str | None = None  # whose message ended the game
        self.end_seq: int | None = None
        self.result: tuple[Termination | None, str | None] | None = None
        self.audits: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.verdict: Verdict | None = None
        self.blind_log: list[BlindRecord] = []
        self.used_points: set[bytes] = set()
        self._multiples: dict[str, set[bytes]] = {}  # i*S for i in 1..15, per sender key
        self._reveal_index: dict[str, int] = {}

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

    # -- the entry point ----------------------------------------------------------------

    def process(self, role: str, data: bytes, sealed_here: bool = False
                ) -> tuple[list[Event], bool]:
        """Check and apply one message from `role`. Returns (events, recorded); a verbatim
        resend of a message already processed returns ([], False). `sealed_here`: this
        process has just signed `data` with `role`'s key, so the signature check is skipped
        (every other check still runs)."""
        index = len(self.transcript)

        def fail(rule: str, detail: str, signed: bool = True) -> RuleViolation:
            return RuleViolation(role, rule, detail, index, signed)

        try:
            env = Envelope.decode(data)
        except WireError as exc:
            raise fail("malformed-envelope", str(exc), signed=False) from None
        sender = self.senders[role]
        key = sender.key
        body: Body | None = None
        if key is None:  # the sender's first message must be its hello, carrying the key
            try:
                body = env.body()
            except WireError as exc:
                raise fail("malformed-message", str(exc), signed=False) from None
            if body.type != "hello":
                raise fail("hello-first", f"the first message must be hello, not {body.type}",
                           signed=False)
            key = body["key"]
        if not sealed_here and not env.verified_by(key):
            raise fail("bad-signature", "the signature does not verify with the sender's key",
                       signed=False)
        if body is None:
            try:
                body = env.body()
            except WireError as exc:
                raise fail("malformed-message", str(exc)) from None
        # the chain
        seq = body.seq
        if seq < len(sender.hashes):
            if sender.envelopes[seq] == data:
                return [], False  # a resend after a reconnect: already applied
            if equal(sender.hashes[seq], env.hash):
                return [], False  # same body, signed again: nothing new
            raise fail("equivocation", f"a second, different message with sequence {seq}")
        if seq != len(sender.hashes):
            raise fail("sequence", f"sequence {seq} where {len(sender.hashes)} was due")
        if not equal(body.prev, self.last_hash(role)):
            raise fail("chain-prev", "prev is not the hash of the sender's previous message")
        peer = self.senders[other(role)]
        if equal(body.ack, ZERO_HASH):
            ack = -1
        elif body.ack in peer.index_of:
            ack = peer.index_of[body.ack]
        else:
            raise fail("chain-ack", "ack names no message of the other side seen so far")
        if ack < sender.last_ack:
            raise fail("chain-ack", "ack goes back to an older message")
        if body.type != "hello" and not equal(body.game or b"", self.game_id or b""):
            raise fail("game-id", "the message belongs to another game")

        handler: Callable[[str, Body, int, Callable[..., RuleViolation]], list[Event]] | None
        handler = getattr(self, f"_on_{body.type}", None)
        assert handler is not None, body.type
        if self.is_over and body.type in _GAME_ACTIONS and not (
            body.type == "forfeit_claim" and self.phase is Phase.AUDIT
        ):
            events = self._after_end(role, body, ack, fail)
        else:
            events = handler(role, body, ack, fail)
        # commit the chain state only after the handler accepted the message
        sender.key = key
        sender.hashes.append(env.hash)
        sender.envelopes.append(data)
        sender.index_of[env.hash] = seq
        sender.last_ack = ack
        self.transcript.append((role, data))
        events += self._maybe_finish_audit()
        return events, True

    # -- hello and coin -----------------------------------------------------------------

    def _on_hello(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
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

    def _on_coin(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if role != HOST or self.phase is not Phase.COIN:
            raise fail("out-of-turn", "only the host sends coin, once, after both hellos")
        self.host_coin = body["secret"]
        self.phase = Phase.COIN_OPEN
        return []

    def _on_coin_open(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if role != JOINER or self.phase is not Phase.COIN_OPEN:
            raise fail("out-of-turn", "only the joiner opens its coin, once, after the host's")
        assert self.game_id is not None and self.host_coin is not None
        joiner = self.hellos[JOINER]
        if not equal(coin_commitment(self.game_id, joiner["key"], body["secret"]),
                     joiner["coin"]):
            raise fail("coin-open", "the coin secret does not open the joiner's commitment")
        self.white = HOST if host_is_white(self.game_id, self.host_coin, body["secret"]) \
            else JOINER
        self.phase = Phase.SETUP
        return [ColoursDecided(self.white)]

    # -- setup --------------------------------------------------------------------------

    def _on_setup_commit(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.phase is not Phase.SETUP or role in self.setup_commits:
            raise fail("out-of-turn", "one setup commitment per side, in the setup phase")
        self.setup_commits[role] = body["hash"]
        return [SetupCommitted(role)]

    def _on_setup_reveal(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.phase is not Phase.SETUP or role in self.reveals:
            raise fail("out-of-turn", "one setup reveal per side, in the setup phase")
        if len(self.setup_commits) != 2:
            raise fail("privacy-screen", "a setup is revealed only after both are committed")
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
        self._reveal_index[role] = len(self.transcript)
        events: list[Event] = []
        if len(self.reveals) == 2:
            white, black = self.reveals[self.role_of(Side.WHITE)], self.reveals[
                self.role_of(Side.BLACK)]
            assert self.options is not None
            self.game = Game(white.squares, black.squares, self.options)
            self.phase = Phase.PLAY
            events.append(GameStarted())
        return events

    # -- play ---------------------------------------------------------------------------

    def _check_opening(self, role: str, pid: int, rank: int, salt: bytes, fail: Any,
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

    def _require_turn(self, role: str, fail: Any, what: str) -> Game:
        if self.phase is not Phase.PLAY or self.game is None:
            raise fail("out-of-turn", f"{what} outside play")
        if self.pending is not None:
            raise fail("out-of-turn", f"{what} while a challenge waits for its reply")
        if self.role_of(self.game.turn) != role:
            raise fail("out-of-turn", f"{what} when it is not the sender's turn")
        return self.game

    def _on_move(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
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
        if challenge and blind:
            self.used_points.add(point)
            self.pending = _Pending(role, move, game.ply, None, len(self.blind_log), point,
                                    move_index=len(self.transcript))
            events.append(ChallengeStarted(role, move, None))
            return events
        if challenge:
            assert rank is not None
            game.reveal(piece, rank)
            self.pending = _Pending(role, move, game.ply, rank)
            events.append(ChallengeStarted(role, move, rank))
            return events
        record = game.push(move)
        events.append(MovePlayed(role, record))
        if claim_piece is not None:
            game.reveal(claim_piece, Rank.FLAG)
        if claim_piece is not None and not game.is_over:
            events += self._end(role, game.claim_flag_run(side, claim_piece))
        elif game.outcome is not None:
            events += self._end(role, game.outcome)
        return events

    def _check_point(self, defender: str, point: bytes, fail: Any) -> None:
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

    def _blind_pending(self, role: str, body: Body, fail: Any, *, attacker: bool,
                       replied: bool) -> _Pending:
        pending = self.pending
        if self.phase is not Phase.PLAY or pending is None or pending.n < 0:
            raise fail("out-of-turn", f"{body.type} without a blind challenge waiting")
        if (pending.attacker == role) != attacker or bool(pending.cts) != replied:
            raise fail("out-of-turn", f"{body.type} from the wrong side or at the wrong step")
        if body["ply"] != pending.ply:
            raise fail("out-of-turn", f"{body.type} for ply {body['ply']}, the challenge is at "
                       f"ply {pending.ply}")
        return pending

    def _on_blind_reply(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        pending = self._blind_pending(role, body, fail, attacker=False, replied=False)
        c, e = body["commits"], body["cts"]
        pending.commits = tuple(c[i * 32:(i + 1) * 32] for i in range(ot.OUTCOMES))
        pending.cts = tuple(e[i * 32:(i + 1) * 32] for i in range(ot.SLOTS))
        pending.reply_index = len(self.transcript)
        return []

    def _on_blind_outcome(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
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
            events += self._end(role, game.outcome)
        return events

    def _on_blind_proof(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
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
        self.pending = None
        events = self._finish(role, None, role)
        self.verdict = Verdict(None, role, clean=False, audit_complete=False,
                               cheater=other(role), rule="blind-bad-token",
                               detail=f"the defender's table for challenge {pending.n} "
                               f"{what}; the attacker's proof is message "
                               f"{len(self.transcript)}",
                               index=len(self.transcript))
        self.phase = Phase.DONE
        return [*events, AuditCompleted(self.verdict)]

    def _on_reply(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        pending = self.pending
        if self.phase is not Phase.PLAY or pending is None or pending.attacker == role \
                or pending.n >= 0:
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
            events += self._end(role, game.outcome)
        return events

    def _on_claim_flag(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
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
        return self._end(role, game.claim_flag_run(side, piece))

    def _on_draw_accept(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        game = self._require_turn(role, fail, "accepting a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to accept")
        return self._end(role, game.agree_draw())

    def _on_draw_decline(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        self._require_turn(role, fail, "declining a draw")
        if self.draw_offer != other(role):
            raise fail("no-draw-offer", "there is no draw offer to decline")
        self.draw_offer = None
        return [DrawDeclined(role)]

    def _on_resign(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.phase is not Phase.PLAY or self.game is None:
            raise fail("out-of-turn", "resigning before the game has started")
        self.pending = None
        return self._end(role, Outcome(Termination.RESIGNATION, self.side_of(other(role))))

    def _on_forfeit_claim(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.phase is Phase.AUDIT:
            return self._audit_refused(role, fail)
        if self.phase is Phase.HELLO or self.game_id is None:
            raise fail("out-of-turn", "nothing to claim before both hellos")
        termination = (Termination.TIME_FORFEIT if body["reason"] == "time"
                       else Termination.ABANDONMENT)
        self.pending = None
        return self._finish(role, termination, role)

    def _on_chat(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.game_id is None:
            raise fail("out-of-turn", "chat before both hellos")
        return [ChatReceived(role, body["text"])]

    # -- the end and the audit ----------------------------------------------------------

    def _end(self, role: str, outcome: Outcome) -> list[Event]:
        winner = None if outcome.winner is None else self.role_of(outcome.winner)
        if self.game is not None and not self.game.is_over:
            self.game.end(outcome)
        return self._finish(role, outcome.termination, winner)

    def _finish(self, role: str, termination: Termination | None, winner: str | None
                ) -> list[Event]:
        """The game is over (`termination` None: ended by a proven violation)."""
        self.result = (termination, winner)
        self.end_role, self.end_seq = role, self.next_seq(role)
        started = self.game is not None
        self.phase = Phase.AUDIT if started else Phase.DONE
        if not started:
            self.verdict = Verdict(termination, winner, clean=True, audit_complete=False,
                                   detail="the game ended before play began")
        winner_side = self.side_of(winner) if winner is not None and self.white else None
        return [GameEnded(termination, winner, winner_side)]

    def _after_end(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        """A game action after the end is fine only if it crossed the end on the wire."""
        assert self.end_role is not None and self.end_seq is not None
        knew = role == self.end_role or ack >= self.end_seq
        if knew:
            raise fail("after-end", f"{body.type} after the game ended")
        return [MessageIgnored(role, body.type)]

    def _audit_refused(self, role: str, fail: Any) -> list[Event]:
        """The other side has not opened its commitments in time: it loses."""
        if role not in self.audits:
            raise fail("out-of-turn", "a side claims an audit refusal only after its own audit")
        if other(role) in self.audits:
            raise fail("after-end", "the other side's audit is already in")
        self.verdict = Verdict(
            Termination.ABANDONMENT, role, clean=False, audit_complete=False,
            cheater=other(role), rule="audit-refused",
            detail=f"{other(role)} did not open its commitments in time; {role} claimed "
            "the game (the claim is the claimant's word on the time; the missing audit is "
            "in the transcript for anyone to see)",
            index=len(self.transcript),
        )
        self.phase = Phase.DONE
        return [AuditCompleted(self.verdict)]

    def conclusion(self) -> Verdict | None:
        """The verdict so far: the audit's when it is complete, the claimant's when the game
        ended by a forfeit claim and the claimant's own audit is in, else None."""
        if self.verdict is not None:
            return self.verdict
        if self.result is None:
            return None
        termination, winner = self.result
        claim = termination in (Termination.TIME_FORFEIT, Termination.ABANDONMENT)
        if claim and winner is not None and winner in self.audits:
            return Verdict(termination, winner, clean=True, audit_complete=False,
                           detail=f"{other(winner)} never opened its commitments")
        return None

    def _on_audit(self, role: str, body: Body, ack: int, fail: Any) -> list[Event]:
        if self.phase not in (Phase.AUDIT, Phase.DONE) or not self.is_over:
            raise fail("out-of-turn", "the audit comes after the end of the game")
        if role in self.audits:
            raise fail("out-of-turn", "one audit per side")
        if role not in self.reveals:
            raise fail("out-of-turn", "no revealed setup to audit")
        assert self.game_id is not None
        ranks, salts, seed = body["ranks"], body["salts"], body["seed"]
        reveal = self.reveals[role]
        key = self.hellos[role]["key"]
        for pid in range(21):
            rank = ranks[pid]
            if rank > 14:
                raise fail("false-opening", f"audit: rank index {rank} for piece {pid}")
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
        return [AuditReceived(role)]

    def _maybe_finish_audit(self) -> list[Event]:
        if self.verdict is not None or len(self.audits) != 2 or self.result is None:
            return []
        problem = self._replay()
        termination, winner = self.result
        if problem is not None:
            cheater, rule, detail, index = problem
            self.verdict = Verdict(None, other(cheater), clean=False, audit_complete=True,
                                   cheater=cheater, rule=rule, detail=detail, index=index)
        else:
            self.verdict = Verdict(termination, winner, clean=True, audit_complete=True)
        self.phase = Phase.DONE
        return [AuditCompleted(self.verdict)]

    def _replay_blind(self) -> tuple[str, str, str, int] | None:
        """Every blind challenge again, byte for byte, from the opened seeds and ranks."""
        assert self.game_id is not None and self.options is not None
        if self.options.challenge_mode is not ChallengeMode.BLIND:
            return None
        keys = {}
        for role in ROLES:
            y, S = ot.sender_keypair(self.audits[role][2])
            if self.reveals[role].ot != S:
                return (role, "blind-sender-key", "the OT key S is not the one its seed gives",
                        self._reveal_index[role])
            keys[role] = y, S
        for rec in self.blind_log:
            defender = other(rec.attacker)
            a_rank = Rank(self.audits[rec.attacker][0][rec.attacker_pid])
            d_rank = Rank(self.audits[defender][0][rec.defender_pid])
            a_seed, d_seed = self.audits[rec.attacker][2], self.audits[defender][2]
            y, S = keys[defender]
            if not ot.check_receiver(a_seed, rec.n, S, int(a_rank) + 1, rec.point):
                return rec.attacker, "blind-wrong-input", (
                    f"challenge {rec.n}: R is not what the seed and the attacker's committed "
                    f"rank ({a_rank.display_name}) give"), rec.move_index
            tokens = ot.outcome_tokens(d_seed, rec.n)
            commits = tuple(ot.token_commitment(self.game_id, rec.n, o, t)
                            for o, t in enumerate(tokens))
            if commits != rec.commits:
                return defender, "blind-wrong-table", (
                    f"challenge {rec.n}: the token commitments are not the seed's"), \
                    rec.reply_index
            table = [tokens[outcome_index(Rank(i), d_rank)] for i in range(ot.SLOTS)]
            if not ot.check_sender(d_seed, S, rec.point, self.game_id, rec.n, table,
                                   list(rec.cts)):
                return defender, "blind-wrong-table", (
                    f"challenge {rec.n}: the ciphertexts do not encode the rules' outcomes "
                    f"for a defending {d_rank.display_name}"), rec.reply_index
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
        public = self.game.outcome
        if public is not None and public.termination is Termination.FLAG_REACHED_BACK_RANK:
            assert public.winner is not None
            flag = next(p for p in full.pieces(public.winner) if full.rank_of(p) is Rank.FLAG)
            claim_problem = full.flag_claim_problem(public.winner, flag)
            if claim_problem:
                return (self.role_of(public.winner), "false-flag-claim", claim_problem,
                        len(self.transcript) - 1)
        return None

