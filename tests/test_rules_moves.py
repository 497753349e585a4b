"""Moves and challenges, in the full view and in a player's partial view.

Sources: seed 000 (000_0cbbf7c1c412fd5e.txt) "Moves" and "Challenge"; seed 001
(001_452ae2ba76ddf93f.txt) "Movement" and "Challenging"; seed 004
(004_313110f16dee76d8.txt) "Challenges" item 1 ("the winning piece will remain in that
eliminated piece's position") and item 2 (a split removes both).
"""

from __future__ import annotations

import pytest

from p2pgotg.rules import (
    ChallengeResult,
    Game,
    IllegalMoveError,
    Move,
    Rank,
    RulesError,
    Side,
    Termination,
    parse_square,
)

A = ChallengeResult.ATTACKER_WINS
D = ChallengeResult.DEFENDER_WINS
B = ChallengeResult.BOTH_ELIMINATED
FILES = "abcdefghi"


def orthogonal(name: str) -> set[str]:
    """Forward, back and sideways on the 9 x 8 board, written from the square names."""
    f, r = FILES.index(name[0]), int(name[1])
    out = set()
    for df, dr in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        if 0 <= f + df < 9 and 1 <= r + dr <= 8:
            out.add(f"{FILES[f + df]}{r + dr}")
    return out


def sq(name: str) -> int:
    return parse_square(name)


def move_names(game: Game) -> set[str]:
    return {m.text() for m in game.legal_moves}


@pytest.fixture
def duel(setup_with):
    """White's `white` rank on e3 and Black's `black` rank on e6, everything else filled
    behind them; returns (full view, White's setup, Black's setup)."""

    def make(white: Rank, black: Rank):
        ws = setup_with(Side.WHITE, {"e3": white})
        bs = setup_with(Side.BLACK, {"e6": black})
        return Game.from_setups(ws, bs), ws, bs

    return make


# -- one square, orthogonally, never onto a friend ----------------------------------------


def test_a_lone_piece_moves_one_square_orthogonally(position) -> None:
    g = position({"e4": Rank.PRIVATE, "a1": Rank.FLAG}, {"i8": Rank.FLAG})
    assert (
        {m for m in move_names(g) if m.startswith("e4")}
        == {"e4-" + t for t in orthogonal("e4")}
        == {"e4-e5", "e4-e3", "e4-d4", "e4-f4"}
    )
    assert {m for m in move_names(g) if m.startswith("a1")} == {"a1-a2", "a1-b1"}


@pytest.mark.parametrize(
    ("move", "needle"),
    [
        ("e4-f5", "not one square forward, back or sideways"),  # diagonal
        ("e4-e6", "not one square forward, back or sideways"),  # two squares
        ("e4-e4", "not one square forward, back or sideways"),  # no move
        ("e4-d4", "d4 holds one of your own pieces"),
        ("e5-e6", "the piece on e5 is not yours"),
        ("c5-c6", "there is no piece on c5"),
    ],
)
def test_illegal_moves_say_why(position, move: str, needle: str) -> None:
    g = position(
        {"e4": Rank.PRIVATE, "d4": Rank.SERGEANT, "a1": Rank.FLAG},
        {"e5": Rank.PRIVATE, "i8": Rank.FLAG},
    )
    m = Move.parse(move)
    problem = g.move_problem(m)
    assert problem is not None and needle in problem
    assert m not in g.legal_moves
    with pytest.raises(IllegalMoveError) as e:
        g.push(m)
    assert move in str(e.value) and needle in str(e.value)


def test_not_your_turn(position) -> None:
    g = position({"e4": Rank.PRIVATE, "a1": Rank.FLAG}, {"e6": Rank.PRIVATE, "i8": Rank.FLAG})
    assert g.move_problem(Move.parse("e6-e5"), Side.BLACK) == "it is White's turn"
    assert g.move_problem(Move.parse("e4-e5"), Side.WHITE) is None


def test_legal_moves_of_a_real_setup(setup_with) -> None:
    ws = setup_with(Side.WHITE, {}, empty=["c2", "d2", "h1"])
    bs = setup_with(Side.BLACK, {})
    g = Game.from_setups(ws, bs)
    white = {f"{FILES[s % 9]}{s // 9 + 1}" for s in ws.placement}
    expected = {f"{a}-{b}" for a in white for b in orthogonal(a) if b not in white}
    assert move_names(g) == expected
    assert all(not g.is_challenge(m) for m in g.legal_moves)


def test_turns_alternate_and_history_records_moves(play, position) -> None:
    g = position({"e4": Rank.PRIVATE, "a1": Rank.FLAG}, {"e6": Rank.PRIVATE, "i8": Rank.FLAG})
    assert (g.turn, g.ply) == (Side.WHITE, 0)
    play(g, "e4-d4")
    assert (g.turn, g.ply) == (Side.BLACK, 1)
    play(g, "e6-f6")
    assert (g.turn, g.ply) == (Side.WHITE, 2)
    assert [(r.side, r.move.text(), r.defender) for r in g.history] == [
        (Side.WHITE, "e4-d4", None),
        (Side.BLACK, "e6-f6", None),
    ]
    assert g.piece_at(sq("e4")) is None and g.piece_at(sq("d4")) is not None


# -- challenges --------------------------------------------------------------------------


def test_attacker_wins_and_stands_on_the_defenders_square(duel, play) -> None:
    g, _, _ = duel(Rank.GENERAL_OF_THE_ARMY, Rank.PRIVATE)
    play(g, "e3-e4", "e6-e5")
    attacker, defender = g.piece_at(sq("e4")), g.piece_at(sq("e5"))
    m = Move.parse("e4-e5")
    assert g.is_challenge(m) and m in g.legal_moves
    (rec,) = play(g, "e4-e5")
    assert (rec.piece, rec.defender, rec.result, rec.lost_flag) == (attacker, defender, A, None)
    assert g.piece_at(sq("e5")) == attacker and g.square_of(attacker) == sq("e5")
    assert g.piece_at(sq("e4")) is None
    assert g.square_of(defender) is None and g.eliminated == (defender,)
    assert len(g.pieces(Side.WHITE)) == 21 and len(g.pieces(Side.BLACK)) == 20
    assert g.turn is Side.BLACK and not g.is_over


def test_defender_wins_removes_the_attacker(duel, play) -> None:
    g, _, _ = duel(Rank.PRIVATE, Rank.GENERAL_OF_THE_ARMY)
    play(g, "e3-e4", "e6-e5")
    attacker, defender = g.piece_at(sq("e4")), g.piece_at(sq("e5"))
    (rec,) = play(g, "e4-e5")
    assert rec.result is D
    assert g.piece_at(sq("e5")) == defender and g.piece_at(sq("e4")) is None
    assert g.square_of(attacker) is None and g.eliminated == (attacker,)
    assert len(g.pieces(Side.WHITE)) == 20 and len(g.pieces(Side.BLACK)) == 21


def test_a_split_removes_both(duel, play) -> None:
    g, _, _ = duel(Rank.CAPTAIN, Rank.CAPTAIN)
    play(g, "e3-e4", "e6-e5")
    attacker, defender = g.piece_at(sq("e4")), g.piece_at(sq("e5"))
    (rec,) = play(g, "e4-e5")
    assert rec.result is B
    assert g.piece_at(sq("e4")) is None and g.piece_at(sq("e5")) is None
    assert set(g.eliminated) == {attacker, defender}
    assert len(g.pieces(Side.WHITE)) == 20 and len(g.pieces(Side.BLACK)) == 20


def test_black_challenges_too(duel, play) -> None:
    g, _, _ = duel(Rank.SPY, Rank.MAJOR)
    play(g, "e3-e4", "e6-e5", "a3-a4")
    spy = g.piece_at(sq("e4"))
    (rec,) = play(g, "e5-e4")  # the Major attacks the Spy: the Spy wins, defending
    assert rec.side is Side.BLACK and rec.result is D
    assert g.piece_at(sq("e4")) == spy and g.piece_at(sq("e5")) is None


# -- results given and checked -----------------------------------------------------------


def test_full_view_checks_a_given_result(duel) -> None:
    g, _, _ = duel(Rank.GENERAL_OF_THE_ARMY, Rank.PRIVATE)
    g.push(Move.parse("e3-e4"))
    g.push(Move.parse("e6-e5"))
    m = Move.parse("e4-e5")
    with pytest.raises(IllegalMoveError, match="gives attacker_wins, not defender_wins"):
        g.push(m, D)
    with pytest.raises(IllegalMoveError):
        g.push(m, A, Side.BLACK)  # the Private is not a flag
    assert g.ply == 2  # nothing was played
    assert g.push(m, A).result is A


def test_a_move_that_is_not_a_challenge_has_no_result(duel) -> None:
    g, ws, bs = duel(Rank.MAJOR, Rank.MAJOR)
    view = Game.for_player(ws, bs.squares)
    for game in (g, view):
        with pytest.raises(IllegalMoveError, match="not a challenge"):
            game.push(Move.parse("e3-e4"), A)
        with pytest.raises(IllegalMoveError, match="not a challenge"):
            game.push(Move.parse("e3-e4"), None, Side.BLACK)


def _views_before_white_attacks(duel, white: Rank, black: Rank):
    g, ws, bs = duel(white, black)
    wv = Game.for_player(ws, bs.squares)
    bv = Game.for_player(bs, ws.squares)
    for text in ("e3-e4", "e6-e5"):
        for game in (g, wv, bv):
            game.push(Move.parse(text))
    return g, wv, bv, Move.parse("e4-e5")


def test_partial_view_needs_the_result_of_a_challenge(duel) -> None:
    g, wv, bv, m = _views_before_white_attacks(duel, Rank.COLONEL, Rank.MAJOR)
    assert wv.rank_of(wv.piece_at(sq("e5"))) is None  # White does not know Black's rank
    for view in (wv, bv):
        with pytest.raises(IllegalMoveError, match="needs its result"):
            view.push(m)
    rec = g.push(m)
    for view in (wv, bv):
        view.push(m, rec.result, rec.lost_flag)
        assert [view.piece_at(s) for s in range(72)] == [g.piece_at(s) for s in range(72)]
        assert view.legal_moves == g.legal_moves
    # The challenge does not reveal the loser's rank to the partial view by itself.
    assert wv.rank_of(g.eliminated[0]) is None


def test_partial_view_rejects_a_flag_lost_by_a_known_non_flag(duel) -> None:
    _, wv, bv, m = _views_before_white_attacks(duel, Rank.PRIVATE, Rank.SERGEANT)
    with pytest.raises(IllegalMoveError, match="Private is not a flag"):
        wv.push(m, D, Side.WHITE)
    with pytest.raises(IllegalMoveError, match="Sergeant is not a flag"):
        bv.push(m, A, Side.BLACK)
    with pytest.raises(IllegalMoveError, match="captured flag means the attacker won"):
        bv.push(m, D, Side.BLACK)
    with pytest.raises(IllegalMoveError, match="lost only when the defender wins"):
        bv.push(m, A, Side.WHITE)


def test_partial_view_own_flag_defending(duel) -> None:
    _, wv, bv, m = _views_before_white_attacks(duel, Rank.PRIVATE, Rank.FLAG)
    # Black knows its own flag stands on e5: whatever attacks it, it is captured.
    with pytest.raises(IllegalMoveError, match="the defender is the flag"):
        bv.push(m, A)
    with pytest.raises(IllegalMoveError):
        bv.push(m, D)
    with pytest.raises(IllegalMoveError):
        bv.push(m, B)
    bv.push(m, A, Side.BLACK)
    assert bv.outcome is not None
    assert (bv.outcome.termination, bv.outcome.winner) == (Termination.FLAG_CAPTURED, Side.WHITE)
    # White does not know e5 was a flag; told so, it ends the game the same way.
    wv.push(m, A, Side.BLACK)
    assert wv.outcome == bv.outcome


@pytest.mark.parametrize(
    ("result", "lost", "needle"),
    [
        (B, None, "a flag never splits"),
        (D, None, "its side lost its flag"),
        (A, None, "a flag wins only against the flag"),
    ],
)
def test_partial_view_own_flag_attacking_inconsistent(duel, result, lost, needle) -> None:
    _, wv, _, m = _views_before_white_attacks(duel, Rank.FLAG, Rank.MAJOR)
    with pytest.raises(IllegalMoveError, match=needle):
        wv.push(m, result, lost)
    assert wv.ply == 2 and not wv.is_over


def test_partial_view_own_flag_attacking_and_losing(duel) -> None:
    g, wv, bv, m = _views_before_white_attacks(duel, Rank.FLAG, Rank.MAJOR)
    rec = g.push(m)
    assert (rec.result, rec.lost_flag) == (D, Side.WHITE)
    for view in (wv, bv):
        view.push(m, D, Side.WHITE)
        assert view.outcome == g.outcome
    assert g.outcome is not None and g.outcome.winner is Side.BLACK


def test_partial_view_flag_takes_flag(duel) -> None:
    g, wv, bv, m = _views_before_white_attacks(duel, Rank.FLAG, Rank.FLAG)
    rec = g.push(m)
    assert (rec.result, rec.lost_flag) == (A, Side.BLACK)
    for view in (wv, bv):
        view.push(m, A, Side.BLACK)
        assert view.outcome == g.outcome
    assert g.outcome is not None
    assert (g.outcome.termination, g.outcome.winner) == (Termination.FLAG_CAPTURED, Side.WHITE)


def test_reveal_records_and_checks_ranks(duel) -> None:
    _, wv, _, _ = _views_before_white_attacks(duel, Rank.MAJOR, Rank.CAPTAIN)
    enemy = wv.piece_at(sq("e5"))
    wv.reveal(enemy, Rank.CAPTAIN)
    wv.reveal(enemy, Rank.CAPTAIN)  # the same again is fine
    assert wv.rank_of(enemy) is Rank.CAPTAIN
    with pytest.raises(RulesError, match="already known to be Captain"):
        wv.reveal(enemy, Rank.MAJOR)
    # Once both ranks are known, the view checks the result itself.
    with pytest.raises(IllegalMoveError):
        wv.push(Move.parse("e4-e5"), D)
    assert wv.push(Move.parse("e4-e5")).result is A
