"""A scripted opponent for tests and benchmarks: the general raid.

It walks its three highest generals to the opponent's back row and challenges every
opponent piece that has never moved, back-row pieces first, walking round those that have
moved: the raid reported as taking the `legacy` bot's Flag in a quarter
of the games (its Flag always starts on the back row and rarely moves). With `through` it
is blunter: it walks through any piece in its way, moved or not, challenging it. The rest
of its army stays home (it moves another piece only when the raiders are boxed in). Once
its three raiders are gone the raid has failed and it resigns, so a game against it
measures one thing: `took_flag`.

>>> import random
>>> from p2pgotg.players.bot import Bot
>>> from p2pgotg.players.match import play_match
>>> from p2pgotg.rules import Side
>>> r = play_match(RaidPlayer(Side.WHITE, random.Random(1)), Bot(Side.BLACK, random.Random(2)))
>>> r.outcome is not None
True
"""

from __future__ import annotations

import random
from collections import deque

from p2pgotg.players.choices import Choice, ClaimFlag, PlayMove, Resign
from p2pgotg.players.match import MatchResult
from p2pgotg.players.setups import sensible_setup
from p2pgotg.rules import Game, Move, Piece, Rank, Setup, Side, Termination, back_row, neighbours
from p2pgotg.rules.board import SQUARES

_NEIGHBOURS = [neighbours(sq) for sq in range(SQUARES)]
_RAIDERS = (Rank.GENERAL_OF_THE_ARMY, Rank.GENERAL, Rank.LIEUTENANT_GENERAL)


class RaidPlayer:
    """The general raid for one side (see the module's docstring)."""

    def __init__(self, side: Side, rng: random.Random, through: bool = False) -> None:
        self.side = side
        self.rng = rng
        self.through = through  # also challenge moved pieces in the way (a blunter raid)
        self.raiders: set[Piece] = set()

    def choose_setup(self) -> Setup:
        setup = sensible_setup(self.side, self.rng)
        self.raiders = {Piece(self.side, pid) for pid, rank in enumerate(setup.ranks)
                        if rank in _RAIDERS}
        return setup

    def choose(self, view: Game) -> Choice:
        moves = view.legal_moves
        alive = sorted(p for p in self.raiders if view.square_of(p) is not None)
        if not alive or not moves:
            return Resign()  # the raid is over
        untouched = self._untouched(view)
        best: tuple[int, int, Move] | None = None
        legal = set(moves)
        for raider in alive:
            sq = view.square_of(raider)
            assert sq is not None
            step = self._step(view, sq, untouched)
            if step is not None and step[1] in legal:
                key = (step[0], raider.pid, step[1])
                if best is None or key < best:
                    best = key
        if best is not None:
            return PlayMove(best[2])
        # Boxed in by our own pieces: move one of the others, quietly.
        quiet = [m for m in moves if view.piece_at(m.from_square) not in self.raiders
                 and not view.is_challenge(m)]
        return PlayMove(self.rng.choice(quiet or moves))

    def after_move_claim(self, view: Game) -> ClaimFlag | None:
        return None

    def wants_draw(self, view: Game) -> bool:
        return False

    def _untouched(self, view: Game) -> dict[int, bool]:
        """The squares of opponent pieces that have never moved: on its back row or not."""
        moved = {rec.piece for rec in view.history}
        their_back = back_row(self.side)
        out = {}
        for piece in view.pieces(self.side.other):
            sq = view.square_of(piece)
            if piece not in moved and sq is not None:
                out[sq] = sq // 9 == their_back
        return out

    def _step(self, view: Game, start: int, untouched: dict[int, bool]
              ) -> tuple[int, Move] | None:
        """(cost, first move) towards the nearest untouched piece, back-row ones first:
        a challenge when one is next to `start`, else a step of the shortest walk (through
        untouched pieces in the way, which it challenges, and round the others)."""
        for prefer_back in (True, False):
            targets = {sq for sq, back in untouched.items() if back or not prefer_back}
            if not targets:
                continue
            for n in _NEIGHBOURS[start]:
                if n in targets:
                    return (0, Move(start, n))
            first: dict[int, int] = {start: -1}
            queue = deque([(start, 0)])
            while queue:
                sq, dist = queue.popleft()
                for n in _NEIGHBOURS[sq]:
                    if n in first:
                        continue
                    piece = view.piece_at(n)
                    if piece is not None and (piece.side is self.side
                                              or not (self.through or n in untouched)):
                        continue  # round our own pieces, and round those that moved
                    first[n] = n if sq == start else first[sq]
                    if n in targets:
                        return (dist + 1, Move(start, first[n]))
                    queue.append((n, dist + 1))
        return None


def took_flag(result: MatchResult, raider: Side) -> bool:
    """Did the raid take the opponent's Flag in this game?"""
    outcome = result.outcome
    return (outcome is not None and outcome.winner is raider
            and outcome.termination is Termination.FLAG_CAPTURED)


__all__ = ["RaidPlayer", "took_flag"]
