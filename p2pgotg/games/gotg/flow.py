"""Game of the Generals on the protocol kernel: its setup behind a privacy screen, its play
(open and blind challenges, flag claims, draw offers), and its audit (SPEC 2.4 to 2.6, 2.9).

The kernel (`p2pgotg.protocol.flow.Flow`) checks the chain, the hellos and the coin, and
judges endings, claims and disputes; this subclass adds the game's messages (`MESSAGES`),
what each side owes in the setup and in play, and the audit that replays the whole game
with every rank opened. Its hellos name no game (`GAME` None): Game of the Generals kept
its bytes when the kernel learned other games.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

from p2pgotg.crypto import TAG_GAME, equal, ot, piece_commitment, seed_commitment, setup_hash
from p2pgotg.games.gotg.events import ChallengeStarted, GameStarted, MovePlayed, SetupCommitted
from p2pgotg.protocol.events import AuditReceived, Event
from p2pgotg.protocol.flow import (
    KERNEL_DUTIES,
    KERNEL_OWED_WORDS,
    ROLES,
    EndKind,
    Fail,
    Flow,
    Phase,
    Problem,
    other,
)
from p2pgotg.protocol.messages import Body
from p2pgotg.protocol.verdict import Verdict
from p2pgotg.rules import (
    ChallengeMode,
    ChallengeResult,
    FlagRule,
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


_FLAG_RULES = list(FlagRule)
_MODES = list(ChallengeMode)


def options_bytes(options: RuleOptions) -> bytes:
    """12 bytes: flag rule index u8, two-squares u8 (0/1), chasing u8 (0/1), challenge mode
    index u8, clock seconds u32, move seconds u32 (big-endian; SPEC 2.2).

    Indices: flag rule safe_or_survive=0, always_survive=1, immediate=2;
    challenge mode open=0, blind=1."""
    return bytes([
        _FLAG_RULES.index(options.flag_rule),
        int(options.two_squares),
        int(options.chasing),
        _MODES.index(options.challenge_mode),
    ]) + struct.pack(">II", options.clock_seconds, options.move_seconds)


#: What a side can owe in Game of the Generals, and which of these are automatic answers
#: (the duty limit); "setup" has the setup limit, "move" one only when a clock is set.
DUTIES = KERNEL_DUTIES | {"reveal", "reply", "blind_reply", "token"}
OWED_WORDS = {
    **KERNEL_OWED_WORDS, "setup": "its setup", "reveal": "the reveal of its setup",
    "reply": "its reply to a challenge", "blind_reply": "its table for a blind challenge",
    "token": "its outcome token", "move": "a move",
}
#: The turn's actions (SPEC 2.4).
TURN_ACTIONS = frozenset({"move", "reply", "blind_reply", "blind_outcome", "blind_proof",
                          "claim_flag", "draw_accept", "draw_decline"})


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


#: How many moves back the referee's board can be taken: a flag claim riding on a move is
#: checked on the board after the move, which is then taken back; memory stays flat however
#: long the game.
UNDO_DEPTH = 2


class GotgFlow(Flow):
    """Game of the Generals' messages, on the kernel's chain, table and endings."""

    GAME: ClassVar[str | None] = None
    TURN_ACTIONS = TURN_ACTIONS
    SETUP_ACTIONS = frozenset({"setup_commit", "setup_reveal"})
    PLAY_MESSAGES = frozenset({"move"})
    AUDIT = "audit"
    OWED_WORDS = OWED_WORDS
    DUTIES = DUTIES
    COLOURS = ("White", "Black")

    def __init__(self, trusted: bool = False) -> None:
        super().__init__(trusted)
        self.setup_commits: dict[str, bytes] = {}
        self.commit_seq: dict[str, int] = {}
        self.reveals: dict[str, _Reveal] = {}
        self.reveal_seq: dict[str, int] = {}
        self.game: Game | None = None
        self.pending: _Pending | None = None  # the challenge in flight (also at the end)
        self.audits: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.blind_log: list[BlindRecord] = []
        self.used_points: set[bytes] = set()
        self._multiples: dict[str, set[bytes]] = {}  # i*S for i in 1..15, per sender key
        self._reveal_index: dict[str, int] = {}

    # -- the kernel's hooks -------------------------------------------------------------

    def parse_options(self, raw: dict[str, Any]) -> RuleOptions:
        return RuleOptions.from_dict(raw)

    def options_bytes(self, options: Any) -> bytes:
        return options_bytes(options)

    def game_id_tag(self) -> bytes:
        return TAG_GAME

    def termination(self, value: str) -> enum.Enum:
        return Termination(value)

    def in_play(self) -> bool:
        return self.game is not None

    def summary(self) -> list[tuple[str, str]]:
        return [] if self.game is None else [("moves", str(self.game.ply))]

    def clock_limits(self) -> tuple[float, float]:
        options = self.options
        if options is None:
            return 0.0, 0.0
        return float(options.clock_seconds), float(options.move_seconds)

    def clock_runs(self) -> str | None:
        game = self.game
        if game is None or self.is_over or self.pending is not None:
            return None  # (no clock runs in the setup, nor while an automatic answer is due)
        return self.role_of(game.turn)

    def audit_follows(self) -> bool:
        return len(self.reveals) == 2

    def audit_due_in_view(self, role: str, ack: int) -> bool:
        them = other(role)
        return len(self.reveals) == 2 and self.reveal_seq[them] <= ack

    def game_owes(self, role: str) -> str | None:
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

    def secrets_problem(self, role: str, key: bytes, secrets: dict[str, bytes]) -> str:
        problem = super().secrets_problem(role, key, secrets)
        reveal = self.reveals.get(role)
        if problem or reveal is None or "ranks" not in secrets or self.game_id is None:
            return problem
        if tuple(secrets["squares"]) != reveal.squares:
            return "the saved setup squares differ from the revealed ones"
        for pid in range(21):
            salt = secrets["salts"][pid * 32:(pid + 1) * 32]
            rank = secrets["ranks"][pid]
            if rank > 14 or not equal(piece_commitment(self.game_id, key, pid, rank, salt),
                                      reveal.commits[pid]):
                return f"the saved secret of piece {pid} does not open its commitment"
        if not equal(seed_commitment(self.game_id, key, secrets["seed"]), reveal.seed_commit):
            return "the saved seed does not open its commitment"
        return ""

    # -- helpers --------------------------------------------------------------------------

    @property
    def white(self) -> str | None:
        """The role that plays White (the coin's first mover)."""
        return self.first

    def side_of(self, role: str) -> Side:
        assert self.first is not None
        return Side.WHITE if role == self.first else Side.BLACK

    def role_of(self, side: Side) -> str:
        assert self.first is not None
        return self.first if side is Side.WHITE else other(self.first)

    def _end(self, role: str, outcome: Outcome) -> list[Event]:
        """An ending by the rules, on the board (the board itself is over)."""
        winner = None if outcome.winner is None else self.role_of(outcome.winner)
        return self.finish(role, outcome.termination, winner, EndKind.RULES)

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
        events = self.offer_or_decline(role, body)
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
            events += self._end(role, game.claim_flag_run(side, claim_piece))
        elif game.outcome is not None:
            events += self._end(role, game.outcome)
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
            events += self._end(role, game.outcome)
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
        events = self.finish(role, None, role, EndKind.PROOF)
        table_seq = self.locate(other(role), pending.reply_index)[1]
        self.proof_verdict = Verdict(
            None, role, clean=False, audit_complete=False, cheater=other(role),
            rule="blind-bad-token", detail=f"the table of challenge {pending.n} (the "
            f"{other(role)}'s message {table_seq}) {what}; the attacker's proof is its "
            f"message {self.next_seq(role)}", index=pending.reply_index, seq=table_seq,
            first=self.first, colours=self.colours())
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
            events += self._end(role, game.outcome)
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
        return self._end(role, game.claim_flag_run(side, piece))

    def require_turn(self, role: str, fail: Fail, what: str) -> None:
        self._require_turn(role, fail, what)

    def agree_draw(self, role: str) -> list[Event]:
        assert self.game is not None
        return self._end(role, self.game.agree_draw())

    # -- the audit ------------------------------------------------------------------------

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
        self.audited(role, ack)
        return [AuditReceived(role)]


    def audit_problem(self, only: str | None = None) -> Problem | None:
        if only is not None:
            return self._replay_blind(only=only)
        return self._replay()

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




GotgFlow.MESSAGES = {
    **GotgFlow.MESSAGES,
    "setup_commit": GotgFlow._on_setup_commit, "setup_reveal": GotgFlow._on_setup_reveal,
    "move": GotgFlow._on_move, "reply": GotgFlow._on_reply,
    "blind_reply": GotgFlow._on_blind_reply, "blind_outcome": GotgFlow._on_blind_outcome,
    "blind_proof": GotgFlow._on_blind_proof, "claim_flag": GotgFlow._on_claim_flag,
    "audit": GotgFlow._on_audit,
}
