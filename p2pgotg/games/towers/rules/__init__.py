"""The Towers rules engine (seed `002_836edfe2f167b267.txt`; SPEC chapter 4): pure, no I/O,
no crypto, no protocol.

>>> from p2pgotg.games.towers.rules import Action, Game
>>> g = Game()
>>> g.push(Action.from_text("@a1")); g.push_text("@c5")
>>> g.phase.value, g.turn, [a.text() for a in g.legal_actions][:3]
('play', 0, ['+a1', 'a1-a2', 'a1-b1'])
"""

from p2pgotg.games.towers.rules.actions import ALL_ACTIONS, CODES, Action, Kind
from p2pgotg.games.towers.rules.board import (
    BORDER,
    SIZE,
    SQUARES,
    border_distance,
    neighbours,
    on_border,
    parse_square,
    square,
    square_name,
)
from p2pgotg.games.towers.rules.errors import (
    IllegalActionError,
    InvalidNotationError,
    TowersError,
)
from p2pgotg.games.towers.rules.game import Game, Phase
from p2pgotg.games.towers.rules.options import OPTIONS_BYTES, CaptureRule, RuleOptions
from p2pgotg.games.towers.rules.outcome import Outcome, Termination
from p2pgotg.games.towers.rules.seats import (
    LAYERS,
    PAWNS,
    Colour,
    flags_per_seat,
    team_count,
    team_name,
    team_of,
)

__all__ = [
    "ALL_ACTIONS", "BORDER", "CODES", "LAYERS", "OPTIONS_BYTES", "PAWNS", "SIZE", "SQUARES",
    "Action", "CaptureRule", "Colour", "Game", "IllegalActionError", "InvalidNotationError",
    "Kind", "Outcome", "Phase", "RuleOptions", "Termination", "TowersError",
    "border_distance", "flags_per_seat", "neighbours", "on_border", "parse_square", "square",
    "square_name", "team_count", "team_name", "team_of",
]
