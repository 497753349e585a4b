"""Players that choose setups and actions from one player's view: the bot at its levels
(`bot`, `levels`), and the local referee that plays two of them against each other
(`match`). The modules, one concern each: `heuristic` (the one-ply evaluation: easy,
normal), `search` (the hard level's play-outs in sampled worlds), `worlds` (sampling them),
`belief` and `behaviour` (what the view tells about the opponent's ranks), `setups`,
`raid` (a scripted opponent for tests and benchmarks), `bot_seat` (the bot on the network).

>>> import random
>>> from p2pgotg.rules import Side
>>> bot = Bot(Side.WHITE, random.Random(0), level="hard")
>>> bot.choose_setup().side
<Side.WHITE: 0>
"""

from p2pgotg.players.actions import Action, ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.players.belief import Belief
from p2pgotg.players.bot import Bot
from p2pgotg.players.levels import Level
from p2pgotg.players.match import IllegalActionError, MatchResult, Player, play_match

__all__ = [
    "Action",
    "Belief",
    "Bot",
    "ClaimFlag",
    "IllegalActionError",
    "Level",
    "MatchResult",
    "OfferDraw",
    "PlayMove",
    "Player",
    "Resign",
    "play_match",
]
