"""The bot's levels, by name, and the older integer levels they replace.

>>> as_level("hard"), as_level(0), as_level(Level.EASY)
(<Level.HARD: 'hard'>, <Level.RANDOM: 'random'>, <Level.EASY: 'easy'>)
"""

from __future__ import annotations

import enum


class Level(enum.Enum):
    """How the bot plays. The three a person chooses from are `PLAYABLE`."""

    EASY = "easy"  # a beginner's mistakes: legal, plausible, never random noise
    NORMAL = "normal"  # the one-ply bot with setups that give nothing away
    HARD = "hard"  # a search over sampled worlds consistent with its view
    LEGACY = "legacy"  # the bot as it was before the levels, kept for measurements
    RANDOM = "random"  # uniformly random legal moves: a baseline


#: The levels offered on the command line and the start screen.
PLAYABLE: tuple[str, ...] = (Level.EASY.value, Level.NORMAL.value, Level.HARD.value)

#: The level of `p2pgotg play` (and the start screen) when none is chosen: the strongest.
PLAY_DEFAULT = Level.HARD.value
#: The level of a bot seat on the network when none is chosen: `host --bot`, `join --bot`,
#: `selfplay` and the many-game host, where one core serves many games at once.
SEAT_DEFAULT = Level.NORMAL.value

_BY_NUMBER = {0: Level.RANDOM, 1: Level.LEGACY}


def as_level(value: Level | str | int) -> Level:
    """`value` as a Level: a Level, its name ("easy", "normal", "hard", "legacy",
    "random"), or an older integer level (0 random moves, 1 the one-ply bot)."""
    if isinstance(value, Level):
        return value
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a bot level")
    if isinstance(value, int):
        if value in _BY_NUMBER:
            return _BY_NUMBER[value]
        raise ValueError(f"level {value} is not a bot level (0 or 1, or a name)")
    try:
        return Level(value)
    except ValueError:
        names = ", ".join(level.value for level in Level)
        raise ValueError(f"{value!r} is not a bot level ({names})") from None


__all__ = ["PLAYABLE", "PLAY_DEFAULT", "SEAT_DEFAULT", "Level", "as_level"]
