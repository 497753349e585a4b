"""The full 15 x 15 challenge matrix, with expectations written from the rule texts.

Sources (in the shared seeds folder, shared/seeds/):
- seed 000 = 000_0cbbf7c1c412fd5e.txt, "Determining result of a Challenge" and the
  pieces table ("Function" column);
- seed 001 = 001_452ae2ba76ddf93f.txt, "Challenging" item 1 and the pieces table.

Nothing here imports or mirrors the engine's logic: the table below is written out by
hand, `by_the_sentences` restates the seed sentences one by one, and the two are checked
against each other before the engine is checked against the table.
"""

from __future__ import annotations

import pytest

from p2pgotg.rules import ChallengeResult, Rank, resolve_challenge

A = ChallengeResult.ATTACKER_WINS
D = ChallengeResult.DEFENDER_WINS
B = ChallengeResult.BOTH_ELIMINATED

# The officers from the lowest up, as seed 000's and seed 001's pieces tables list them
# (from the top down): Sergeant, 2nd Lt, 1st Lt, Captain, Major, Lt Colonel, Colonel,
# then the 1- to 5-star generals.
OFFICERS = [
    Rank.SERGEANT,
    Rank.SECOND_LIEUTENANT,
    Rank.FIRST_LIEUTENANT,
    Rank.CAPTAIN,
    Rank.MAJOR,
    Rank.LIEUTENANT_COLONEL,
    Rank.COLONEL,
    Rank.BRIGADIER_GENERAL,
    Rank.MAJOR_GENERAL,
    Rank.LIEUTENANT_GENERAL,
    Rank.GENERAL,
    Rank.GENERAL_OF_THE_ARMY,
]
COLUMNS = [Rank.FLAG, Rank.SPY, Rank.PRIVATE, *OFFICERS]

# Rows: the attacker (the piece that moves). Columns: the defender, in the same order.
# A = the attacker wins (the defender leaves the board), D = the defender wins (the
# attacker leaves), B = both leave (a "split").
TABLE_TEXT = """
        FLG SPY PVT SGT 2LT 1LT CPT MAJ LTC COL 1*  2*  3*  4*  5*
FLG     A   D   D   D   D   D   D   D   D   D   D   D   D   D   D
SPY     A   B   D   A   A   A   A   A   A   A   A   A   A   A   A
PVT     A   A   B   D   D   D   D   D   D   D   D   D   D   D   D
SGT     A   D   A   B   D   D   D   D   D   D   D   D   D   D   D
2LT     A   D   A   A   B   D   D   D   D   D   D   D   D   D   D
1LT     A   D   A   A   A   B   D   D   D   D   D   D   D   D   D
CPT     A   D   A   A   A   A   B   D   D   D   D   D   D   D   D
MAJ     A   D   A   A   A   A   A   B   D   D   D   D   D   D   D
LTC     A   D   A   A   A   A   A   A   B   D   D   D   D   D   D
COL     A   D   A   A   A   A   A   A   A   B   D   D   D   D   D
1*      A   D   A   A   A   A   A   A   A   A   B   D   D   D   D
2*      A   D   A   A   A   A   A   A   A   A   A   B   D   D   D
3*      A   D   A   A   A   A   A   A   A   A   A   A   B   D   D
4*      A   D   A   A   A   A   A   A   A   A   A   A   A   B   D
5*      A   D   A   A   A   A   A   A   A   A   A   A   A   A   B
"""
_LETTER = {"A": A, "D": D, "B": B}


def _table() -> dict[tuple[Rank, Rank], ChallengeResult]:
    lines = [ln.split() for ln in TABLE_TEXT.strip().splitlines()]
    header, rows = lines[0], lines[1:]
    assert len(header) == 15 and len(rows) == 15
    table = {}
    for attacker, row in zip(COLUMNS, rows, strict=True):
        assert len(row) == 16, row
        for defender, letter in zip(COLUMNS, row[1:], strict=True):
            table[attacker, defender] = _LETTER[letter]
    return table


TABLE = _table()
ALL_PAIRS = [(a, d) for a in COLUMNS for d in COLUMNS]


def by_the_sentences(attacker: Rank, defender: Rank) -> ChallengeResult:
    """The seed sentences, applied in order (most specific first)."""
    # 000: "If a Flag challenges the opponent's Flag, the challenging Flag prevails";
    # 001: "The flag that moves into the same square occupied by the other flag wins".
    if attacker is Rank.FLAG and defender is Rank.FLAG:
        return A
    # 000: "Any one of the player's pieces can capture the opposing Flag";
    # 001: "The flag can be eliminated or captured by any piece".
    if defender is Rank.FLAG:
        return A
    # 000 table, Flag: "Eliminates the opposing Flag as long as it takes the aggressive
    # action against the enemy Flag" -- and nothing else, so it loses any other challenge.
    if attacker is Rank.FLAG:
        return D
    # 000: "If both pieces are of the same rank, both are removed from the board";
    # 001: "If both soldiers are of equal rank, both are eliminated".
    if attacker is defender:
        return B
    # 000: "Only the Private can eliminate the Spy"; 001: "Only a private can eliminate
    # the spy". 000: "Any piece, except the Spy and the Flag, eliminates the Private".
    if {attacker, defender} == {Rank.SPY, Rank.PRIVATE}:
        return A if attacker is Rank.PRIVATE else D
    # 000: "A Spy eliminates all officers (including the Five-Star General)";
    # 001: "A spy eliminates any officer starting with the rank of 5-star general down to
    # the sergeant". Every remaining opponent of a Spy is an officer.
    if attacker is Rank.SPY:
        return A
    if defender is Rank.SPY:
        return D
    # 000: "Any piece, except the Spy and the Flag, eliminates the Private".
    if defender is Rank.PRIVATE:
        return A
    if attacker is Rank.PRIVATE:
        return D
    # 000: "Officers eliminate other officers that are lower in rank";
    # 001: "A higher ranked soldier eliminates from the board a lower ranked soldier".
    return A if OFFICERS.index(attacker) > OFFICERS.index(defender) else D


def test_the_table_covers_every_rank_once() -> None:
    assert sorted(COLUMNS) == sorted(Rank)
    assert len(TABLE) == 225


@pytest.mark.parametrize(("attacker", "defender"), ALL_PAIRS)
def test_written_table_matches_the_seed_sentences(attacker: Rank, defender: Rank) -> None:
    assert TABLE[attacker, defender] is by_the_sentences(attacker, defender)


@pytest.mark.parametrize(
    ("attacker", "defender"), ALL_PAIRS, ids=[f"{a.code}-x-{d.code}" for a, d in ALL_PAIRS]
)
def test_resolve_challenge_matches_the_table(attacker: Rank, defender: Rank) -> None:
    assert resolve_challenge(attacker, defender) is TABLE[attacker, defender]


def test_who_initiates_does_not_matter_except_for_flags() -> None:
    # seed 000: "Regardless of which piece initiated the challenge, their ranks determine
    # which piece is to be eliminated". Only the Flag depends on who attacks.
    swap = {A: D, D: A, B: B}
    for attacker, defender in ALL_PAIRS:
        if Rank.FLAG in (attacker, defender):
            continue
        assert resolve_challenge(defender, attacker) is swap[resolve_challenge(attacker, defender)]


def test_spy_and_private_powers_from_the_pieces_table() -> None:
    # seed 000 table: Private "Eliminates the Spy, and the Flag"; Spy "Eliminates all
    # officers from the rank of Sergeant up to 5-Star General and the Flag".
    beaten_by_private = {d for d in COLUMNS if resolve_challenge(Rank.PRIVATE, d) is A}
    assert beaten_by_private == {Rank.SPY, Rank.FLAG}
    beaten_by_spy = {d for d in COLUMNS if resolve_challenge(Rank.SPY, d) is A}
    assert beaten_by_spy == {Rank.FLAG, *OFFICERS}
    # Only the Private eliminates the Spy, whoever attacks.
    spy_killers = {
        r
        for r in COLUMNS
        if resolve_challenge(r, Rank.SPY) is A or resolve_challenge(Rank.SPY, r) is D
    }
    assert spy_killers == {Rank.PRIVATE}


def test_the_sergeant_and_second_lieutenant_rows_of_the_pieces_table() -> None:
    # seed 000 table: Sergeant "Eliminates the Private, and the Flag"; 2nd Lieutenant
    # "Eliminates the Sergeant, the Private, and the Flag".
    assert {d for d in COLUMNS if resolve_challenge(Rank.SERGEANT, d) is A} == {
        Rank.PRIVATE,
        Rank.FLAG,
    }
    assert {d for d in COLUMNS if resolve_challenge(Rank.SECOND_LIEUTENANT, d) is A} == {
        Rank.SERGEANT,
        Rank.PRIVATE,
        Rank.FLAG,
    }
