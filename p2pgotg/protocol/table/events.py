"""Events of a table (SPEC chapter 5), as frozen values; a seat is an int (0 the host).

The two-party kernel's events name a role ("host", "joiner"); a table has up to four
seats, so its events name seats. `GameIdentified` is the kernel's, reused as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.protocol.events import Event, GameIdentified, MessageIgnored

__all__ = [
    "ActionMade", "ActionVoided", "ChatSaid", "ClaimMade", "DisputeMade", "Event",
    "GameIdentified", "HelloHeld", "MessageIgnored", "OrderDecided", "SeatLeft", "SeatTaken",
    "TableEnded", "WhisperReceived",
]


@dataclass(frozen=True)
class HelloHeld(Event):
    """A joiner's hello was taken and waits for the roster to seat it."""

    key: bytes


@dataclass(frozen=True)
class SeatTaken(Event):
    """The roster seated the hello of `key` at `seat`."""

    seat: int
    key: bytes


@dataclass(frozen=True)
class OrderDecided(Event):
    """Every seat opened its coin: `order[c]` is the seat that plays colour c."""

    order: tuple[int, ...]


@dataclass(frozen=True)
class ActionMade(Event):
    seat: int
    action: object  # the game's action (Towers: `Action`)


@dataclass(frozen=True)
class ActionVoided(Event):
    """An action of a seat that a claim removed, made before it saw the claim (SPEC 5.7):
    kept in the file, not applied (taken back if it had been)."""

    seat: int
    action: object


@dataclass(frozen=True)
class SeatLeft(Event):
    seat: int
    termination: str  # "resignation", "time_forfeit" or "abandonment"


@dataclass(frozen=True)
class ClaimMade(Event):
    claimant: int
    seat: int
    reason: str
    seq: int  # the claim's sequence number in its claimant's chain


@dataclass(frozen=True)
class DisputeMade(Event):
    seat: int
    claim: tuple[int, int]  # (claimant, seq)


@dataclass(frozen=True)
class ChatSaid(Event):
    seat: int
    text: str


@dataclass(frozen=True)
class WhisperReceived(Event):
    """A whisper to us; `text` None when its box did not open (it proves nothing)."""

    from_seat: int
    text: str | None


@dataclass(frozen=True)
class TableEnded(Event):
    """The table's game is over: `termination` (a game value, or None for a violation),
    the winning seats (none: no winner)."""

    termination: str | None
    winners: tuple[int, ...]
