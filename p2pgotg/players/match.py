"""A local referee: two players, each with its own partial view, and one full view that
settles every challenge (what the audit replays at the end of a networked game).

The referee does what the network driver does between two peers, without the crypto:

- open mode: on a challenge both ranks are revealed into both views, then the move is
  pushed everywhere (each view computes the result itself and the engine checks it);
- blind mode: the views get only the referee's result and whether a flag left the board;
- a flag claim opens the flag's rank to the opponent's view, then ends the game;
- a draw offer rides on a move; the opponent answers before its own turn.

Every action is checked against the acting player's view; an illegal one raises
`IllegalActionError`. With `check_views` the views are compared with the referee after every
step (same board, turn, ply, eliminated pieces, ending, and no rank that contradicts it).

>>> import random
>>> from p2pgotg.players import Bot
>>> from p2pgotg.rules import Side
>>> r = play_match(Bot(Side.WHITE, random.Random(1)), Bot(Side.BLACK, random.Random(2), level=0))
>>> r.outcome is not None
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from p2pgotg.players.actions import Action, ClaimFlag, OfferDraw, PlayMove, Resign
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
    """What the referee asks of a player (the bot, or a human adapter)."""

    side: Side

    def choose_setup(self) -> Setup: ...

    def choose_action(self, view: Game) -> Action: ...

    def after_move_claim(self, view: Game) -> ClaimFlag | None: ...

    def wants_draw(self, view: Game) -> bool: ...


class IllegalActionError(Exception):
    """A player chose an action its own view says is not allowed now."""


class ViewMismatchError(AssertionError):
    """A player's view disagrees with the referee (a bug in whoever fed the views)."""


@dataclass
class MatchResult:
    outcome: Outcome | None  # None when the ply cap stopped the game
    plies: int
    referee: Game
    views: tuple[Game, Game]  # (White's view, Black's view)
    actions: tuple[int, int]  # how many times each side chose an action
    think_seconds: tuple[float, float]  # time spent inside choose_action, per side
    challenges: int

    @property
    def winner(self) -> Side | None:
        return self.outcome.winner if self.outcome is not None else None


class _Referee:
    def __init__(
        self, white: Player, black: Player, options: RuleOptions, check_views: bool
    ) -> None:
        self.players = (white, black)
        self.options = options
        self.check_views = check_views
        ws, bs = white.choose_setup(), black.choose_setup()
        if ws.side is not Side.WHITE or bs.side is not Side.BLACK:
            raise IllegalActionError("each player must set up its own side")
        self.ref = Game.from_setups(ws, bs, options)
        self.views = (
            Game.for_player(ws, bs.squares, options),
            Game.for_player(bs, ws.squares, options),
        )
        self.actions = [0, 0]
        self.think = [0.0, 0.0]
        self.challenges = 0
        self.check()

    # -- checks ----------------------------------------------------------------------

    def check(self) -> None:
        if not self.check_views:
            return
        ref = self.ref
        for view in self.views:
            if (view.ply, view.turn, view.outcome) != (ref.ply, ref.turn, ref.outcome):
                raise ViewMismatchError(
                    f"view at ply {view.ply} ({view.turn}, {view.outcome}) vs referee "
                    f"at ply {ref.ply} ({ref.turn}, {ref.outcome})"
                )
            for sq in range(SQUARES):
                if view.piece_at(sq) != ref.piece_at(sq):
                    raise ViewMismatchError(f"square {sq} differs at ply {ref.ply}")
            if sorted(view.eliminated) != sorted(ref.eliminated):
                raise ViewMismatchError(f"eliminated pieces differ at ply {ref.ply}")
            for piece, rank in view.known_ranks().items():
                if ref.rank_of(piece) is not rank:
                    raise ViewMismatchError(f"{piece} is {ref.rank_of(piece)}, view says {rank}")

    # -- acting ----------------------------------------------------------------------

    def claim(self, side: Side, action: ClaimFlag) -> None:
        view = self.views[side]
        problem = view.flag_claim_problem(side, action.piece)
        if problem:
            raise IllegalActionError(f"{side.display_name} claimed a flag win: {problem}")
        self.ref.claim_flag_run(side, action.piece)
        self.views[side.other].reveal(action.piece, Rank.FLAG)
        for v in self.views:
            v.claim_flag_run(side, action.piece)

    def push(self, side: Side, move: Move) -> None:
        view = self.views[side]
        if move not in view.legal_moves:
            raise IllegalActionError(f"{side.display_name} chose an illegal move {move}")
        attacker = self.ref.piece_at(move.from_square)
        defender = self.ref.piece_at(move.to_square)
        if defender is not None:
            self.challenges += 1
            if self.options.challenge_mode is ChallengeMode.OPEN:
                assert attacker is not None
                for v in self.views:
                    for p in (attacker, defender):
                        rank = self.ref.rank_of(p)
                        assert rank is not None  # the referee knows every rank
                        v.reveal(p, rank)
        rec = self.ref.push(move)
        for v in self.views:
            if defender is None:
                v.push(move)
            else:
                v.push(move, rec.result, rec.lost_flag)

    def turn(self) -> None:
        side = self.ref.turn
        player, view = self.players[side], self.views[side]
        start = time.perf_counter()
        action = player.choose_action(view)
        self.think[side] += time.perf_counter() - start
        self.actions[side] += 1
        if isinstance(action, ClaimFlag):
            self.claim(side, action)
        elif isinstance(action, Resign):
            for g in (self.ref, *self.views):
                g.resign(side)
        elif isinstance(action, (PlayMove, OfferDraw)):
            self.push(side, action.move)
            self.check()
            if not self.ref.is_over:
                claim = player.after_move_claim(view)
                if claim is not None:
                    self.claim(side, claim)
            if isinstance(action, OfferDraw) and not self.ref.is_over:
                other = side.other
                if self.players[other].wants_draw(self.views[other]):
                    for g in (self.ref, *self.views):
                        g.agree_draw()
        else:
            raise IllegalActionError(f"{side.display_name} returned {action!r}, not an action")
        self.check()


def play_match(
    white: Player,
    black: Player,
    options: RuleOptions | None = None,
    max_plies: int = 1000,
    check_views: bool = True,
) -> MatchResult:
    """Play one game to its end (or `max_plies` moves) and return what happened."""
    referee = _Referee(white, black, options or RuleOptions(), check_views)
    ref = referee.ref
    while not ref.is_over and ref.ply < max_plies:
        referee.turn()
    return MatchResult(
        outcome=ref.outcome,
        plies=ref.ply,
        referee=ref,
        views=referee.views,
        actions=(referee.actions[0], referee.actions[1]),
        think_seconds=(referee.think[0], referee.think[1]),
        challenges=referee.challenges,
    )


__all__ = [
    "IllegalActionError",
    "MatchResult",
    "Player",
    "ViewMismatchError",
    "play_match",
]
