"""The hard level: each candidate move played out in many sampled worlds (Perfect
Information Monte Carlo: Long, Sturtevant, Buro and Furtak, AAAI 2010), a reply and a
follow-up deep, within a time budget.

How one decision is made: docs/bot.md ("How `hard` decides"), with what each part
measured against `legacy`.

>>> import random
>>> from p2pgotg.rules import Game, Setup, Side
>>> rng = random.Random(4)
>>> w, b = Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)
>>> view = Game.for_player(w, b.squares)
>>> player = SearchPlayer(Side.WHITE, random.Random(5), Budget(seconds=None, max_worlds=4))
>>> player.choose(view).move in view.legal_moves
True
>>> player.last_worlds
4
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field

from p2pgotg.players.behaviour import BehaviourBelief
from p2pgotg.players.belief import OUTCOME, Belief
from p2pgotg.players.choices import Choice, OfferDraw, PlayMove, Resign
from p2pgotg.players.heuristic import PLAIN, VALUE, WIN, HeuristicPlayer, Position, Style
from p2pgotg.players.worlds import sample_world
from p2pgotg.rules import (
    ChallengeMode,
    ChallengeResult,
    Game,
    Move,
    Piece,
    Rank,
    Side,
    back_row,
    neighbours,
)
from p2pgotg.rules.board import SQUARES

_ATT = ChallengeResult.ATTACKER_WINS
_DEF = ChallengeResult.DEFENDER_WINS
_FLAG = int(Rank.FLAG)
_NEIGHBOURS = [neighbours(sq) for sq in range(SQUARES)]

# Keys of a candidate's position after our move: what became of the challenge.
_QUIET, _WON, _LOST, _SPLIT = 0, 1, 2, 3


def _gain_table() -> list[list[float]]:
    """GAIN[a][d]: what the side of rank `a` gains by challenging rank `d`."""
    table = []
    for a in range(15):
        row = []
        for d in range(15):
            res = OUTCOME[a][d][0]
            if d == _FLAG:
                row.append(WIN)
            elif res is _ATT:
                row.append(VALUE[d])
            elif res is _DEF:
                row.append(-(WIN if a == _FLAG else VALUE[a]))
            else:
                row.append(VALUE[d] - VALUE[a])
        table.append(row)
    return table


GAIN = _gain_table()
#: KEY[a][d]: the candidate key when our rank `a` challenges rank `d`.
KEY = [[{_ATT: _WON, _DEF: _LOST}.get(OUTCOME[a][d][0], _SPLIT) for d in range(15)]
       for a in range(15)]


@dataclass(frozen=True)
class Budget:
    """How much the hard level may think per decision: `seconds` of wall time (None: no
    deadline, for tests and reproducible benchmarks) and at most `max_worlds` sampled
    worlds, each playing out at most `candidates` moves (the one-ply evaluation's best, and
    every challenge and flag step). `clock` is read for the deadline; tests pass their own.
    The worlds usually run out first (about 10 ms a decision on this machine): the
    deadline guards the slow turns."""

    seconds: float | None = 0.15
    max_worlds: int = 64
    candidates: int = 40
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False)


#: The chance an enemy piece attacks our flag soon, by its distance to a square next to
#: the flag (0: it stands next to it), when the opponent takes that piece for our flag.
_SIEGE = (0.9, 0.45, 0.2, 0.08, 0.03)
_SIEGE_REACH = len(_SIEGE)  # farther enemy pieces are no threat yet
#: BEATS[a][d]: our rank `a` challenging rank `d` wins.
BEATS = [[OUTCOME[a][d][0] is _ATT for d in range(15)] for a in range(15)]


def _distance(a: int, b: int) -> int:
    return abs(a % 9 - b % 9) + abs(a // 9 - b // 9)


_DIST = [[_distance(a, b) for b in range(SQUARES)] for a in range(SQUARES)]


def _free_run(pos: Position, start: int, goal_row: int, nearest: list[int],
              max_steps: int = 10, slack: int = 0) -> int | None:
    """How many moves the opponent's flag on `start` needs to run home where none of our
    pieces can catch it (`nearest[sq]`: our nearest piece's distance), if it can: the
    test `HeuristicPlayer.flag_run` makes for our own flag, from the other side."""
    if start // 9 == goal_row:
        return 0
    board = pos.board
    seen = {start}
    frontier = [start]
    for t in range(1, max_steps + 1):
        nxt = []
        for sq in frontier:
            for n in _NEIGHBOURS[sq]:
                if n in seen or board[n] is not None or nearest[n] <= t - slack:
                    continue
                seen.add(n)
                if n // 9 == goal_row:
                    return t
                nxt.append(n)
        frontier = nxt
        if not frontier:
            return None
    return None


class _Runs:
    """Whether the opponent's flag on a square could run home after each of our
    candidates, worked out once per (flag square, candidate) in a decision: the worlds put
    their flag on few squares. A move that opens a run counts, not only one that fails to
    close a run already open."""

    def __init__(self, pos: Position, home: int) -> None:
        self.pos = pos
        self.home = home
        # The nearest and second-nearest distance from our pieces to each square, and the
        # square of the nearest: enough to take any one piece away.
        first, second, which = [99] * SQUARES, [99] * SQUARES, [-1] * SQUARES
        for o in pos.my_squares:
            row = _DIST[o]
            for sq in range(SQUARES):
                d = row[sq]
                if d < first[sq]:
                    first[sq], second[sq], which[sq] = d, first[sq], o
                elif d < second[sq]:
                    second[sq] = d
        self.first, self.second, self.which = first, second, which
        self.cache: dict[tuple[int, int, int], bool] = {}

    def free_after(self, index: int, move: Move, flag_sq: int, slack: int = 0) -> bool:
        """Whether their flag on `flag_sq` has a free run after our candidate `index`,
        `move`, even were our pieces `slack` moves quicker than they are (a run free at
        slack 1 is one tempo away: a move of ours elsewhere, and it is open)."""
        key = (flag_sq, index, slack)
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = _free_run(self.pos, flag_sq, self.home,
                                              self.nearest_after(move), slack=slack) is not None
        return got

    def nearest_after(self, move: Move) -> list[int]:
        """Our nearest piece's distance to each square once `move` is played."""
        src, dst = move.from_square, move.to_square
        return [min(s if w == src else f, d) for f, s, w, d in
                zip(self.first, self.second, self.which, _DIST[dst], strict=True)]


@dataclass
class _After:
    """The position once a candidate move ended one way (`key`), as far as the play-outs
    need it."""

    # (our rank, shown to the opponent, our piece has moved, enemy pid, our square, the
    # ranks of our pieces next to that square) of each of our pieces next to an enemy piece
    pairs: list[tuple[int, bool, bool, int, int, tuple[int, ...]]]
    # (distance to a square next to our flag, enemy pid, enemy square) of enemy pieces
    # within reach of our flag
    near: list[tuple[int, int, int]]
    # (square, rank) of our pieces around our flag that may stop those
    guards: list[tuple[int, int]]
    # how likely the opponent takes our flag's piece for the flag (0..1)
    suspicion: float
    # enemy pieces standing in our home rows, by pid: each costs its value's share
    intruders: list[int] = field(default_factory=list)
    # the squares of our pieces and of the enemy's
    ours: frozenset[int] = frozenset()
    theirs: frozenset[int] = frozenset()
    # by the square of their flag next to one of our pieces: can it step out of reach?
    escapes: dict[int, bool] = field(default_factory=dict)
    # (our rank, enemy pid, our square, share of the gain counted) of the follow-up
    # challenges worth making on what we know, best first
    follow_order: list[tuple[int, int, int, float]] = field(default_factory=list)
    # squares of the near enemy pieces our flag has no square to step away from
    cornered: frozenset[int] = frozenset()

    def flag_escapes(self, flag_sq: int) -> bool:
        """Whether their flag on `flag_sq` has an empty square to step to that none of
        our pieces stands next to: one piece beside a flag only chases it."""
        got = self.escapes.get(flag_sq)
        if got is None:
            ours, theirs = self.ours, self.theirs
            got = self.escapes[flag_sq] = any(
                not any(m in ours for m in _NEIGHBOURS[n])
                for n in _open_squares(flag_sq, ours, theirs))
        return got


@dataclass
class _Candidate:
    move: Move
    positional: float
    total: float = 0.0
    after: dict[int, _After] = field(default_factory=dict)  # by key, filled on first use


class SearchPlayer(HeuristicPlayer):
    """The hard level for one side (see the module's docstring)."""

    #: Weight of the worst reply for us against the opponent's likely reply.
    PARANOIA = 0.3
    #: Share of a follow-up challenge's gain counted (the opponent moves in between).
    FOLLOW = 0.8
    #: At most this many enemy pieces left: the endgame, where we cut off their flag.
    ENDGAME_PIECES = 5
    #: What a step towards the square in front of their flag is worth then.
    INTERCEPT = 1.0
    #: ... when their flag stands this many rows from our back row or fewer (farther
    #: off, standing in front of it only shadows it: the hunt below catches it).
    INTERCEPT_ROWS = 5
    #: What a step of our second-nearest piece towards their flag is worth then.
    SECOND_HUNTER = 0.5
    #: Their flag next to our piece with every square it could reach next to one of ours.
    TRAP = 0.4 * WIN
    #: However well hidden our flag, an enemy piece near it may take it on its way.
    SUSPICION_FLOOR = 0.15
    #: Share of its value an enemy piece in our home rows costs us (it eats what is there).
    INTRUDER = 0.4
    #: Share counted of what an enemy piece that just won a challenge eats next, when we
    #: cannot take it back (the opponent may not see it, or we may step away in time).
    CHAIN = 0.6
    #: The opponent challenges only when it expects at least this much.
    OPPONENT_THRESHOLD = 0.3
    #: What a step of one of our pieces towards standing nearer our flag than a known
    #: enemy piece it beats is worth, by that piece's value, when the enemy piece eats its
    #: way through our half.
    HUNT = 0.15
    #: (tempi, share of a win) lost when their flag's run home is that many of our moves
    #: from open: a margin kept against the moves we make elsewhere.
    RUN_MARGIN = ((1, 0.3), (2, 0.1))
    #: Share of a follow-up's gain counted when the opponent sees that our piece beats its
    #: piece and that piece can step away (it does: a piece that follows never catches it).
    FLED = 0.3
    #: Share of our recapture the opponent foresees (it may not know our guard's rank).
    RECAPTURE_SEEN = 0.7

    def __init__(self, side: Side, rng: random.Random, budget: Budget | None = None,
                 style: Style = PLAIN) -> None:
        super().__init__(side, rng, style)
        self.budget = budget or Budget()
        self.last_worlds = 0  # worlds played out in the last decision (for tests, bench)
        # A flag that never moves is a tell: in most games it steps aside once, early
        # (and in any game when an enemy piece comes near while it has never moved).
        self._flag_step_ply = rng.randrange(1, 6) if rng.random() < 0.85 else None
        self._bluffers: set[int] | None = None

    def new_belief(self, view: Game) -> Belief:
        return BehaviourBelief(view, self.side, previous=self._belief)

    def choose(self, view: Game) -> Choice:
        start = self.budget.clock()
        claim = self.claim(view)
        if claim is not None:
            return claim
        moves = view.legal_moves
        if not moves:
            return Resign()
        pos = self.position(view)
        if self.hopeless(pos, moves):
            return Resign()
        plan = self.flag_run_plan(pos)
        if plan is not None and plan[0] in moves and not self._outrun(pos, *plan):
            return PlayMove(plan[0])
        best_score, best = self.search(pos, moves, start)
        if self.should_offer_draw(pos, best_score):
            self._last_offer_ply = view.ply
            return OfferDraw(best)
        return PlayMove(best)

    #: Their flag's chance of standing on a square for its run to count against ours.
    RACE_SUSPECT = 0.2

    def _outrun(self, pos: Position, step: Move, ours: int) -> bool:
        """Whether their flag, where it likely stands, gets home before ours once ours
        steps `step` on its run of `ours` moves: it runs free in fewer moves than we
        need (we move first). Then we defend rather than race."""
        probs = pos.belief.probs
        suspects = [sq for sq, piece in pos.enemy_at.items()
                    if probs[piece.pid][_FLAG] >= self.RACE_SUSPECT]
        if not suspects:
            return False
        home = back_row(self.side.other)  # where their flag goes
        nearest = _Runs(pos, home).nearest_after(step)
        for sq in suspects:
            theirs = _free_run(pos, sq, home, nearest)
            if theirs is not None and theirs < ours:
                return True
        return False

    # -- draws -----------------------------------------------------------------------

    #: Plies without a challenge after which a draw is fine whoever is ahead.
    DEAD_PLIES = 200

    def offers_draw(self, pos: Position, best_score: float) -> bool:
        """Offer a draw only when behind in a quiet game, or in a long dead one: the
        play-outs convert most endgames the one-ply bot would have agreed to draw."""
        return pos.quiet_plies >= self._dead_plies(pos) or (
            self._behind(pos) and pos.quiet_plies >= self.QUIET_DRAW_PLIES)

    def accepts_draw(self, pos: Position) -> bool:
        return pos.quiet_plies >= self._dead_plies(pos) or self._behind(pos)

    def _dead_plies(self, pos: Position) -> int:
        """How long a quiet stretch makes a game dead: twice as long when we are well
        ahead, since the hunt for their flag may still come good."""
        ours, theirs = pos.material()
        return 2 * self.DEAD_PLIES if ours > 1.3 * theirs + 2.0 else self.DEAD_PLIES

    @staticmethod
    def _behind(pos: Position) -> bool:
        ours, theirs = pos.material()
        return ours < theirs * 0.85 - 0.5

    # -- the search ------------------------------------------------------------------

    def search(self, pos: Position, moves: list[Move], start: float) -> tuple[float, Move]:
        """(score, move) of the best candidate over the worlds the budget allows, the
        decision having started at `start` on the budget's clock."""
        budget = self.budget
        deadline = None if budget.seconds is None else start + budget.seconds
        candidates = self._candidates(pos, moves, self._rampagers(pos))
        if len(candidates) == 1:
            self.last_worlds = 0
            c = candidates[0]
            return c.positional, c.move
        tables = _OpponentView(pos)
        belief_gain = _Expectation(pos)
        endgame = len(pos.enemies) <= self.ENDGAME_PIECES
        home = back_row(self.side.other)  # our own back row: where their flag goes
        runs = _Runs(pos, home)
        worlds = 0
        while worlds < budget.max_worlds:
            if deadline is not None and worlds >= 2 and budget.clock() >= deadline:
                break
            world = sample_world(pos.belief, self.rng)
            their_flag = self._flag_square(pos, world)
            # Few enemy pieces left: stand between their flag and our back row.
            ahead: int | None = None
            hunters: list[tuple[int, int]] = []
            if endgame and their_flag is not None:
                row = their_flag // 9
                if abs(home - row) <= self.INTERCEPT_ROWS:
                    ahead = their_flag + (9 if home > row else -9 if home < row else 0)
                hunters = sorted((_DIST[sq][their_flag], sq) for sq, r in pos.my_rank_at.items()
                                 if r is not Rank.FLAG)[:3]
            for i, c in enumerate(candidates):
                free = (their_flag is not None and c.move.to_square != their_flag
                        and runs.free_after(i, c.move, their_flag))
                value = self._play_out(pos, tables, belief_gain, c, world, their_flag, free,
                                       endgame)
                if free and value > -WIN:
                    # Their flag can run home where none of our pieces can catch it.
                    value = max(-WIN, value - 0.8 * WIN)
                elif (their_flag is not None and value > -WIN
                      and c.move.to_square != their_flag):
                    for slack, cost in self.RUN_MARGIN:
                        if runs.free_after(i, c.move, their_flag, slack):
                            value -= cost * WIN  # a tempo from open: keep a margin
                            break
                if hunters and their_flag is not None:
                    src, dst = c.move.from_square, c.move.to_square
                    if pos.my_rank_at[src] is not Rank.FLAG:
                        if ahead is not None:
                            value += self.INTERCEPT * (_DIST[src][ahead] - _DIST[dst][ahead])
                        if dst not in pos.enemy_at:
                            value += self._hunt(pos, hunters, src, dst, their_flag)
                c.total += value
            worlds += 1
        self.last_worlds = worlds
        scored = [(c.positional + c.total / max(worlds, 1) + self.rng.random() * 0.05, c.move)
                  for c in candidates]
        return max(scored, key=lambda s: s[0])

    def _candidates(self, pos: Position, moves: list[Move],
                    prey: list[tuple[int, int]]) -> list[_Candidate]:
        """The moves worth playing out: all of them, or when there are more than the
        budget's `candidates`, the best by the one-ply evaluation and every challenge and
        flag step."""
        if len(moves) <= self.budget.candidates:
            return [self._candidate(pos, m, prey) for m in moves]
        scored = sorted(((self.score(pos, m), i, m) for i, m in enumerate(moves)), reverse=True)
        keep: list[Move] = [m for _, _, m in scored[: self.budget.candidates]]
        kept = set(keep)
        for m in moves:
            if m in kept:
                continue
            if m.to_square in pos.enemy_at or m.from_square == pos.flag_sq:
                keep.append(m)
                kept.add(m)
        return [self._candidate(pos, m, prey) for m in keep]

    def _candidate(self, pos: Position, move: Move,
                   prey: list[tuple[int, int]]) -> _Candidate:
        """A candidate with its positional score; `prey`: see `_rampagers`."""
        src, dst = move.from_square, move.to_square
        rank = pos.my_rank_at[src]
        target = pos.enemy_at.get(dst)
        if target is None:
            score = 0.0
            if rank is Rank.FLAG:
                score += self._flag_step_value(pos, move)
            else:
                if (self._flag_step_due(pos) and src in pos.around_flag
                        and dst not in pos.around_flag and src // 9 == pos.flag_row):
                    score += 0.8  # make room beside the flag for its step

                pull_rank = Rank.COLONEL if src in self._bluff_squares(pos) else rank
                score += self.style.pull * (pos.pull(pull_rank, dst) - pos.pull(pull_rank, src))
                flag_sq = pos.flag_sq
                for esq, x in prey:
                    if BEATS[rank][x]:
                        closer = _guard_gap(flag_sq, src, esq) - _guard_gap(flag_sq, dst, esq)
                        score += self.HUNT * VALUE[x] * closer
            score -= pos.reversal.get((src, dst), 0.0)
            return _Candidate(move, score)
        piece = pos.board[src]
        assert piece is not None
        row = pos.row(target)
        score = 0.0
        if pos.open_mode:
            score += self.style.info_open * (1.0 - max(row))
            if not pos.exposed(piece) and rank is not Rank.FLAG:
                score -= self.style.expose * VALUE[rank]
        else:
            score += self.style.info_blind * (1.0 - max(row))
        return _Candidate(move, score)

    def _rampagers(self, pos: Position) -> list[tuple[int, int]]:
        """(square, rank) of the enemy pieces whose rank we know that beat most of our
        pieces and stand in our half: left alone, they eat their way to our flag."""
        ours = [int(r) for r in pos.my_rank_at.values() if r is not Rank.FLAG]
        if not ours:
            return []
        home = back_row(self.side.other)
        domain = pos.belief.domain
        prey = []
        for piece, sq in pos.enemies:
            d = domain[piece.pid]
            if d & (d - 1) or abs(sq // 9 - home) > 3:
                continue
            x = d.bit_length() - 1
            if x != _FLAG and 2 * sum(BEATS[x][r] for r in ours) > len(ours):
                prey.append((sq, x))
        return prey

    def _flag_step_value(self, pos: Position, move: Move) -> float:
        """What a step of our flag is worth besides its exposure: forward is costly (a
        run is `flag_run`'s business); a step aside, early and with no enemy near, is
        welcome once, so that the flag is not the piece that never moved."""
        src, dst = move.from_square, move.to_square
        goal = back_row(self.side)
        advance = abs(goal - src // 9) - abs(goal - dst // 9)
        if advance > 0:
            return -1.5 * advance - 0.3
        if self._flag_step_due(pos) and pos.nearest_enemy(dst) >= 2:
            return 2.5
        return -0.3

    def _flag_step_due(self, pos: Position) -> bool:
        """Is it time for the flag's one step: it has never moved, and the planned ply
        has come or an enemy piece is near?"""
        flag, flag_sq = pos.flag, pos.flag_sq
        if flag is None or flag_sq is None or pos.view.arrived_at(flag) != 0:
            return False
        planned = self._flag_step_ply
        return (planned is not None and pos.view.ply >= planned) \
            or pos.nearest_enemy(flag_sq) <= 4

    def _bluff_squares(self, pos: Position) -> set[int]:
        """The squares of our bluffers: one or two weak pieces, picked once a game, that
        close in on enemy pieces as a colonel would."""
        if self._bluffers is None:
            weak = [p.pid for p, r, _ in pos.mine if Rank.PRIVATE <= r <= Rank.SERGEANT]
            self._bluffers = set(self.rng.sample(weak, min(len(weak), self.rng.randint(1, 2))))
        return {sq for p, r, sq in pos.mine if p.pid in self._bluffers and not pos.exposed(p)}

    # -- one play-out ----------------------------------------------------------------

    def _flag_square(self, pos: Position, world: list[int]) -> int | None:
        """Where the opponent's flag stands in `world` (None: off the board)."""
        pid = world.index(_FLAG) if _FLAG in world else -1
        if pid < 0:
            return None
        return pos.view.square_of(Piece(pos.opp, pid))

    def _hunt(self, pos: Position, hunters: list[tuple[int, int]], src: int, dst: int,
              flag_sq: int) -> float:
        """What our quiet move `src`-`dst` does to the hunt for their flag on `flag_sq`:
        one piece cannot catch a flag that steps aside each turn, so a second one closing
        in counts, and a flag left with no square out of our reach is caught next turn
        (a lone flag has to move: a piece of ours a knight's step away can trap it).
        """
        before = hunters[0][0] + hunters[1][0] if len(hunters) > 1 else 0
        dists = sorted(d if sq != src else _DIST[dst][flag_sq] for d, sq in hunters)
        after = dists[0] + dists[1] if len(dists) > 1 else 0
        value = self.SECOND_HUNTER * (before - after)
        ours = pos.my_squares - {src} | {dst}
        # A lone flag must move; one with pieces beside it may stay where it is.
        lone = len(pos.enemies) == 1
        if not lone and not any(n in ours for n in _NEIGHBOURS[flag_sq]):
            return value
        board = pos.board
        for o in (*(() if lone else (flag_sq,)), *_NEIGHBOURS[flag_sq]):
            if o != flag_sq and (o in ours or (board[o] is not None and o != src)):
                continue  # the flag cannot go there
            if not any(n in ours for n in _NEIGHBOURS[o]):
                return value  # a square out of our reach: it steps there
        return value + self.TRAP

    def _play_out(self, pos: Position, tables: _OpponentView, belief_gain: _Expectation,
                  c: _Candidate, world: list[int], their_flag: int | None, flag_free: bool,
                  endgame: bool) -> float:
        """Candidate `c` in one sampled world: the exact result of its challenge, what the
        position after it costs us (intruders, the siege of our flag), then the opponent's
        reply and our answer (its likely reply and the worst, mixed by `PARANOIA`)."""
        move = c.move
        rank = pos.my_rank_at[move.from_square]
        target = pos.enemy_at.get(move.to_square)
        if target is None:
            key, value = _QUIET, 0.0
        else:
            x = world[target.pid]
            key, value = KEY[rank][x], GAIN[rank][x]
            if x == _FLAG or (rank == _FLAG and key == _LOST):
                return value  # the game is over
        after = c.after.get(key)
        if after is None:
            after = c.after[key] = self._after(pos, move, key, belief_gain)
        for pid in after.intruders:
            value -= self.INTRUDER * VALUE[world[pid]]
        if after.near:
            value -= self.style.flag_care * _siege(after, world)
        ups = _follow_ups(after, world, their_flag is not None and (
            flag_free or (endgame and after.flag_escapes(their_flag))))
        best_up = self.FOLLOW * ups[0][0] if ups else 0.0
        guess, worst = self._replies(after, world, ups, tables, best_up)
        if their_flag is not None and abs(their_flag // 9 - back_row(self.side.other)) == 1:
            home = self._flag_home_threat(pos, move, key, their_flag)
            if home > 0.0:
                outcome = best_up - home
                guess = min(guess, outcome)
                worst = min(worst, outcome)
        value += (1.0 - self.PARANOIA) * guess + self.PARANOIA * worst
        return value if value > -WIN else -WIN  # nothing is worse than losing

    def _replies(self, after: _After, world: list[int], ups: list[tuple[float, int, int]],
                 tables: _OpponentView, best_up: float) -> tuple[float, float]:
        """The opponent's reply in this world, as (the one it likely makes, the worst for
        us), each as what it costs us after our answer. A reply is a challenge against one
        of our pieces: what it costs us, less our recapture by a piece of ours next to the
        square when its piece won there, and what the opponent expects of it as it sees our
        pieces. With no reply worth making, we play our best follow-up (`best_up`)."""
        follow, chain = self.FOLLOW, self.CHAIN
        guess = best_up  # the opponent's likely reply; none: we play our best follow-up
        best_guess = self.OPPONENT_THRESHOLD
        worst = best_up
        for our_rank, shown, moved, enemy, sq, defenders in after.pairs:
            x = world[enemy]
            if x == _FLAG:
                continue  # a flag does not challenge
            exact = GAIN[x][our_rank]
            back = 0.0
            t0 = t1 = 0.0  # the two worst of our pieces its winner then stands next to
            if BEATS[x][our_rank]:
                for d in defenders:
                    g = GAIN[d][x]
                    if g > back:
                        back = g
                    if d != _FLAG and BEATS[x][d]:
                        t = VALUE[d]
                        if t > t0:
                            t0, t1 = t, t0
                        elif t > t1:
                            t1 = t
            other = 0.0  # our best follow-up elsewhere
            for g, e, s in ups:
                if e != enemy and s != sq:
                    other = g
                    break
            if t0 > 0.0 and back < t0:
                # Their winner eats on unless taken back: we save one of its next victims,
                # or cash our best follow-up elsewhere and lose the worst.
                answer = max(follow * back, follow * other - chain * t0, -chain * t1)
            else:
                answer = follow * max(back, other)
            outcome = answer - exact
            expect = (exact if shown else tables.hidden[moved][x]) - self.RECAPTURE_SEEN * back
            if expect > best_guess:
                best_guess, guess = expect, outcome
            if outcome < worst:
                worst = outcome
        return guess, worst

    def _after(self, pos: Position, move: Move, key: int,
               belief_gain: _Expectation) -> _After:
        """The position once `move` ended as `key` (see `_After`)."""
        src, dst = move.from_square, move.to_square
        ours = dict(pos.my_rank_at)
        enemies = dict(pos.enemy_at)
        shown = {sq for p, _, sq in pos.mine if pos.open_mode and p in pos.challenged}
        moved = {sq for p, _, sq in pos.mine if pos.view.arrived_at(p) > 0}
        rank = ours.pop(src)
        was_shown = src in shown
        if key in (_QUIET, _WON):
            if key == _WON:
                del enemies[dst]
            ours[dst] = rank
            if was_shown or (key == _WON and pos.open_mode):
                shown.add(dst)
            moved.add(dst)
        elif key == _SPLIT:
            del enemies[dst]
        home = back_row(self.side.other)
        intruders = [e.pid for sq, e in enemies.items() if abs(sq // 9 - home) <= 2]
        pairs = []
        flag_sq = None
        for sq, r in ours.items():
            if r is Rank.FLAG:
                flag_sq = sq
            defenders: tuple[int, ...] | None = None
            for n in _NEIGHBOURS[sq]:
                e = enemies.get(n)
                if e is not None:
                    if defenders is None:
                        defenders = tuple(int(g) for m in _NEIGHBOURS[sq]
                                          if (g := ours.get(m)) is not None)
                    pairs.append((int(r), sq in shown, sq in moved, e.pid, sq, defenders))
        squares = (frozenset(ours), frozenset(enemies))
        follow = self._follow_order(pairs, shown, ours, enemies, belief_gain)
        if flag_sq is None:
            return _After(pairs, [], [], 0.0, intruders, *squares, follow_order=follow)
        near = [(d - 1, e.pid, sq) for sq, e in enemies.items()
                if (d := _distance(sq, flag_sq)) <= _SIEGE_REACH]
        if not near:
            return _After(pairs, [], [], 0.0, intruders, *squares, follow_order=follow)
        guards = [(sq, int(r)) for sq, r in ours.items()
                  if sq != flag_sq and _distance(sq, flag_sq) <= _SIEGE_REACH + 3]
        suspicion = 1.0 if pos.flag_known else self._flag_suspicion(ours, shown, moved, flag_sq)
        cornered = frozenset(
            esq for _, _, esq in near
            if not any(_DIST[n][esq] > _DIST[flag_sq][esq]
                       for n in _open_squares(flag_sq, ours, enemies)))
        return _After(pairs, near, guards, max(suspicion, self.SUSPICION_FLOOR), intruders,
                      *squares, follow_order=follow, cornered=cornered)

    def _flag_suspicion(self, ours: Mapping[int, Rank], shown: set[int], moved: set[int],
                        flag_sq: int) -> float:
        """How likely the opponent takes the piece on `flag_sq` for our flag, from what it
        saw: a piece never shown is a candidate, a piece on our back row a likelier one,
        one that moved a far less likely one (the share of its weight, tripled, at most 1)."""
        back = back_row(self.side.other)  # our own back row

        def weight(sq: int) -> float:
            if sq in moved:
                return 0.25
            return 2.0 if sq // 9 == back else 1.0

        total = sum(weight(sq) for sq in ours if sq not in shown)
        return min(1.0, 3.0 * weight(flag_sq) / total) if total > 0 else 1.0

    def _follow_order(self, pairs: list[tuple[int, bool, bool, int, int, tuple[int, ...]]],
                      shown: set[int], ours: Mapping[int, Rank], enemies: Mapping[int, Piece],
                      belief_gain: _Expectation) -> list[tuple[int, int, int, float]]:
        """`_After.follow_order`: the follow-ups worth making on what we know, best first;
        one against a piece that sees our shown rank and has a square to step to away
        from ours counts `FLED` of its gain."""
        fled = {(sq, e.pid) for sq in shown.intersection(ours) for n in _NEIGHBOURS[sq]
                if (e := enemies.get(n)) is not None
                and any(m not in _NEIGHBOURS[sq] for m in _open_squares(n, ours, enemies))}
        ranked = sorted(((belief_gain(r, e) * share, r, e, sq, share)
                         for r, _, _, e, sq, _ in pairs
                         for share in (self.FLED if (sq, e) in fled else 1.0,)),
                        reverse=True)
        return [(r, e, sq, share) for x, r, e, sq, share in ranked if x > 0.0]

    def _flag_home_threat(self, pos: Position, move: Move, key: int, flag_sq: int) -> float:
        """0.9 WIN when the opponent's flag, on `flag_sq` one step from our back row, can
        step home with none of our pieces beside it to take it."""
        if key in (_WON, _SPLIT) and flag_sq == move.to_square:
            return 0.0
        goal = back_row(self.side.other)  # where their flag goes
        ours = pos.my_squares - {move.from_square}
        if key in (_QUIET, _WON):
            ours = ours | {move.to_square}
        if any(n in ours for n in _NEIGHBOURS[flag_sq]):
            return 0.0
        step = flag_sq + (9 if goal > flag_sq // 9 else -9)
        if step in ours or step in pos.enemy_at:
            return 0.0
        return WIN * 0.9


def _open_squares(sq: int, ours: Container[int], theirs: Container[int]) -> list[int]:
    """The empty squares next to `sq`: where a piece on it could step."""
    return [n for n in _NEIGHBOURS[sq] if n not in ours and n not in theirs]


def _guard_gap(flag_sq: int | None, sq: int, esq: int) -> int:
    """How many steps our piece on `sq` is from standing nearer our flag (on `flag_sq`)
    than the enemy piece on `esq`: from there it meets that piece on its way in, where a
    piece that follows from behind never catches one that walks on. (No flag on the
    board: its distance to that piece.)"""
    if flag_sq is None:
        return _DIST[sq][esq]
    return max(0, _DIST[sq][flag_sq] - _DIST[esq][flag_sq] + 1)


def _follow_ups(after: _After, world: list[int], escape: bool) -> list[tuple[float, int, int]]:
    """Our follow-ups after the move, as (gain in this world, enemy, our square), in the
    order we would choose them: by what we know (the belief), not by the world's ranks.
    Nothing is gained against their flag when it `escape`s (it can step out of reach near
    the end, or run free)."""
    return [(0.0 if escape and world[e] == _FLAG else
             g * share if (g := GAIN[r][world[e]]) > 0.0 else g, e, sq)
            for r, e, sq, share in after.follow_order]


def _siege(after: _After, world: list[int]) -> float:
    """How much our flag stands to lose to the enemy pieces near it, in `world`: each
    may reach it by its distance, less likely when one of our pieces that beats it can
    step next to it before it gets there (none can when it stands next to our flag)."""
    safe = 1.0
    guards = after.guards
    for d, pid, esq in after.near:
        x = world[pid]
        if x == _FLAG:
            continue
        p = _SIEGE[d - 1 if d > 0 and esq in after.cornered else d]
        if d > 0:  # next to our flag already, it takes it before any guard can move
            for gsq, gr in guards:
                # a guard that can step next to it before it reaches our flag
                if BEATS[gr][x] and _DIST[gsq][esq] <= d + 1:
                    p *= 0.35
                    break
        safe *= 1.0 - p
    return WIN * after.suspicion * (1.0 - safe)


class _Expectation:
    """What our rank gains by challenging an enemy piece, on average over our belief:
    what we know when we choose a follow-up (the world's ranks we do not)."""

    def __init__(self, pos: Position) -> None:
        self._probs = pos.belief.probs
        self._gains: dict[tuple[int, int], float] = {}

    def __call__(self, our_rank: int, enemy: int) -> float:
        key = (our_rank, enemy)
        got = self._gains.get(key)
        if got is None:
            gain = GAIN[our_rank]
            got = self._gains[key] = sum(p * gain[x] for x, p in enumerate(self._probs[enemy]))
        return got


class _OpponentView:
    """What the opponent can expect from challenging one of our pieces it has not seen:
    the mix of the ranks we have not shown, the Flag less likely among pieces that moved.
    `hidden[moved][x]`: its expected gain with its rank `x`."""

    def __init__(self, pos: Position) -> None:
        hidden = [r for p, r, _ in pos.mine if not (pos.open_mode and p in pos.challenged)]
        if pos.view.options.challenge_mode is ChallengeMode.BLIND:
            hidden = [r for _, r, _ in pos.mine]
        self.hidden = [self._table(hidden, 1.0), self._table(hidden, 0.2)]

    @staticmethod
    def _table(ranks: list[Rank], flag_weight: float) -> list[float]:
        weights = [flag_weight if r is Rank.FLAG else 1.0 for r in ranks]
        total = sum(weights) or 1.0
        return [sum(w * GAIN[x][r] for w, r in zip(weights, ranks, strict=True)) / total
                for x in range(15)]


__all__ = ["GAIN", "Budget", "SearchPlayer"]
