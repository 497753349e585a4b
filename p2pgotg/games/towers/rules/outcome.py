"""How a Towers game ended: an `Outcome` with a `Termination` reason and the score by team
(python-chess style; SPEC 4.8)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2pgotg.games.towers.rules.seats import Colour, team_name


class Termination(enum.Enum):
    """Why the game ended. The first three are the seed's; the rest are decided outside
    the rules (by the players or their drivers) and are here so that one value describes
    every ending."""

    POOL_EMPTY = "pool_empty"  # all 50 tower layers have been placed
    ALL_FLAGS_PLANTED = "all_flags_planted"  # a seat has placed all of its flags
    NO_ACTION = "no_action"  # the seat to act can make none of the three actions
    RESIGNATION = "resignation"
    DRAW_AGREED = "draw_agreed"
    TIME_FORFEIT = "time_forfeit"
    ABANDONMENT = "abandonment"


#: The endings decided outside the rules (by the players or their drivers).
OUTSIDE = frozenset({Termination.RESIGNATION, Termination.DRAW_AGREED, Termination.TIME_FORFEIT,
                     Termination.ABANDONMENT})

#: The endings by which a seat leaves a game of three or four seats that goes on (SPEC
#: 4.13): it resigned, or a time or abandonment claim removed it.
LEAVING = frozenset({Termination.RESIGNATION, Termination.TIME_FORFEIT, Termination.ABANDONMENT})

_REASONS = {
    Termination.POOL_EMPTY: "all 50 layers placed",
    Termination.ALL_FLAGS_PLANTED: "{seat} placed all its flags",
    Termination.NO_ACTION: "{seat} could not act",
    Termination.RESIGNATION: "resignation",
    Termination.DRAW_AGREED: "draw agreed",
    Termination.TIME_FORFEIT: "time forfeit",
    Termination.ABANDONMENT: "abandonment",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end: why, the seat the reason names (the stuck seat, the seat that placed all
    its flags; else None), each team's points (bonuses included), and the winning teams.
    One winner wins; several share a tie (SPEC 4.8); none is a draw agreed.

    In the regular game a team is one seat (team i = seat i); in the team variant team 0
    is seats 0 and 2, team 1 seats 1 and 3.
    """

    termination: Termination
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    seat: int | None = None
    seats: int = 2
    teams: bool = False

    def __deepcopy__(self, memo: dict[int, object]) -> Outcome:
        return self  # (immutable)

    @property
    def is_tie(self) -> bool:
        return len(self.winners) != 1

    def describe(self) -> str:
        """`Red wins 9-7 (all 50 layers placed)`, `tie between Red / Blue, 8-8 (...)`."""
        names = [team_name(t, self.seats, self.teams) for t in self.winners]
        reason = _REASONS[self.termination].format(
            seat=Colour(self.seat).display_name if self.seat is not None else "")
        score = "-".join(str(s) for s in self.scores)
        if len(names) == 1:
            verb = "win" if self.teams else "wins"
            return f"{names[0]} {verb} {score} ({reason})"
        if not names:
            return f"draw {score} ({reason})"
        return f"tie between {' / '.join(names)}, {score} ({reason})"
