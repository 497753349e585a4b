"""Towers' own events (the kernel's are in `p2pgotg.protocol.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.protocol.events import Event


@dataclass(frozen=True)
class ActionPlayed(Event):
    """`role` made `action` for its colour `seat` (a setup choice or a turn's action)."""

    role: str
    seat: int
    action: Action
