"""Towers as a game of the kernel: its name in a hello (`rules: "towers"`), its flow and its
peer. Kept apart from the package's `__init__` so that the rules engine and the bot import
nothing of the protocol."""

from __future__ import annotations

import random
from typing import Any

from p2pgotg.games import GameModule
from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules.options import RuleOptions


def _bot_seat(rng: random.Random, level: str) -> Any:
    from p2pgotg.games.towers.bot_seat import TowersBotSeat

    return TowersBotSeat(rng, level)


MODULE = GameModule(name="towers", title="Towers", flow=TowersFlow, peer=TowersPeer,
                    options=RuleOptions, bot_seat=_bot_seat)
