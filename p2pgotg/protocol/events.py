"""Events the protocol kernel hands to its driver (UI, bot, network, verify), as frozen
values; a game adds its own (Game of the Generals: `p2pgotg.games.gotg.events`).

`role` is always who did it: "host" or "joiner".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2pgotg.protocol.verdict import Verdict


@dataclass(frozen=True)
class Event:
    """Base class of every protocol event."""


@dataclass(frozen=True)
class OptionsProposed(Event):
    """The host's hello arrived: a joiner must accept these options (or walk away)."""

    options: object  # the game's rule options
    host_key: bytes


@dataclass(frozen=True)
class GameIdentified(Event):
    """Both hellos are in: the game has its id."""

    game_id: bytes
    options: object


@dataclass(frozen=True)
class ColoursDecided(Event):
    first: str  # the role that moves first (in Game of the Generals, plays White)


@dataclass(frozen=True)
class DrawOffered(Event):
    role: str


@dataclass(frozen=True)
class DrawDeclined(Event):
    role: str


@dataclass(frozen=True)
class ChatReceived(Event):
    role: str
    text: str


@dataclass(frozen=True)
class GameEnded(Event):
    """The game is over; the audit (where the game has secrets) follows and decides whether
    the result stands."""

    termination: enum.Enum | None  # the game's termination; None: a proven violation
    winner: str | None  # role, None for a draw


@dataclass(frozen=True)
class MessageIgnored(Event):
    """An ending that crossed the end of the game on the wire and did not decide it: kept,
    without effect on the result."""

    role: str
    type: str


@dataclass(frozen=True)
class AuditReceived(Event):
    role: str


@dataclass(frozen=True)
class AuditCompleted(Event):
    verdict: Verdict


@dataclass(frozen=True)
class ClaimMade(Event):
    """A forfeit claim took effect: the other side's time ran out, it went away, or it did
    not open its commitments (its audit). The result rests on the claimant's word."""

    role: str
    reason: str
    seq: int  # the claim's sequence number among `role`'s messages


@dataclass(frozen=True)
class DisputeReceived(Event):
    """The side claimed against disagrees: the result rests on one word against another."""

    role: str
    claim: int
