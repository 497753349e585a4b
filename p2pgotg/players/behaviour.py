"""What the opponent's moves say about its hidden ranks (after Stankiewicz and Schadd,
"Opponent modeling in Stratego", 2009): a belief whose priors read behaviour.

People and bots move their pieces for reasons. A piece that walks up to ours or
challenges unknown pieces is usually strong (or a Spy, or a bluff); a piece that steps
away from ours is usually weak; a piece that has never moved may be the Flag, and one that
has moved many times rarely is. In the open mode the opponent knows the ranks our pieces
have shown, so what its piece walks up to says more: a piece that closes in on our shown
5-star is almost surely a Spy, and one that steps away from our shown Colonel is likely
below it. `BehaviourBelief` turns these counts into each piece's prior weights; the hard
constraints (ranks seen, challenge results, the set's counts) stay exactly as in `Belief`,
and so does the scaling to the set's counts.

>>> import random
>>> from p2pgotg.rules import Game, Setup, Side, Rank
>>> rng = random.Random(3)
>>> white, black = Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)
>>> view = Game.for_player(white, black.squares)
>>> belief = BehaviourBelief(view, Side.WHITE)
>>> round(sum(belief.prob(p, Rank.FLAG) for p in belief.pieces), 6)
1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2pgotg.players.belief import N_RANKS, OUTCOME, Belief, Prior
from p2pgotg.rules import ChallengeMode, ChallengeResult, Game, Rank, Side, back_row, neighbours
from p2pgotg.rules.board import SQUARES, row_of

_NEIGHBOURS = [frozenset(neighbours(sq)) for sq in range(SQUARES)]
_STRONG = frozenset(range(Rank.COLONEL, N_RANKS))  # colonel to 5-star
_WEAK = frozenset(range(Rank.PRIVATE, Rank.CAPTAIN + 1))  # private to captain


def _weights(beats: float, ties: float, loses: float) -> list[list[float]]:
    """[x][r]: the weight of rank `x` for a piece that did something to our shown rank
    `r`, by what `x` challenging `r` would give."""
    table = []
    for x in range(N_RANKS):
        row = []
        for r in range(N_RANKS):
            res = OUTCOME[x][r][0]
            row.append(beats if res is ChallengeResult.ATTACKER_WINS
                       else loses if res is ChallengeResult.DEFENDER_WINS else ties)
        table.append(row)
    return table


#: A piece that walks up to our shown rank can usually beat it (or trade with it).
_HUNT = _weights(3.0, 1.5, 0.4)
#: A piece that steps away from our shown rank usually cannot.
_SHUN = _weights(0.5, 0.8, 1.5)


@dataclass
class Conduct:
    """What one opponent piece has done so far."""

    moves: int = 0
    approaches: int = 0  # moves that ended next to one of our pieces it was not next to
    retreats: int = 0  # moves away from all of our pieces that stood next to it
    attacks: int = 0  # challenges it started
    forward: int = 0  # moves towards our back row
    hunts: list[int] = field(default_factory=list)  # ranks of our shown pieces it closed in on
    shuns: list[int] = field(default_factory=list)  # ranks of our shown pieces it stepped from


def conduct_of(view: Game, opponent: Side) -> dict[int, Conduct]:
    """Each opponent piece's conduct (by piece id), replaying the view's history on a
    bare board: where every piece stood when each move was made."""
    history = view.history
    where = {p: view.square_of(p) for side in Side for p in view.pieces(side)}
    # Walk back to the start: each record's mover stood on its from-square, its defender
    # on its to-square.
    for rec in reversed(history):
        where[rec.piece] = rec.move.from_square
        if rec.defender is not None:
            where[rec.defender] = rec.move.to_square
    board: list[object | None] = [None] * SQUARES
    for piece, sq in where.items():
        if sq is not None:
            board[sq] = piece
    conduct: dict[int, Conduct] = {}
    # Our pieces whose rank the opponent has seen (open mode: both ranks of a challenge),
    # with that rank as our view holds it.
    open_mode = view.options.challenge_mode is ChallengeMode.OPEN
    shown: dict[object, int] = {}
    for rec in history:
        src, dst = rec.move.from_square, rec.move.to_square
        mover = rec.piece
        if mover.side is opponent:
            c = conduct.setdefault(mover.pid, Conduct())
            c.moves += 1
            if (dst - src) * (1 if opponent is Side.BLACK else -1) < -1:
                c.forward += 1  # (a row's step is 9 squares; a file's is 1)
            if rec.defender is not None:
                c.attacks += 1
            else:
                ours_before = {n for n in _NEIGHBOURS[src] if _is_ours(board[n], opponent)}
                ours_after = {n for n in _NEIGHBOURS[dst] if _is_ours(board[n], opponent)}
                if ours_after - ours_before:
                    c.approaches += 1
                elif ours_before and not ours_after:
                    c.retreats += 1
                if shown:
                    c.hunts.extend(shown[p] for n in ours_after - _NEIGHBOURS[src]
                                   if (p := board[n]) in shown)
                    c.shuns.extend(shown[p] for n in ours_before - _NEIGHBOURS[dst]
                                   if (p := board[n]) in shown and n != dst)
        if open_mode and rec.defender is not None:
            ours = rec.defender if mover.side is opponent else mover
            rank = view.rank_of(ours)  # type: ignore[arg-type]
            if rank is not None:
                shown[ours] = int(rank)
        board[src] = None
        if rec.defender is None:
            board[dst] = mover
        else:
            result = rec.result.value if rec.result is not None else ""
            board[dst] = mover if result == "attacker_wins" else (
                rec.defender if result == "defender_wins" else None)
    return conduct


def _is_ours(piece: object | None, opponent: Side) -> bool:
    return piece is not None and getattr(piece, "side", opponent) is not opponent


class BehaviourBelief(Belief):
    """A `Belief` whose prior weights read each opponent piece's conduct."""

    #: The flag's prior weight of an unmoved piece by its row from the opponent's back row.
    HOME_FLAG = (2.0, 1.0, 0.45)
    #: The flag's prior weight after one move; each further move halves it.
    MOVED_FLAG = 0.35

    def _priors(self, view: Game) -> tuple[Prior, ...]:
        conduct = conduct_of(view, self.opponent)
        their_back = back_row(self.side)
        target_row = back_row(self.opponent)
        priors: list[Prior] = []
        for piece, dom in zip(self.pieces, self.domain, strict=True):
            if dom & (dom - 1) == 0:
                priors.append(None)  # certain: nothing to weigh
                continue
            c = conduct.get(piece.pid, Conduct())
            w = [1.0] * N_RANKS
            w[Rank.FLAG] = self._flag_weight(c, view.square_of(piece), view.ply, their_back,
                                             target_row)
            _weigh_conduct(w, c)
            priors.append(tuple(w))
        return tuple(priors)

    def _flag_weight(self, c: Conduct, sq: int | None, ply: int, their_back: int,
                     target_row: int) -> float:
        """The flag's prior weight of a piece, by how it moved: one that never did, by its
        row (the longer it stays put while the others move, the likelier); one that only
        ever walked forward, as a flag on its run; else less with each move."""
        if c.moves == 0:
            if sq is None:
                return 1.0
            weight = self.HOME_FLAG[min(abs(row_of(sq) - their_back), 2)]
            return weight * (1.0 + ply / 80)
        if c.forward == c.moves and not (c.approaches or c.attacks) and c.moves >= 2:
            # Only ever forward, never towards our pieces: maybe a flag on its run.
            return 0.5 * c.moves
        weight = self.MOVED_FLAG * 0.5 ** (c.moves - 1)
        if sq is not None and row_of(sq) == target_row:
            weight *= 0.2  # would have claimed the win if it could
        return weight


def _weigh_conduct(w: list[float], c: Conduct) -> None:
    """Weigh each rank of a piece by its conduct: bold pieces (approaches, challenges) are
    likelier strong and unlikely the flag, shy ones (retreats) likelier weak; and by the
    ranks of our shown pieces it last closed in on or stepped away from."""
    bold = min(c.approaches, 4) + 2 * min(c.attacks, 3)
    shy = min(c.retreats, 4)
    if bold or shy:
        for r in range(N_RANKS):
            if r in _STRONG:
                w[r] *= (1.0 + 0.3 * bold) / (1.0 + 0.3 * shy)
            elif r in _WEAK:
                w[r] *= (1.0 + 0.3 * shy) / (1.0 + 0.15 * bold)
            elif r == Rank.SPY:
                w[r] *= 1.0 + 0.15 * bold
        w[Rank.FLAG] *= 0.3 ** min(bold, 3)
    for r in c.hunts[-3:]:
        for x in range(N_RANKS):
            w[x] *= _HUNT[x][r]
    for r in c.shuns[-3:]:
        for x in range(N_RANKS):
            w[x] *= _SHUN[x][r]


__all__ = ["BehaviourBelief", "Conduct", "conduct_of"]
