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
