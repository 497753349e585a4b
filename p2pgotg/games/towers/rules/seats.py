"""Seats and their colours, and how many pawns, flags and layers a game has (seed
`002_836edfe2f167b267.txt`, "Contents" and "Setup"; SPEC 4.2).

A seat is a colour in play, numbered in clockwise order from 0: seat i plays
`Colour(i)`. Who sits where is the protocol's business; the rules start the setup with
seat 0. A team is who wins or loses together: each seat alone, or in the 2-player team
variant seats 0 and 2 (team 0) against seats 1 and 3 (team 1).
"""

from __future__ import annotations

import enum

#: The shared pool of tower layers.
LAYERS = 50
#: Pawns of each colour.
PAWNS = 6
#: Flags each colour takes, by number of seats (the seed's table; the team variant plays
#: as 4 seats, so with 9 each).
FLAGS_BY_SEATS = {2: 13, 3: 11, 4: 9}


class Colour(enum.IntEnum):
    """The colour of seat `i` is `Colour(i)`; its letter marks its pawns (upper case) and
    flags (lower case) in board pictures."""

    RED = 0
    BLUE = 1
    GREEN = 2
    YELLOW = 3

    @property
    def display_name(self) -> str:
        return self.name.capitalize()

    @property
    def letter(self) -> str:
        return self.name[0]


def flags_per_seat(seats: int) -> int:
    """13, 11 or 9 flags for 2, 3 or 4 seats."""
    return FLAGS_BY_SEATS[seats]


def team_of(seat: int, teams: bool) -> int:
    """The team a seat plays for: itself, or its seat's parity in the team variant."""
    return seat % 2 if teams else seat


def team_count(seats: int, teams: bool) -> int:
    return 2 if teams else seats


def team_name(team: int, seats: int, teams: bool) -> str:
    """`Red`, or `Red and Green` for a team of the team variant."""
    members = [s for s in range(seats) if team_of(s, teams) == team]
    return " and ".join(Colour(s).display_name for s in members)
