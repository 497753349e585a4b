"""How a game ended: an `Outcome` with a `Termination` reason (python-chess style)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2pgotg.rules.board import Side


class Termination(enum.Enum):
    FLAG_CAPTURED = "flag_captured"  # a flag was eliminated in a challenge
    FLAG_REACHED_BACK_RANK = "flag_reached_back_rank"
    RESIGNATION = "resignation"
    DRAW_AGREED = "draw_agreed"
    NO_LEGAL_MOVE = "no_legal_move"  # the side to move cannot move: it loses (seed 003)
    NEITHER_CAN_MOVE = "neither_can_move"  # a draw (seed 003)
    TIME_FORFEIT = "time_forfeit"  # claimed by the network driver, not decided here
    ABANDONMENT = "abandonment"  # claimed by the network driver, not decided here


@dataclass(frozen=True, slots=True)
class Outcome:
    termination: Termination
    winner: Side | None  # None for a draw

    def __deepcopy__(self, memo: dict[int, object]) -> Outcome:
        return self  # (immutable: a copy of a game shares its values)

    def describe(self) -> str:
        reason = {
            Termination.FLAG_CAPTURED: "flag captured",
            Termination.FLAG_REACHED_BACK_RANK: "flag reached the opposing back rank",
            Termination.RESIGNATION: "resignation",
            Termination.DRAW_AGREED: "draw agreed",
            Termination.NO_LEGAL_MOVE: "no legal move",
            Termination.NEITHER_CAN_MOVE: "neither side can move",
            Termination.TIME_FORFEIT: "time forfeit",
            Termination.ABANDONMENT: "abandonment",
        }[self.termination]
        if self.winner is None:
            return f"draw ({reason})"
        return f"{self.winner.display_name} wins ({reason})"
