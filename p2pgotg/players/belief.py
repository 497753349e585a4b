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
from functools import cache
from operator import mul

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

#: A piece's prior weight of each rank, by rank value, or None when all ranks weigh alike.
Prior = tuple[float, ...] | None


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


#: Each side's 21 piece identities, by piece id.
_PIECES = {side: tuple(Piece(side, pid) for pid in range(21)) for side in Side}


def ranks_in(mask: int) -> list[Rank]:
    return [r for r in RANKS if mask >> r & 1]


def mask_of(ranks: Iterable[Rank]) -> int:
    m = 0
    for r in ranks:
        m |= 1 << r
    return m


@cache
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
    """The opponent's ranks as far as `view` (the view of `side`) can tell.

    `previous`, an earlier belief of the same player, lends its deductions (steps 2-3) when
    the challenges and reveals have not changed since, and its estimate (step 4) when the
    prior weights have not either, as on most turns: these are the costly steps.
    """

    #: Prior weight of the flag for a piece that has moved at least once.
    MOVED_FLAG_WEIGHT = 0.15
    #: Prior flag weight of unmoved pieces by how far they stand from the enemy line
    #: (index 0 = the opponent's back row).
    HOME_FLAG_WEIGHT = (2.5, 1.0, 0.4)

    def __init__(
        self, view: Game, side: Side, iterations: int = 15, previous: Belief | None = None
    ) -> None:
        self.side = side
        self.opponent = side.other
        self.pieces: tuple[Piece, ...] = _PIECES[self.opponent]
        self.domain: list[int] = [ALL_RANKS] * 21
        self.consistent = True
        self._narrow(view)
        self._narrowed = (tuple(self.domain), self.consistent)
        if previous is not None and previous._narrowed == self._narrowed:
            self.domain, self.consistent = previous.domain[:], previous.consistent
        else:
            self._propagate()
        priors = self._priors(view)
        self._prior = (tuple(self.domain), priors, iterations)
        self.probs: list[list[float]]
        if previous is not None and previous._prior == self._prior:
            self.probs = [row[:] for row in previous.probs]
        else:
            self.probs = self._estimate(priors, iterations)

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
        for piece, rank in view.known_ranks().items():
            if piece.side is opp:
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
            for r in range(N_RANKS):
                bit = 1 << r
                if dom.count(bit) >= COUNTS[r]:
                    for i, d in enumerate(dom):
                        if d & bit and d != bit:
                            dom[i] = d & ~bit
                            changed = True
                            if dom[i] == 0:  # over-full: inconsistent evidence
                                self.consistent = False
                                dom[i] = ALL_RANKS
                cand = [i for i, d in enumerate(dom) if d & bit]
                if len(cand) == COUNTS[r]:
                    for i in cand:
                        if dom[i] != bit:
                            dom[i] = bit
                            changed = True

    def _priors(self, view: Game) -> tuple[Prior, ...]:
        """Each piece's prior weight of each rank (None: no evidence, all alike). Here the
        flag's weight alone (`_flag_weights`); a subclass may read more into the moves."""
        return tuple(None if w is None else _flag_prior(w) for w in self._flag_weights(view))

    def _flag_weights(self, view: Game) -> tuple[float | None, ...]:
        """The prior weight of the flag, from soft evidence, for each piece that may still
        be the flag (None: no such evidence, or the flag is ruled out or certain)."""
        opp = self.opponent
        moved = {rec.piece.pid for rec in view.history if rec.piece.side is opp}
        their_back = back_row(self.side)  # the opponent's own back row: our target row
        target_row = back_row(opp)  # the row the opponent's flag must reach
        weights: list[float | None] = []
        for piece, dom in zip(self.pieces, self.domain, strict=True):
            weight = None
            if dom & 1 and dom != 1:
                sq = view.square_of(piece)
                if piece.pid in moved:
                    weight = self.MOVED_FLAG_WEIGHT
                    if sq is not None and row_of(sq) == target_row:
                        weight *= 0.2  # would have claimed the win if it could
                elif sq is not None:
                    depth = abs(row_of(sq) - their_back)
                    weight = self.HOME_FLAG_WEIGHT[min(depth, 2)]
            weights.append(weight)
        return tuple(weights)

    def _estimate(self, priors: tuple[Prior, ...], iterations: int) -> list[list[float]]:
        """Sinkhorn scaling of the prior weights: each uncertain piece sums to 1, each rank
        to what the set has left once the certain pieces are counted out.

        Pieces with the same prior row keep identical rows throughout, so each distinct row
        is scaled once; the rank totals still add every piece's entry in piece order."""
        remaining = list(COUNTS)
        rows: list[list[float]] = []  # the distinct prior rows of the uncertain pieces
        row_of_prior: dict[tuple[int, Prior], int] = {}
        active: list[int] = []  # for each uncertain piece, in piece order: its row in `rows`
        for dom, prior in zip(self.domain, priors, strict=True):
            if dom & (dom - 1) == 0:  # certain
                rank = dom.bit_length() - 1
                remaining[rank] = max(remaining[rank] - 1, 0)
                continue
            index = row_of_prior.get((dom, prior))
            if index is None:
                index = row_of_prior[dom, prior] = len(rows)
                if prior is None:
                    row = [1.0 if dom >> r & 1 else 0.0 for r in range(N_RANKS)]
                else:
                    row = [prior[r] if dom >> r & 1 else 0.0 for r in range(N_RANKS)]
                rows.append(row)
            active.append(index)
        for _ in range(iterations):
            rows = [_normalised(row) for row in rows]
            totals = [sum(col) for col in zip(*[rows[i] for i in active], strict=True)]
            # (no uncertain piece left: no totals, so no factors, as before the check)
            factors = [n / t if n > 0 and t > 0 else 1.0
                       for n, t in zip(remaining, totals, strict=False)]
            rows = [list(map(mul, row, factors)) for row in rows]
        rows = [_normalised(row) for row in rows]
        probs: list[list[float]] = []
        uncertain = iter(active)
        for dom in self.domain:
            if dom & (dom - 1) == 0:
                probs.append([1.0 if dom >> r & 1 else 0.0 for r in range(N_RANKS)])
            else:
                probs.append(rows[next(uncertain)][:])
        return probs


class NaiveBelief(Belief):
    """What a beginner keeps in mind: the ranks it has been shown, and nothing it could
    have worked out (what a challenge's result rules out, the set's counts, which pieces
    never move)."""

    def _narrow(self, view: Game) -> None:
        opp = self.opponent
        for piece, rank in view.known_ranks().items():
            if piece.side is opp:
                self.domain[piece.pid] = 1 << rank

    def _propagate(self) -> None:
        pass

    def _priors(self, view: Game) -> tuple[Prior, ...]:
        return (None,) * 21


def _flag_prior(weight: float) -> tuple[float, ...]:
    return (weight,) + (1.0,) * (N_RANKS - 1)


def _normalised(row: list[float]) -> list[float]:
    """`row` scaled to sum to 1 (unchanged when it sums to 0)."""
    s = sum(row)
    if s > 0:
        inv = 1.0 / s
        return [x * inv for x in row]
    return row


__all__ = ["OUTCOME", "Belief", "NaiveBelief", "Prior", "challenge_mask", "mask_of", "ranks_in"]
