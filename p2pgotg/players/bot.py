"""The bot: one object per side that chooses a setup, then what to do on each turn, from its
own view only, at one of the levels of `p2pgotg.players.levels`.

- `easy`: the one-ply evaluation with a beginner's blind spots (`heuristic.BEGINNER`).
- `normal`: the one-ply evaluation (`heuristic`), with setups that give nothing away.
- `hard`: a search over worlds sampled from what it has seen (`search`), with a model of
  the opponent read from its moves (`behaviour`), within a time budget.
- `legacy`: the bot as it was before the levels (its setups too); `random`: random moves.

>>> import random
>>> from p2pgotg.rules import Game, Side
>>> bot = Bot(Side.WHITE, random.Random(1), level="easy")
>>> other = Bot(Side.BLACK, random.Random(2))
>>> w, b = bot.choose_setup(), other.choose_setup()
>>> view = Game.for_player(w, b.squares)
>>> choice = bot.choose(view)
>>> isinstance(choice, PlayMove) and choice.move in view.legal_moves
True
"""

from __future__ import annotations

import random

from p2pgotg.players.choices import Choice, ClaimFlag, PlayMove, Resign
from p2pgotg.players.heuristic import BEGINNER, PLAIN, VALUE, WIN, HeuristicPlayer
from p2pgotg.players.levels import Level, as_level
from p2pgotg.players.search import Budget, SearchPlayer
from p2pgotg.players.setups import sensible_setup, varied_setup
from p2pgotg.rules import Game, Setup, Side


class Bot:
    """A Game of the Generals bot for one side.

    `level` is "easy", "normal" (the default), "hard", "legacy" or "random" (or a `Level`,
    or the older 0 = random, 1 = legacy). `budget` bounds the hard level's search (its
    default: `search.Budget()`); the other levels ignore it.
    """

    def __init__(
        self,
        side: Side,
        rng: random.Random,
        level: Level | str | int = Level.NORMAL,
        budget: Budget | None = None,
    ) -> None:
        self.side = side
        self.rng = rng
        self.level = as_level(level)
        self._player: HeuristicPlayer | None
        if self.level is Level.RANDOM:
            self._player = None
        elif self.level is Level.HARD:
            self._player = SearchPlayer(side, rng, budget or Budget())
        else:
            style = BEGINNER if self.level is Level.EASY else PLAIN
            self._player = HeuristicPlayer(side, rng, style)

    # -- the player interface --------------------------------------------------------

    def choose_setup(self) -> Setup:
        if self.level is Level.RANDOM:
            return Setup.random(self.side, self.rng)
        if self.level is Level.LEGACY:
            return sensible_setup(self.side, self.rng)
        if self.level is Level.HARD:
            # The hard level's flag means to move early: leave it room, most games.
            return varied_setup(self.side, self.rng, shipped_share=0.1, room_share=0.9)
        return varied_setup(self.side, self.rng)

    def choose(self, view: Game) -> Choice:
        """What we do on our turn (`view.turn == side`, the game not over)."""
        if self._player is not None:
            return self._player.choose(view)
        claim = _flag_claim(view, self.side)
        if claim is not None:
            return claim
        moves = view.legal_moves
        return PlayMove(self.rng.choice(moves)) if moves else Resign()

    def after_move_claim(self, view: Game) -> ClaimFlag | None:
        """Right after our own move: claim the win if our flag just arrived safely."""
        if self._player is not None:
            return self._player.after_move_claim(view)
        return _flag_claim(view, self.side)

    def wants_draw(self, view: Game) -> bool:
        """Accept the opponent's draw offer?"""
        if self._player is None:
            return False
        return self._player.wants_draw(view)


def _flag_claim(view: Game, side: Side) -> ClaimFlag | None:
    if view.is_over:
        return None
    for piece, rank in view.known_ranks().items():
        if piece.side is side and rank.value == 0 and view.flag_claim_problem(side, piece) is None:
            return ClaimFlag(piece)
    return None


__all__ = ["VALUE", "WIN", "Bot", "Budget", "Level"]
