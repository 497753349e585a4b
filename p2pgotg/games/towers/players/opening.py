"""The setup ("push your luck", SPEC 4.3): which starting square a bot wants, and whether
it places a layer on it first.

A start is worth its height (a pawn up there cannot be taken from its neighbours and can
take on them) and its neighbours (a corner has two squares to step on, an edge three).
Layers placed on the square a seat means to claim raise its start, but each one is a
turn in which another seat may claim first; so a bot decides at the start of the game how
many it will risk (0 to `greed`), and the last seat of a 2-player game always puts its
one last layer on the square it then claims.
"""

from __future__ import annotations

import random

from p2pgotg.games.towers.rules import Action, Game, Kind, neighbours


def start_value(game: Game, sq: int) -> float:
    h = game.height(sq)
    return 3.0 * h + len(neighbours(sq)) + 0.5 * sum(
        1 for n in neighbours(sq) if game.height(n) < h)


class Opening:
    """One seat's setup choices for one game."""

    def __init__(self, rng: random.Random, greed: int = 2, jitter: float = 1.0) -> None:
        self.rng = rng
        self.layers_wanted = rng.randint(0, greed)
        self.jitter = jitter
        self._noise: dict[int, float] = {}

    def choose(self, game: Game) -> Action:
        legal = game.legal_actions
        claims = [a for a in legal if a.kind is Kind.CLAIM]
        layers = [a for a in legal if a.kind is Kind.LAYER]
        for a in claims:
            self._noise.setdefault(a.square, self.rng.uniform(0.0, self.jitter))
        target = max(claims, key=lambda a: start_value(game, a.square) + self._noise[a.square])
        if layers and (self._is_last(game) or self.layers_wanted > 0):
            self.layers_wanted -= 1
            return Action.layer(target.square)
        return target

    @staticmethod
    def _is_last(game: Game) -> bool:
        return sum(1 for s in range(game.seats) if game.start(s) is None) == 1
