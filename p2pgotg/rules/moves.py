"""Moves and their notation: `c3-c4`, also read as `c3c4` or `c3 c4`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from p2pgotg.rules.board import SQUARES, parse_square, square_name
from p2pgotg.rules.errors import InvalidNotationError

_MOVE_RE = re.compile(r"^\s*([a-iA-I][1-8])\s*[-\s]?\s*([a-iA-I][1-8])\s*$")


@dataclass(frozen=True, slots=True)
class Move:
    """A piece moving from one square to another; onto an enemy piece it is a challenge.

    >>> Move.parse("c3c4").text()
    'c3-c4'
    """

    from_square: int
    to_square: int

    def __deepcopy__(self, memo: dict[int, object]) -> Move:
        return self  # (immutable: a copy of a game shares its values)

    def __post_init__(self) -> None:
        for sq in (self.from_square, self.to_square):
            if not (isinstance(sq, int) and 0 <= sq < SQUARES):
                raise InvalidNotationError(f"square index {sq!r} is off the board (0..71)")

    @classmethod
    def parse(cls, text: str) -> Move:
        m = _MOVE_RE.match(text)
        if not m:
            raise InvalidNotationError(
                f"{text!r} is not a move: write two squares, e.g. c3-c4 or c3c4"
            )
        return cls(parse_square(m.group(1)), parse_square(m.group(2)))

    def text(self) -> str:
        return f"{square_name(self.from_square)}-{square_name(self.to_square)}"

    def __str__(self) -> str:
        return self.text()
