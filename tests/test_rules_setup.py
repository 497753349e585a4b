"""Setups: the 21-piece set on the 3 home rows, errors that say what is wrong, the formation
text format and the shipped formations.

Sources: seed 000 (000_0cbbf7c1c412fd5e.txt) pieces table and "Board" ("each player's 21
pieces are placed ... within the nearest 3 rows", "These are the 27 closest squares, leaving
6 squares open"); seed 001 "Preparing For Battle"; seed 004 "Board layout".
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.rules import (
    COMPOSITION,
    PIECES_PER_SIDE,
    Game,
    InvalidNotationError,
    InvalidSetupError,
    Rank,
    RulesError,
    Setup,
    Side,
    format_formation,
    formation_names,
    formation_text,
    load_formation,
    parse_formation,
    parse_square,
)

# seed 000's pieces table, "No. of Pieces" column, by name.
SEED_COUNTS = {
    "GENERAL_OF_THE_ARMY": 1,
    "GENERAL": 1,
    "LIEUTENANT_GENERAL": 1,
    "MAJOR_GENERAL": 1,
    "BRIGADIER_GENERAL": 1,
    "COLONEL": 1,
    "LIEUTENANT_COLONEL": 1,
    "MAJOR": 1,
    "CAPTAIN": 1,
    "FIRST_LIEUTENANT": 1,
    "SECOND_LIEUTENANT": 1,
    "SERGEANT": 1,
    "PRIVATE": 6,
    "SPY": 2,
    "FLAG": 1,
}

# Home rows by name: White ranks 1-3, Black ranks 6-8 (seed 000 "the nearest 3 rows").
HOME = {
    Side.WHITE: {f"{f}{r}" for f in "abcdefghi" for r in "123"},
    Side.BLACK: {f"{f}{r}" for f in "abcdefghi" for r in "678"},
}
SIDES = [Side.WHITE, Side.BLACK]


def names(squares) -> set[str]:
    return {"abcdefghi"[sq % 9] + str(sq // 9 + 1) for sq in squares}


def valid_placement(side: Side, seed: int = 7) -> dict[int, Rank]:
    return dict(Setup.random(side, random.Random(seed)).placement)


def free_home_square(side: Side, placement) -> int:
    return next(parse_square(n) for n in sorted(HOME[side]) if parse_square(n) not in placement)


def squares_of(placement, rank: Rank) -> list[int]:
    return sorted(sq for sq, r in placement.items() if r is rank)


# -- the piece set ---------------------------------------------------------------------


def test_composition_is_the_seed_table() -> None:
    assert {r.name: n for r, n in COMPOSITION.items()} == SEED_COUNTS
    assert PIECES_PER_SIDE == 21 == sum(SEED_COUNTS.values())


@pytest.mark.parametrize("side", SIDES)
def test_random_setups_are_valid(side: Side) -> None:
    for seed in range(20):
        s = Setup.random(side, random.Random(seed))
        assert len(s.placement) == 21
        assert names(s.placement) <= HOME[side]
        assert sorted(r.name for r in s.ranks) == sorted(
            n for n, k in SEED_COUNTS.items() for _ in range(k)
        )
        # Piece ids: piece i is on the i-th lowest occupied square.
        assert list(s.squares) == sorted(s.placement)
        assert s.ranks == tuple(s.placement[sq] for sq in sorted(s.placement))


# -- every way a setup can be wrong, for each side ---------------------------------------


@pytest.mark.parametrize("side", SIDES)
def test_too_few_pieces(side: Side) -> None:
    p = valid_placement(side)
    del p[squares_of(p, Rank.PRIVATE)[0]]
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert "20 pieces placed" in msg and "the set is 21" in msg
    assert "5 x Private (the set has 6)" in msg


@pytest.mark.parametrize("side", SIDES)
def test_too_many_pieces(side: Side) -> None:
    p = valid_placement(side)
    p[free_home_square(side, p)] = Rank.PRIVATE
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert "22 pieces placed" in msg
    assert "7 x Private (the set has 6)" in msg


@pytest.mark.parametrize("side", SIDES)
def test_seven_privates_and_one_spy(side: Side) -> None:
    p = valid_placement(side)
    p[squares_of(p, Rank.SPY)[0]] = Rank.PRIVATE
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert "7 x Private (the set has 6)" in msg
    assert "1 x Spy (the set has 2)" in msg


@pytest.mark.parametrize("side", SIDES)
def test_no_spies(side: Side) -> None:
    p = valid_placement(side)
    for sq in squares_of(p, Rank.SPY):
        p[sq] = Rank.PRIVATE
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert "0 x Spy (the set has 2)" in msg
    assert "8 x Private (the set has 6)" in msg


@pytest.mark.parametrize("side", SIDES)
def test_two_flags(side: Side) -> None:
    p = valid_placement(side)
    p[squares_of(p, Rank.PRIVATE)[0]] = Rank.FLAG
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert "2 x Flag (the set has 1)" in msg
    assert "5 x Private (the set has 6)" in msg


@pytest.mark.parametrize("side", SIDES)
def test_no_flag(side: Side) -> None:
    p = valid_placement(side)
    p[squares_of(p, Rank.FLAG)[0]] = Rank.PRIVATE
    with pytest.raises(InvalidSetupError, match=r"0 x Flag \(the set has 1\)"):
        Setup(side, p)


@pytest.mark.parametrize(
    ("side", "outside", "rows"),
    [
        (Side.WHITE, "e4", "1-3"),  # no man's land
        (Side.WHITE, "c7", "1-3"),  # the opponent's home rows
        (Side.BLACK, "e5", "6-8"),
        (Side.BLACK, "a1", "6-8"),
    ],
)
def test_a_piece_outside_the_home_rows(side: Side, outside: str, rows: str) -> None:
    p = valid_placement(side)
    flag_sq = squares_of(p, Rank.FLAG)[0]
    del p[flag_sq]
    p[parse_square(outside)] = Rank.FLAG  # right composition, wrong square
    with pytest.raises(InvalidSetupError) as e:
        Setup(side, p)
    msg = str(e.value)
    assert f"pieces outside {side.display_name}'s home rows {rows}: {outside}" in msg
    assert "wrong counts" not in msg  # nothing else is wrong


@pytest.mark.parametrize("side", SIDES)
def test_off_board_squares_and_non_ranks(side: Side) -> None:
    p = valid_placement(side)
    del p[squares_of(p, Rank.FLAG)[0]]
    p[72] = Rank.FLAG
    with pytest.raises(InvalidSetupError, match="outside"):
        Setup(side, p)
    p = valid_placement(side)
    p[squares_of(p, Rank.FLAG)[0]] = "flag"  # type: ignore[assignment]
    with pytest.raises(InvalidSetupError, match="not ranks"):
        Setup(side, p)
    with pytest.raises(InvalidSetupError, match="outside"):
        Setup(side, {"a1": Rank.FLAG})  # type: ignore[dict-item]


def test_setup_errors_are_rules_errors() -> None:
    assert issubclass(InvalidSetupError, RulesError)
    assert issubclass(RulesError, ValueError)


@pytest.mark.parametrize("side", SIDES)
def test_opponent_squares_in_a_players_view_are_checked(side: Side) -> None:
    own = Setup.random(side, random.Random(1))
    opp = Setup.random(side.other, random.Random(2))
    Game.for_player(own, opp.squares)  # fine
    with pytest.raises(RulesError, match="21 distinct squares"):
        Game.for_player(own, opp.squares[:-1])
    with pytest.raises(RulesError, match="outside"):
        Game.for_player(own, own.squares)  # the opponent's pieces on our home rows


# -- formation text ----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), side=st.sampled_from(SIDES))
def test_formation_round_trip(seed: int, side: Side) -> None:
    setup = Setup.random(side, random.Random(seed))
    text = setup.formation()
    assert text == format_formation(side, setup.placement)
    assert parse_formation(side, text) == dict(setup.placement)
    assert Setup.from_formation(side, text) == setup
    lines = text.splitlines()
    assert len(lines) == 3 and text.endswith("\n")
    assert all(len(line.split()) == 9 for line in lines)


BALANCED_ROWS = [
    line.split()
    for line in """
    PVT 3*  SPY .   5*  .   4*  SPY PVT
    SGT 2LT CPT MAJ 1*  LTC COL 1LT PVT
    .   PVT 2*  PVT FLG PVT .   .   .
    """.strip().splitlines()
]


@pytest.mark.parametrize("side", SIDES)
def test_formation_is_seen_from_the_players_seat(side: Side) -> None:
    """Line 1 is the front row, cell 1 the player's left. White sits at rank 1 (front row
    rank 3, left = file a); Black sits at rank 8 facing White (front row rank 6, left =
    file i): the same text is point-mirrored for Black."""
    placement = parse_formation(side, formation_text("balanced"))
    if side is Side.WHITE:
        ranks_of_line, files = ["3", "2", "1"], "abcdefghi"
    else:
        ranks_of_line, files = ["6", "7", "8"], "ihgfedcba"
    expected = {}
    for line, cells in enumerate(BALANCED_ROWS):
        for col, cell in enumerate(cells):
            if cell != ".":
                expected[parse_square(files[col] + ranks_of_line[line])] = Rank.from_code(cell)
    assert placement == expected
    flag_square = "e1" if side is Side.WHITE else "e8"
    assert placement[parse_square(flag_square)] is Rank.FLAG
    front_left = "a3" if side is Side.WHITE else "i6"
    assert placement[parse_square(front_left)] is Rank.PRIVATE


@pytest.mark.parametrize("side", SIDES)
def test_format_of_a_parsed_formation_normalises_the_text(side: Side) -> None:
    raw = formation_text("balanced")
    again = format_formation(side, parse_formation(side, raw))
    assert [ln.split() for ln in again.splitlines()] == BALANCED_ROWS
    messy = "# comment\n\n  pvt 3* spy . 5* . 4* spy pvt  # front\n" + "\n".join(
        " ".join(r) for r in BALANCED_ROWS[1:]
    )
    assert parse_formation(side, messy) == parse_formation(side, raw)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("\n".join([" ".join(["PVT"] * 9)] * 2), "found 2 rows"),
        ("\n".join([" ".join(["PVT"] * 9)] * 4), "found 4 rows"),
        ("", "found 0 rows"),
        (
            "PVT PVT PVT PVT PVT PVT SPY SPY FLG\nSGT 2LT 1LT CPT MAJ LTC COL 1*\n"
            "2* 3* 4* 5* . . . . .",
            "row 2 has 8 cells, it needs 9",
        ),
        (
            "PVT PVT PVT PVT PVT PVT SPY SPY FLG .\nSGT 2LT 1LT CPT MAJ LTC COL 1* .\n"
            "2* 3* 4* 5* . . . . .",
            "row 1 has 10 cells, it needs 9",
        ),
        (
            "PVT PVT PVT PVT PVT PVT SPY SPY FLG\nSGT 2LT 1LT CPT MAJ LTC COL 1* XYZ\n"
            "2* 3* 4* 5* . . . . .",
            "unknown rank code 'XYZ'",
        ),
    ],
)
def test_bad_formation_text(side: Side, text: str, needle: str) -> None:
    with pytest.raises(InvalidNotationError) as e:
        parse_formation(side, text)
    assert needle in str(e.value)


@pytest.mark.parametrize("side", SIDES)
def test_formation_with_a_wrong_set_is_an_invalid_setup(side: Side) -> None:
    text = ("PVT PVT PVT PVT PVT PVT PVT SPY FLG\nSGT 2LT 1LT CPT MAJ LTC COL 1* .\n"
            "2* 3* 4* 5* . . . . .")
    parse_formation(side, text)  # the notation is fine ...
    with pytest.raises(InvalidSetupError, match=r"7 x Private"):
        Setup.from_formation(side, text)  # ... the set is not


# -- shipped formations ------------------------------------------------------------------


def test_shipped_formation_names() -> None:
    assert formation_names() == ["balanced", "blitz", "fortress"]


@pytest.mark.parametrize("name", ["balanced", "blitz", "fortress"])
@pytest.mark.parametrize("side", SIDES)
def test_shipped_formations_load_for_both_sides(name: str, side: Side) -> None:
    setup = load_formation(name, side)
    assert setup.side is side
    assert len(setup.placement) == 21
    assert names(setup.placement) <= HOME[side]
    assert {r.name: setup.ranks.count(r) for r in Rank} == SEED_COUNTS
    # White's and Black's versions are the same picture, point-mirrored.
    white = load_formation(name, Side.WHITE)
    black = load_formation(name, Side.BLACK)
    assert {71 - sq: r for sq, r in white.placement.items()} == dict(black.placement)


def test_unknown_formation_name() -> None:
    with pytest.raises(InvalidNotationError) as e:
        load_formation("turtle", Side.WHITE)
    assert "turtle" in str(e.value) and "balanced" in str(e.value)
