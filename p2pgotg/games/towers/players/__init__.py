"""Towers players: the bot at its levels, a random mover, and a referee that plays a whole
game between players (rules only: a player chooses actions, it never sends them)."""

from p2pgotg.games.towers.players.bot import RandomPlayer, TowersBot
from p2pgotg.games.towers.players.levels import PLAYABLE, Level, as_level
from p2pgotg.games.towers.players.match import MatchResult, play_game
from p2pgotg.games.towers.players.search import Budget

__all__ = ["PLAYABLE", "Budget", "Level", "MatchResult", "RandomPlayer", "TowersBot",
           "as_level", "play_game"]
