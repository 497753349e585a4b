"""Players that choose setups and actions from one player's view: the bot, and the local
referee that plays two of them against each other.

>>> import random
>>> from p2pgotg.rules import Side
>>> bot = Bot(Side.WHITE, random.Random(0))
>>> bot.choose_setup().side
<Side.WHITE: 0>
"""

from p2pgotg.players.actions import Action, ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.players.belief import Belief
from p2pgotg.players.bot import Bot
from p2pgotg.players.match import IllegalActionError, MatchResult, Player, play_match

__all__ = [
    "Action",
    "Belief",
    "Bot",
    "ClaimFlag",
    "IllegalActionError",
    "MatchResult",
    "OfferDraw",
    "PlayMove",
    "Player",
    "Resign",
    "play_match",
]
