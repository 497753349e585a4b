"""The Towers board as formatted text: pure and testable.

Rank 5 on top, files a..e left to right (the board has no side of its own to turn
towards). Each square is one cell of seven characters: a mark, its tower's height, then
its pawn and its flag by colour, the pawn as its colour's capital letter and the flag as
the small one (SPEC 4.2's letters R B G Y; `.` for none), then a mark:

    `  3 Rr ` a Red pawn on its own flag, on three layers
    `  0 .b ` a Blue flag alone, on the ground
    `[ 1 .. ]` the cursor, on an empty square with one layer (marks take the brackets)

The marks are text, so the board reads without colour (`--ascii`): `[ ]` the cursor,
`> <` the pawn picked up, `+ +` where it may go, `: :` the squares of the last action.
In colour each letter takes its colour, and taller towers stand on lighter ground.
"""

from __future__ import annotations

from p2pgotg.games.towers.rules import SIZE, Action, Colour, Game, Kind
from p2pgotg.games.towers.rules.board import FILE_NAMES
from p2pgotg.ui.board import Fragments, Marks

CELL = 7  # characters per square: a mark, two for the height, a space, pawn, flag, a mark
LABEL = 3  # characters before the first square: " 5 "
WIDTH = LABEL + SIZE * CELL
#: Lines the board takes: the ranks with an empty line between two, then the files.
ROWS = 2 * SIZE

_COLOUR_CLASS = {Colour.RED: "red", Colour.BLUE: "blue", Colour.GREEN: "green",
                 Colour.YELLOW: "yellow"}


def colour_style(seat: int) -> str:
    """The style of a colour's letters and names."""
    return f"class:towers.{_COLOUR_CLASS[Colour(seat)]}"


def square_at(column: int, line: int) -> int:
    """The square at screen column `column` (0..4) and rank line `line` (0 = top)."""
    return (SIZE - 1 - line) * SIZE + column


def step(sq: int, dx: int, dy: int) -> int:
    """A cursor moved on screen (dx right, dy down), stopping at the edges."""
    column = min(max(sq % SIZE + dx, 0), SIZE - 1)
    line = min(max(SIZE - 1 - sq // SIZE + dy, 0), SIZE - 1)
    return square_at(column, line)


def action_squares(action: Action) -> frozenset[int]:
    """The squares an action touched: a move's two, else its one."""
    if action.kind is Kind.MOVE and action.to is not None:
        return frozenset((action.square, action.to))
    return frozenset((action.square,))


def letters(game: Game, sq: int) -> tuple[str, str]:
    """The pawn's letter and the flag's letter on a square (`.` for none)."""
    pawn, flag = game.pawn_at(sq), game.flag_at(sq)
    return (Colour(pawn).letter if pawn is not None else ".",
            Colour(flag).letter.lower() if flag is not None else ".")


def _height_style(height: int) -> str:
    return f" class:towers.h{min(height, 4)}" if height else ""


def _cell(game: Game, sq: int, marks: Marks) -> Fragments:
    """One square: its marks, height, pawn and flag, each in its own style."""
    height = game.height(sq)
    ground = "class:towers.cell" + _height_style(height)
    left = right = " "
    if sq in marks.last:
        ground += " class:board.last"
        left, right = ":", ":"
    if sq in marks.targets:
        ground += " class:board.target"
        left, right = "+", "+"
    if sq == marks.selected:
        ground += " class:board.selected"
        left, right = ">", "<"
    if sq == marks.cursor:
        ground += " class:board.cursor"
        left, right = "[", "]"
    pawn, flag = game.pawn_at(sq), game.flag_at(sq)
    pawn_letter, flag_letter = letters(game, sq)
    pawn_style = f"{ground} {colour_style(pawn)} class:towers.pawn" if pawn is not None \
        else f"{ground} class:towers.none"
    flag_style = f"{ground} {colour_style(flag)} class:towers.flag" if flag is not None \
        else f"{ground} class:towers.none"
    height_style = ground if height else f"{ground} class:towers.none"
    return [(ground, left), (height_style, f"{height:>2}"), (ground, " "),
            (pawn_style, pawn_letter), (flag_style, flag_letter), (ground, right)]


NO_MARKS = Marks()  # (Game of the Generals' marks: Towers uses the first four)


def board_fragments(game: Game, marks: Marks = NO_MARKS, spaced: bool = True) -> Fragments:
    """The ranks, rank 5 first, with an empty line between two (unless not `spaced`),
    then the files; every line ends in a newline."""
    out: Fragments = []
    for line in range(SIZE):
        if line and spaced:
            out.append(("", "\n"))
        out.append(("class:board.label", f" {SIZE - line} "))
        for column in range(SIZE):
            out += _cell(game, square_at(column, line), marks)
        out.append(("", "\n"))
    files = "".join(f"{name:^{CELL}}" for name in FILE_NAMES)
    out.append(("class:board.label", " " * LABEL + files.rstrip() + "\n"))
    return out
