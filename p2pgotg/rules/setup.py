"""Setups (which rank stands on which home square) and the plain-text formation format.

A formation is how a player sees its own 3 home rows from its seat: 3 lines of 9 cells,
the front row first, cells are rank codes or `.` for empty. The same formation can be played
by either side; `Setup.from_formation` mirrors it for Black, who sits at the other end.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from p2pgotg.rules.board import FILES, Side, home_squares, square, square_name
from p2pgotg.rules.errors import InvalidNotationError, InvalidSetupError
from p2pgotg.rules.ranks import FULL_SET, PIECES_PER_SIDE, Rank, composition_errors


def _formation_square(side: Side, line: int, col: int) -> int:
    """Line 0 is the front row as the player sees it; col 0 is the player's left."""
    if side is Side.WHITE:
        return square(col, 2 - line)
    return square(FILES - 1 - col, 5 + line)


@dataclass(frozen=True)
class Setup:
    """One side's 21 pieces on its home squares, validated on construction.

    Piece ids are canonical: piece `i` is the piece on the i-th lowest occupied square.
    """

    side: Side
    placement: Mapping[int, Rank]

    def __post_init__(self) -> None:
        object.__setattr__(self, "placement", MappingProxyType(dict(self.placement)))
        problems = setup_problems(self.side, self.placement)
        if problems:
            raise InvalidSetupError("invalid setup: " + "; ".join(problems))

    def __reduce__(self) -> tuple[type[Setup], tuple[Side, dict[int, Rank]]]:
        """Pickled as its side and placement (validated again when loaded)."""
        return (Setup, (self.side, dict(self.placement)))

    @property
    def squares(self) -> tuple[int, ...]:
        """Occupied squares in piece-id order."""
        return tuple(sorted(self.placement))

    @property
    def ranks(self) -> tuple[Rank, ...]:
        """Ranks in piece-id order."""
        return tuple(self.placement[sq] for sq in self.squares)

    @classmethod
    def from_formation(cls, side: Side, text: str) -> Setup:
        return cls(side, parse_formation(side, text))

    def formation(self) -> str:
        return format_formation(self.side, self.placement)

    @classmethod
    def random(cls, side: Side, rng: random.Random) -> Setup:
        """A uniformly random valid setup."""
        squares = rng.sample(home_squares(side), PIECES_PER_SIDE)
        return cls(side, dict(zip(squares, FULL_SET, strict=True)))


def setup_problems(side: Side, placement: Mapping[int, Rank]) -> list[str]:
    """Every reason the placement is not a valid setup for `side` (empty when valid)."""
    problems = []
    home = set(home_squares(side))
    outside = sorted(
        (sq for sq in placement if sq not in home),
        key=lambda sq: (0, sq, "") if isinstance(sq, int) else (1, 0, repr(sq)),
    )
    if outside:
        rows = "1-3" if side is Side.WHITE else "6-8"
        names = ", ".join(
            square_name(sq) if isinstance(sq, int) and 0 <= sq < 72 else repr(sq) for sq in outside
        )
        problems.append(f"pieces outside {side.display_name}'s home rows {rows}: {names}")
    bad = [r for r in placement.values() if not isinstance(r, Rank)]
    if bad:
        problems.append(f"not ranks: {bad!r}")
        return problems
    wrong = composition_errors(list(placement.values()))
    if wrong:
        problems.append(
            f"{len(placement)} pieces placed, the set is 21; wrong counts: " + ", ".join(wrong)
        )
    return problems


def parse_formation(side: Side, text: str) -> dict[int, Rank]:
    """Read the 3-line formation text (blank lines and `#` comments are skipped)."""
    lines = [ln.split("#", 1)[0].split() for ln in text.splitlines()]
    rows = [cells for cells in lines if cells]
    if len(rows) != 3:
        raise InvalidNotationError(f"a formation has 3 rows of 9 cells, found {len(rows)} rows")
    placement: dict[int, Rank] = {}
    for line, cells in enumerate(rows):
        if len(cells) != FILES:
            raise InvalidNotationError(
                f"formation row {line + 1} has {len(cells)} cells, it needs 9"
            )
        for col, cell in enumerate(cells):
            if cell != ".":
                placement[_formation_square(side, line, col)] = Rank.from_code(cell)
    return placement


def format_formation(side: Side, placement: Mapping[int, Rank]) -> str:
    out = []
    for line in range(3):
        cells = []
        for col in range(FILES):
            rank = placement.get(_formation_square(side, line, col))
            cells.append(f"{rank.code if rank is not None else '.':<3}")
        out.append(" ".join(cells).rstrip())
    return "\n".join(out) + "\n"

