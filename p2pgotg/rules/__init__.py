"""The Game of the Generals rules engine: pure, no I/O, no crypto.

>>> from p2pgotg.rules import Rank, resolve_challenge
>>> resolve_challenge(Rank.SPY, Rank.GENERAL_OF_THE_ARMY).name
'ATTACKER_WINS'
"""

from p2pgotg.rules.board import (
    FILES,
    ROWS,
    SQUARES,
    Side,
    back_row,
    home_rows,
    home_squares,
    neighbours,
    parse_square,
    square,
    square_name,
)
from p2pgotg.rules.challenge import ChallengeResult, resolve_challenge
from p2pgotg.rules.errors import (
    IllegalMoveError,
    InvalidNotationError,
    InvalidSetupError,
    RulesError,
)
from p2pgotg.rules.formations import formation_names, formation_text, load_formation
from p2pgotg.rules.game import Game, Piece, PlyRecord
from p2pgotg.rules.moves import Move
from p2pgotg.rules.options import ChallengeMode, FlagRule, RuleOptions
from p2pgotg.rules.outcome import Outcome, Termination
from p2pgotg.rules.ranks import COMPOSITION, FULL_SET, PIECES_PER_SIDE, Rank
from p2pgotg.rules.setup import Setup, format_formation, parse_formation

__all__ = [
    "COMPOSITION", "FILES", "FULL_SET", "PIECES_PER_SIDE", "ROWS", "SQUARES",
    "ChallengeMode", "ChallengeResult", "FlagRule", "Game", "IllegalMoveError",
    "InvalidNotationError", "InvalidSetupError", "Move", "Outcome", "Piece", "PlyRecord",
    "Rank", "RuleOptions", "RulesError", "Setup", "Side", "Termination", "back_row",
    "format_formation", "formation_names", "formation_text", "home_rows", "home_squares",
    "load_formation", "neighbours", "parse_formation", "parse_square", "resolve_challenge",
    "square", "square_name",
]
