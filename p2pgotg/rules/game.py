"""The game: pieces on the board, whose turn, legal moves, challenges, claims and endings.

The same engine serves a player's partial view (opponent ranks unknown; challenge results
are passed in) and the full view of the audit (all ranks known; results are computed and any
result passed in is checked). Legality never depends on hidden ranks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from p2pgotg.rules.board import (
    SQUARES,
    Side,
    back_row,
    neighbours,
    parse_square,
    row_of,
    square_name,
)
from p2pgotg.rules.challenge import ChallengeResult, resolve_challenge
from p2pgotg.rules.errors import IllegalMoveError, RulesError
from p2pgotg.rules.moves import Move
from p2pgotg.rules.options import FlagRule, RuleOptions
from p2pgotg.rules.outcome import Outcome, Termination
from p2pgotg.rules.ranks import COMPOSITION, PIECES_PER_SIDE, Rank
from p2pgotg.rules.setup import Setup, setup_problems


@dataclass(frozen=True, slots=True, order=True)
class Piece:
    """A piece's public identity: its side and its piece id (0..20, see `Setup`)."""

    side: Side
    pid: int

    def __deepcopy__(self, memo: dict[int, object]) -> Piece:
        return self  # (immutable: a copy of a game shares its values)


def _pid_of(piece: Piece) -> int:
    return piece.pid


#: For each square, (destination, the move there) of every one-square step: the engine
#: lists legal moves after every ply, and a shared Move is built and checked only once.
_MOVES_FROM: tuple[tuple[tuple[int, Move], ...], ...] = tuple(
    tuple((dst, Move(src, dst)) for dst in neighbours(src)) for src in range(SQUARES)
)


@dataclass(frozen=True, slots=True)
class PlyRecord:
    """One move as it was played, with the challenge result when it was a challenge."""

    side: Side
    move: Move
    piece: Piece
    defender: Piece | None = None
    result: ChallengeResult | None = None
    lost_flag: Side | None = None  # whose flag left the board in this challenge

    def __deepcopy__(self, memo: dict[int, object]) -> PlyRecord:
        return self  # (immutable: a copy of a game shares its values)


#: A position for the chasing rule (SPEC 1.9): one byte per square, 0 for an empty square
#: and `_code(piece)` for a piece, then the side to move. Bytes hash in C, so a position is
#: looked up among all earlier ones at once, not compared with each in turn.
PositionKey = bytes
#: What `pop` restores (see `Game._snapshot`).
_Snapshot = tuple[
    list[Piece | None], dict[Piece, int], dict[Piece, int], Side, int, int, int, int,
    Outcome | None, bytes,
]


def _code(piece: Piece) -> int:
    """A piece's byte in a `PositionKey`: 1 to 21 White's piece ids, 22 to 42 Black's."""
    return 1 + piece.pid + (21 if piece.side is Side.BLACK else 0)


@dataclass
class _State:
    board: list[Piece | None]
    where: dict[Piece, int]
    arrived: dict[Piece, int]  # ply at which the piece reached its current square
    turn: Side = Side.WHITE
    ply: int = 0
    eliminated: list[Piece] = field(default_factory=list)
    records: list[PlyRecord] = field(default_factory=list)
    outcome: Outcome | None = None
    codes: bytearray = field(default_factory=lambda: bytearray(SQUARES))  # `_code` by square
    # The chasing rule's memory (kept only when it is on): every position so far, in order
    # (for `pop`), and how often each occurred (for the lookup).
    positions: list[PositionKey] = field(default_factory=list)
    seen: dict[PositionKey, int] = field(default_factory=dict)


class Game:
    """A game from one point of view (or the full view when every rank is known).

    >>> import random
    >>> from p2pgotg.rules import Setup, Side
    >>> rng = random.Random(1)
    >>> g = Game.from_setups(Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng))
    >>> g.turn, len(g.legal_moves) > 0
    (<Side.WHITE: 0>, True)
    """

    def __init__(
        self,
        white_squares: Sequence[int],
        black_squares: Sequence[int],
        options: RuleOptions | None = None,
    ) -> None:
        self.options = options or RuleOptions()
        self._ranks: dict[Piece, Rank] = {}
        board: list[Piece | None] = [None] * SQUARES
        where: dict[Piece, int] = {}
        for side, squares in ((Side.WHITE, white_squares), (Side.BLACK, black_squares)):
            squares = list(squares)
            if squares != sorted(set(squares)) or len(squares) != PIECES_PER_SIDE:
                raise RulesError(f"{side.display_name} needs 21 distinct squares in order")
            problems = setup_problems(side, {sq: Rank.PRIVATE for sq in squares})
            if any("outside" in p for p in problems):
                raise RulesError(problems[0])
            for pid, sq in enumerate(squares):
                piece = Piece(side, pid)
                board[sq] = piece
                where[piece] = sq
        self._s = _State(board=board, where=where, arrived={p: 0 for p in where})
        self._start_positions()
        self._undo: list[_Snapshot] = []
        self._undo_limit: int | None = None
        self._check_stuck()

    def __deepcopy__(self, memo: dict[int, object]) -> Game:
        """An independent copy that shares the immutable values (pieces, moves, records,
        positions) and copies every container a later move or `pop` changes."""
        s = self._s
        twin = Game.__new__(Game)
        memo[id(self)] = twin
        twin.options = self.options
        twin._ranks = dict(self._ranks)
        twin._s = _State(list(s.board), dict(s.where), dict(s.arrived), s.turn, s.ply,
                         list(s.eliminated), list(s.records), s.outcome, bytearray(s.codes),
                         list(s.positions), dict(s.seen))
        twin._undo_limit = self._undo_limit
        twin._undo = [(list(board), dict(where), dict(arrived), turn, ply, n_elim, n_records,
                       n_positions, outcome, codes)
                      for board, where, arrived, turn, ply, n_elim, n_records, n_positions,
                      outcome, codes in self._undo]
        return twin

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_setups(cls, white: Setup, black: Setup, options: RuleOptions | None = None) -> Game:
        """The full view: every rank known."""
        game = cls(white.squares, black.squares, options)
        for setup in (white, black):
            for pid, rank in enumerate(setup.ranks):
                game.reveal(Piece(setup.side, pid), rank)
        return game

    @classmethod
    def for_player(
        cls, own: Setup, opponent_squares: Sequence[int], options: RuleOptions | None = None
    ) -> Game:
        """One player's view: its own ranks known, the opponent's not."""
        if own.side is Side.WHITE:
            game = cls(own.squares, opponent_squares, options)
        else:
            game = cls(opponent_squares, own.squares, options)
        for pid, rank in enumerate(own.ranks):
            game.reveal(Piece(own.side, pid), rank)
        return game

    @classmethod
    def from_position(
        cls,
        placement: Mapping[int | str, tuple[Side, Rank | None]],
        turn: Side = Side.WHITE,
        options: RuleOptions | None = None,
    ) -> Game:
        """A game that starts from an arbitrary position: for tests, puzzles and analysis.
        A real game starts with `from_setups` or `for_player`.

        `placement` maps squares (an index or a name such as ``"e4"``) to ``(side, rank)``;
        a rank of None is unknown to this view. A side may have 0 to 21 pieces anywhere on
        the board, but no more of a known rank than the 21-piece set has. Piece ids follow
        the setup rule: piece i of a side is its piece on the i-th lowest square. The
        position is ply 0 with no history and `turn` to move; every piece counts as having
        arrived on its square at ply 0.

        >>> g = Game.from_position({"e8": (Side.WHITE, Rank.FLAG), "a1": (Side.BLACK, None)})
        >>> g.flag_claim_problem(Side.WHITE, Piece(Side.WHITE, 0)) is None
        True
        """
        given: dict[int, tuple[Side, Rank | None]] = {}
        for key, (side, rank) in placement.items():
            sq = parse_square(key) if isinstance(key, str) else key
            if not (isinstance(sq, int) and 0 <= sq < SQUARES):
                raise RulesError(f"square {key!r} is off the board (0..71)")
            if sq in given:
                raise RulesError(f"{square_name(sq)} is given twice")
            given[sq] = (Side(side), None if rank is None else Rank(rank))
        for side in Side:
            ranks = [r for s, r in given.values() if s is side]
            if len(ranks) > PIECES_PER_SIDE:
                raise RulesError(f"{side.display_name} has {len(ranks)} pieces; the set is 21")
            for rank in Rank:
                if ranks.count(rank) > COMPOSITION[rank]:
                    raise RulesError(
                        f"{side.display_name} has {ranks.count(rank)} x {rank.display_name}; "
                        f"the set has {COMPOSITION[rank]}"
                    )
        game = cls.__new__(cls)
        game.options = options or RuleOptions()
        game._ranks = {}
        board: list[Piece | None] = [None] * SQUARES
        where: dict[Piece, int] = {}
        count = {Side.WHITE: 0, Side.BLACK: 0}
        for sq in sorted(given):
            side, rank = given[sq]
            piece = Piece(side, count[side])
            count[side] += 1
            board[sq] = piece
            where[piece] = sq
            if rank is not None:
                game._ranks[piece] = rank
        game._s = _State(
            board=board, where=where, arrived={p: 0 for p in where}, turn=Side(turn)
        )
        game._start_positions()
        game._undo = []
        game._undo_limit = None
        game._check_stuck()
        return game

    # -- reading the position -----------------------------------------------------------

    @property
    def turn(self) -> Side:
        return self._s.turn

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return self._s.ply

    @property
    def outcome(self) -> Outcome | None:
        return self._s.outcome

    @property
    def is_over(self) -> bool:
        return self._s.outcome is not None

    @property
    def history(self) -> tuple[PlyRecord, ...]:
        return tuple(self._s.records)

    @property
    def eliminated(self) -> tuple[Piece, ...]:
        return tuple(self._s.eliminated)

    def piece_at(self, sq: int) -> Piece | None:
        return self._s.board[sq]

    def square_of(self, piece: Piece) -> int | None:
        """Where the piece stands, or None once it has left the board."""
        return self._s.where.get(piece)

    def pieces(self, side: Side) -> list[Piece]:
        """The side's pieces still on the board, by piece id."""
        return sorted((p for p in self._s.where if p.side is side), key=_pid_of)

    def rank_of(self, piece: Piece) -> Rank | None:
        """The rank when this view knows it."""
        return self._ranks.get(piece)

    def arrived_at(self, piece: Piece) -> int:
        """The ply at which the piece reached its current square (0 = from the setup)."""
        return self._s.arrived[piece]

    def reveal(self, piece: Piece, rank: Rank) -> None:
        """Record a rank learned (own setup, an opened commitment)."""
        rank = Rank(rank)
        known = self._ranks.get(piece)
        if known is not None and known is not rank:
            raise RulesError(
                f"{piece.side.display_name} piece {piece.pid} is already known to be "
                f"{known.display_name}, not {rank.display_name}"
            )
        self._ranks[piece] = rank

    # -- moves --------------------------------------------------------------------------

    def move_problem(self, move: Move, side: Side | None = None) -> str | None:
        """Why `move` is illegal now (None when it is legal)."""
        s = self._s
        side = s.turn if side is None else side
        if s.outcome is not None:
            return "the game is over"
        if side is not s.turn:
            return f"it is {s.turn.display_name}'s turn"
        piece = s.board[move.from_square]
        src, dst = square_name(move.from_square), square_name(move.to_square)
        if piece is None:
            return f"there is no piece on {src}"
        if piece.side is not side:
            return f"the piece on {src} is not yours"
        if move.to_square not in neighbours(move.from_square):
            return f"{src} to {dst} is not one square forward, back or sideways"
        target = s.board[move.to_square]
        if target is not None and target.side is side:
            return f"{dst} holds one of your own pieces"
        if self.options.two_squares and self._breaks_two_squares(piece, move):
            return (
                f"two-squares rule: this piece has moved between {src} and {dst} three "
                "times in a row; move another piece"
            )
        if self.options.chasing and target is None and self._repeats_a_chase(piece, move):
            return "chasing rule: this chasing move would repeat an earlier position"
        return None

    def is_challenge(self, move: Move) -> bool:
        target = self._s.board[move.to_square]
        return target is not None and target.side is not self._s.turn

    @property
    def legal_moves(self) -> list[Move]:
        if self._s.outcome is not None:
            return []
        return list(self._legal_moves_for(self._s.turn))

    def _legal_moves_for(self, side: Side, by_piece: bool = True) -> Iterator[Move]:
        """The side's legal moves, piece by piece in piece-id order (or, without
        `by_piece`, in whatever order is quickest: enough to tell whether there is one)."""
        s = self._s
        saved_turn = s.turn
        s.turn = side
        board = s.board
        pieces = self.pieces(side) if by_piece else [p for p in s.where if p.side is side]
        try:
            for piece in pieces:
                for dst, move in _MOVES_FROM[s.where[piece]]:
                    target = board[dst]
                    if target is not None and target.side is side:
                        continue
                    if self.options.two_squares and self._breaks_two_squares(piece, move):
                        continue
                    if (
                        self.options.chasing
                        and target is None
                        and self._repeats_a_chase(piece, move)
                    ):
                        continue
                    yield move
        finally:
            s.turn = saved_turn

    def _has_legal_move(self, side: Side) -> bool:
        return next(self._legal_moves_for(side, by_piece=False), None) is not None

    def push(
        self,
        move: Move,
        result: ChallengeResult | None = None,
        lost_flag: Side | None = None,
    ) -> PlyRecord:
        """Play `move`. For a challenge, `result` (and `lost_flag` when a flag left the
        board) must be given unless both ranks are known; when they are known, anything
        given is checked against the rules."""
        problem = self.move_problem(move)
        if problem:
            raise IllegalMoveError(f"{move.text()}: {problem}")
        s = self._s
        piece = s.board[move.from_square]
        assert piece is not None
        target = s.board[move.to_square]
        if target is None:
            if result is not None or lost_flag is not None:
                raise IllegalMoveError(f"{move.text()} is not a challenge; it has no result")
            record = PlyRecord(s.turn, move, piece)
        else:
            result, lost_flag = self._settle(piece, target, result, lost_flag)
            record = PlyRecord(s.turn, move, piece, target, result, lost_flag)
        self._remember()
        self._apply(record)
        return record

    def pop(self) -> PlyRecord | None:
        """Take back the last move or ending; returns the move taken back (None for an
        ending)."""
        if not self._undo:
            raise IllegalMoveError("no move to take back")
        s = self._s
        board, where, arrived, turn, ply, n_elim, n_records, n_positions, outcome, codes = (
            self._undo.pop()
        )
        taken = s.records[-1] if len(s.records) > n_records else None
        s.board, s.where, s.arrived, s.codes = board, where, arrived, bytearray(codes)
        s.turn, s.ply, s.outcome = turn, ply, outcome
        for key in s.positions[n_positions:]:
            s.seen[key] -= 1
            if not s.seen[key]:
                del s.seen[key]
        del s.eliminated[n_elim:], s.records[n_records:], s.positions[n_positions:]
        return taken

    def limit_undo(self, depth: int) -> None:
        """Keep only the last `depth` moves that `pop` can take back.

        A referee takes back at most the last move or ending (to judge a crossing), so it
        need not keep a snapshot of every position of a long game: `verify` of the longest
        game SPEC 2.10 allows would otherwise hold one per move."""
        if depth < 1:
            raise ValueError("the undo depth must be at least 1")
        self._undo_limit = depth
        del self._undo[:-depth]

    def _remember(self) -> None:
        self._undo.append(self._snapshot())
        limit = self._undo_limit
        if limit is not None and len(self._undo) > limit:
            del self._undo[0]  # cheap: the list holds `limit` + 1 snapshots at most

    def _snapshot(self) -> _Snapshot:
        """What `pop` needs: copies of the small mutable parts, lengths of the append-only
        lists (cheap, so long games and bot searches stay linear)."""
        s = self._s
        return (
            list(s.board), dict(s.where), dict(s.arrived), s.turn, s.ply,
            len(s.eliminated), len(s.records), len(s.positions), s.outcome, bytes(s.codes),
        )

    def _settle(
        self,
        attacker: Piece,
        defender: Piece,
        result: ChallengeResult | None,
        lost_flag: Side | None,
    ) -> tuple[ChallengeResult, Side | None]:
        a_rank, d_rank = self._ranks.get(attacker), self._ranks.get(defender)
        if a_rank is not None and d_rank is not None:
            true_result = resolve_challenge(a_rank, d_rank)
            true_lost = (
                defender.side
                if d_rank is Rank.FLAG
                else attacker.side
                if a_rank is Rank.FLAG and true_result is ChallengeResult.DEFENDER_WINS
                else None
            )
            if result is not None and (result, lost_flag) != (true_result, true_lost):
                raise IllegalMoveError(
                    f"{a_rank.display_name} challenging {d_rank.display_name} gives "
                    f"{true_result.value}, not {result.value}"
                    + (f" with the {lost_flag.display_name} flag lost" if lost_flag else "")
                )
            return true_result, true_lost
        if result is None:
            raise IllegalMoveError("a challenge with a hidden rank needs its result")
        if lost_flag is defender.side and result is not ChallengeResult.ATTACKER_WINS:
            raise IllegalMoveError("a captured flag means the attacker won")
        if lost_flag is attacker.side and result is not ChallengeResult.DEFENDER_WINS:
            raise IllegalMoveError("an attacking flag is lost only when the defender wins")
        for piece, rank, lost_when in (
            (defender, d_rank, defender.side),
            (attacker, a_rank, attacker.side),
        ):
            if rank is Rank.FLAG and piece is defender and lost_flag is not lost_when:
                raise IllegalMoveError("the defender is the flag, so it is captured")
            if rank is not None and rank is not Rank.FLAG and lost_flag is lost_when:
                raise IllegalMoveError(f"{rank.display_name} is not a flag")
        if a_rank is Rank.FLAG and result is ChallengeResult.BOTH_ELIMINATED:
            raise IllegalMoveError("a flag never splits")
        if a_rank is Rank.FLAG and result is ChallengeResult.DEFENDER_WINS \
                and lost_flag is not attacker.side:
            raise IllegalMoveError("the attacking flag lost, so its side lost its flag")
        if a_rank is Rank.FLAG and result is ChallengeResult.ATTACKER_WINS \
                and lost_flag is not defender.side:
            raise IllegalMoveError("a flag wins only against the flag, so that flag is lost")
        return result, lost_flag

    def _apply(self, record: PlyRecord) -> None:
        s = self._s
        move, piece = record.move, record.piece
        s.board[move.from_square] = None
        s.codes[move.from_square] = 0
        del s.where[piece]
        if record.defender is None or record.result is ChallengeResult.ATTACKER_WINS:
            if record.defender is not None:
                self._remove(record.defender)
            s.board[move.to_square] = piece
            s.codes[move.to_square] = _code(piece)
            s.where[piece] = move.to_square
            s.arrived[piece] = s.ply + 1
        elif record.result is ChallengeResult.DEFENDER_WINS:
            s.eliminated.append(piece)
        else:
            s.eliminated.append(piece)
            self._remove(record.defender)
        s.records.append(record)
        s.ply += 1
        s.turn = s.turn.other
        if self.options.chasing:
            self._occurred(self._key(s.codes, s.turn))
        if record.lost_flag is not None:
            s.outcome = Outcome(Termination.FLAG_CAPTURED, record.lost_flag.other)
        else:
            self._check_stuck()

    def _remove(self, piece: Piece) -> None:
        s = self._s
        sq = s.where.pop(piece)
        s.board[sq] = None
        s.codes[sq] = 0
        s.eliminated.append(piece)

    def _check_stuck(self) -> None:
        s = self._s
        if s.outcome is None and not self._has_legal_move(s.turn):
            if self._has_legal_move(s.turn.other):
                s.outcome = Outcome(Termination.NO_LEGAL_MOVE, s.turn.other)
            else:
                s.outcome = Outcome(Termination.NEITHER_CAN_MOVE, None)

    # -- anti-stalling (seed 003) -------------------------------------------------------

    def _own_records(self, side: Side, count: int) -> list[PlyRecord]:
        """The side's last `count` moves (fewer at the start). The sides move in turn, so
        they are among the last 2 x `count` moves of the game: a look at those, never at
        the whole history (each legal-move check would otherwise read every move so far)."""
        return [r for r in self._s.records[-2 * count:] if r.side is side][-count:]

    def _breaks_two_squares(self, piece: Piece, move: Move) -> bool:
        """Three moves in a row by this piece between the same two squares forbid a 4th."""
        last = self._own_records(piece.side, 3)
        if len(last) < 3:
            return False
        pair = {move.from_square, move.to_square}
        return all(
            r.piece == piece and {r.move.from_square, r.move.to_square} == pair for r in last
        )

    def _repeats_a_chase(self, piece: Piece, move: Move) -> bool:
        """A chasing move may not recreate an earlier position (seed 003).

        It is a chase when this piece threatened on its side's last turn (it moved next to
        an opponent piece), that piece evaded on the very next turn (moved away, not a
        challenge), and this move, not a challenge, puts this piece next to it again.
        Stepping straight back to the square it left on its last turn is always allowed."""
        s = self._s
        if not s.records:
            return False
        last = s.records[-1]
        if last.side is piece.side or last.defender is not None:
            return False
        evader = last.piece
        here = move.from_square
        if evader not in s.where:
            return False
        evaded_from, evaded_to = last.move.from_square, last.move.to_square
        if here not in neighbours(evaded_from) or here in neighbours(evaded_to):
            return False
        if move.to_square not in neighbours(evaded_to):
            return False
        own = self._own_records(piece.side, 1)
        if not own or own[-1].piece != piece or own[-1].move.to_square != here:
            return False  # it did not threaten by moving next to the evader on its last turn
        if own[-1].move.from_square == move.to_square:
            return False  # straight back to where it stood on the preceding turn
        after = bytearray(s.codes)
        after[move.from_square], after[move.to_square] = 0, _code(piece)
        return self._key(after, s.turn.other) in s.seen

    @staticmethod
    def _key(codes: bytearray, turn: Side) -> PositionKey:
        return bytes(codes) + bytes((turn,))

    def _start_positions(self) -> None:
        """The codes of the first position, and (chasing on) that it occurred."""
        s = self._s
        for piece, sq in s.where.items():
            s.codes[sq] = _code(piece)
        if self.options.chasing:
            self._occurred(self._key(s.codes, s.turn))

    def _occurred(self, key: PositionKey) -> None:
        s = self._s
        s.positions.append(key)
        s.seen[key] = s.seen.get(key, 0) + 1

    # -- claims and agreed endings ------------------------------------------------------

    def flag_claim_problem(
        self, side: Side, piece: Piece, *, rank: Rank | None = None
    ) -> str | None:
        """Why `side` may not claim a flag-run win with `piece` now (None when it may).
        `rank` is the rank the claim declares, for a view that does not know it yet."""
        s = self._s
        if s.outcome is not None:
            return "the game is over"
        if piece.side is not side:
            return "that piece is not the claimant's"
        sq = s.where.get(piece)
        if sq is None:
            return "that piece is no longer on the board"
        known = self._ranks.get(piece)
        if (known if known is not None else rank) is not Rank.FLAG:
            return "that piece is not known to be the flag"
        if row_of(sq) != back_row(side):
            return "the flag is not on the opposing back rank"
        arrived = s.arrived[piece]
        if s.ply > arrived and (s.turn is side or s.ply > arrived + 1):
            return None  # it has survived the opponent's turn
        rule = self.options.flag_rule
        if rule is FlagRule.IMMEDIATE:
            return None
        if rule is FlagRule.ALWAYS_SURVIVE:
            return "the flag must survive the opponent's next turn first"
        threats = [
            square_name(n)
            for n in neighbours(sq)
            if (p := s.board[n]) is not None and p.side is not side
        ]
        if threats:
            return (
                "an enemy piece stands next to the flag ("
                + ", ".join(threats)
                + "): it must survive the opponent's next turn first"
            )
        return None

    def claim_flag_run(self, side: Side, piece: Piece) -> Outcome:
        problem = self.flag_claim_problem(side, piece)
        if problem:
            raise IllegalMoveError(f"flag claim refused: {problem}")
        return self._end(Outcome(Termination.FLAG_REACHED_BACK_RANK, side))

    def resign(self, side: Side) -> Outcome:
        return self._end(Outcome(Termination.RESIGNATION, side.other))

    def agree_draw(self) -> Outcome:
        return self._end(Outcome(Termination.DRAW_AGREED, None))

    def end(self, outcome: Outcome) -> Outcome:
        """End for a reason outside the board (time forfeit, abandonment)."""
        return self._end(outcome)

    def _end(self, outcome: Outcome) -> Outcome:
        if self._s.outcome is not None:
            raise IllegalMoveError("the game is over")
        self._remember()
        self._s.outcome = outcome
        return outcome

    # -- display helpers ----------------------------------------------------------------

    def known_ranks(self) -> Mapping[Piece, Rank]:
        return dict(self._ranks)

    def ascii(self, viewer: Side | None = None) -> str:
        """A plain-text board, rank 8 at the top. `viewer` hides the other side's ranks
        unless revealed; unknown ranks are shown as `?`."""
        lines = []
        for row in range(7, -1, -1):
            cells = []
            for f in range(9):
                p = self._s.board[row * 9 + f]
                if p is None:
                    cells.append(" .  ")
                    continue
                rank = self._ranks.get(p)
                code = rank.code if rank is not None else "?"
                cells.append(("w" if p.side is Side.WHITE else "b") + f"{code:<3}")
            lines.append(f"{row + 1} " + " ".join(cells).rstrip())
        lines.append("  " + " ".join(f" {c}  " for c in "abcdefghi").rstrip())
        return "\n".join(lines)
