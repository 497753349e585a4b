"""The Towers bot as a seat at a networked game: reads its peer's view (the whole board:
Towers hides nothing), answers with an action. `step` is pure: the driver calls it whenever
something changed and performs what it returns."""

from __future__ import annotations

import random
from collections.abc import Callable

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.players.bot import TowersBot
from p2pgotg.protocol.events import Event


class TowersBotSeat:
    """Plays one player's colours (one bot per colour, each from that colour's turn)."""

    def __init__(self, rng: random.Random, level: str = "normal") -> None:
        self.rng = rng
        self.level = level
        self.bots: dict[int, TowersBot] = {}

    def step(self, peer: TowersPeer) -> Callable[[TowersPeer], list[Event]] | None:
        """The next thing to do, or None while it is the other player's turn."""
        if peer.rules_to_accept:
            return lambda p: p.accept()
        game = peer.view
        if game is None or peer.failed is not None or not peer.my_turn:
            return None
        if peer.draw_offered_to_me:  # (it plays every game out)
            return lambda p: p.decline_draw()
        seat = game.turn
        bot = self.bots.get(seat)
        if bot is None:
            bot = self.bots[seat] = TowersBot(seat, self.rng, self.level)
        action = bot.choose_action(game.copy())
        return lambda p: p.act(action)
