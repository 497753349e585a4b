"""Game of the Generals' events, beside the kernel's (`p2pgotg.protocol.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.protocol.events import Event
from p2pgotg.rules import Move, PlyRecord, Rank


@dataclass(frozen=True)
class SetupCommitted(Event):
    role: str


@dataclass(frozen=True)
class GameStarted(Event):
    """Both setups are revealed: play begins, White to move."""


@dataclass(frozen=True)
class ChallengeStarted(Event):
    """A challenge waits for its answer (the defender's opening, or the blind exchange)."""

    role: str
    move: Move
    attacker_rank: Rank | None  # None in a blind challenge: no rank is declared


@dataclass(frozen=True)
class MovePlayed(Event):
    role: str
    record: PlyRecord
    attacker_rank: Rank | None = None  # declared ranks of an open challenge
    defender_rank: Rank | None = None
