"""Play a whole Towers game between players (bots, random movers, or any object with
`choose_action(game) -> Action`), checking each action against the rules: for tests and
benchmarks. The network plays the same game through the protocol instead."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from p2pgotg.games.towers.rules import Action, Game, RuleOptions, Termination


class Player(Protocol):
    def choose_action(self, game: Game) -> Action: ...


@dataclass
class MatchResult:
    game: Game
    seconds: dict[int, list[float]] = field(default_factory=dict)  # decision times by seat


def play_game(players: Mapping[int, Player], options: RuleOptions | None = None,
              max_actions: int = 5000,
              clock: Callable[[], float] = time.perf_counter,
              leaves: Mapping[int, int] | None = None) -> MatchResult:
    """Let `players[seat]` choose every action of its seat until the game ends. A game
    that runs past `max_actions` raises (Towers' rules do not bound a game's length, but
    a bot that builds ends it: SPEC 4.1). `leaves[ply]` is a seat that abandons the game
    once `ply` actions are made (SPEC 4.13), if it is still in then."""
    game = Game(options)
    result = MatchResult(game, {seat: [] for seat in players})
    leaves = dict(leaves or {})
    while not game.is_over:
        seat_gone = leaves.pop(game.ply, None)
        if seat_gone is not None and not game.has_left(seat_gone):
            game.leave(seat_gone, Termination.ABANDONMENT)
            continue
        if game.ply >= max_actions:
            raise RuntimeError(f"the game passed {max_actions} actions without ending")
        seat = game.turn
        start = clock()
        action = players[seat].choose_action(game.copy())
        result.seconds[seat].append(clock() - start)
        game.push(action)  # (IllegalActionError if the player broke a rule)
    return result
