"""Towers rule options: one value, proposed by the host and accepted by the others, with a
dict form (messages) and a fixed-length byte form (the game id). SPEC 4.1 and 4.10.

The defaults are the literal reading of seed `002_836edfe2f167b267.txt`; every other
reading its missing diagrams leave open that is plausible is an option, off by default.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, fields
from typing import Any

from p2pgotg.games.towers.rules.seats import flags_per_seat

#: The most seconds a clock option may hold (a week), as in Game of the Generals.
MAX_SECONDS = 7 * 24 * 3600
#: The most layers a climb or descent limit may name (0 is no limit).
MAX_LIMIT = 49


class CaptureRule(enum.Enum):
    """What "comes from a higher tower" compares, for a move onto an opponent's pawn."""

    #: The mover's tower is strictly taller than the tower it moves onto. The default.
    HIGHER = "higher"
    #: At least as tall: a pawn may also take from a tower of the same height.
    NOT_LOWER = "not_lower"


_CAPTURES = list(CaptureRule)
_BOOLS = ("teams", "short_turn", "stuck_loses", "partners_block", "bonus_highest_tower",
          "bonus_most_pawns")
_INTS = {"seats": (2, 4), "climb_limit": (0, MAX_LIMIT), "descent_limit": (0, MAX_LIMIT),
         "start_gap": (1, 2), "clock_seconds": (0, MAX_SECONDS),
         "turn_seconds": (0, MAX_SECONDS)}
#: The byte form's layout (big-endian): eleven u8 then two u32.
_LAYOUT = struct.Struct(">11BII")
OPTIONS_BYTES = _LAYOUT.size


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """Every option a Towers game is played under. Hashable; round-trips through
    `to_dict`/`from_dict` and `to_bytes`/`from_bytes`.

    >>> RuleOptions(seats=4, teams=True).describe()
    '2 players, 2 colours each, 9 flags a colour'
    >>> RuleOptions.from_bytes(RuleOptions(climb_limit=1).to_bytes()).climb_limit
    1
    """

    seats: int = 2  # colours in play, 2..4
    teams: bool = False  # the 2-player variant: 4 colours, seats 0+2 against 1+3
    capture: CaptureRule = CaptureRule.HIGHER
    climb_limit: int = 0  # the most layers a move may climb; 0 = any
    descent_limit: int = 0  # the most layers a move may go down; 0 = any
    start_gap: int = 2  # border squares that must lie between two starting squares
    short_turn: bool = False  # no possible second action ends the turn, not the game
    stuck_loses: bool = False  # a seat that cannot act when it must loses
    partners_block: bool = False  # (team variant) a partner's pawn blocks like one's own
    bonus_highest_tower: bool = False  # the seed's commented-out bonus point
    bonus_most_pawns: bool = False  # the seed's commented-out bonus point
    clock_seconds: int = 0  # each player's total thinking time; 0 = no clock (driver)
    turn_seconds: int = 0  # the most one turn may take; 0 = no limit (driver)

    def __post_init__(self) -> None:
        for name, (low, high) in _INTS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"rule option {name} must be a whole number {low}..{high}")
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"rule option {name} must be true or false")
        if not isinstance(self.capture, CaptureRule):
            raise ValueError("rule option capture must be a CaptureRule")
        if self.teams and self.seats != 4:
            raise ValueError("the team variant plays 4 colours: teams needs seats = 4")
        if self.partners_block and not self.teams:
            raise ValueError("partners_block is a rule of the team variant: it needs teams")

    def __deepcopy__(self, memo: dict[int, object]) -> RuleOptions:
        return self  # (immutable)

    # -- dict form ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain values only (str / bool / int), in the order of SPEC 4.10's table."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, enum.Enum) else value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> RuleOptions:
        """Strict: unknown or missing keys and wrong types are errors (ValueError)."""
        if not isinstance(data, dict):
            raise ValueError("rule options must be a map")
        names = [f.name for f in fields(cls)]
        if set(data) != set(names):
            raise ValueError(f"rule options must have exactly the keys {names}")
        try:
            values = dict(data)
            values["capture"] = CaptureRule(data["capture"])
            return cls(**values)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"bad rule option: {exc}") from None

    # -- byte form ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """19 bytes (SPEC 4.10): seats, teams, capture index (higher 0, not_lower 1),
        climb limit, descent limit, start gap, short turn, stuck loses, partners block,
        the two bonuses (u8 each, booleans 0/1), then clock and turn seconds (u32 each)."""
        return _LAYOUT.pack(
            self.seats, int(self.teams), _CAPTURES.index(self.capture), self.climb_limit,
            self.descent_limit, self.start_gap, int(self.short_turn), int(self.stuck_loses),
            int(self.partners_block), int(self.bonus_highest_tower),
            int(self.bonus_most_pawns), self.clock_seconds, self.turn_seconds)

    @classmethod
    def from_bytes(cls, data: bytes) -> RuleOptions:
        """The options of a byte form; any other length or value is refused (ValueError)."""
        if not isinstance(data, bytes) or len(data) != OPTIONS_BYTES:
            raise ValueError(f"rule options take exactly {OPTIONS_BYTES} bytes")
        (seats, teams, capture, climb, descent, gap, short, stuck, partners, tower, pawns,
         clock, turn) = _LAYOUT.unpack(data)
        flags = (teams, short, stuck, partners, tower, pawns)
        if any(v > 1 for v in flags) or capture >= len(_CAPTURES):
            raise ValueError("rule options bytes hold a value out of range")
        return cls(seats=seats, teams=bool(teams), capture=_CAPTURES[capture],
                   climb_limit=climb, descent_limit=descent, start_gap=gap,
                   short_turn=bool(short), stuck_loses=bool(stuck),
                   partners_block=bool(partners), bonus_highest_tower=bool(tower),
                   bonus_most_pawns=bool(pawns), clock_seconds=clock, turn_seconds=turn)

    # -- for people ---------------------------------------------------------------------

    def describe(self) -> str:
        flags = flags_per_seat(self.seats)
        parts = ([f"2 players, 2 colours each, {flags} flags a colour"] if self.teams
                 else [f"{self.seats} players, {flags} flags each"])
        if self.capture is CaptureRule.NOT_LOWER:
            parts.append("captures from a tower as tall or taller")
        if self.climb_limit:
            parts.append(f"climb at most {self.climb_limit}")
        if self.descent_limit:
            parts.append(f"descend at most {self.descent_limit}")
        if self.start_gap != 2:
            parts.append(f"starts {self.start_gap} border square apart")
        parts += [words for name, words in (
            ("short_turn", "a turn may be one action"), ("stuck_loses", "a stuck seat loses"),
            ("partners_block", "partners block"),
            ("bonus_highest_tower", "bonus for the highest tower"),
            ("bonus_most_pawns", "bonus for the most pawns")) if getattr(self, name)]
        if self.clock_seconds:
            parts.append(f"clock {self.clock_seconds} s each")
        if self.turn_seconds:
            parts.append(f"{self.turn_seconds} s a turn")
        return ", ".join(parts)
