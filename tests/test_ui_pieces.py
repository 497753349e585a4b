"""The interface's pure parts: the board drawn from each seat, the words for a challenge
(an arbiter's words when a rank is hidden), the command line, the setup editor and the
formation files. Expected values come from the rules (seed 000), not from the code."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from p2pgotg.rules import (
    ChallengeResult,
    Game,
    Move,
    Piece,
    PlyRecord,
    Rank,
    Setup,
    Side,
    Termination,
    parse_square,
)
from p2pgotg.ui import board, formation_files
from p2pgotg.ui.board import Marks, fragments_text
from p2pgotg.ui.commands import CommandError, parse_command
from p2pgotg.ui.setup_editor import SetupEditor
from p2pgotg.ui.words import challenge_lines, clock_text, how_it_ended, piece_words


def _lines(game: Game, viewer: Side, **marks) -> list[str]:
    return fragments_text(
        board.board_fragments(board.game_content(game), viewer, Marks(**marks), ascii=True)
    ).splitlines()


def test_each_side_sees_its_own_home_rows_at_the_bottom() -> None:
    game = Game.from_position({"a1": (Side.WHITE, Rank.FLAG), "i8": (Side.BLACK, None)})
    white = _lines(game, Side.WHITE)
    assert white[0].startswith(" 8 ") and white[7].startswith(" 1 ")
    assert white[8].split() == list("abcdefghi")
    assert white[7][3:8] == " FLG " and white[0][-5:] == "( ? )"  # a1 bottom left
    black = _lines(game, Side.BLACK)
    assert black[0].startswith(" 1 ") and black[7].startswith(" 8 ")
    assert black[8].split() == list("ihgfedcba")
    # an enemy rank is in lower case, whatever marks it (item: whose piece is it?)
    assert black[0].endswith("(flg)") and black[7][3:8] == "  ?  "  # i8 bottom left


def test_marks_are_text_so_they_read_without_colour() -> None:
    game = Game.from_position({"e4": (Side.WHITE, Rank.MAJOR), "e5": (Side.BLACK, None)})
    e4, e5, d4 = (parse_square(s) for s in ("e4", "e5", "d4"))
    lines = _lines(game, Side.WHITE, cursor=d4, selected=e4, targets=frozenset({e5, d4}))
    row4 = lines[4]
    assert row4[3 + 3 * 5: 3 + 4 * 5] == "[ + ]"  # the cursor wins over a target mark
    assert row4[3 + 4 * 5: 3 + 5 * 5] == ">MAJ<"
    assert lines[3][3 + 4 * 5: 3 + 5 * 5] == "+ ? )"  # a challenge is possible there
    assert all(len(line) == board.WIDTH for line in lines)


def test_cursor_steps_in_screen_directions_for_either_side() -> None:
    e4 = parse_square("e4")
    assert board.step(Side.WHITE, e4, 0, -1) == parse_square("e5")  # up: towards rank 8
    assert board.step(Side.BLACK, e4, 0, -1) == parse_square("e3")  # up: towards rank 1
    assert board.step(Side.BLACK, e4, 1, 0) == parse_square("d4")
    assert board.step(Side.WHITE, parse_square("a1"), -1, 1) == parse_square("a1")
    assert board.step(Side.WHITE, parse_square("e4"), 0, -1, range(5, 8)) == parse_square("e3")


def _challenge(attacker: Rank | None, defender: Rank | None, result: ChallengeResult):
    game = Game.from_position({"e4": (Side.WHITE, attacker), "e5": (Side.BLACK, defender)})
    record = PlyRecord(Side.WHITE, Move.parse("e4-e5"), Piece(Side.WHITE, 0),
                       Piece(Side.BLACK, 0), result)
    return game, record


def test_a_hidden_rank_is_never_named_only_the_outcome() -> None:
    """Blind mode: the arbiter says whose piece left the board, never its rank."""
    game, record = _challenge(Rank.CAPTAIN, None, ChallengeResult.DEFENDER_WINS)
    assert challenge_lines(game, record, Side.WHITE) == [
        "your CPT vs their piece", "-> your CPT eliminated"]
    game, record = _challenge(None, Rank.SPY, ChallengeResult.ATTACKER_WINS)
    assert challenge_lines(game, record, Side.BLACK) == [
        "their piece vs your SPY", "-> your SPY eliminated"]
    assert piece_words(game, Piece(Side.WHITE, 0), Side.BLACK) == "their piece"


def test_open_challenges_name_both_declared_ranks() -> None:
    game, record = _challenge(Rank.PRIVATE, Rank.PRIVATE, ChallengeResult.BOTH_ELIMINATED)
    assert challenge_lines(game, record, Side.WHITE) == [
        "your PVT vs their PVT", "-> both eliminated"]


def test_endings_are_told_from_the_players_side() -> None:
    assert how_it_ended(Termination.RESIGNATION, True) == "they resigned"
    assert how_it_ended(Termination.RESIGNATION, False) == "you resigned"
    assert "your flag" in how_it_ended(Termination.FLAG_CAPTURED, False)
    assert clock_text(None) == "-" and clock_text(61) == "1:01" and clock_text(3600) == "1:00:00"


@pytest.mark.parametrize("text, kind", [
    ("c3 c4", "move"), ("c3-c4", "move"), ("C3C4", "move"), ("resign", "resign"),
    ("DRAW", "draw"), ("decline", "decline"), ("help", "help"), ("?", "help"),
])
def test_commands(text: str, kind: str) -> None:
    assert parse_command(text).kind == kind


@pytest.mark.parametrize("text, says", [
    ("c3 c9", "not a move"), ("fly away", "unknown command"), ("chat", "needs a message"),
    ("resign now", "takes nothing"), ("", "type a move"),
])
def test_bad_commands_say_why_in_one_line(text: str, says: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_command(text)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_setup_editor_places_swaps_removes_and_validates() -> None:
    editor = SetupEditor(Side.WHITE)
    home = editor.home
    assert len(home) == 27
    for sq in home[:21]:
        editor.enter(sq)
    assert editor.problems() == []
    setup = editor.setup()
    assert sorted(setup.ranks) == sorted(Setup.random(Side.WHITE, random.Random(1)).ranks)
    a, b = home[0], home[20]
    ra, rb = editor.placement[a], editor.placement[b]
    editor.enter(a)
    editor.enter(b)
    assert (editor.placement[a], editor.placement[b]) == (rb, ra)
    editor.enter(b)
    editor.enter(home[26])  # move to an empty square
    assert home[26] in editor.placement and b not in editor.placement
    assert "not one of your home squares" in editor.enter(parse_square("e5"))
    editor.remove(home[26])
    assert editor.problems() == ["1 piece still to place"]
    assert editor.tray_rank is ra  # what was taken away is next to place
    editor.randomize(random.Random(4))
    assert editor.problems() == []
    assert editor.clear() and editor.problems() == ["21 pieces still to place"]


def test_a_formation_with_too_many_of_a_rank_is_explained() -> None:
    editor = SetupEditor(Side.BLACK)
    editor.load("PVT PVT PVT PVT PVT PVT PVT . .\n. . . . . . . . .\n. . . . . . . . .\n")
    assert editor.problems() == ["the formation does not match the 21-piece set: 1 PVT too many"]


def test_formations_save_atomically_and_load_for_either_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path))
    editor = SetupEditor(Side.WHITE)
    editor.randomize(random.Random(9))
    path = formation_files.write("my-wall", editor.formation())
    assert path == tmp_path / "config" / "formations" / "my-wall.txt"
    assert [p.name for p in path.parent.iterdir()] == ["my-wall.txt"]  # no temp file left
    assert formation_files.names()[0] == "my-wall" and "balanced" in formation_files.names()
    black = SetupEditor(Side.BLACK)
    black.load(formation_files.read("my-wall"))
    assert black.problems() == []
    # the same formation, seen from the other seat: same ranks, mirrored squares
    assert sorted(black.placement.values()) == sorted(editor.placement.values())
    black.load(formation_files.read("balanced"))
    assert black.problems() == []
    with pytest.raises(formation_files.FormationFileError, match="cannot be a formation name"):
        formation_files.write("../evil", "x")
    with pytest.raises(formation_files.FormationFileError, match="no formation named"):
        formation_files.read("nothing-here")


def test_the_end_screen_explains_every_blind_challenge_with_both_ranks() -> None:
    """Blind results are told as an arbiter would during play; after the audit the end
    screen names both ranks of every challenge, taken from the opened commitments."""
    import random

    from p2pgotg.protocol.pair import Pair
    from p2pgotg.rules import ChallengeMode, RuleOptions, resolve_challenge
    from p2pgotg.ui.end_screen import challenges_explained

    pair = Pair.new(RuleOptions(challenge_mode=ChallengeMode.BLIND), seed="ui-blind-end")
    pair.handshake(rng=random.Random(4))
    pair.play_random(random.Random(4))
    peer = pair.host
    lines = challenges_explained(peer)
    records = [r for r in peer.view.history if r.result is not None]
    assert records and len(lines) == len(records)
    # each line's ranks give the result the rules give (chapter 1's table)
    codes = {rank.code: rank for rank in Rank}
    for line, record in zip(lines, records, strict=True):
        words = line.split()  # `  7 you  c3-c4 PVT vs 5*: your PVT out`
        assert words[4] == "vs"
        attacker, defender = codes[words[3]], codes[words[5].rstrip(":")]
        assert resolve_challenge(attacker, defender) is record.result
