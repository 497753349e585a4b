"""Flag runs solved exactly when few enemy pieces can reach the flag's path.

`HeuristicPlayer.flag_run` only runs when every square of the path is farther from every
enemy piece than the flag's arrival there (Manhattan distance, blockers ignored): safe,
but it misses runs that win because a chaser must go round a wall, or because it can
never get there in time once the flag sidesteps. Here the race is played out as a game:
our flag steps (onto empty squares only) and the chasers answer (any square but their own
pieces'; onto one of ours is a challenge we count as lost, onto the flag is its capture),
with the flag rule deciding when an arrival wins (SPEC 1.7). Pieces too far to reach any
square in time stand still. It is exact for that game, with at most `MAX_CHASERS` chasers
and `MAX_STEPS` flag steps, and gives up (None) beyond `MAX_NODES` positions.

>>> import random
>>> from p2pgotg.players.heuristic import HeuristicPlayer
>>> from p2pgotg.rules import Game, Rank, Side
>>> view = Game.from_position({"e6": (Side.WHITE, Rank.FLAG), "d7": (Side.WHITE, Rank.PRIVATE),
...     "f7": (Side.WHITE, Rank.PRIVATE), "a8": (Side.BLACK, None), "c5": (Side.BLACK, None)})
>>> pos = HeuristicPlayer(Side.WHITE, random.Random(0)).position(view)
>>> flag_run_exact(pos).text()
'e6-e7'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pgotg.rules import FlagRule, Move, back_row, neighbours
from p2pgotg.rules.board import SQUARES

if TYPE_CHECKING:
    from p2pgotg.players.heuristic import Position

MAX_CHASERS = 2
MAX_STEPS = 7
MAX_NODES = 20_000

_NEIGHBOURS = [neighbours(sq) for sq in range(SQUARES)]


def _distance(a: int, b: int) -> int:
    return abs(a % 9 - b % 9) + abs(a // 9 - b // 9)


class _GaveUp(Exception):
    pass


def flag_run_exact(pos: Position) -> Move | None:
    """The first step of a flag run that wins whatever the chasers do, if one is found."""
    start = pos.flag_sq
    if start is None:
        return None
    goal = back_row(pos.side)
    steps = abs(goal - start // 9)
    if steps == 0 or steps > MAX_STEPS:
        return None
    budget = min(steps + 2, MAX_STEPS)  # flag steps allowed: room for two sidesteps
    reach = 2 * budget + 1
    chasers = tuple(sorted(sq for sq in pos.enemy_sqs if _distance(sq, start) <= reach))
    if len(chasers) > MAX_CHASERS:
        return None
    still = {sq for sq in pos.enemy_sqs if sq not in chasers}
    walls = frozenset((pos.my_squares - {start}) | still)
    rule = pos.view.options.flag_rule
    solver = _Race(goal, walls, frozenset(still), rule)
    try:
        for n in _NEIGHBOURS[start]:
            if n in walls or n in chasers:
                continue
            if solver.after_step(n, chasers, budget - 1):
                return Move(start, n)
    except _GaveUp:
        return None
    return None


class _Race:
    """The race as a game of the flag (to move) against the chasers."""

    def __init__(self, goal: int, walls: frozenset[int], enemy_walls: frozenset[int],
                 rule: FlagRule) -> None:
        self.goal = goal
        self.walls = walls  # squares the flag cannot enter
        self.enemy_walls = enemy_walls  # squares the chasers cannot enter (their own)
        self.rule = rule
        self.nodes = 0
        self.memo: dict[tuple[int, tuple[int, ...], int], bool] = {}

    def after_step(self, flag: int, chasers: tuple[int, ...], left: int) -> bool:
        """Does the flag, having just stepped onto `flag`, win with `left` more steps
        allowed, the chasers to move?"""
        key = (flag, chasers, left)
        got = self.memo.get(key)
        if got is not None:
            return got
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _GaveUp
        adjacent = any(c in _NEIGHBOURS[flag] for c in chasers)
        if flag // 9 == self.goal:
            # Safe at once with no chaser beside it; with one, it must survive their move,
            # which it does not: the chaser takes it (unless the rule is `immediate`).
            won = self.rule is FlagRule.IMMEDIATE or not adjacent
            self.memo[key] = won
            return won
        if adjacent or left <= 0:
            self.memo[key] = False
            return False
        won = all(self._flag_to_move(flag, replies, left)
                  for replies in self._replies(chasers))
        self.memo[key] = won
        return won

    def _flag_to_move(self, flag: int, chasers: tuple[int, ...], left: int) -> bool:
        for n in _NEIGHBOURS[flag]:
            if n in self.walls or n in chasers:
                continue
            if self.after_step(n, chasers, left - 1):
                return True
        return False

    def _replies(self, chasers: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Every way one chaser can move (standing still is not a move, but another
        piece far away may move instead: so every chaser may also stay)."""
        out = [chasers]
        for i, c in enumerate(chasers):
            for n in _NEIGHBOURS[c]:
                if n in self.enemy_walls or n in chasers:
                    continue
                out.append(tuple(sorted((*chasers[:i], n, *chasers[i + 1:]))))
        return out


__all__ = ["flag_run_exact"]
