"""What one player can tell about the opponent's hidden ranks, from its own view only.

The model keeps, for each of the opponent's 21 pieces (on the board or eliminated), the set
of ranks still possible, and from those an estimate of the probability of each rank:

1. Ranks this view knows (revealed in the open challenge mode, or a full view) are fixed.
2. Each challenge narrows the opponent piece that took part: the result (and whether a flag
   left the board) must be what `resolve_challenge` gives against our own piece's rank. In
   the blind mode this is all a challenge tells.
3. The set is 1 of each officer, 6 Privates, 2 Spies and 1 Flag: a rank whose count is used
   up by pieces known to hold it is struck from the others, and a rank that only as many
   pieces can still hold as the set has must be theirs.
4. Soft evidence (a piece that has moved is less likely to be the flag; an unmoved piece on
   the back row more likely) sets prior weights, and the weights are scaled (Sinkhorn
   iteration) so each piece sums to 1 and each rank to its count in the set.

Nothing here reads a rank this view does not hold, so the same code is safe for the bot.

>>> import random
>>> from p2pgotg.rules import Game, Setup, Side, Rank
>>> rng = random.Random(3)
>>> white, black = Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)
>>> view = Game.for_player(white, black.squares)
>>> belief = Belief(view, Side.WHITE)
>>> round(sum(belief.prob(p, Rank.PRIVATE) for p in belief.pieces), 6)
6.0
"""

from __future__ import annotations

from collections.abc import Iterable

from p2pgotg.rules import (
    COMPOSITION,
    ChallengeResult,
    Game,
    Piece,
    Rank,
    Side,
    back_row,
    resolve_challenge,
)
from p2pgotg.rules.board import row_of

RANKS: tuple[Rank, ...] = tuple(Rank)
N_RANKS = len(RANKS)
ALL_RANKS = (1 << N_RANKS) - 1
COUNTS: tuple[int, ...] = tuple(COMPOSITION[r] for r in RANKS)

_ATTACKER, _DEFENDER = "attacker", "defender"


def _outcome(attacker: Rank, defender: Rank) -> tuple[ChallengeResult, str | None]:
    """The result and which party's flag (if any) leaves the board."""
    result = resolve_challenge(attacker, defender)
    if defender is Rank.FLAG:
        return result, _DEFENDER
    if attacker is Rank.FLAG and result is ChallengeResult.DEFENDER_WINS:
        return result, _ATTACKER
    return result, None


#: OUTCOME[a][d]: what happens when rank `a` challenges rank `d`.
OUTCOME: tuple[tuple[tuple[ChallengeResult, str | None], ...], ...] = tuple(
    tuple(_outcome(a, d) for d in RANKS) for a in RANKS
)


def ranks_in(mask: int) -> list[Rank]:
    return [r for r in RANKS if mask >> r & 1]


def mask_of(ranks: Iterable[Rank]) -> int:
    m = 0
    for r in ranks:
        m |= 1 << r
    return m


def challenge_mask(
    own_rank: Rank, own_attacks: bool, result: ChallengeResult, lost: str | None
) -> int:
    """The opponent ranks consistent with a challenge against our piece of `own_rank`.
    `lost` is "attacker"/"defender"/None: whose flag left the board."""
    m = 0
    for x in RANKS:
        got = OUTCOME[own_rank][x] if own_attacks else OUTCOME[x][own_rank]
        if got == (result, lost):
            m |= 1 << x
    return m


class Belief:
    """The opponent's ranks as far as `view` (the view of `side`) can tell."""

    #: Prior weight of the flag for a piece that has moved at least once.
    MOVED_FLAG_WEIGHT = 0.15
    #: Prior flag weight of unmoved pieces by how far they stand from the enemy line
    #: (index 0 = the opponent's back row).
    HOME_FLAG_WEIGHT = (2.5, 1.0, 0.4)

    def __init__(self, view: Game, side: Side, iterations: int = 15) -> None:
        self.side = side
        self.opponent = side.other
        self.pieces: tuple[Piece, ...] = tuple(Piece(self.opponent, pid) for pid in range(21))
        self.domain: list[int] = [ALL_RANKS] * 21
        self.consistent = True
        self._narrow(view)
        self._propagate()
        self.probs: list[list[float]] = self._estimate(view, iterations)

    # -- reading ---------------------------------------------------------------------

    def prob(self, piece: Piece, rank: Rank) -> float:
        return self.probs[piece.pid][rank]

    def row(self, piece: Piece) -> list[float]:
        """Probabilities indexed by rank value (0 = Flag ... 14 = General of the Army)."""
        return self.probs[piece.pid]

    def possible(self, piece: Piece) -> list[Rank]:
        return ranks_in(self.domain[piece.pid])

    def known(self, piece: Piece) -> Rank | None:
        """The rank when it is certain (revealed or deduced)."""
        d = self.domain[piece.pid]
        if d and d & (d - 1) == 0:
            return Rank(d.bit_length() - 1)
        return None

    # -- building --------------------------------------------------------------------

    def _narrow(self, view: Game) -> None:
        opp = self.opponent
        for piece in self.pieces:
            rank = view.rank_of(piece)
            if rank is not None:
                self.domain[piece.pid] = 1 << rank
        for rec in view.history:
            if rec.defender is None or rec.result is None:
                continue
            if rec.piece.side is opp:
                theirs, ours, we_attack = rec.piece, rec.defender, False
            else:
                theirs, ours, we_attack = rec.defender, rec.piece, True
            own_rank = view.rank_of(ours)
            if own_rank is None:
                continue  # not a view of `side`: nothing to learn from this record
            lost = None
            if rec.lost_flag is not None:
                lost = _ATTACKER if rec.lost_flag is rec.piece.side else _DEFENDER
            self._restrict(theirs.pid, challenge_mask(own_rank, we_attack, rec.result, lost))

    def _restrict(self, pid: int, mask: int) -> None:
        narrowed = self.domain[pid] & mask
        if narrowed == 0:
            # Contradictory evidence (a dishonest peer; the audit will say so). Keep the
            # newest evidence rather than fail: the bot must still be able to move.
            self.consistent = False
            narrowed = mask or ALL_RANKS
        self.domain[pid] = narrowed

    def _propagate(self) -> None:
        dom = self.domain
        changed = True
        while changed:
            changed = False
            for r in RANKS:
                bit = 1 << r
                fixed = [i for i in range(21) if dom[i] == bit]
                if len(fixed) >= COUNTS[r]:
                    for i in range(21):
                        if dom[i] & bit and dom[i] != bit:
                            dom[i] &= ~bit
                            changed = True
                            if dom[i] == 0:  # over-full: inconsistent evidence
                                self.consistent = False
                                dom[i] = ALL_RANKS
                cand = [i for i in range(21) if dom[i] & bit]
                if len(cand) == COUNTS[r]:
                    for i in cand:
                        if dom[i] != bit:
                            dom[i] = bit
                            changed = True

    def _estimate(self, view: Game, iterations: int) -> list[list[float]]:
        moved = {rec.piece for rec in view.history if rec.piece.side is self.opponent}
        their_back = back_row(self.side)  # the opponent's own back row: our target row
        target_row = back_row(self.opponent)  # the row the opponent's flag must reach
        w: list[list[float]] = []
        for piece in self.pieces:
            dom = self.domain[piece.pid]
            row = [1.0 if dom >> r & 1 else 0.0 for r in RANKS]
            if row[Rank.FLAG] and dom != 1:
                sq = view.square_of(piece)
                if piece in moved:
                    row[Rank.FLAG] = self.MOVED_FLAG_WEIGHT
                    if sq is not None and row_of(sq) == target_row:
                        row[Rank.FLAG] *= 0.2  # would have claimed the win if it could
                elif sq is not None:
                    depth = abs(row_of(sq) - their_back)
                    row[Rank.FLAG] = self.HOME_FLAG_WEIGHT[min(depth, 2)]
            w.append(row)
        # Pieces whose rank is certain keep it; the rest share what the set has left.
        remaining = list(COUNTS)
        active: list[list[float]] = []
        for pid, row in enumerate(w):
            known = self.known(self.pieces[pid])
            if known is not None:
                remaining[known] = max(remaining[known] - 1, 0)
            else:
                active.append(row)
        columns = [r for r in range(N_RANKS) if remaining[r] > 0]
        for _ in range(iterations):
            for row in active:
                s = sum(row)
                if s > 0:
                    inv = 1.0 / s
                    for r in range(N_RANKS):
                        row[r] *= inv
            for r in columns:
                col = 0.0
                for row in active:
                    col += row[r]
                if col > 0:
                    f = remaining[r] / col
                    for row in active:
                        row[r] *= f
        for row in active:
            s = sum(row)
            if s > 0:
                inv = 1.0 / s
                for r in range(N_RANKS):
                    row[r] *= inv
        return w


__all__ = ["OUTCOME", "Belief", "challenge_mask", "mask_of", "ranks_in"]
