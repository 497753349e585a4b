"""The two optional anti-stalling rules of seed 003 (003_ef7fde501debbc91.txt), each off by
default (RuleOptions.two_squares, RuleOptions.chasing).

Two-squares: "A piece cannot move back and forth between the same two squares more than
three consecutive times (turns). This is regardless of the piece being just moved or also
attacking an opponent piece in those squares."

Chasing: "Chasing is defined as moving a piece adjacent to an opponent piece
("threatening"), and he/she moving it away in the immediate following turn ("evading").
If a chasing move would lead to a position on the board which has already taken place
("board repetition") this potential move is considered illegal ... As an exception, moving
a piece back to the square where it was in the immediate preceding turn is always allowed,
as long as the two-squares rule is not violated." Example: "A piece continuously
threatening another (diagonally positioned) by moving within a 2 by 2 area."
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.rules import Game, Move, Rank, RuleOptions, Side

OFF = RuleOptions()
TWO = RuleOptions(two_squares=True)
CHASE = RuleOptions(chasing=True)
BOTH = RuleOptions(two_squares=True, chasing=True)


def test_both_rules_are_off_by_default() -> None:
    assert (OFF.two_squares, OFF.chasing) == (False, False)


def board(g: Game) -> list:
    return [g.piece_at(s) for s in range(72)]


# -- two squares ---------------------------------------------------------------------------


def _shuttle(position, options: RuleOptions) -> Game:
    """White's Sergeant e4 and Black's piece walking down the i-file (never a pair twice)."""
    return position(
        {"e4": Rank.SERGEANT, "a1": Rank.FLAG},
        {"i7": Rank.PRIVATE, "a8": Rank.FLAG},
        options=options,
    )


SHUTTLE = ["e4-e5", "i7-i6", "e5-e4", "i6-i5", "e4-e5", "i5-i4"]


def test_fourth_move_between_the_same_two_squares(position, play) -> None:
    g = _shuttle(position, TWO)
    play(g, *SHUTTLE)
    assert g.turn is Side.WHITE
    fourth = Move.parse("e5-e4")
    problem = g.move_problem(fourth)
    assert problem is not None and "two-squares rule" in problem and "e5" in problem
    assert fourth not in g.legal_moves
    # Any other move is fine, the same piece to a third square too.
    for other in ("e5-d5", "e5-f5", "e5-e6", "a1-a2"):
        assert g.move_problem(Move.parse(other)) is None


def test_fourth_move_is_legal_without_the_rule(position, play) -> None:
    g = _shuttle(position, OFF)
    play(g, *SHUTTLE)
    assert Move.parse("e5-e4") in g.legal_moves
    play(g, "e5-e4")


def test_the_count_is_of_consecutive_own_moves(position, play) -> None:
    g = _shuttle(position, TWO)
    play(g, "e4-e5", "i7-i6", "e5-e4", "i6-i5", "a1-a2", "i5-i4")
    # The flag's move broke the run: e4-e5 and e5-e4 are the first and second again ...
    play(g, "e4-e5", "i4-i3", "e5-e4", "i3-i2")
    assert g.turn is Side.WHITE
    assert g.move_problem(Move.parse("e4-e5")) is None  # ... this is the third ...
    play(g, "e4-e5", "i2-h2")
    assert g.turn is Side.WHITE
    assert g.move_problem(Move.parse("e5-e4")) is not None  # ... and this the fourth


def test_challenges_count_as_moves_between_the_two_squares(position, play) -> None:
    # First move of the three is a challenge the Sergeant wins.
    g = position(
        {"e4": Rank.SERGEANT, "a1": Rank.FLAG},
        {"e5": Rank.PRIVATE, "i7": Rank.PRIVATE, "d4": Rank.SPY, "a8": Rank.FLAG},
        options=TWO,
    )
    play(g, "e4-e5", "i7-i6", "e5-e4", "i6-i5", "e4-e5")
    # The fourth is forbidden as a challenge too: a Spy steps onto e4 and may not be hit.
    play(g, "d4-e4")
    assert g.turn is Side.WHITE
    attack = Move.parse("e5-e4")
    assert g.is_challenge(attack)
    problem = g.move_problem(attack)
    assert problem is not None and "two-squares rule" in problem


def test_two_squares_for_black(position, play) -> None:
    g = position(
        {"a2": Rank.PRIVATE, "a1": Rank.FLAG},
        {"e5": Rank.SERGEANT, "i8": Rank.FLAG},
        turn=Side.BLACK,
        options=TWO,
    )
    play(g, "e5-e4", "a2-a3", "e4-e5", "a3-a4", "e5-e4", "a4-a5")
    assert g.turn is Side.BLACK
    assert g.move_problem(Move.parse("e4-e5")) is not None
    assert g.move_problem(Move.parse("e4-d4")) is None


# -- chasing -------------------------------------------------------------------------------


def _box(position, options: RuleOptions) -> Game:
    """White's Sergeant d4 chases Black's Private e5 (diagonal) round the d4-e5 box."""
    return position(
        {"d4": Rank.SERGEANT, "a1": Rank.FLAG},
        {"e5": Rank.PRIVATE, "i8": Rank.FLAG},
        options=options,
    )


# Threaten, evade, round the 2 x 2 box, until the chaser would be back where it began.
BOX = ["d4-d5", "e5-e4", "d5-e5", "e4-d4", "e5-e4", "d4-d5", "e4-d4", "d5-e5"]


def test_a_chasing_move_may_not_repeat_a_position(position, play) -> None:
    g = _box(position, CHASE)
    play(g, *BOX[:1])
    after_first = board(g)
    play(g, *BOX[1:])  # every chasing move so far made a new position: all legal
    assert g.turn is Side.WHITE
    again = Move.parse("d4-d5")  # would recreate the position after White's first move
    problem = g.move_problem(again)
    assert problem == "chasing rule: this chasing move would repeat an earlier position"
    assert again not in g.legal_moves
    # Moves that do not chase stay legal: away from the Private, or straight back.
    assert g.move_problem(Move.parse("d4-c4")) is None
    assert g.move_problem(Move.parse("d4-d3")) is None
    assert g.move_problem(Move.parse("d4-e4")) is None  # straight back (and a threat)
    g2 = _box(position, OFF)
    play(g2, *BOX, "d4-d5")  # legal without the rule, and it is the same position
    assert board(g2) == after_first


def test_stepping_straight_back_is_allowed_even_into_a_repetition(position, play) -> None:
    g = position(
        {"c4": Rank.SERGEANT, "a1": Rank.FLAG},
        {"e4": Rank.PRIVATE, "i8": Rank.FLAG},
        options=CHASE,
    )
    play(g, "c4-d4")  # threatens e4
    repeated = board(g)
    play(g, "e4-e5", "d4-d5", "e5-e4")  # evade; chase (threatens e5); evade
    assert g.turn is Side.WHITE
    back = Move.parse("d5-d4")  # a chasing move, into the position above, but straight back
    assert g.move_problem(back) is None
    play(g, "d5-d4")
    assert board(g) == repeated


def test_straight_back_does_not_excuse_a_fourth_move(position, play) -> None:
    # "... as long as the two-squares rule is not violated."
    g = position(
        {"d5": Rank.SERGEANT, "a1": Rank.FLAG},
        {"e4": Rank.PRIVATE, "i8": Rank.FLAG, "i5": Rank.PRIVATE},
        options=BOTH,
    )
    play(g, "d5-d4", "i5-i4", "d4-d5", "i4-i3", "d5-d4", "e4-e5")
    assert g.turn is Side.WHITE
    back = Move.parse("d4-d5")  # straight back, threatening e5: but the fourth d4/d5 move
    problem = g.move_problem(back)
    assert problem is not None and "two-squares rule" in problem


def test_following_a_piece_that_was_not_threatened_is_not_chasing(position, play) -> None:
    """The Private comes next to the Sergeant by itself and leaves again; the Sergeant did
    not threaten it on White's last turn, so following it is no chase, even into an
    earlier position."""
    g = position(
        {"d4": Rank.SERGEANT, "a3": Rank.PRIVATE, "a1": Rank.FLAG},
        {"e5": Rank.PRIVATE, "i6": Rank.PRIVATE, "i8": Rank.FLAG},
        options=CHASE,
    )
    play(g, "d4-d5")
    earlier = board(g)
    play(g, "i6-i5", "d5-d4", "i5-i6", "a3-a4", "e5-e4", "a4-a3", "e4-e5")
    assert g.turn is Side.WHITE
    follow = Move.parse("d4-d5")
    assert g.move_problem(follow) is None
    play(g, "d4-d5")
    assert board(g) == earlier


def test_chasing_rule_applies_to_black_too(position, play) -> None:
    g = position(
        {"e5": Rank.PRIVATE, "a1": Rank.FLAG},
        {"d4": Rank.SERGEANT, "i8": Rank.FLAG},
        turn=Side.BLACK,
        options=CHASE,
    )
    play(g, *BOX)
    assert g.turn is Side.BLACK
    assert g.move_problem(Move.parse("d4-d5")) == (
        "chasing rule: this chasing move would repeat an earlier position"
    )


# -- the engine's quick checks against the rule text (issue 23, finding 14) ----------------
#
# The engine looks only at the last moves and looks positions up by hash. The reference
# below is SPEC 1.9 word for word, reading the whole history every time; both must forbid
# exactly the same moves, after pushes and after take-backs alike.

Board = tuple  # (what stands on each of the 72 squares, the side to move)


def _board_of(g: Game) -> Board:
    return (tuple(g.piece_at(s) for s in range(72)), g.turn)


def _reference_two_squares(history, side: Side, piece, move: Move) -> bool:
    """SPEC 1.9: R = the last three moves made by the side to move; the move is forbidden
    when R has three moves, each made by P, each between the same two squares {s, t}."""
    r = [rec for rec in history if rec.side is side][-3:]
    pair = {move.from_square, move.to_square}
    return len(r) == 3 and all(
        rec.piece == piece and {rec.move.from_square, rec.move.to_square} == pair for rec in r)


def _reference_chase(history, positions: list[Board], now: Board, side: Side, piece,
                     move: Move) -> bool:
    """SPEC 1.9, conditions 1 to 7, each read literally."""
    from p2pgotg.rules import neighbours

    board, _turn = now
    s, t = move.from_square, move.to_square
    if board[t] is not None:  # 1. t is empty
        return False
    if not history:
        return False
    last = history[-1]  # 2. the opponent's quiet move of E from e1 to e2
    if last.side is side or last.defender is not None:
        return False
    e1, e2 = last.move.from_square, last.move.to_square
    if not (s in neighbours(e1) and s not in neighbours(e2)):  # 3.
        return False
    own = [rec for rec in history if rec.side is side]
    if not own or own[-1].piece != piece or own[-1].move.to_square != s:  # 4.
        return False
    if t not in neighbours(e2):  # 5.
        return False
    if t == own[-1].move.from_square:  # 6. straight back
        return False
    after = list(board)  # 7. the position after the move occurred before
    after[s], after[t] = None, piece
    return (tuple(after), side.other) in positions


def _candidates(g: Game):
    """Every one-square step of the side to move that is not onto its own piece."""
    from p2pgotg.rules import neighbours

    for piece in g.pieces(g.turn):
        src = g.square_of(piece)
        for dst in neighbours(src):
            target = g.piece_at(dst)
            if target is None or target.side is not g.turn:
                yield piece, Move(src, dst)


def _skirmish(position, seed: int) -> Game:
    """A chaser and a runner face to face in the middle of the board (a third piece each
    in some games), flags in the corners: close enough that random play threatens, evades
    and comes back to earlier positions all the time."""
    rng = random.Random(seed)
    white = {"a1": Rank.FLAG, rng.choice(["d4", "e4", "c3"]): Rank.SERGEANT}
    black = {"i8": Rank.FLAG, rng.choice(["e5", "d6", "f5"]): Rank.PRIVATE}
    if rng.random() < 0.5:
        white["g2"] = Rank.CAPTAIN
        black["b7"] = Rank.SPY
    return position(white, black, turn=rng.choice(list(Side)), options=BOTH)


def _check_against_the_reference(position, seed: int, plies: int) -> tuple[int, int]:
    """Random play (mostly quiet moves, some take-backs) where before every move each
    candidate is judged by the engine and by the reference. Returns how many candidates
    the two-squares rule and the chasing rule forbade."""
    rng = random.Random(seed)
    g = _skirmish(position, seed)
    positions = [_board_of(g)]
    forbidden_two = forbidden_chase = 0
    for _ in range(plies):
        if g.is_over:
            break
        now, history = positions[-1], g.history
        assert _board_of(g) == now
        for piece, move in _candidates(g):
            two = _reference_two_squares(history, g.turn, piece, move)
            chase = _reference_chase(history, positions, now, g.turn, piece, move)
            problem = g.move_problem(move) or ""
            assert ("two-squares rule" in problem) == two, (seed, move.text(), problem)
            if not two:
                assert ("chasing rule" in problem) == chase, (seed, move.text(), problem)
            forbidden_two += two
            forbidden_chase += chase and not two
        if len(g.history) > 1 and rng.random() < 0.05:
            g.pop()
            positions.pop()
            continue
        g.push(_chase_or_evade(g, rng))
        positions.append(_board_of(g))
    return forbidden_two, forbidden_chase


def _chase_or_evade(g: Game, rng: random.Random) -> Move:
    """A legal move that mostly threatens, evades or chases again (so that positions
    repeat, as in the seed's 2 x 2 box), sometimes anything."""
    from p2pgotg.rules import neighbours

    legal = g.legal_moves
    quiet = [m for m in legal if not g.is_challenge(m)]
    if not quiet or rng.random() < 0.03:
        return rng.choice(legal)
    history = g.history
    last = history[-1] if history else None
    enemy_squares = {g.square_of(p) for p in g.pieces(g.turn.other)}

    def next_to_enemy(sq: int) -> bool:
        return any(n in enemy_squares for n in neighbours(sq))

    def homely(moves: list[Move]) -> Move:  # (mostly back towards the middle: loops)
        if rng.random() < 0.3:
            return rng.choice(moves)
        return min(moves, key=lambda m: (abs(m.to_square % 9 - 4) + abs(m.to_square // 9 - 4),
                                         rng.random()))

    if last is not None and last.defender is None and last.side is not g.turn:
        evader = g.square_of(last.piece)
        chases = [m for m in quiet if m.to_square in neighbours(evader)]
        if chases and rng.random() < 0.8:
            return homely(chases)
        threatened = [n for n in neighbours(evader) if (p := g.piece_at(n)) is not None
                      and p.side is g.turn]
        evasions = [m for m in quiet if m.from_square in threatened
                    and not next_to_enemy(m.to_square)]
        if evasions and rng.random() < 0.8:
            return homely(evasions)
    threats = [m for m in quiet if next_to_enemy(m.to_square)]
    return rng.choice(threats if threats and rng.random() < 0.6 else quiet)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_quick_checks_forbid_what_the_rule_text_forbids(position, seed: int) -> None:
    _check_against_the_reference(position, seed, plies=120)


def test_the_comparison_meets_both_rules_many_times(position) -> None:
    """The same comparison over fixed seeds, long games: it is not a comparison of moves
    neither rule ever forbids."""
    totals = [_check_against_the_reference(position, seed, plies=300) for seed in range(12)]
    assert sum(two for two, _ in totals) >= 20
    assert sum(chase for _, chase in totals) >= 20
