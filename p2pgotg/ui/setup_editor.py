"""Arranging the 21 pieces on the home squares before the game: the setup screen's model.

Pure (no I/O): the screen moves a cursor and calls `enter`, `remove`, `randomize`...; each
returns the sentence to show in the status line. A setup leaves here only when it is valid.
"""

from __future__ import annotations

import random
from collections import Counter

from p2pgotg.players.setups import random_army
from p2pgotg.rules import (
    COMPOSITION,
    InvalidSetupError,
    Rank,
    Setup,
    Side,
    format_formation,
    home_squares,
    parse_formation,
    square_name,
)
from p2pgotg.rules.setup import setup_problems
from p2pgotg.ui.words import rank_name

#: The tray's order: the most important pieces first, as a player places them.
TRAY: tuple[Rank, ...] = (Rank.FLAG, *sorted((r for r in Rank if r is not Rank.FLAG),
                                             key=lambda r: -int(r)))


class SetupEditor:
    """One side's placement being edited, a tray of pieces left, a piece picked up."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self.placement: dict[int, Rank] = {}
        self.tray = 0  # index into TRAY: the rank the next Enter on an empty square places
        self.picked: int | None = None  # a square whose piece is being moved
        self._history: list[dict[int, Rank]] = []  # placements before each change, for undo
        self._by_hand = False  # changed piece by piece since the last formation or clear

    # -- reading ------------------------------------------------------------------------

    @property
    def home(self) -> tuple[int, ...]:
        return home_squares(self.side)

    def remaining(self) -> dict[Rank, int]:
        placed = Counter(self.placement.values())
        return {rank: COMPOSITION[rank] - placed.get(rank, 0) for rank in TRAY}

    @property
    def tray_rank(self) -> Rank | None:
        """The rank to place next, or None when every piece is on the board."""
        left = self.remaining()
        for i in range(len(TRAY)):
            rank = TRAY[(self.tray + i) % len(TRAY)]
            if left[rank] > 0:
                return rank
        return None

    def problems(self) -> list[str]:
        """What keeps this placement from being a setup (empty when it is one)."""
        left = self.remaining()
        missing = sum(n for n in left.values() if n > 0)
        extra = [f"{-n} {r.code} too many" for r, n in left.items() if n < 0]
        if extra:
            return ["the formation does not match the 21-piece set: " + ", ".join(extra)]
        if missing:
            return [f"{missing} piece{'s' if missing > 1 else ''} still to place"]
        return setup_problems(self.side, self.placement)

    def setup(self) -> Setup:
        """The valid setup (InvalidSetupError says what is wrong otherwise)."""
        problems = self.problems()
        if problems:
            raise InvalidSetupError("; ".join(problems))
        return Setup(self.side, self.placement)

    def formation(self) -> str:
        """The placement in the shareable formation text (works for either side)."""
        return format_formation(self.side, self.placement)

    # -- editing ------------------------------------------------------------------------

    def _remember(self, by_hand: bool = True) -> None:
        """Keep the placement as it is now, so that `undo` can bring it back."""
        self._by_hand = by_hand
        self._history.append(dict(self.placement))
        del self._history[:-200]

    @property
    def can_undo(self) -> bool:
        return bool(self._history)

    @property
    def placed_by_hand(self) -> int:
        """How many pieces a random formation would throw away that were placed or moved
        by hand (0 when the board holds only a formation as it was loaded or drawn)."""
        return len(self.placement) if self._by_hand else 0

    def undo(self) -> str:
        """Take back the last change (a placement, a move, a removal, a clear, a random or
        loaded formation)."""
        if not self._history:
            return "nothing to undo"
        self.placement = self._history.pop()
        self.picked = None
        return "undone" + ("" if self._history else " (nothing more to undo)")

    def enter(self, sq: int) -> str:
        """Enter on a square: drop the picked-up piece there (moving or swapping), pick up
        the piece on it, or place the tray's rank on it."""
        if sq not in self.home:
            return f"{square_name(sq)} is not one of your home squares"
        here = self.placement.get(sq)
        if self.picked is not None:
            source, self.picked = self.picked, None
            if source == sq:
                return "put back"
            self._remember()
            moving = self.placement.pop(source)
            if here is not None:
                self.placement[source] = here
                self.placement[sq] = moving
                return f"swapped {moving.code} and {here.code}"
            self.placement[sq] = moving
            return f"{moving.code} moved to {square_name(sq)}"
        if here is not None:
            self.picked = sq
            return f"{rank_name(here)} picked up: Enter on another square moves or swaps it"
        rank = self.tray_rank
        if rank is None:
            return "all 21 pieces are placed: press d when you are ready"
        self._remember()
        self.placement[sq] = rank
        self.tray = TRAY.index(rank)
        left = self.remaining()[rank]
        return f"{rank_name(rank)} placed" + (f" ({left} more to place)" if left else "")

    def remove(self, sq: int) -> str:
        if sq in self.placement:
            self._remember()
        rank = self.placement.pop(sq, None)
        if self.picked == sq:
            self.picked = None
        if rank is None:
            return f"{square_name(sq)} is already empty"
        self.tray = TRAY.index(rank)
        return f"{rank_name(rank)} back in the tray"

    def next_rank(self, step: int) -> str:
        """Choose the next (or previous) rank in the tray that has pieces left."""
        left = self.remaining()
        if not any(left.values()):
            return "every piece is placed"
        for _ in range(len(TRAY)):
            self.tray = (self.tray + step) % len(TRAY)
            if left[TRAY[self.tray]] > 0:
                break
        rank = TRAY[self.tray]
        return f"next to place: {rank_name(rank)} ({left[rank]} left)"

    def clear(self) -> str:
        if self.placement:
            self._remember(by_hand=False)
        self.placement.clear()
        self.picked = None
        self.tray = 0
        return "all pieces back in the tray"

    def randomize(self, rng: random.Random) -> str:
        self._remember(by_hand=False)
        self.placement = dict(random_army(self.side, rng).placement)
        self.picked = None
        return "a random formation: rearrange it, u to undo, or d when you are ready"

    def load(self, text: str) -> None:
        """Take a formation's text (InvalidNotationError when it cannot be read). An
        incomplete formation is fine: what is missing stays in the tray."""
        placement = parse_formation(self.side, text)
        self._remember(by_hand=False)
        self.placement = placement
        self.picked = None
