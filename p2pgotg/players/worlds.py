"""Sampling whole worlds: one rank for every opponent piece, consistent with everything the
view has seen (the belief's possible ranks and the set's counts) and weighted by the
belief's estimate. A search that plays its moves out in many such worlds is Perfect
Information Monte Carlo (Long, Sturtevant, Buro and Furtak, AAAI 2010).

The Flag is drawn first, from the belief's Flag column (it decides the most), then the
other pieces one at a time, most constrained first, each from its row restricted to the
ranks the set still has. A draw that runs out of ranks starts again; after a few failures
the set's counts give way to the rows alone (inconsistent evidence from a dishonest peer:
the bot must still move).

>>> import random
>>> from p2pgotg.rules import Game, Setup, Side, COMPOSITION, Rank
>>> rng = random.Random(3)
>>> white, black = Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)
>>> belief = Belief(Game.for_player(white, black.squares), Side.WHITE)
>>> world = sample_world(belief, rng)
>>> sorted(world) == sorted(r for r in Rank for _ in range(COMPOSITION[r]))
True
"""

from __future__ import annotations

import random

from p2pgotg.players.belief import COUNTS, N_RANKS, Belief

_FLAG = 0


def sample_world(belief: Belief, rng: random.Random, tries: int = 8) -> list[int]:
    """A rank (by value) for each of the opponent's 21 pieces, by piece id."""
    for _ in range(tries):
        world = _draw(belief, rng, strict=True)
        if world is not None:
            return world
    world = _draw(belief, rng, strict=False)
    assert world is not None  # without the counts a draw cannot run out
    return world


def _draw(belief: Belief, rng: random.Random, strict: bool) -> list[int] | None:
    probs, domain = belief.probs, belief.domain
    left = list(COUNTS)
    world = [-1] * 21
    order = sorted(range(21), key=lambda pid: (bin(domain[pid]).count("1"), rng.random()))
    # The Flag first: which piece holds it, from the Flag column.
    flag_col = [probs[pid][_FLAG] if domain[pid] & 1 else 0.0 for pid in range(21)]
    certain = [pid for pid in range(21) if domain[pid] == 1]
    if certain:
        flag = certain[0]
    elif sum(flag_col) > 0:
        flag = rng.choices(range(21), weights=flag_col)[0]
    else:
        flag = -1
    if flag >= 0:
        world[flag] = _FLAG
        left[_FLAG] -= 1
    for pid in order:
        if world[pid] >= 0:
            continue
        row = probs[pid]
        dom = domain[pid] & ~1  # the Flag is placed already
        if strict:
            weights = [row[r] if dom >> r & 1 and left[r] > 0 else 0.0 for r in range(N_RANKS)]
        else:
            weights = [row[r] if dom >> r & 1 else 0.0 for r in range(N_RANKS)]
        total = sum(weights)
        if total <= 0.0:
            if strict:
                # Possible ranks the row gave no weight: try them by the counts alone.
                weights = [float(left[r]) if dom >> r & 1 else 0.0 for r in range(N_RANKS)]
                if sum(weights) <= 0.0:
                    return None
            else:
                weights = [1.0] * N_RANKS
                weights[_FLAG] = 0.0
        rank = rng.choices(range(N_RANKS), weights=weights)[0]
        world[pid] = rank
        left[rank] -= 1
    return world


__all__ = ["sample_world"]
