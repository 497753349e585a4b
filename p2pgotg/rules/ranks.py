"""Ranks, the 21-piece set, display names and short codes (seed 000, seed 001)."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType

from p2pgotg.rules.errors import InvalidNotationError


class Rank(enum.IntEnum):
    """A piece's rank. The integer value (0..14) is the rank index used on the wire
    and in commitments; it also orders the officers from Private up."""

    FLAG = 0
    SPY = 1
    PRIVATE = 2
    SERGEANT = 3
    SECOND_LIEUTENANT = 4
    FIRST_LIEUTENANT = 5
    CAPTAIN = 6
    MAJOR = 7
    LIEUTENANT_COLONEL = 8
    COLONEL = 9
    BRIGADIER_GENERAL = 10
    MAJOR_GENERAL = 11
    LIEUTENANT_GENERAL = 12
    GENERAL = 13
    GENERAL_OF_THE_ARMY = 14

    @property
    def display_name(self) -> str:
        return _DISPLAY[self]

    @property
    def code(self) -> str:
        """Short code of at most 3 characters, used in formations and on the board."""
        return _CODES[self]

    @classmethod
    def from_code(cls, text: str) -> Rank:
        """Parse a short code (case-insensitive; also accepts aliases such as `GOA`, `5S`).

        >>> Rank.from_code("5*")
        <Rank.GENERAL_OF_THE_ARMY: 14>
        """
        rank = _BY_CODE.get(text.strip().upper())
        if rank is None:
            known = " ".join(_CODES[r] for r in Rank)
            raise InvalidNotationError(f"unknown rank code {text!r} (codes: {known})")
        return rank

    @property
    def is_officer(self) -> bool:
        """Sergeant and above: the pieces a Spy eliminates."""
        return self >= Rank.SERGEANT


_DISPLAY = {
    Rank.FLAG: "Flag",
    Rank.SPY: "Spy",
    Rank.PRIVATE: "Private",
    Rank.SERGEANT: "Sergeant",
    Rank.SECOND_LIEUTENANT: "2nd Lieutenant",
    Rank.FIRST_LIEUTENANT: "1st Lieutenant",
    Rank.CAPTAIN: "Captain",
    Rank.MAJOR: "Major",
    Rank.LIEUTENANT_COLONEL: "Lieutenant Colonel",
    Rank.COLONEL: "Colonel",
    Rank.BRIGADIER_GENERAL: "Brigadier General (1 star)",
    Rank.MAJOR_GENERAL: "Major General (2 stars)",
    Rank.LIEUTENANT_GENERAL: "Lieutenant General (3 stars)",
    Rank.GENERAL: "General (4 stars)",
    Rank.GENERAL_OF_THE_ARMY: "General of the Army (5 stars)",
}

_CODES = {
    Rank.FLAG: "FLG",
    Rank.SPY: "SPY",
    Rank.PRIVATE: "PVT",
    Rank.SERGEANT: "SGT",
    Rank.SECOND_LIEUTENANT: "2LT",
    Rank.FIRST_LIEUTENANT: "1LT",
    Rank.CAPTAIN: "CPT",
    Rank.MAJOR: "MAJ",
    Rank.LIEUTENANT_COLONEL: "LTC",
    Rank.COLONEL: "COL",
    Rank.BRIGADIER_GENERAL: "1*",
    Rank.MAJOR_GENERAL: "2*",
    Rank.LIEUTENANT_GENERAL: "3*",
    Rank.GENERAL: "4*",
    Rank.GENERAL_OF_THE_ARMY: "5*",
}

_ALIASES = {
    "F": Rank.FLAG, "FLAG": Rank.FLAG, "S": Rank.SPY, "P": Rank.PRIVATE,
    "BG": Rank.BRIGADIER_GENERAL, "1S": Rank.BRIGADIER_GENERAL,
    "MG": Rank.MAJOR_GENERAL, "2S": Rank.MAJOR_GENERAL,
    "LG": Rank.LIEUTENANT_GENERAL, "3S": Rank.LIEUTENANT_GENERAL,
    "GEN": Rank.GENERAL, "4S": Rank.GENERAL,
    "GOA": Rank.GENERAL_OF_THE_ARMY, "5S": Rank.GENERAL_OF_THE_ARMY,
}
_BY_CODE = {**_ALIASES, **{code: rank for rank, code in _CODES.items()}}

#: How many pieces of each rank one side has: 21 in all (seed 000's table).
COMPOSITION: Mapping[Rank, int] = MappingProxyType(
    {rank: {Rank.PRIVATE: 6, Rank.SPY: 2}.get(rank, 1) for rank in Rank}
)
PIECES_PER_SIDE = sum(COMPOSITION.values())
assert PIECES_PER_SIDE == 21

#: The 21 ranks of one side in rank order, e.g. for filling a setup.
FULL_SET: tuple[Rank, ...] = tuple(r for r in Rank for _ in range(COMPOSITION[r]))


def composition_errors(ranks: list[Rank] | tuple[Rank, ...]) -> list[str]:
    """Say, rank by rank, how a multiset of ranks differs from the 21-piece set."""
    have = Counter(ranks)
    problems = []
    for rank in Rank:
        want, got = COMPOSITION[rank], have.get(rank, 0)
        if got != want:
            problems.append(f"{got} x {rank.display_name} (the set has {want})")
    return problems
