"""Actions and their notation (SPEC 4.9): one value type for the setup's choices and the
turn's actions, round-tripping through text (`Action.from_text(...).text()`) and through
one byte (`Action.from_code(...).code()`), so the protocol can carry either.

    c3-c4   move the pawn on c3 to c4 (also read: `c3c4`, `c3 c4`)
    +c3     a tower layer on c3 (in the setup: place one; in play: build under your pawn)
    *c3     spawn a pawn from your reserve on c3
    @a1     claim a1 as your starting square (setup only)

A text or code says nothing about legality; the game decides that.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from p2pgotg.games.towers.rules.board import (
    NEIGHBOURS,
    SQUARES,
    parse_square,
    square_name,
    step,
)
from p2pgotg.games.towers.rules.errors import InvalidNotationError


class Kind(enum.Enum):
    """What an action does. `LAYER` is the setup's "place a tower layer" and the turn's
    "build a tower layer": both put one layer from the pool on a square."""

    MOVE = "move"
    LAYER = "layer"
    SPAWN = "spawn"
    CLAIM = "claim"


_PREFIX = {Kind.LAYER: "+", Kind.SPAWN: "*", Kind.CLAIM: "@"}
_BY_PREFIX = {p: k for k, p in _PREFIX.items()}
# (loose about the squares, so that `parse_square` says which one is off the board)
_SQ = r"([a-zA-Z][0-9])"
_MOVE_RE = re.compile(rf"^\s*{_SQ}\s*[-\s]?\s*{_SQ}\s*$")
_PLACE_RE = re.compile(r"^\s*([+*@])\s*(\S+)\s*$")

#: Code ranges (one byte): layers 0..24, spawns 25..49, claims 50..74, moves 75..174 as
#: 75 + 4 * from + direction (`board.DIRECTIONS`: up, right, down, left).
_BASE = {Kind.LAYER: 0, Kind.SPAWN: 25, Kind.CLAIM: 50, Kind.MOVE: 75}
CODES = 175


@dataclass(frozen=True, slots=True)
class Action:
    """One action: its kind, the square it acts on (a move's origin) and, for a move, the
    square it goes to.

    >>> Action.from_text("C3 c4").text(), Action.from_text("+b2").code()
    ('c3-c4', 6)
    >>> Action.from_code(Action.from_text("@a1").code()).text()
    '@a1'
    """

    kind: Kind
    square: int
    to: int | None = None

    def __post_init__(self) -> None:
        square_name(self.square)  # (raises for a square off the board)
        if self.kind is Kind.MOVE:
            if self.to is None or self.to not in NEIGHBOURS[self.square]:
                raise InvalidNotationError(
                    "a move goes one step up, down, left or right (never diagonal): "
                    f"{square_name(self.square)} to {self.to!r} is not one")
        elif self.to is not None:
            raise InvalidNotationError(f"only a move has a destination, not a {self.kind.value}")

    def __deepcopy__(self, memo: dict[int, object]) -> Action:
        return self  # (immutable)

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def move(cls, src: int, dst: int) -> Action:
        return cls(Kind.MOVE, src, dst)

    @classmethod
    def layer(cls, sq: int) -> Action:
        return cls(Kind.LAYER, sq)

    @classmethod
    def spawn(cls, sq: int) -> Action:
        return cls(Kind.SPAWN, sq)

    @classmethod
    def claim(cls, sq: int) -> Action:
        return cls(Kind.CLAIM, sq)

    # -- text ---------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str) -> Action:
        """Read `c3-c4`, `c3c4`, `c3 c4`, `+c3`, `*c3` or `@a1` (case-insensitive)."""
        if not isinstance(text, str):
            raise InvalidNotationError(f"{text!r} is not an action: expected text")
        m = _MOVE_RE.match(text)
        if m:
            return cls.move(parse_square(m.group(1)), parse_square(m.group(2)))
        m = _PLACE_RE.match(text)
        if m:
            return cls(_BY_PREFIX[m.group(1)], parse_square(m.group(2)))
        raise InvalidNotationError(
            f"{text!r} is not an action: write a move (c3-c4), a layer (+c3), "
            "a spawn (*c3) or a claim (@a1)")

    def text(self) -> str:
        if self.kind is Kind.MOVE:
            assert self.to is not None
            return f"{square_name(self.square)}-{square_name(self.to)}"
        return f"{_PREFIX[self.kind]}{square_name(self.square)}"

    def __str__(self) -> str:
        return self.text()

    # -- one byte -----------------------------------------------------------------------

    def code(self) -> int:
        """The action as one byte 0..174 (SPEC 4.9)."""
        if self.kind is Kind.MOVE:
            return _BASE[Kind.MOVE] + 4 * self.square + _direction(self.square, self.to)
        return _BASE[self.kind] + self.square

    @classmethod
    def from_code(cls, code: int) -> Action:
        """The action of a code; a code out of range, or a move off the board, is refused."""
        if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < CODES:
            raise InvalidNotationError(f"{code!r} is not an action code (0..{CODES - 1})")
        action = _BY_CODE[code]
        if action is None:
            sq, direction = divmod(code - _BASE[Kind.MOVE], 4)
            raise InvalidNotationError(
                f"action code {code} moves off the board from {square_name(sq)} "
                f"({('up', 'right', 'down', 'left')[direction]})")
        return action


def _direction(src: int, dst: int | None) -> int:
    return next(d for d in range(4) if step(src, d) == dst)


def _by_code() -> tuple[Action | None, ...]:
    table: list[Action | None] = [None] * CODES
    for sq in range(SQUARES):
        for kind in (Kind.LAYER, Kind.SPAWN, Kind.CLAIM):
            table[_BASE[kind] + sq] = Action(kind, sq)
        for d in range(4):
            dst = step(sq, d)
            if dst is not None:
                table[_BASE[Kind.MOVE] + 4 * sq + d] = Action(Kind.MOVE, sq, dst)
    return tuple(table)


#: Every action that exists, by code (None where a move would leave the board): the
#: engine hands out these shared values.
_BY_CODE = _by_code()
ALL_ACTIONS: tuple[Action, ...] = tuple(a for a in _BY_CODE if a is not None)
