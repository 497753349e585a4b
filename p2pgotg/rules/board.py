"""The 9x8 board: sides, squares in algebraic notation, home rows and back ranks.

Square indices run 0..71, `index = row * 9 + file`, with file 0 = `a` and row 0 = rank `1`.
White (the side that moves first) sets up on ranks 1-3 and Black on ranks 6-8.
"""

from __future__ import annotations

import enum
from functools import cache

from p2pgotg.rules.errors import InvalidNotationError

FILES = 9
ROWS = 8
SQUARES = FILES * ROWS
FILE_NAMES = "abcdefghi"


class Side(enum.IntEnum):
    """A player's colour. White moves first; the coin toss decides who is White."""

    WHITE = 0
    BLACK = 1

    @property
    def other(self) -> Side:
        return Side(1 - self)

    @property
    def display_name(self) -> str:
        return self.name.capitalize()


def square(file: int, row: int) -> int:
    """The index of the square on `file` (0..8) and `row` (0..7)."""
    if not (0 <= file < FILES and 0 <= row < ROWS):
        raise InvalidNotationError(f"no square at file {file}, row {row}")
    return row * FILES + file


def file_of(sq: int) -> int:
    return sq % FILES


def row_of(sq: int) -> int:
    return sq // FILES


def square_name(sq: int) -> str:
    """`0` -> `'a1'`, `71` -> `'i8'`."""
    if not 0 <= sq < SQUARES:
        raise InvalidNotationError(f"square index {sq} is off the board (0..71)")
    return f"{FILE_NAMES[file_of(sq)]}{row_of(sq) + 1}"


def parse_square(text: str) -> int:
    """`'a1'` -> `0`. Case-insensitive; says what is wrong otherwise.

    >>> square_name(parse_square("E4"))
    'e4'
    """
    t = text.strip().lower()
    if len(t) != 2 or t[0] not in FILE_NAMES or t[1] not in "12345678":
        raise InvalidNotationError(f"{text!r} is not a square: files a-i, ranks 1-8, e.g. e4")
    return square(FILE_NAMES.index(t[0]), int(t[1]) - 1)


def home_rows(side: Side) -> range:
    """The 3 rows nearest a side (seed 000: "the nearest 3 rows")."""
    return range(3) if side is Side.WHITE else range(ROWS - 3, ROWS)


def home_squares(side: Side) -> tuple[int, ...]:
    return tuple(square(f, r) for r in home_rows(side) for f in range(FILES))


def back_row(side: Side) -> int:
    """The row a side's flag must reach: the opponent's back rank."""
    return ROWS - 1 if side is Side.WHITE else 0


@cache
def _neighbours_of(sq: int) -> tuple[int, ...]:
    f, r = file_of(sq), row_of(sq)
    out = []
    for df, dr in ((0, 1), (0, -1), (-1, 0), (1, 0)):
        nf, nr = f + df, r + dr
        if 0 <= nf < FILES and 0 <= nr < ROWS:
            out.append(nr * FILES + nf)
    return tuple(out)


_NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours_of(sq) for sq in range(SQUARES))


def neighbours(sq: int) -> tuple[int, ...]:
    """Orthogonally adjacent squares (forward, back, sideways; never diagonal)."""
    return _NEIGHBOURS[sq] if 0 <= sq < SQUARES else _neighbours_of(sq)
