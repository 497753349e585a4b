"""Points and the winner (seed `002_836edfe2f167b267.txt`, "End of the game"; SPEC 4.8):
1 point for each of a seat's flags on the board and 1 for each opponent pawn it captured,
the seed's two commented-out bonus points when their options are on, summed by team.

Pure functions over the board's lists, so the game and the bot's evaluation share them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.rules.seats import team_count, team_of

NOBODY = -1


def base_points(seats: int, flag: Sequence[int], captures: Sequence[int]) -> list[int]:
    """Flags on the board plus pawns captured, by seat. `flag[sq]` is the seat whose flag
    stands on square sq (or NOBODY); `captures[c * seats + v]` is how many of seat v's
    pawns seat c captured."""
    points = [0] * seats
    for owner in flag:
        if owner != NOBODY:
            points[owner] += 1
    for c in range(seats):
        points[c] += sum(captures[c * seats:(c + 1) * seats])
    return points


def _unique_best(values: Sequence[int]) -> int | None:
    best = max(values)
    return values.index(best) if best > 0 and values.count(best) == 1 else None


def bonus_points(options: RuleOptions, flag: Sequence[int], pawn: Sequence[int],
                 heights: Sequence[int]) -> list[int]:
    """The bonus points by seat: one for the seat that alone holds (has a flag on) a tower
    of the board's greatest height, one for the seat with strictly the most pawns on the
    board; a tie gives the point to no one, and so does a highest tower no one holds."""
    bonus = [0] * options.seats
    if options.bonus_highest_tower:
        top = max(heights)
        holders = {flag[sq] for sq in range(len(heights))
                   if heights[sq] == top and flag[sq] != NOBODY}
        if top > 0 and len(holders) == 1:
            bonus[holders.pop()] += 1
    if options.bonus_most_pawns:
        counts = [0] * options.seats
        for owner in pawn:
            if owner != NOBODY:
                counts[owner] += 1
        best = _unique_best(counts)
        if best is not None:
            bonus[best] += 1
    return bonus


def team_points(options: RuleOptions, seat_points: Sequence[int]) -> tuple[int, ...]:
    """Seat points summed by team (each seat its own team outside the team variant)."""
    out = [0] * team_count(options.seats, options.teams)
    for seat, p in enumerate(seat_points):
        out[team_of(seat, options.teams)] += p
    return tuple(out)


def winners(scores: Sequence[int], excluded: Collection[int] = ()) -> tuple[int, ...]:
    """The teams with the most points (several: a tie), leaving out the teams `excluded`
    (those whose seats all left, SPEC 4.13; a stuck seat's team under `stuck_loses`)."""
    candidates = [t for t in range(len(scores)) if t not in excluded]
    best = max(scores[t] for t in candidates)
    return tuple(t for t in candidates if scores[t] == best)
