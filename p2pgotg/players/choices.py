"""What a player can choose on its turn: small frozen values, one per kind of choice.

A player (bot or human adapter) hands one of these to whoever runs the game: the local
arbiter of `p2pgotg.players.match`, or the bot's seat at a networked game (`bot_seat`),
which makes it an action on its peer. Either checks it against its own view of the game
before acting on it; the choice itself carries no hidden ranks.

>>> from p2pgotg.rules import Move
>>> PlayMove(Move.parse("e3-e4"))
PlayMove(move=Move(from_square=22, to_square=31))
>>> isinstance(Resign(), Choice)
True
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.rules import Move, Piece


@dataclass(frozen=True, slots=True)
class PlayMove:
    """Play `move` (a plain move, or a challenge when it lands on an enemy piece).
    Legal when `move in view.legal_moves`."""

    move: Move


@dataclass(frozen=True, slots=True)
class ClaimFlag:
    """Claim the win for the flag `piece` standing on the opposing back rank. Valid when
    `view.flag_claim_problem(side, piece) is None`; the claimant opens the flag's rank."""

    piece: Piece


@dataclass(frozen=True, slots=True)
class Resign:
    """Give up: the opponent wins."""


@dataclass(frozen=True, slots=True)
class OfferDraw:
    """Play `move` and offer a draw with it. The opponent answers before its own move;
    declining costs nothing and play goes on."""

    move: Move


#: Any one of the four choices.
Choice = PlayMove | ClaimFlag | Resign | OfferDraw

__all__ = ["Choice", "ClaimFlag", "OfferDraw", "PlayMove", "Resign"]
