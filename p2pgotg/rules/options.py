"""Rule options: one value, proposed by the host and accepted by the joiner.

The defaults follow the primary source (seed 000); every other reading the seeds allow is
an option (see SPEC.md, rules chapter).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any


class FlagRule(enum.Enum):
    """When a flag on the opposing back rank wins."""

    #: Seed 000 and seed 001: at once when no enemy piece is orthogonally adjacent,
    #: otherwise after it survives the opponent's next turn. The default.
    SAFE_OR_SURVIVE = "safe_or_survive"
    #: Seed 004 (items 4 and 5): always after surviving the opponent's next turn.
    ALWAYS_SURVIVE = "always_survive"
    #: Seed 001 "How the game ends" item 2, read alone: as soon as it arrives.
    IMMEDIATE = "immediate"


class ChallengeMode(enum.Enum):
    """How a challenge is resolved without an arbiter."""

    #: Seed 001 "playing without an arbiter": both ranks are declared.
    OPEN = "open"
    #: A two-party computation tells only the outcome, as the arbiter would.
    BLIND = "blind"


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """Every option a game is played under. Hashable and round-trips through a dict."""

    flag_rule: FlagRule = FlagRule.SAFE_OR_SURVIVE
    two_squares: bool = False  # seed 003: no more than 3 moves on the same two squares
    chasing: bool = False  # seed 003: a chasing move may not repeat a position
    challenge_mode: ChallengeMode = ChallengeMode.OPEN
    clock_seconds: int = 0  # each player's total thinking time; 0 = no clock
    move_seconds: int = 0  # the most one move may take; 0 = no limit

    def __deepcopy__(self, memo: dict[int, object]) -> RuleOptions:
        return self  # (immutable: a copy of a game shares its values)

    def __post_init__(self) -> None:
        for name in ("clock_seconds", "move_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not (
                0 <= value <= MAX_SECONDS
            ):
                raise ValueError(f"rule option {name} must be a whole number 0..{MAX_SECONDS}")

    def to_dict(self) -> dict[str, Any]:
        """Plain values only (str / bool / int), in a fixed key order."""
        return {
            "flag_rule": self.flag_rule.value,
            "two_squares": self.two_squares,
            "chasing": self.chasing,
            "challenge_mode": self.challenge_mode.value,
            "clock_seconds": self.clock_seconds,
            "move_seconds": self.move_seconds,
        }

    @classmethod
    def from_dict(cls, data: Any) -> RuleOptions:
        """Strict: unknown keys, missing keys or wrong types are errors (ValueError)."""
        if not isinstance(data, dict):
            raise ValueError("rule options must be a map")
        names = {f.name for f in fields(cls)}
        if set(data) != names:
            raise ValueError(f"rule options must have exactly the keys {sorted(names)}")
        for key in ("two_squares", "chasing"):
            if not isinstance(data[key], bool):
                raise ValueError(f"rule option {key} must be true or false")
        try:
            return cls(
                flag_rule=FlagRule(data["flag_rule"]),
                two_squares=data["two_squares"],
                chasing=data["chasing"],
                challenge_mode=ChallengeMode(data["challenge_mode"]),
                clock_seconds=data["clock_seconds"],
                move_seconds=data["move_seconds"],
            )
        except ValueError as exc:
            raise ValueError(f"bad rule option: {exc}") from None

    def describe(self) -> str:
        parts = [f"challenges {self.challenge_mode.value}", f"flag rule {self.flag_rule.value}"]
        if self.two_squares:
            parts.append("two-squares rule")
        if self.chasing:
            parts.append("chasing rule")
        if self.clock_seconds:
            parts.append(f"clock {_duration(self.clock_seconds)} each")
        if self.move_seconds:
            parts.append(f"{_duration(self.move_seconds)} per move")
        return ", ".join(parts)


MAX_SECONDS = 7 * 24 * 3600


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"
