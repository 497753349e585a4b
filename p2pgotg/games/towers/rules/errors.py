"""The narrow error types of the Towers rules engine (python-chess style): text that is not
notation, and a well-formed action the rules forbid here. Each message says what was wrong
in words a player can act on."""


class TowersError(ValueError):
    """Base class of every error the Towers rules engine raises."""


class InvalidNotationError(TowersError):
    """Text (or a code) that is not a square, an action, or a rule option."""


class IllegalActionError(TowersError):
    """A well-formed action that the rules forbid in this position."""
