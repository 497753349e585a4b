"""The three narrow error types of the rules engine (python-chess style).

Each message says what was wrong, in words a player can act on.
"""


class RulesError(ValueError):
    """Base class of every error the rules engine raises."""


class InvalidNotationError(RulesError):
    """Text that is not a square, a move or a formation (syntax)."""


class IllegalMoveError(RulesError):
    """A well-formed move, claim or challenge result that the rules forbid here."""


class InvalidSetupError(RulesError):
    """A setup that breaks the composition or the home-rows rule."""
