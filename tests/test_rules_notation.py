"""Notation: squares a1..i8, moves, rank codes, and the dict form of RuleOptions.

Squares follow SPEC.md 1.2: 9 files a-i, 8 ranks 1-8, index = row * 9 + file with a1 = 0
and i8 = 71 (seed 000 "72 plain squares arranged in 8 ranks and 9 files").
"""

from __future__ import annotations

import itertools
import json

import pytest

from p2pgotg.rules import (
    ChallengeMode,
    FlagRule,
    InvalidNotationError,
    Move,
    Rank,
    RuleOptions,
    parse_square,
    square,
    square_name,
)

ALL_NAMES = [f"{f}{r}" for r in "12345678" for f in "abcdefghi"]  # a1, b1, ..., i8


# -- squares -------------------------------------------------------------------------------


def test_all_72_squares_round_trip() -> None:
    assert len(ALL_NAMES) == 72
    for index, name in enumerate(ALL_NAMES):
        assert square_name(index) == name
        assert parse_square(name) == index
        assert parse_square(name.upper()) == index
        assert parse_square(f"  {name} ") == index
        assert square("abcdefghi".index(name[0]), int(name[1]) - 1) == index


def test_corner_indices() -> None:
    assert [parse_square(n) for n in ("a1", "i1", "a2", "a8", "i8")] == [0, 8, 9, 63, 71]


@pytest.mark.parametrize("text", ["j1", "a0", "a9", "", "a", "aa", "1a", "a10", "e 4", "4e"])
def test_bad_squares(text: str) -> None:
    with pytest.raises(InvalidNotationError) as e:
        parse_square(text)
    msg = str(e.value)
    assert repr(text) in msg and "files a-i, ranks 1-8" in msg


@pytest.mark.parametrize("index", [-1, 72, 100])
def test_off_board_indices(index: int) -> None:
    with pytest.raises(InvalidNotationError, match="off the board"):
        square_name(index)
    with pytest.raises(InvalidNotationError, match="off the board"):
        Move(index, 0)
    with pytest.raises(InvalidNotationError):
        square(9, 0)
    with pytest.raises(InvalidNotationError):
        square(0, 8)


# -- moves ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["c3-c4", "c3c4", "c3 c4", "C3-C4", " c3 - c4 ", "c3  c4"])
def test_move_spellings(text: str) -> None:
    move = Move.parse(text)
    assert move == Move(2 * 9 + 2, 3 * 9 + 2)  # c3 = row 2 file 2, c4 = row 3 file 2
    assert move.text() == "c3-c4" == str(move)


def test_every_move_text_round_trips() -> None:
    for a, b in itertools.product(range(72), repeat=2):
        move = Move(a, b)
        assert move.text() == f"{ALL_NAMES[a]}-{ALL_NAMES[b]}"
        assert Move.parse(move.text()) == move
        assert Move.parse(move.text().replace("-", "")) == move


@pytest.mark.parametrize(
    "text", ["", "c3", "c3-", "-c4", "c3-c9", "j3-c4", "c3xc4", "c3--c4", "c3-c4-c5", "c3 to c4"]
)
def test_bad_moves(text: str) -> None:
    with pytest.raises(InvalidNotationError) as e:
        Move.parse(text)
    msg = str(e.value)
    assert repr(text) in msg and "is not a move" in msg and "c3-c4" in msg


def test_moves_are_values() -> None:
    assert Move.parse("e4-e5") == Move.parse("e4e5")
    assert len({Move.parse("e4-e5"), Move.parse("e4 e5")}) == 1
    with pytest.raises(AttributeError):
        Move.parse("e4-e5").to_square = 0  # type: ignore[misc]


# -- rank indices and codes ----------------------------------------------------------------

# SPEC.md 1.3: the rank index used on the wire, with its short code.
RANK_TABLE = [
    (0, "FLAG", "FLG"),
    (1, "SPY", "SPY"),
    (2, "PRIVATE", "PVT"),
    (3, "SERGEANT", "SGT"),
    (4, "SECOND_LIEUTENANT", "2LT"),
    (5, "FIRST_LIEUTENANT", "1LT"),
    (6, "CAPTAIN", "CPT"),
    (7, "MAJOR", "MAJ"),
    (8, "LIEUTENANT_COLONEL", "LTC"),
    (9, "COLONEL", "COL"),
    (10, "BRIGADIER_GENERAL", "1*"),
    (11, "MAJOR_GENERAL", "2*"),
    (12, "LIEUTENANT_GENERAL", "3*"),
    (13, "GENERAL", "4*"),
    (14, "GENERAL_OF_THE_ARMY", "5*"),
]


@pytest.mark.parametrize(("index", "name", "code"), RANK_TABLE)
def test_rank_indices_and_codes(index: int, name: str, code: str) -> None:
    rank = Rank(index)
    assert rank.name == name and rank.code == code
    assert Rank.from_code(code) is rank
    assert Rank.from_code(code.lower()) is rank
    assert Rank.from_code(f" {code} ") is rank
    assert rank.is_officer is (index >= 3)


def test_rank_codes_are_short_and_distinct() -> None:
    codes = [r.code for r in Rank]
    assert len(set(codes)) == 15 and all(1 <= len(c) <= 3 for c in codes)
    assert "." not in codes  # "." is the empty cell of a formation


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("F", "FLAG"),
        ("flag", "FLAG"),
        ("S", "SPY"),
        ("P", "PRIVATE"),
        ("GOA", "GENERAL_OF_THE_ARMY"),
        ("5S", "GENERAL_OF_THE_ARMY"),
        ("GEN", "GENERAL"),
        ("4s", "GENERAL"),
        ("LG", "LIEUTENANT_GENERAL"),
        ("MG", "MAJOR_GENERAL"),
        ("BG", "BRIGADIER_GENERAL"),
        ("1S", "BRIGADIER_GENERAL"),
    ],
)
def test_rank_code_aliases(alias: str, name: str) -> None:
    assert Rank.from_code(alias).name == name


@pytest.mark.parametrize("text", ["", "X", "6*", "PRIV", "0"])
def test_unknown_rank_code(text: str) -> None:
    with pytest.raises(InvalidNotationError) as e:
        Rank.from_code(text)
    assert "unknown rank code" in str(e.value) and "FLG" in str(e.value)


# -- RuleOptions ---------------------------------------------------------------------------

# The rule keys and their defaults (SPEC.md 1.11). RuleOptions may carry further keys (e.g.
# the clock, which the network driver enforces); the tests take those from the defaults.
RULE_DEFAULTS = {
    "flag_rule": "safe_or_survive",
    "two_squares": False,
    "chasing": False,
    "challenge_mode": "open",
}
DEFAULT_DICT = RuleOptions().to_dict()


def test_default_options_dict() -> None:
    d = RuleOptions().to_dict()
    assert {k: d[k] for k in RULE_DEFAULTS} == RULE_DEFAULTS
    assert list(d)[:4] == ["flag_rule", "two_squares", "chasing", "challenge_mode"]
    assert all(type(v) in (str, bool, int) for v in d.values())  # plain values only
    assert RuleOptions.from_dict(d) == RuleOptions()
    opts = RuleOptions()
    assert opts.flag_rule is FlagRule.SAFE_OR_SURVIVE
    assert opts.challenge_mode is ChallengeMode.OPEN
    assert (opts.two_squares, opts.chasing) == (False, False)


@pytest.mark.parametrize(
    ("flag_rule", "two_squares", "chasing", "mode"),
    list(
        itertools.product(
            ["safe_or_survive", "always_survive", "immediate"],
            [False, True],
            [False, True],
            ["open", "blind"],
        )
    ),
)
def test_options_round_trip(flag_rule: str, two_squares: bool, chasing: bool, mode: str) -> None:
    d = {
        **DEFAULT_DICT,
        "flag_rule": flag_rule,
        "two_squares": two_squares,
        "chasing": chasing,
        "challenge_mode": mode,
    }
    opts = RuleOptions.from_dict(d)
    assert opts.flag_rule is FlagRule(flag_rule) and opts.challenge_mode is ChallengeMode(mode)
    assert (opts.two_squares, opts.chasing) == (two_squares, chasing)
    assert opts.to_dict() == d and list(opts.to_dict()) == list(DEFAULT_DICT)
    assert RuleOptions.from_dict(json.loads(json.dumps(opts.to_dict()))) == opts
    assert hash(opts) == hash(RuleOptions.from_dict(d))


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (None, "must be a map"),
        ([("flag_rule", "immediate")], "must be a map"),
        ("flag_rule=immediate", "must be a map"),
        ({k: v for k, v in DEFAULT_DICT.items() if k != "chasing"}, "exactly the keys"),
        ({k: v for k, v in DEFAULT_DICT.items() if k != "flag_rule"}, "exactly the keys"),
        ({**DEFAULT_DICT, "timer": 60}, "exactly the keys"),
        ({}, "exactly the keys"),
        ({**DEFAULT_DICT, "two_squares": 1}, "two_squares must be true or false"),
        ({**DEFAULT_DICT, "chasing": "false"}, "chasing must be true or false"),
        ({**DEFAULT_DICT, "chasing": None}, "chasing must be true or false"),
        ({**DEFAULT_DICT, "flag_rule": "SAFE_OR_SURVIVE"}, "bad rule option"),
        ({**DEFAULT_DICT, "flag_rule": "survive"}, "bad rule option"),
        ({**DEFAULT_DICT, "flag_rule": 0}, "bad rule option"),
        ({**DEFAULT_DICT, "challenge_mode": "arbiter"}, "bad rule option"),
        ({**DEFAULT_DICT, "challenge_mode": ["open"]}, "bad rule option"),
    ],
)
def test_options_reject_bad_input(bad, needle: str) -> None:
    with pytest.raises(ValueError) as e:
        RuleOptions.from_dict(bad)
    assert needle in str(e.value)
