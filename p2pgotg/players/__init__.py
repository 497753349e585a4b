"""Players that choose setups and moves from one player's view: the bot at its levels
(`bot`, `levels`), and the local arbiter that plays two of them against each other
(`match`). The modules, one concern each: `heuristic` (the one-ply evaluation: easy,
normal), `search` (the hard level's play-outs in sampled worlds), `worlds` (sampling them),
`belief` and `behaviour` (what the view tells about the opponent's ranks), `setups`,
`choices` (what a player may choose on its turn), `bot_seat` (the bot on the network).

>>> import random
>>> from p2pgotg.rules import Side
>>> bot = Bot(Side.WHITE, random.Random(0), level="hard")
>>> bot.choose_setup().side
<Side.WHITE: 0>
"""

from p2pgotg.players.belief import Belief
from p2pgotg.players.bot import Bot
from p2pgotg.players.choices import Choice, ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.players.levels import Level
from p2pgotg.players.match import IllegalChoiceError, MatchResult, Player, play_match

__all__ = [
    "Belief",
    "Bot",
    "Choice",
    "ClaimFlag",
    "IllegalChoiceError",
    "Level",
    "MatchResult",
    "OfferDraw",
    "PlayMove",
    "Player",
    "Resign",
    "play_match",
]
