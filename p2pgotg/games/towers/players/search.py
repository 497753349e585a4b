"""The hard level's search: alpha-beta over single actions, deepened one action at a time
until its budget runs out, with a transposition table (two actions of one turn often
commute) and the evaluation of `evaluation` at its horizon.

With more than two teams it is paranoid (Sturtevant and Korf, 2000): every other team is
taken to play against ours, so one alpha-beta serves 2, 3 and 4 seats, and a partner in
the team variant plays with us. The budget counts positions (`nodes`), so a fixed budget
repeats a game exactly; `seconds` is a deadline on top, for slow or loaded machines.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from p2pgotg.games.towers.players.evaluation import PLAIN, Weights, evaluate
from p2pgotg.games.towers.rules import NOBODY, Action, Game, Kind


@dataclass(frozen=True, slots=True)
class Budget:
    """How much the search may do for one decision: at most `nodes` positions (None: no
    bound) and at most `seconds` of wall time (None: no deadline), `max_depth` actions
    deep."""

    nodes: int | None = 1600
    seconds: float | None = 0.3
    max_depth: int = 8


class _OutOfBudget(Exception):
    """The budget ran out in the middle of a depth: its results are not used."""


_EXACT, _LOWER, _UPPER = 0, 1, 2
#: Positions the table keeps from one decision to the next (the second action of a turn
#: finds the first one's search there) before it starts afresh.
TABLE_LIMIT = 200_000


def _key(game: Game) -> tuple[object, ...]:
    first = game.first_action
    return (tuple(game.heights), tuple(game.pawn_owners), tuple(game.flag_owners),
            tuple(game.capture_table), tuple(game.reserve_pawns(s) for s in range(game.seats)),
            game.turn, game.actions_left, None if first is None else first.code())


def order_score(game: Game, action: Action) -> int:
    """A guess at how good an action is, to search the likely best first: captures, then
    steps onto others' flags, new squares, layers, spawns, steps onto one's own flags."""
    if action.kind is Kind.MOVE:
        assert action.to is not None
        seat = game.turn
        other = game.pawn_owners[action.to]
        if other != NOBODY:
            return 6
        f = game.flag_owners[action.to]
        return 0 if f == seat else 4 if f != NOBODY else 3
    return 2 if action.kind is Kind.LAYER else 1


class Searcher:
    """Chooses actions for one team by alpha-beta within a `Budget`."""

    def __init__(self, team: int, budget: Budget | None = None, weights: Weights = PLAIN,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.team = team
        self.budget = budget or Budget()
        self.weights = weights
        self.clock = clock
        self.nodes = 0
        self.depth_reached = 0
        self._deadline = math.inf
        self._table: dict[tuple[object, ...], tuple[int, float, int, Action | None]] = {}
        self._seats_in: tuple[int, ...] = ()

    def choose(self, game: Game, rng: random.Random) -> Action:
        """The best action found for the seat to act (which plays for `team`); ties are
        broken by `rng`, so a fixed seed and a node budget repeat a choice exactly."""
        legal = game.legal_actions
        self.nodes = self.depth_reached = 0
        if len(legal) == 1:
            return legal[0]
        board = game.copy()  # (an aborted depth leaves pushes behind: search a copy)
        if len(self._table) > TABLE_LIMIT or game.seats_in != self._seats_in:
            self._table = {}  # (too big, or a seat left: the turn order its values assumed)
            self._seats_in = game.seats_in
        seconds = self.budget.seconds
        self._deadline = math.inf if seconds is None else self.clock() + seconds
        order = sorted(legal, key=lambda a: -order_score(game, a))
        scores: dict[Action, float] = {}
        for depth in range(1, self.budget.max_depth + 1):
            try:
                found = self._root(board, order, depth)
            except _OutOfBudget:
                break
            scores = found
            self.depth_reached = depth
            order = sorted(order, key=lambda a: -found[a])
            if max(found.values()) > 0.5 * 1_000_000:
                break  # (a forced win: no need to look further)
        if not scores:
            scores = {a: float(-i) for i, a in enumerate(order)}
        best = max(scores.values())
        ties = [a for a in order if scores[a] >= best - 1e-6]
        return ties[rng.randrange(len(ties))]

    def _root(self, game: Game, order: list[Action], depth: int) -> dict[Action, float]:
        alpha, out = -math.inf, {}
        for action in order:
            game.push(action)
            # (a hair below the best so far: an action as good as it gets its exact value,
            # and ties are seen as ties)
            value = self._search(game, depth - 1, alpha - 1e-3, math.inf)
            game.pop()
            out[action] = value
            alpha = max(alpha, value)
        return out

    def _search(self, game: Game, depth: int, alpha: float, beta: float) -> float:
        self.nodes += 1
        budget = self.budget
        if (budget.nodes is not None and self.nodes > budget.nodes) or (
                self.nodes % 64 == 0 and self.clock() > self._deadline):
            raise _OutOfBudget
        if depth == 0 or game.is_over:
            return evaluate(game, self.team, self.weights)
        key = _key(game)
        entry = self._table.get(key)
        first: Action | None = None
        if entry is not None:
            e_depth, e_value, e_kind, first = entry
            if e_depth >= depth and (e_kind == _EXACT or (e_kind == _LOWER and e_value >= beta)
                                     or (e_kind == _UPPER and e_value <= alpha)):
                return e_value
        maximizing = game.team(game.turn) == self.team
        actions = sorted(game.legal_actions, key=lambda a: -order_score(game, a))
        if first is not None and first in actions:
            actions.remove(first)
            actions.insert(0, first)
        a0, b0 = alpha, beta
        best = -math.inf if maximizing else math.inf
        best_action = None
        for action in actions:
            game.push(action)
            value = self._search(game, depth - 1, alpha, beta)
            game.pop()
            if maximizing:
                if value > best:
                    best, best_action = value, action
                alpha = max(alpha, value)
            else:
                if value < best:
                    best, best_action = value, action
                beta = min(beta, value)
            if alpha >= beta:
                break
        kind = _UPPER if best <= a0 else _LOWER if best >= b0 else _EXACT
        self._table[key] = (depth, best, kind, best_action)
        return best
