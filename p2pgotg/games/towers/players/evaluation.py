"""How good a Towers position is for one team: points first, then what the points will
become (SPEC 4.5 to 4.8 give the rules it reads).

A position's value for a seat is its points (flags on the board and captures), then its
pawns (a pawn plants flags and takes pawns; a lost one is gone for good), the height its
pawns stand on (a pawn above its neighbours cannot be taken and can take), its frontier
(squares its pawns can step on to plant a flag), and its threats: what its next actions
could win at once. The seat to act cashes its best threats in the actions it has left;
the others' threats count for less, as the seat to act may still answer them. A team's
value is the sum of its seats'; the position's value for a team is its value less the
best other team's (paranoid, so one number serves 2, 3 and 4 seats). A team whose seats
have all left cannot win (SPEC 4.13), so it is no rival: only the teams still in count.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.games.towers.rules import NOBODY, CaptureRule, Game
from p2pgotg.games.towers.rules.board import NEIGHBOURS

#: The value of a won game (more than any position's points could add up to).
WIN = 1_000_000.0


@dataclass(frozen=True, slots=True)
class Weights:
    """The evaluation's weights, in hundredths of a point."""

    point: float = 100.0
    pawn: float = 70.0  # a pawn in play or in reserve
    reserve_stuck: float = 40.0  # less for a reserve pawn with no free own flag to go to
    height: float = 12.0  # a layer under an own pawn (up to `height_cap`)
    height_cap: int = 4
    frontier: float = 6.0  # a square an own pawn can step on to plant a flag
    capture: float = 300.0  # a capture's swing: a capture, a flag planted, one returned
    take_flag: float = 200.0  # a step onto another's flag: one planted, one returned
    plant: float = 100.0  # a step onto an empty square
    acting: float = 0.9  # how much of its threats the seat to act is sure to cash
    waiting: float = 0.3  # how much of theirs the others are
    noise: float = 0.0  # (the easy level's blur, drawn by the bot)


PLAIN = Weights()


def evaluate(game: Game, team: int, w: Weights = PLAIN) -> float:
    """The position's value for `team`: its value less the best other team's; a finished
    game is `WIN` (or -`WIN`, or 0 for a tie) plus the margin in points."""
    rivals = {game.team(s) for s in game.seats_in} - {team}
    outcome = game.outcome
    if outcome is not None:
        margin = outcome.scores[team] - max((outcome.scores[t] for t in rivals), default=0)
        if team in outcome.winners:
            return margin * w.point + (WIN if len(outcome.winners) == 1 else 0.0)
        return margin * w.point - WIN
    values = seat_values(game, w)
    teams: dict[int, float] = {}
    for seat, v in enumerate(values):
        t = game.team(seat)
        teams[t] = teams.get(t, 0.0) + v
    return teams[team] - max((teams[t] for t in rivals), default=0.0)


def seat_values(game: Game, w: Weights = PLAIN) -> list[float]:
    """Each seat's value as `evaluate` sums it (one pass over the board: the search calls
    this at every position it stops at)."""
    n = game.seats
    heights, pawn, flag = game.heights, game.pawn_owners, game.flag_owners
    options = game.options
    higher = options.capture is CaptureRule.HIGHER
    climb, descent = options.climb_limit, options.descent_limit
    team = [game.team(s) for s in range(n)]
    if options.bonus_highest_tower or options.bonus_most_pawns:
        values = [w.point * p for p in game.seat_points()]
    else:  # (the same, without the bonuses' own pass)
        table = game.capture_table
        values = [w.point * sum(table[s * n:(s + 1) * n]) for s in range(n)]
        for f in flag:
            if f != NOBODY:
                values[f] += w.point
    threats: list[list[float]] = [[] for _ in range(n)]
    combos = [0.0] * n  # a build under a pawn, then a capture from the taller tower
    frontier = [0] * n
    free_flags = [0] * n
    on_board = [0] * n
    cap, height_weight = w.height_cap, w.height
    for sq in range(25):
        owner = pawn[sq]
        if owner == NOBODY:
            f = flag[sq]
            if f != NOBODY:
                free_flags[f] += 1
            continue
        on_board[owner] += 1
        h = heights[sq]
        values[owner] += height_weight * (h if h < cap else cap)
        mine = team[owner]
        best = 0.0
        for dst in NEIGHBOURS[sq]:
            hd = heights[dst]
            if (climb and hd - h > climb) or (descent and h - hd > descent):
                continue
            other = pawn[dst]
            if other == NOBODY:
                f = flag[dst]
                if f == owner:
                    continue
                frontier[owner] += 1
                gain = w.plant if f == NOBODY or team[f] == mine else w.take_flag
            elif team[other] == mine:
                continue
            elif hd < h or (not higher and hd == h):
                gain = w.capture + w.pawn
            else:
                if (hd == h or (not higher and hd == h + 1)) and combos[owner] == 0.0:
                    combos[owner] = w.capture + w.pawn
                continue
            if gain > best:
                best = gain
        if best:
            threats[owner].append(best)
    to_act, left = game.turn, game.actions_left
    for s in range(n):
        reserve = game.reserve_pawns(s)
        if free_flags[s] == 0:
            values[s] += w.reserve_stuck * reserve
        else:
            values[s] += w.pawn * reserve
        values[s] += w.pawn * on_board[s] + w.frontier * frontier[s]
        ranked = sorted(threats[s], reverse=True)
        if s == to_act:
            cash = sum(ranked[:left])
            if left == 2 and combos[s] > cash:
                cash = combos[s]
            values[s] += w.acting * cash
        else:
            values[s] += w.waiting * max(sum(ranked[:2]), combos[s])
    return values
