"""A local arbiter: two players, each with its own partial view, and one full view that
settles every challenge, as the arbiter of the board game does (and as the audit replays
at the end of a networked game).

The arbiter does what the network driver does between two peers, without the crypto:

- open mode: on a challenge both ranks are revealed into both views, then the move is
  pushed everywhere (each view computes the result itself and the engine checks it);
- blind mode: the views get only the arbiter's result and whether a flag left the board;
- a flag claim opens the flag's rank to the opponent's view, then ends the game;
- a draw offer rides on a move; the opponent answers before its own turn.

Every choice is checked against the choosing player's view; an illegal one raises
`IllegalChoiceError`. With `check_views` the views are compared with the arbiter after every
step (same board, turn, ply, eliminated pieces, ending, and no rank that contradicts it).

>>> import random
>>> from p2pgotg.players import Bot
>>> from p2pgotg.rules import Side
>>> r = play_match(Bot(Side.WHITE, random.Random(1)), Bot(Side.BLACK, random.Random(2), level=0))
>>> r.outcome is not None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from p2pgotg.players.choices import Choice, ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.rules import (
    SQUARES,
    ChallengeMode,
    Game,
    Move,
    Outcome,
    Rank,
    RuleOptions,
    Setup,
    Side,
)


class Player(Protocol):
    """What the arbiter asks of a player (the bot, or a human adapter)."""

    side: Side

    def choose_setup(self) -> Setup: ...

    def choose(self, view: Game) -> Choice: ...

    def after_move_claim(self, view: Game) -> ClaimFlag | None: ...

    def wants_draw(self, view: Game) -> bool: ...


class IllegalChoiceError(Exception):
    """A player chose something its own view says is not allowed now."""


class ViewMismatchError(AssertionError):
    """A player's view disagrees with the arbiter (a bug in whoever fed the views)."""


@dataclass
class MatchResult:
    outcome: Outcome | None  # None when the ply cap stopped the game
    plies: int
    arbiter: Game  # the arbiter's game: every rank known
    views: tuple[Game, Game]  # (White's view, Black's view)
    choices: tuple[int, int]  # how many times each side chose what to do on its turn
    challenges: int

    @property
    def winner(self) -> Side | None:
        return self.outcome.winner if self.outcome is not None else None


class _Arbiter:
    """The match in play: the full game (every rank known) and each player's view."""

    def __init__(
        self, white: Player, black: Player, options: RuleOptions, check_views: bool
    ) -> None:
        self.players = (white, black)
        self.options = options
        self.check_views = check_views
        ws, bs = white.choose_setup(), black.choose_setup()
        if ws.side is not Side.WHITE or bs.side is not Side.BLACK:
            raise IllegalChoiceError("each player must set up its own side")
        self.game = Game.from_setups(ws, bs, options)
        self.views = (
            Game.for_player(ws, bs.squares, options),
            Game.for_player(bs, ws.squares, options),
        )
        self.choices = [0, 0]
        self.challenges = 0
        self.check()

    # -- checks ----------------------------------------------------------------------

    def check(self) -> None:
        if not self.check_views:
            return
        full = self.game
        for view in self.views:
            if (view.ply, view.turn, view.outcome) != (full.ply, full.turn, full.outcome):
                raise ViewMismatchError(
                    f"view at ply {view.ply} ({view.turn}, {view.outcome}) vs arbiter "
                    f"at ply {full.ply} ({full.turn}, {full.outcome})"
                )
            for sq in range(SQUARES):
                if view.piece_at(sq) != full.piece_at(sq):
                    raise ViewMismatchError(f"square {sq} differs at ply {full.ply}")
            if sorted(view.eliminated) != sorted(full.eliminated):
                raise ViewMismatchError(f"eliminated pieces differ at ply {full.ply}")
            for piece, rank in view.known_ranks().items():
                if full.rank_of(piece) is not rank:
                    raise ViewMismatchError(f"{piece} is {full.rank_of(piece)}, view says {rank}")

    # -- acting ----------------------------------------------------------------------

    def claim(self, side: Side, claim: ClaimFlag) -> None:
        view = self.views[side]
        problem = view.flag_claim_problem(side, claim.piece)
        if problem:
            raise IllegalChoiceError(f"{side.display_name} claimed a flag win: {problem}")
        self.game.claim_flag_run(side, claim.piece)
        self.views[side.other].reveal(claim.piece, Rank.FLAG)
        for v in self.views:
            v.claim_flag_run(side, claim.piece)

    def push(self, side: Side, move: Move) -> None:
        view = self.views[side]
        if move not in view.legal_moves:
            raise IllegalChoiceError(f"{side.display_name} chose an illegal move {move}")
        attacker = self.game.piece_at(move.from_square)
        defender = self.game.piece_at(move.to_square)
        if defender is not None:
            self.challenges += 1
            if self.options.challenge_mode is ChallengeMode.OPEN:
                assert attacker is not None
                for v in self.views:
                    for p in (attacker, defender):
                        rank = self.game.rank_of(p)
                        assert rank is not None  # the arbiter knows every rank
                        v.reveal(p, rank)
        rec = self.game.push(move)
        for v in self.views:
            if defender is None:
                v.push(move)
            else:
                v.push(move, rec.result, rec.lost_flag)

    def turn(self) -> None:
        side = self.game.turn
        player, view = self.players[side], self.views[side]
        choice = player.choose(view)
        self.choices[side] += 1
        if isinstance(choice, ClaimFlag):
            self.claim(side, choice)
        elif isinstance(choice, Resign):
            for g in (self.game, *self.views):
                g.resign(side)
        elif isinstance(choice, (PlayMove, OfferDraw)):
            self.push(side, choice.move)
            self.check()
            if not self.game.is_over:
                claim = player.after_move_claim(view)
                if claim is not None:
                    self.claim(side, claim)
            if isinstance(choice, OfferDraw) and not self.game.is_over:
                other = side.other
                if self.players[other].wants_draw(self.views[other]):
                    for g in (self.game, *self.views):
                        g.agree_draw()
        else:
            raise IllegalChoiceError(f"{side.display_name} returned {choice!r}, not a choice")
        self.check()


def play_match(
    white: Player,
    black: Player,
    options: RuleOptions | None = None,
    max_plies: int = 1000,
    check_views: bool = True,
) -> MatchResult:
    """Play one game to its end (or `max_plies` moves) and return what happened."""
    arbiter = _Arbiter(white, black, options or RuleOptions(), check_views)
    game = arbiter.game
    while not game.is_over and game.ply < max_plies:
        arbiter.turn()
    return MatchResult(
        outcome=game.outcome,
        plies=game.ply,
        arbiter=game,
        views=arbiter.views,
        choices=(arbiter.choices[0], arbiter.choices[1]),
        challenges=arbiter.challenges,
    )


__all__ = [
    "IllegalChoiceError",
    "MatchResult",
    "Player",
    "ViewMismatchError",
    "play_match",
]
