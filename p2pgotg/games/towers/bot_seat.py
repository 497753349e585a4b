"""The Towers bot as a seat at a networked game: reads its peer's view (the whole board:
Towers hides nothing), answers with an action. `step` is pure: the driver calls it whenever
something changed and performs what it returns."""

from __future__ import annotations

import random

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.players.bot import TowersBot
from p2pgotg.games.towers.rules.game import Game
from p2pgotg.protocol.peer import Action


class TowersBotSeat:
    """Plays one player's colours (one bot per colour, each from that colour's turn)."""

    def __init__(self, rng: random.Random, level: str = "normal") -> None:
        self.rng = rng
        self.level = level
        self.bots: dict[int, TowersBot] = {}

    def step(self, peer: TowersPeer) -> Action[TowersPeer] | None:
        """The next thing to do, or None while it is the other player's turn."""
        if peer.rules_to_accept:
            return lambda p: p.accept()
        game = peer.view
        if game is None or peer.failed is not None or not peer.my_turn:
            return None
        if peer.draw_offered_to_me:
            if takes_draw(game, game.turn):
                return lambda p: p.accept_draw()
            return lambda p: p.decline_draw()
        seat = game.turn
        bot = self.bots.get(seat)
        if bot is None:
            bot = self.bots[seat] = TowersBot(seat, self.rng, self.level)
        action = bot.choose_action(game.copy())
        return lambda p: p.act(action)


def takes_draw(game: Game, seat: int) -> bool:
    """Whether the bot playing `seat` accepts a draw offer: when its team is not ahead on
    the points as they stand (SPEC 4.8), as Game of the Generals' bot takes one when it is
    not ahead in material; ahead, it plays the game out."""
    points = game.team_points()
    ours = game.team(seat)
    return points[ours] <= max(p for team, p in enumerate(points) if team != ours)
