"""The Towers bot: one object per seat that chooses that seat's actions, at one of the
levels of `levels`. Towers has no hidden information, so a bot reads the whole `Game`.

- `easy`: each action on its own, by the points and pawns it leaves, blind to what either
  side threatens, with a blur drawn from its rng (it misses a good action now and then).
- `normal`: each action on its own, by the full evaluation (`evaluation`): threats
  against its pawns and flags, and its own.
- `hard`: alpha-beta over the next actions (`search`), paranoid with 3 or 4 seats.
- `random`: any legal action.

Every level is deterministic given its rng (`hard`: with a budget in nodes and no
deadline, `Budget(seconds=None)`).

>>> import random
>>> from p2pgotg.games.towers.rules import Game
>>> game = Game()
>>> bots = [TowersBot(0, random.Random(1), "hard"), TowersBot(1, random.Random(2), "easy")]
>>> while not game.is_over:
...     game.push(bots[game.turn].choose_action(game))
>>> game.outcome.termination.value in ("pool_empty", "all_flags_planted", "no_action")
True
"""

from __future__ import annotations

import random
from dataclasses import replace

from p2pgotg.games.towers.players.evaluation import PLAIN, Weights, evaluate
from p2pgotg.games.towers.players.levels import Level, as_level
from p2pgotg.games.towers.players.opening import Opening
from p2pgotg.games.towers.players.search import Budget, Searcher
from p2pgotg.games.towers.rules import Action, Game, Phase

#: The easy level's view: no threats seen, and its choices blurred by up to half a point.
BEGINNER = replace(PLAIN, acting=0.0, waiting=0.0, frontier=0.0, height=4.0, noise=50.0)


class RandomPlayer:
    """Uniformly random legal actions (a baseline for tests and benchmarks)."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    def choose_action(self, game: Game) -> Action:
        return self.rng.choice(game.legal_actions)


class TowersBot:
    """A Towers bot for one seat. `budget` bounds the hard level's search (default
    `Budget()`); the other levels ignore it."""

    def __init__(self, seat: int, rng: random.Random, level: Level | str = Level.NORMAL,
                 budget: Budget | None = None) -> None:
        self.seat = seat
        self.rng = rng
        self.level = as_level(level)
        easy = self.level is Level.EASY
        self.weights: Weights = BEGINNER if easy else PLAIN
        self.opening = Opening(rng, greed=1 if easy else 2, jitter=3.0 if easy else 1.0)
        self._budget = budget
        self._searcher: Searcher | None = None

    def choose_action(self, game: Game) -> Action:
        """The action for our seat (`game.turn == seat`, the game not over)."""
        if game.turn != self.seat or game.is_over:
            raise ValueError(f"it is not seat {self.seat}'s turn to act")
        if self.level is Level.RANDOM:
            return self.rng.choice(game.legal_actions)
        if game.phase is Phase.SETUP:
            return self.opening.choose(game)
        if self.level is Level.HARD:
            if self._searcher is None:
                self._searcher = Searcher(game.team(self.seat), self._budget, self.weights)
            return self._searcher.choose(game, self.rng)
        return self._one_action(game)

    def _one_action(self, game: Game) -> Action:
        team, noise = game.team(self.seat), self.weights.noise
        best, best_value = game.legal_actions[0], -float("inf")
        for action in game.legal_actions:
            game.push(action)
            value = evaluate(game, team, self.weights)
            game.pop()
            value += self.rng.uniform(0.0, noise) if noise else self.rng.uniform(0.0, 1e-3)
            if value > best_value:
                best, best_value = action, value
        return best
