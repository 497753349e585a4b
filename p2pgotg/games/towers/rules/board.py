"""The 5x5 board: squares in algebraic notation, orthogonal neighbours, and the outer border
as a ring (where starting squares are claimed and kept apart; SPEC 4.2).

Square indices run 0..24, `index = row * 5 + file`, file 0 = `a`, row 0 = rank `1`:
`a1` = 0, `e1` = 4, `c3` = 12, `e5` = 24.
"""

from __future__ import annotations

from p2pgotg.games.towers.rules.errors import InvalidNotationError

SIZE = 5
SQUARES = SIZE * SIZE
FILE_NAMES = "abcde"


def square(file: int, row: int) -> int:
    """The index of the square on `file` (0..4) and `row` (0..4)."""
    if not (0 <= file < SIZE and 0 <= row < SIZE):
        raise InvalidNotationError(f"no square at file {file}, row {row}")
    return row * SIZE + file


def square_name(sq: int) -> str:
    """`0` -> `'a1'`, `24` -> `'e5'`."""
    if not (isinstance(sq, int) and 0 <= sq < SQUARES):
        raise InvalidNotationError(f"square index {sq!r} is off the board (0..24)")
    return f"{FILE_NAMES[sq % SIZE]}{sq // SIZE + 1}"


def parse_square(text: str) -> int:
    """`'c3'` -> `12`. Case-insensitive, surrounding whitespace ignored.

    >>> square_name(parse_square(" C3 "))
    'c3'
    """
    t = text.strip().lower()
    if len(t) != 2 or t[0] not in FILE_NAMES or t[1] not in "12345":
        raise InvalidNotationError(f"{text!r} is not a square: files a-e, ranks 1-5, e.g. c3")
    return square(FILE_NAMES.index(t[0]), int(t[1]) - 1)


def _neighbours_of(sq: int) -> tuple[int, ...]:
    f, r = sq % SIZE, sq // SIZE
    steps = ((0, 1), (1, 0), (0, -1), (-1, 0))  # up, right, down, left: `DIRECTIONS` order
    return tuple((r + dr) * SIZE + f + df for df, dr in steps
                 if 0 <= f + df < SIZE and 0 <= r + dr < SIZE)


#: The four steps of a move, in the order of the action codes (SPEC 4.9): towards rank 5,
#: towards file e, towards rank 1, towards file a.
DIRECTIONS: tuple[tuple[int, int], ...] = ((0, 1), (1, 0), (0, -1), (-1, 0))
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours_of(sq) for sq in range(SQUARES))


def neighbours(sq: int) -> tuple[int, ...]:
    """Orthogonally adjacent squares (never diagonal): 2 in a corner, 3 on an edge, 4 inside."""
    return NEIGHBOURS[sq]


def step(sq: int, direction: int) -> int | None:
    """The square one step from `sq` in `DIRECTIONS[direction]`, None off the board."""
    df, dr = DIRECTIONS[direction]
    f, r = sq % SIZE + df, sq // SIZE + dr
    return r * SIZE + f if 0 <= f < SIZE and 0 <= r < SIZE else None


#: The 16 squares of the outer border in ring order: up the a-file, along rank 5, down the
#: e-file, back along rank 1 (a1 a2 a3 a4 a5 b5 c5 d5 e5 e4 e3 e2 e1 d1 c1 b1).
BORDER: tuple[int, ...] = (
    tuple(square(0, r) for r in range(SIZE))
    + tuple(square(f, SIZE - 1) for f in range(1, SIZE))
    + tuple(square(SIZE - 1, r) for r in range(SIZE - 2, -1, -1))
    + tuple(square(f, 0) for f in range(SIZE - 2, 0, -1))
)
_RING_INDEX = {sq: i for i, sq in enumerate(BORDER)}


def on_border(sq: int) -> bool:
    return sq in _RING_INDEX


def border_distance(a: int, b: int) -> int:
    """Steps from `a` to `b` along the outer border, the shorter way round (0..8); the
    border squares strictly between them, that way, are one fewer.

    >>> border_distance(parse_square("a1"), parse_square("b1")), border_distance(0, 20)
    (1, 4)
    """
    if a not in _RING_INDEX or b not in _RING_INDEX:
        raise InvalidNotationError("border distance is defined only between border squares")
    d = abs(_RING_INDEX[a] - _RING_INDEX[b])
    return min(d, len(BORDER) - d)
