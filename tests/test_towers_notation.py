"""Towers notation and rule options (SPEC 4.9 and 4.10): squares, actions as text and as
one byte, the options' dict and byte forms, and the errors bad input gets; plus the
engine's layer (pure: nothing but itself and the standard library) and its doctests."""

from __future__ import annotations

import ast
import doctest
import importlib
from pathlib import Path

import pytest

from p2pgotg.games.towers.rules import (
    ALL_ACTIONS,
    BORDER,
    CODES,
    OPTIONS_BYTES,
    Action,
    CaptureRule,
    InvalidNotationError,
    Kind,
    RuleOptions,
    border_distance,
    neighbours,
    parse_square,
    square_name,
)

RULES = Path(__file__).resolve().parent.parent / "p2pgotg" / "games" / "towers" / "rules"


def test_squares_are_named_by_file_a_to_e_and_rank_1_to_5():
    assert [square_name(i) for i in (0, 4, 12, 20, 24)] == ["a1", "e1", "c3", "a5", "e5"]
    assert all(parse_square(square_name(i)) == i for i in range(25))
    assert parse_square(" C3 ") == 12


@pytest.mark.parametrize("text", ["f1", "a6", "a0", "c", "c33", "", "33"])
def test_a_square_that_is_not_on_the_board_is_refused_with_the_board_named(text):
    with pytest.raises(InvalidNotationError, match="files a-e, ranks 1-5"):
        parse_square(text)


def test_neighbours_are_orthogonal_only():
    assert sorted(square_name(s) for s in neighbours(parse_square("a1"))) == ["a2", "b1"]
    assert sorted(square_name(s) for s in neighbours(parse_square("c3"))) == [
        "b3", "c2", "c4", "d3"]
    assert len(neighbours(parse_square("c1"))) == 3


def test_the_border_is_the_sixteen_outer_squares_in_ring_order():
    assert len(BORDER) == 16 == len(set(BORDER))
    assert all(square_name(sq)[0] in "ae" or square_name(sq)[1] in "15" for sq in BORDER)
    assert all(border_distance(BORDER[i], BORDER[(i + 1) % 16]) == 1 for i in range(16))
    a1, e5 = parse_square("a1"), parse_square("e5")
    assert border_distance(a1, e5) == 8  # the far corner: eight steps either way
    assert border_distance(a1, parse_square("b1")) == 1  # round the corner, the short way
    with pytest.raises(InvalidNotationError):
        border_distance(a1, parse_square("c3"))


@pytest.mark.parametrize(("text", "written"), [
    ("c3-c4", "c3-c4"), ("c3c4", "c3-c4"), ("C3 c4", "c3-c4"), (" c3 - c4 ", "c3-c4"),
    ("+c3", "+c3"), ("+ C3", "+c3"), ("*b2", "*b2"), ("@a1", "@a1"), ("@ E5 ", "@e5"),
])
def test_actions_round_trip_through_text(text, written):
    action = Action.from_text(text)
    assert action.text() == written == str(action)
    assert Action.from_text(action.text()) == action


@pytest.mark.parametrize(("text", "why"), [
    ("c3-d4", "never diagonal"), ("c3-c5", "never diagonal"), ("c3-c3", "never diagonal"),
    ("#c3", "is not an action"), ("c3", "is not an action"), ("+f3", "files a-e"),
    ("build c3", "is not an action"), ("", "is not an action"), ("f1-f2", "files a-e"),
    ("@c", "files a-e"),
])
def test_text_that_is_not_an_action_says_what_is_wrong(text, why):
    with pytest.raises(InvalidNotationError, match=why):
        Action.from_text(text)


def test_every_action_has_one_code_and_the_codes_are_those_of_spec_4_9():
    codes = [a.code() for a in ALL_ACTIONS]
    assert sorted(codes) == codes and len(set(codes)) == len(ALL_ACTIONS)
    assert all(Action.from_code(a.code()) == a for a in ALL_ACTIONS)
    # 25 each of layers, spawns and claims; a move for each of the 40 adjacent ordered
    # pairs of squares: 4 * 25 directions less the 20 that leave the board
    assert len(ALL_ACTIONS) == 3 * 25 + 80
    c3 = parse_square("c3")
    assert Action.layer(c3).code() == 12
    assert Action.spawn(c3).code() == 25 + 12
    assert Action.claim(c3).code() == 50 + 12
    # moves: 75 + 4 * from + direction (up 0, right 1, down 2, left 3)
    assert [Action.from_text(t).code() for t in ("c3-c4", "c3-d3", "c3-c2", "c3-b3")] == [
        75 + 48, 75 + 49, 75 + 50, 75 + 51]
    assert Action.from_text("e5-e4").code() == 75 + 4 * 24 + 2 == CODES - 2  # (e5 down)


# (75 + 2 and 75 + 3: a1 down and a1 left)
@pytest.mark.parametrize("code", [-1, CODES, 300, 75 + 2, 75 + 3, True, "7", None])
def test_a_code_that_is_no_action_is_refused(code):
    with pytest.raises(InvalidNotationError):
        Action.from_code(code)


def test_an_action_value_checks_itself():
    with pytest.raises(InvalidNotationError, match="off the board"):
        Action(Kind.LAYER, 25)
    with pytest.raises(InvalidNotationError, match="only a move"):
        Action(Kind.SPAWN, 3, 4)
    with pytest.raises(InvalidNotationError, match="never diagonal"):
        Action(Kind.MOVE, 0, 6)


# -- rule options ------------------------------------------------------------------------

def test_the_defaults_are_the_literal_reading():
    o = RuleOptions()
    assert (o.seats, o.teams, o.capture, o.climb_limit, o.descent_limit, o.start_gap) == (
        2, False, CaptureRule.HIGHER, 0, 0, 2)
    assert not (o.short_turn or o.stuck_loses or o.partners_block or o.bonus_highest_tower
                or o.bonus_most_pawns)
    assert (o.clock_seconds, o.turn_seconds) == (0, 0)


SOME = [
    RuleOptions(),
    RuleOptions(seats=3, capture=CaptureRule.NOT_LOWER, climb_limit=1, descent_limit=49),
    RuleOptions(seats=4, teams=True, partners_block=True, start_gap=1, short_turn=True,
                stuck_loses=True, bonus_highest_tower=True, bonus_most_pawns=True,
                clock_seconds=604800, turn_seconds=90),
]


@pytest.mark.parametrize("options", SOME)
def test_options_round_trip_through_their_dict_and_their_bytes(options):
    assert RuleOptions.from_dict(options.to_dict()) == options
    data = options.to_bytes()
    assert len(data) == OPTIONS_BYTES == 19
    assert RuleOptions.from_bytes(data) == options


def test_the_byte_form_is_laid_out_as_spec_4_10_says():
    o = RuleOptions(seats=3, capture=CaptureRule.NOT_LOWER, climb_limit=1, descent_limit=2,
                    start_gap=1, short_turn=True, bonus_most_pawns=True,
                    clock_seconds=0x010203, turn_seconds=5)
    assert o.to_bytes() == bytes([3, 0, 1, 1, 2, 1, 1, 0, 0, 0, 1, 0, 1, 2, 3, 0, 0, 0, 5])
    assert list(RuleOptions().to_dict()) == [
        "seats", "teams", "capture", "climb_limit", "descent_limit", "start_gap",
        "short_turn", "stuck_loses", "partners_block", "bonus_highest_tower",
        "bonus_most_pawns", "clock_seconds", "turn_seconds"]
    assert RuleOptions().to_dict()["capture"] == "higher"


@pytest.mark.parametrize(("change", "why"), [
    ({"seats": 5}, "seats must be"), ({"seats": 1}, "seats must be"),
    ({"seats": True}, "seats must be"), ({"teams": 1}, "teams must be true or false"),
    ({"teams": True}, "teams needs seats = 4"), ({"capture": "HIGHER"}, "bad rule option"),
    ({"climb_limit": 50}, "climb_limit"), ({"start_gap": 0}, "start_gap"),
    ({"start_gap": 3}, "start_gap"), ({"partners_block": True}, "needs teams"),
    ({"clock_seconds": -1}, "clock_seconds"), ({"turn_seconds": 604801}, "turn_seconds"),
    ({"turn_seconds": 1.5}, "turn_seconds"), ({"extra": 1}, "exactly the keys"),
])
def test_a_bad_options_dict_is_refused_with_the_option_named(change, why):
    data = RuleOptions().to_dict() | change
    with pytest.raises(ValueError, match=why):
        RuleOptions.from_dict(data)


def test_an_options_dict_missing_a_key_or_not_a_map_is_refused():
    data = RuleOptions().to_dict()
    del data["teams"]
    with pytest.raises(ValueError, match="exactly the keys"):
        RuleOptions.from_dict(data)
    with pytest.raises(ValueError, match="must be a map"):
        RuleOptions.from_dict([1, 2])


@pytest.mark.parametrize("data", [
    b"", bytes(18), bytes(20), bytes([2, 2] + [0] * 17), bytes([2, 0, 2] + [0] * 16),
    bytes([5, 0, 0, 0, 0, 2] + [0] * 13), bytes([2, 0, 0, 0, 0, 0] + [0] * 13),
])
def test_bad_option_bytes_are_refused(data):
    with pytest.raises(ValueError):
        RuleOptions.from_bytes(data)


def test_options_describe_themselves():
    assert RuleOptions().describe() == "2 players, 13 flags each"
    assert RuleOptions(seats=3, climb_limit=1, bonus_most_pawns=True).describe() == (
        "3 players, 11 flags each, climb at most 1, bonus for the most pawns")


# -- the layer and the examples ----------------------------------------------------------

def test_the_rules_engine_imports_only_itself_and_the_standard_library():
    """Pure: no I/O layers, no crypto, no protocol, no Game of the Generals rules."""
    allowed_stdlib = {"__future__", "collections", "dataclasses", "enum", "re", "struct",
                      "typing"}
    wrong = []
    for path in sorted(RULES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if not (name.startswith("p2pgotg.games.towers.rules")
                        or name.split(".")[0] in allowed_stdlib):
                    wrong.append(f"{path.name} imports {name}")
    assert not wrong


@pytest.mark.parametrize("module", sorted(p.stem for p in RULES.glob("*.py")))
def test_the_docstring_examples_run(module):
    name = "p2pgotg.games.towers.rules" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
