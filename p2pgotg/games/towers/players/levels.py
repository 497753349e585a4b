"""The Towers bot's levels, by name.

>>> Level("hard"), [level.value for level in PLAYABLE]
(<Level.HARD: 'hard'>, ['easy', 'normal', 'hard'])
"""

from __future__ import annotations

import enum


class Level(enum.Enum):
    EASY = "easy"  # one action at a time, blind to threats, a little blurred
    NORMAL = "normal"  # one action at a time, with the threats on the board weighed
    HARD = "hard"  # alpha-beta over actions within a budget
    RANDOM = "random"  # uniformly random legal actions: a baseline for tests


PLAYABLE: tuple[Level, ...] = (Level.EASY, Level.NORMAL, Level.HARD)


def as_level(value: Level | str) -> Level:
    """A Level from itself or its name; a clear error for anything else."""
    if isinstance(value, Level):
        return value
    try:
        return Level(value)
    except ValueError:
        names = ", ".join(level.value for level in Level)
        raise ValueError(f"{value!r} is not a Towers bot level ({names})") from None
