"""Events the protocol hands to its driver (UI, bot, network, verify), as frozen values.

`role` is always who did it: "host" or "joiner".
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.protocol.verdict import Verdict
from p2pgotg.rules import Move, PlyRecord, Rank, RuleOptions, Side, Termination


@dataclass(frozen=True)
class Event:
    """Base class of every protocol event."""


@dataclass(frozen=True)
class OptionsProposed(Event):
    """The host's hello arrived: a joiner must accept these options (or walk away)."""

    options: RuleOptions
    host_key: bytes


@dataclass(frozen=True)
class GameIdentified(Event):
    """Both hellos are in: the game has its id."""

    game_id: bytes
    options: RuleOptions


@dataclass(frozen=True)
class ColoursDecided(Event):
    white: str  # the role that plays White and moves first


@dataclass(frozen=True)
class SetupCommitted(Event):
    role: str


@dataclass(frozen=True)
class GameStarted(Event):
    """Both setups are revealed (positions only): play begins, White to move."""


@dataclass(frozen=True)
class ChallengeStarted(Event):
    """An open challenge: the attacker's rank is declared; the defender's follows."""

    role: str
    move: Move
    attacker_rank: Rank | None  # None in a blind challenge: no rank is declared


@dataclass(frozen=True)
class MovePlayed(Event):
    role: str
    record: PlyRecord
    attacker_rank: Rank | None = None  # declared ranks of an open challenge
    defender_rank: Rank | None = None


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
    """The game is over; the audit follows and decides whether the result stands."""

    termination: Termination | None  # None: a proven violation ended it
    winner: str | None  # role, None for a draw
    winner_side: Side | None


@dataclass(frozen=True)
class MessageIgnored(Event):
    """A message that crossed the end of the game on the wire: kept, without effect."""

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
    """A forfeit claim took effect: `role` says the other side ran out of time ("time"),
    went away ("abandoned") or did not open its commitments ("audit"). The result then rests
    on `role`'s word; the other side may sign a dispute of message `seq`."""

    role: str
    reason: str
    seq: int  # the claim's sequence number among `role`'s messages


@dataclass(frozen=True)
class DisputeReceived(Event):
    """`role` signed that it disputes the other side's claim (its message `claim`)."""

    role: str
    claim: int
