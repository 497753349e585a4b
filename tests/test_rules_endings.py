"""How a game ends: flag captured, flag at the opposing back rank under each FlagRule,
resignation, draw by agreement, a side with no legal move, neither side able to move.

Sources:
- seed 000 = 000_0cbbf7c1c412fd5e.txt "Objectives" (flag capture; the flag at the back rank:
  immediately when no adjacent opposing piece, else after the adjacent piece fails to
  challenge it on the opponent's next turn; draws by agreement) and "Determining result
  of a Challenge" (last two sentences: one turn left, not announced, then revealed);
- seed 001 = 001_452ae2ba76ddf93f.txt "How the Game Ends" (items 1-4 and the last paragraph);
- seed 004 = 004_313110f16dee76d8.txt "Winning the game" items 1-5 (item 4/5: always one
  more turn);
- seed 003 = 003_ef7fde501debbc91.txt "Winning the Game" (cannot move loses; neither can
  move after a split is a draw).

Positions are written for White; `m(name, side)` mirrors a square (rank r -> 9 - r) so
the same test runs for Black, whose flag runs to rank 1.
"""

from __future__ import annotations

import random

import pytest

from p2pgotg.rules import (
    ChallengeResult,
    FlagRule,
    Game,
    IllegalMoveError,
    Move,
    Outcome,
    Rank,
    RuleOptions,
    Setup,
    Side,
    Termination,
)

SIDES = [Side.WHITE, Side.BLACK]


def m(name: str, side: Side) -> str:
    return name if side is Side.WHITE else f"{name[0]}{9 - int(name[1])}"


def mv(text: str, side: Side) -> str:
    a, b = text.split("-")
    return f"{m(a, side)}-{m(b, side)}"


@pytest.fixture
def flag_run(position, play, piece_on):
    """The owner's flag one step from the opposing back rank (e7 for White), an opponent
    piece that can waste a move (a5 for White's opponent), the opponent's flag far away, and
    `extra` opponent pieces. Returns (game, owner's flag, play_for) where play_for plays
    moves written from White's side."""

    def make(owner: Side, extra=None, rule=FlagRule.SAFE_OR_SURVIVE):
        own = {m("e7", owner): Rank.FLAG, m("a2", owner): Rank.PRIVATE}
        opp = {m("i5", owner): Rank.FLAG, m("a5", owner): Rank.PRIVATE}
        for name, rank in (extra or {}).items():
            opp[m(name, owner)] = rank
        white, black = (own, opp) if owner is Side.WHITE else (opp, own)
        g = position(white, black, turn=owner, options=RuleOptions(flag_rule=rule))
        flag = piece_on(g, m("e7", owner))

        def play_for(*moves: str):
            return play(g, *(mv(t, owner) for t in moves))

        return g, flag, play_for

    return make


def ended(g: Game, termination: Termination, winner: Side | None) -> bool:
    return g.outcome == Outcome(termination, winner)


# -- flag captured -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attacking_side", "attacker", "defender", "winner", "lost"),
    [
        (Side.WHITE, Rank.PRIVATE, Rank.FLAG, Side.WHITE, Side.BLACK),
        (Side.BLACK, Rank.PRIVATE, Rank.FLAG, Side.BLACK, Side.WHITE),
        # seed 000 "If a Flag challenges the opponent's Flag, the challenging Flag
        # prevails and wins the game"
        (Side.WHITE, Rank.FLAG, Rank.FLAG, Side.WHITE, Side.BLACK),
        (Side.BLACK, Rank.FLAG, Rank.FLAG, Side.BLACK, Side.WHITE),
        # a flag that challenges anything else is eliminated: its side loses
        (Side.WHITE, Rank.FLAG, Rank.PRIVATE, Side.BLACK, Side.WHITE),
        (Side.BLACK, Rank.FLAG, Rank.SPY, Side.WHITE, Side.BLACK),
    ],
)
def test_flag_captured(position, attacking_side, attacker, defender, winner, lost) -> None:
    atk_sq, def_sq = ("e4", "e5") if attacking_side is Side.WHITE else ("e5", "e4")
    atk = {atk_sq: attacker}
    dfd = {def_sq: defender}
    if attacker is not Rank.FLAG:
        atk["a1" if attacking_side is Side.WHITE else "a8"] = Rank.FLAG
    if defender is not Rank.FLAG:
        dfd["a8" if attacking_side is Side.WHITE else "a1"] = Rank.FLAG
    white, black = (atk, dfd) if attacking_side is Side.WHITE else (dfd, atk)
    g = position(white, black, turn=attacking_side)
    rec = g.push(Move.parse(f"{atk_sq}-{def_sq}"))
    assert rec.lost_flag is lost
    assert ended(g, Termination.FLAG_CAPTURED, winner)
    assert g.legal_moves == []
    assert g.move_problem(Move.parse("a1-a2")) == "the game is over"
    with pytest.raises(IllegalMoveError, match="the game is over"):
        g.resign(Side.WHITE)


def test_flag_captured_in_a_real_game(setup_with, play) -> None:
    g = Game.from_setups(
        setup_with(Side.WHITE, {"e3": Rank.PRIVATE}), setup_with(Side.BLACK, {"e6": Rank.FLAG})
    )
    play(g, "e3-e4", "e6-e5", "e4-e5")
    assert ended(g, Termination.FLAG_CAPTURED, Side.WHITE)
    assert g.outcome is not None and g.outcome.describe() == "White wins (flag captured)"


# -- the flag at the opposing back rank --------------------------------------------------


@pytest.mark.parametrize("owner", SIDES)
def test_safe_arrival_wins_at_once_by_default(flag_run, owner: Side) -> None:
    # seed 000: "If a Flag reaches the opposing back rank and there is no adjacent opposing
    # piece that can challenge it, the Flag wins the game immediately." A diagonal enemy
    # (d7) is not adjacent: seed 000 "Moves" (adjacent = in front, behind, to the side).
    g, flag, play_for = flag_run(owner, extra={"d7": Rank.PRIVATE, "c8": Rank.SERGEANT})
    assert g.options.flag_rule is FlagRule.SAFE_OR_SURVIVE
    play_for("e7-e8")
    assert g.turn is owner.other  # the opponent has not moved yet ...
    assert g.flag_claim_problem(owner, flag) is None  # ... and the claim is good already
    assert g.claim_flag_run(owner, flag) == Outcome(Termination.FLAG_REACHED_BACK_RANK, owner)
    assert g.is_over and g.legal_moves == []


@pytest.mark.parametrize("owner", SIDES)
def test_arrival_is_not_announced(flag_run, owner: Side) -> None:
    # seed 000: "the opponent has one turn left although it is not announced": reaching
    # the back rank ends nothing by itself; the owner claims.
    g, _, play_for = flag_run(owner)
    play_for("e7-e8")
    assert not g.is_over and g.legal_moves


@pytest.mark.parametrize("owner", SIDES)
def test_next_to_an_enemy_the_flag_must_survive_a_turn(flag_run, owner: Side) -> None:
    # seed 000: "If a Flag reaches the opposing back rank directly adjacent to an opposing
    # piece, and that piece does not challenge the Flag immediately on the opponent's
    # subsequent turn, then that Flag wins the game."
    g, flag, play_for = flag_run(owner, extra={"d8": Rank.SERGEANT})
    play_for("e7-e8")
    problem = g.flag_claim_problem(owner, flag)
    assert problem is not None
    assert m("d8", owner) in problem and "survive the opponent's next turn" in problem
    with pytest.raises(IllegalMoveError, match="flag claim refused"):
        g.claim_flag_run(owner, flag)
    play_for("a5-a6")  # the opponent does not challenge
    assert g.flag_claim_problem(owner, flag) is None
    g.claim_flag_run(owner, flag)
    assert ended(g, Termination.FLAG_REACHED_BACK_RANK, owner)


@pytest.mark.parametrize("owner", SIDES)
def test_the_adjacent_piece_may_walk_away_or_another_may_come(flag_run, owner: Side) -> None:
    g, flag, play_for = flag_run(owner, extra={"d8": Rank.SERGEANT, "f7": Rank.MAJOR})
    play_for("e7-e8", "d8-d7")  # steps away without challenging
    assert g.flag_claim_problem(owner, flag) is None
    g2, flag2, play2 = flag_run(owner, extra={"d8": Rank.SERGEANT, "f7": Rank.MAJOR})
    play2("e7-e8", "f7-f8")  # a second enemy comes next to it: the turn is survived anyway
    assert g2.flag_claim_problem(owner, flag2) is None


@pytest.mark.parametrize("owner", SIDES)
@pytest.mark.parametrize("rule", list(FlagRule))
def test_flag_challenged_on_the_back_rank_before_it_can_claim(flag_run, owner, rule) -> None:
    g, flag, play_for = flag_run(owner, extra={"d8": Rank.PRIVATE}, rule=rule)
    play_for("e7-e8")
    play_for("d8-e8")  # any piece takes the flag
    assert ended(g, Termination.FLAG_CAPTURED, owner.other)
    assert g.flag_claim_problem(owner, flag) == "the game is over"


@pytest.mark.parametrize("owner", SIDES)
def test_always_survive_waits_a_turn_even_when_safe(flag_run, owner: Side) -> None:
    # seed 004 item 5: "there are no nearby or adjacent enemy pieces that can challenge it.
    # The player wins the game after one more turn."
    g, flag, play_for = flag_run(owner, rule=FlagRule.ALWAYS_SURVIVE)
    play_for("e7-e8")
    assert (
        g.flag_claim_problem(owner, flag) == "the flag must survive the opponent's next turn first"
    )
    play_for("a5-a6")
    assert g.flag_claim_problem(owner, flag) is None
    g.claim_flag_run(owner, flag)
    assert ended(g, Termination.FLAG_REACHED_BACK_RANK, owner)


@pytest.mark.parametrize("owner", SIDES)
def test_always_survive_next_to_an_enemy(flag_run, owner: Side) -> None:
    g, flag, play_for = flag_run(owner, extra={"f8": Rank.MAJOR}, rule=FlagRule.ALWAYS_SURVIVE)
    play_for("e7-e8")
    assert g.flag_claim_problem(owner, flag) is not None
    play_for("a5-a6")
    assert g.flag_claim_problem(owner, flag) is None


@pytest.mark.parametrize("owner", SIDES)
def test_immediate_wins_on_arrival_even_next_to_an_enemy(flag_run, owner: Side) -> None:
    # seed 001 "How the Game Ends" item 2, read alone: "When a flag reaches the opposite end".
    g, flag, play_for = flag_run(owner, extra={"d8": Rank.SERGEANT}, rule=FlagRule.IMMEDIATE)
    play_for("e7-e8")
    assert g.flag_claim_problem(owner, flag) is None
    g.claim_flag_run(owner, flag)
    assert ended(g, Termination.FLAG_REACHED_BACK_RANK, owner)


@pytest.mark.parametrize("owner", SIDES)
def test_a_good_claim_stays_good_until_the_flag_moves(flag_run, owner: Side) -> None:
    g, flag, play_for = flag_run(owner, extra={"c8": Rank.SERGEANT})
    play_for("e7-e8")
    assert g.flag_claim_problem(owner, flag) is None
    play_for("a5-a6", "a2-a3", "a6-a7")  # the owner did not claim at once: still good later
    assert g.flag_claim_problem(owner, flag) is None
    # A move along the back rank is a new arrival: on d8, next to c8, the flag must
    # survive the opponent's turn again.
    play_for("e8-d8")
    problem = g.flag_claim_problem(owner, flag)
    assert problem is not None and m("c8", owner) in problem
    play_for("a7-a8")
    assert g.flag_claim_problem(owner, flag) is None


@pytest.mark.parametrize("owner", SIDES)
def test_claim_refusals(flag_run, owner: Side, piece_on) -> None:
    g, flag, _ = flag_run(owner)
    assert g.flag_claim_problem(owner, flag) == "the flag is not on the opposing back rank"
    private = piece_on(g, m("a2", owner))
    assert g.flag_claim_problem(owner, private) == "that piece is not known to be the flag"
    assert g.flag_claim_problem(owner.other, flag) == "that piece is not the claimant's"
    # The opponent's view of the same position, the owner's ranks unknown to it.
    opp_view = Game.from_position(
        {
            sq: (p.side, None if p.side is owner else g.rank_of(p))
            for sq in range(72)
            if (p := g.piece_at(sq)) is not None
        },
        turn=owner,
        options=g.options,
    )
    run = Move.parse(mv("e7-e8", owner))
    g.push(run)
    opp_view.push(run)
    assert g.flag_claim_problem(owner, flag) is None
    # The opponent's view cannot accept the claim until the flag is revealed (opened).
    assert opp_view.flag_claim_problem(owner, flag) == "that piece is not known to be the flag"
    opp_view.reveal(flag, Rank.FLAG)
    assert opp_view.flag_claim_problem(owner, flag) is None


def test_a_flag_on_its_own_back_rank_cannot_claim(position, piece_on) -> None:
    g = position({"e1": Rank.FLAG}, {"e8": Rank.FLAG})
    assert g.flag_claim_problem(Side.WHITE, piece_on(g, "e1")) == (
        "the flag is not on the opposing back rank"
    )
    assert g.flag_claim_problem(Side.BLACK, piece_on(g, "e8")) == (
        "the flag is not on the opposing back rank"
    )


@pytest.mark.parametrize(
    ("rule", "adjacent_enemy", "at_once"),
    [
        (FlagRule.SAFE_OR_SURVIVE, False, True),
        (FlagRule.SAFE_OR_SURVIVE, True, False),
        (FlagRule.ALWAYS_SURVIVE, False, False),
        (FlagRule.IMMEDIATE, True, True),
    ],
)
def test_flag_run_in_a_real_game(setup_with, play, piece_on, rule, adjacent_enemy, at_once):
    """White's flag walks up the e-file through a gap in Black's setup."""
    white = setup_with(Side.WHITE, {"e3": Rank.FLAG})
    gap = ["e6", "e7", "e8", "d8"] + ([] if adjacent_enemy else ["f8"])
    black = setup_with(Side.BLACK, {"f8": Rank.MAJOR} if adjacent_enemy else {}, empty=gap)
    g = Game.from_setups(white, black, RuleOptions(flag_rule=rule))
    play(g, "e3-e4", "a6-a5", "e4-e5", "b6-b5", "e5-e6", "c6-c5", "e6-e7", "a5-a4", "e7-e8")
    flag = piece_on(g, "e8")
    assert (g.flag_claim_problem(Side.WHITE, flag) is None) is at_once
    play(g, "b5-b4")
    assert g.flag_claim_problem(Side.WHITE, flag) is None
    g.claim_flag_run(Side.WHITE, flag)
    assert ended(g, Termination.FLAG_REACHED_BACK_RANK, Side.WHITE)
    assert g.outcome is not None
    assert g.outcome.describe() == "White wins (flag reached the opposing back rank)"


# -- resignation, draws, external endings, take-back ---------------------------------------


def _start() -> Game:
    rng = random.Random(3)
    return Game.from_setups(Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng))


@pytest.mark.parametrize("resigner", SIDES)
def test_resignation_at_any_time(resigner: Side) -> None:
    g = _start()  # White to move; either side may resign (seed 001 item 3, seed 004 item 2)
    assert g.resign(resigner) == Outcome(Termination.RESIGNATION, resigner.other)
    assert g.is_over and g.legal_moves == []
    assert g.outcome is not None
    assert g.outcome.describe() == f"{resigner.other.display_name} wins (resignation)"


def test_draw_by_agreement() -> None:
    g = _start()
    assert g.agree_draw() == Outcome(Termination.DRAW_AGREED, None)
    assert g.outcome is not None and g.outcome.describe() == "draw (draw agreed)"
    with pytest.raises(IllegalMoveError, match="the game is over"):
        g.agree_draw()


def test_endings_from_outside_the_board_and_take_back() -> None:
    g = _start()
    moves = g.legal_moves
    g.push(moves[0])
    g.end(Outcome(Termination.TIME_FORFEIT, Side.WHITE))
    assert g.is_over and g.legal_moves == []
    assert g.pop() is None  # takes back the ending, not the move
    assert not g.is_over and g.ply == 1
    assert g.pop() is not None and g.ply == 0
    assert g.legal_moves == moves


# -- stuck sides (seed 003) --------------------------------------------------------------

# White's lone flag P and Black's Private E. P oscillates a1-b1 three times while E steps
# next to it and away again; at the end P's only moves are a1-b1 (a fourth time: the
# two-squares rule) and a1-a2 (a chasing move back into the position after White's first
# move: the chasing rule). h6 and i8 are Black's spare moves.
STUCK_LINE = [
    "a1-a2",
    "h6-h5",  # P next to E (a3): the position X to be repeated, Black to move
    "a2-b2",
    "h5-h6",
    "b2-b1",
    "i8-i7",
    "b1-a1",
    "i7-i8",  # the three oscillations start here: b1-a1, a1-b1, b1-a1
    "a1-b1",
    "a3-a2",
    "b1-a1",
    "a2-a3",  # P threatens E on a2; E evades to a3
]


def _stuck_game(two_squares: bool, chasing: bool) -> Game:
    return Game.from_position(
        {
            "a1": (Side.WHITE, Rank.FLAG),
            "a3": (Side.BLACK, Rank.PRIVATE),
            "h6": (Side.BLACK, Rank.SERGEANT),
            "i8": (Side.BLACK, Rank.FLAG),
        },
        options=RuleOptions(two_squares=two_squares, chasing=chasing),
    )


def test_no_legal_move_loses(play) -> None:
    # seed 003: "If a player cannot move or attack in his/her turn, he/she loses the game";
    # two-squares: "If this is not possible, they must surrender and opponent wins".
    g = _stuck_game(True, True)
    play(g, *STUCK_LINE)
    assert ended(g, Termination.NO_LEGAL_MOVE, Side.BLACK)
    assert g.legal_moves == []


@pytest.mark.parametrize(("two_squares", "chasing"), [(False, False), (True, False), (False, True)])
def test_the_same_line_without_both_rules_leaves_a_move(play, two_squares, chasing) -> None:
    g = _stuck_game(two_squares, chasing)
    play(g, *STUCK_LINE)
    assert not g.is_over
    expected = {"a1-a2", "a1-b1"}
    if two_squares:
        expected.discard("a1-b1")
    if chasing:
        expected.discard("a1-a2")
    assert {x.text() for x in g.legal_moves} == expected


def test_a_side_with_no_pieces_left_loses(position) -> None:
    # seed 003: "This is possible if all moveable pieces have been captured". Only in a
    # made-up position: in a real game the flag's capture ends the game first.
    g = position({"e4": Rank.SERGEANT, "a1": Rank.FLAG}, {"e5": Rank.PRIVATE})
    g.push(Move.parse("e4-e5"))
    assert ended(g, Termination.NO_LEGAL_MOVE, Side.WHITE)


def test_neither_side_can_move_is_a_draw(position) -> None:
    # seed 003: "In the exceptional case that after an attack both pieces are captured and
    # neither player can move any further, the game ends in a draw."
    g = position({"e4": Rank.PRIVATE}, {"e5": Rank.PRIVATE})
    rec = g.push(Move.parse("e4-e5"))
    assert rec.result is ChallengeResult.BOTH_ELIMINATED
    assert ended(g, Termination.NEITHER_CAN_MOVE, None)
    assert g.outcome is not None and g.outcome.describe() == "draw (neither side can move)"
