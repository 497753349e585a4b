"""Game of the Generals (Salpakan), the first game on the protocol kernel: its messages
(`messages`), its flow (`flow.GotgFlow`: setup, play, challenges, audit), its peer
(`peer.GotgPeer`) and its events. Its rules engine is `p2pgotg.rules`, its bots
`p2pgotg.players`, its screens `p2pgotg.ui`."""

from __future__ import annotations

import random
from typing import Any

from p2pgotg.games import GameModule
from p2pgotg.games.gotg import messages as _messages  # noqa: F401  (registers its types)
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.rules import RuleOptions


def _bot_seat(rng: random.Random, level: str) -> Any:
    from p2pgotg.players.bot_seat import BotSeat

    return BotSeat(rng, level)


MODULE = GameModule(name=None, title="Game of the Generals", flow=GotgFlow, peer=GotgPeer,
                    options=RuleOptions, bot_seat=_bot_seat)

__all__ = ["MODULE", "GotgFlow", "GotgPeer"]
