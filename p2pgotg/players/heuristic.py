"""The one-ply bot: an evaluation of every legal move from the player's own view, with a
belief about every opponent piece (`p2pgotg.players.belief`). The `legacy` and `normal`
levels play it as it is, `easy` with a beginner's blind spots (`Style`), and `hard` uses
its positional terms inside a search (`p2pgotg.players.search`).

What it weighs, in order of priority:

1. A flag win it can claim now (`ClaimFlag`); resigning when the game is lost: the
   opponent can tell which piece is our flag and every move leaves an enemy piece next
   to it, or two pieces are left against ten or more and no flag run is possible.
2. A flag run that no enemy piece can catch: the flag goes home when every square of its
   path is farther from every enemy piece than the number of turns the flag needs to get
   there (Manhattan distance ignores blockers, so this errs on the safe side).
3. For each legal move, a score in "piece value" units:
   - a challenge: the expected gain over the opponent piece's possible ranks (its capture
     is worth its value, the flag wins the game; losing costs our piece), plus what we learn
     (open mode), minus the risk to the winner on its new square;
   - a plain move: the risk the piece runs where it stands against where it goes (enemy
     pieces next to it that may beat it), and its pull towards the best target it can see;
   - always: how exposed our flag is (open squares next to it that enemy pieces can reach)
     before and after, and a penalty for walking the flag forward without a safe run.
   A little noise from the bot's `rng` breaks ties, so games differ.
4. A draw offer in dead positions (a long stretch without a challenge at equal material, or
   very few pieces left), and an answer to the opponent's offer from the material balance.

The bot never reads a rank its view does not hold; given a full view it simply knows more.

>>> import random
>>> from p2pgotg.rules import Game, Setup, Side
>>> bot = HeuristicPlayer(Side.WHITE, random.Random(1))
>>> rng = random.Random(2)
>>> w, b = Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)
>>> view = Game.for_player(w, b.squares)
>>> choice = bot.choose(view)
>>> isinstance(choice, PlayMove) and choice.move in view.legal_moves
True
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter, mul

from p2pgotg.players.belief import OUTCOME, Belief, NaiveBelief
from p2pgotg.players.choices import Choice, ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.rules import (
    ChallengeMode,
    ChallengeResult,
    FlagRule,
    Game,
    Move,
    Piece,
    Rank,
    Side,
    back_row,
    neighbours,
)
from p2pgotg.rules.board import SQUARES

#: Material value of each rank (index = rank value). The flag's worth is the game (WIN).
VALUE: tuple[float, ...] = (
    0.0,  # flag: see WIN
    6.5,  # spy
    1.2,  # private
    1.8,  # sergeant
    2.2,  # 2nd lieutenant
    2.7,  # 1st lieutenant
    3.2,  # captain
    3.8,  # major
    4.4,  # lieutenant colonel
    5.0,  # colonel
    5.8,  # brigadier general
    6.6,  # major general
    7.4,  # lieutenant general
    8.2,  # general
    9.0,  # general of the army
)
WIN = 100.0

_ATT = ChallengeResult.ATTACKER_WINS
_DEF = ChallengeResult.DEFENDER_WINS
_FLAG = int(Rank.FLAG)
_SPY = int(Rank.SPY)

#: The chance an enemy piece that can reach a square next to our flag gets to it in time,
#: by its distance to that square (0 = it stands there now).
_THREAT_BY_DISTANCE = (1.0, 0.3, 0.1, 0.03)

#: The squares next to each square (`neighbours`, looked up without a call).
_NEIGHBOURS = [neighbours(sq) for sq in range(SQUARES)]
_MANHATTAN = [[abs(a % 9 - b % 9) + abs(a // 9 - b // 9) for b in range(72)] for a in range(72)]
#: 1 + the Manhattan distance, the divisor of a target's pull.
_REACH = [[1.0 + d for d in row] for row in _MANHATTAN]
#: _FORWARD[side][sq]: a small pull forward, so that pieces with nothing in sight still
#: make progress.
_FORWARD = [
    [0.02 * (sq // 9 if side is Side.WHITE else 7 - sq // 9) for sq in range(72)] for side in Side
]

#: BEATEN_BY[r][x]: an enemy of rank x challenging our piece of rank r eliminates it.
_BEATEN_BY = [[1.0 if OUTCOME[x][r][0] is _ATT else 0.0 for x in range(15)] for r in range(15)]


def _challenge_tables(rank: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Our `rank` challenging each enemy rank: (wins, loses, splits) as 1/0 and the gain.
    A dot product with a belief row gives the chances and the expected gain."""
    own_value = WIN if rank == _FLAG else VALUE[rank]
    wins, loses, splits, gain = [], [], [], []
    for x in range(15):
        res = OUTCOME[rank][x][0]
        wins.append(1.0 if res is _ATT else 0.0)
        loses.append(1.0 if res is _DEF else 0.0)
        splits.append(0.0 if res is _ATT or res is _DEF else 1.0)
        if res is _ATT:
            gain.append(WIN if x == _FLAG else VALUE[x])
        elif res is _DEF:
            gain.append(-own_value)
        else:
            gain.append(VALUE[x] - own_value)
    return wins, loses, splits, gain


_CHALLENGE = [_challenge_tables(rank) for rank in range(15)]


@dataclass(frozen=True)
class Style:
    """The weights of the evaluation: what a level sees and how much it cares."""

    danger: float = 1.0  # the risk enemy neighbours pose to a piece
    flag_care: float = 1.0  # how exposed our flag is
    spy_blind: bool = False  # a hidden piece is never taken for a Spy (a beginner's error)
    info_open: float = 1.0  # learning an unknown rank in the open mode
    info_blind: float = 0.3  # what a blind result tells
    expose: float = 0.25  # share of a piece's value lost when the open mode shows its rank
    pull: float = 0.6  # closing in on the best target
    naive: bool = False  # remembers the ranks it was shown and works nothing out


#: Today's bot, kept as it was (the `legacy` and `normal` levels).
PLAIN = Style()
#: A beginner: moves without much of a plan (a weak pull to targets), forgets that a
#: hidden piece may be a Spy, works nothing out from results, and forgets its flag.
BEGINNER = Style(flag_care=0.0, spy_blind=True, naive=True, pull=0.25)


class Position:
    """Everything one decision needs, computed once from the view. What the moves share
    (our flag's danger, pulls towards targets, challenge odds) is cached on first use."""

    def __init__(
        self, view: Game, side: Side, belief: Belief, spy_blind: bool = False
    ) -> None:
        self.view = view
        self.side = side
        self.opp = side.other
        self.belief = belief
        self.spy_blind = spy_blind
        self._rows: dict[int, list[float]] = {}
        self.open_mode = view.options.challenge_mode is ChallengeMode.OPEN
        self.board = list(map(view.piece_at, range(SQUARES)))
        self.mine: list[tuple[Piece, Rank, int]] = []
        self.enemies: list[tuple[Piece, int]] = []
        self.flag: Piece | None = None
        self.flag_sq: int | None = None
        for sq, piece in enumerate(self.board):
            if piece is None:
                continue
            if piece.side is not side:
                self.enemies.append((piece, sq))
                continue
            rank = view.rank_of(piece)
            if rank is None:  # not our own view; play on as if it were a Private
                rank = Rank.PRIVATE
            self.mine.append((piece, rank, sq))
            if rank is Rank.FLAG:
                self.flag, self.flag_sq = piece, sq
        self.mine.sort(key=lambda m: m[0].pid)
        self.enemies.sort(key=lambda e: e[0].pid)
        self.enemy_at = {sq: p for p, sq in self.enemies}
        self.enemy_sqs = [sq for _, sq in self.enemies]
        self.my_squares = {sq for _, _, sq in self.mine}
        self.my_rank_at = {sq: r for _, r, sq in self.mine}
        self.around_flag = () if self.flag_sq is None else _NEIGHBOURS[self.flag_sq]
        self.flag_row = -1 if self.flag_sq is None else self.flag_sq // 9
        history = view.history
        fights = [i for i, rec in enumerate(history) if rec.defender is not None]
        self.challenged = {p for i in fights for p in (history[i].piece, history[i].defender)}
        self.quiet_plies = view.ply - (fights[-1] + 1 if fights else 0)
        self.reversal = self._reversal_penalties(view)
        # The opponent can tell which piece is our flag when every other piece of ours
        # has survived a challenge (a flag never survives one).
        others = [p for p, r, _ in self.mine if r is not Rank.FLAG]
        self.flag_known = self.flag is not None and all(p in self.challenged for p in others)
        self._attack_cache: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        self._beats_cache: dict[tuple[int, int], float] = {}
        self._targets: dict[Rank, list[tuple[float, list[int]]]] = {}
        self._staying: dict[int, tuple[bool, float, float]] = {}
        self._nearest: dict[tuple[int, int | None], int] = {}
        self._material: tuple[float, float] | None = None

    def _reversal_penalties(self, view: Game) -> dict[tuple[int, int], float]:
        """(from, to) -> penalty for shuffling: stepping straight back with the piece we
        moved last, and repeating one of our last 16 moves (each time it was played)."""
        penalty: dict[tuple[int, int], float] = {}
        own = (rec for rec in reversed(view.history) if rec.side is self.side)
        for i, rec in enumerate(own):
            if i == 16:
                break
            move = rec.move
            if i == 0 and (sq := view.square_of(rec.piece)) is not None:
                back = (sq, move.from_square)
                penalty[back] = penalty.get(back, 0.0) + 0.25
            again = (move.from_square, move.to_square)
            penalty[again] = penalty.get(again, 0.0) + 0.3
        return penalty

    # -- per-pair estimates ----------------------------------------------------------

    def row(self, enemy: Piece) -> list[float]:
        """The belief's row for `enemy`, or, spy-blind, that row with the Spy struck out."""
        if not self.spy_blind:
            return self.belief.row(enemy)
        got = self._rows.get(enemy.pid)
        if got is None:
            row = self.belief.row(enemy)
            rest = 1.0 - row[_SPY]
            got = list(row) if rest <= 1e-9 else [0.0 if r == _SPY else x / rest
                                                   for r, x in enumerate(row)]
            self._rows[enemy.pid] = got
        return got

    def attack(self, rank: Rank, enemy: Piece) -> tuple[float, float, float, float]:
        """(win, lose, split, expected gain) of our `rank` challenging `enemy`."""
        key = (rank, enemy.pid)
        got = self._attack_cache.get(key)
        if got is None:
            row = self.row(enemy)
            wins, loses, splits, gain = _CHALLENGE[rank]
            got = (
                sum(map(mul, row, wins)),
                sum(map(mul, row, loses)),
                sum(map(mul, row, splits)),
                sum(map(mul, row, gain)),
            )
            self._attack_cache[key] = got
        return got

    def beaten_by(self, enemy: Piece, rank: Rank) -> float:
        """The chance `enemy`, challenging our piece of `rank`, eliminates it."""
        key = (enemy.pid, rank)
        got = self._beats_cache.get(key)
        if got is None:
            got = sum(map(mul, self.row(enemy), _BEATEN_BY[rank]))
            self._beats_cache[key] = got
        return got

    @cached_property
    def groups(self) -> tuple[list[tuple[list[float], list[int]]], list[int]]:
        """The enemy pieces grouped by belief row: (row, squares) of each group, and each
        piece's group in `enemies` order. Pieces alike to our eyes share a row, and what
        follows from the row needs working out once per group."""
        index: dict[tuple[float, ...], int] = {}
        groups: list[tuple[list[float], list[int]]] = []
        which: list[int] = []
        for enemy, sq in self.enemies:
            row = self.row(enemy)
            i = index.setdefault(tuple(row), len(groups))
            if i == len(groups):
                groups.append((row, []))
            groups[i][1].append(sq)
            which.append(i)
        return groups, which

    def targets(self, rank: Rank) -> list[tuple[float, list[int]]]:
        """(expected gain, squares) of the enemy pieces our `rank` gains by challenging,
        grouped by belief row, the best gain first."""
        got = self._targets.get(rank)
        if got is None:
            gain = _CHALLENGE[rank][3]
            groups = self.groups[0]
            got = [(ev, sqs) for row, sqs in groups if (ev := sum(map(mul, row, gain))) > 0.0]
            got.sort(reverse=True)
            self._targets[rank] = got
        return got

    def pull(self, rank: Rank, sq: int) -> float:
        """How much our piece of `rank` on `sq` is drawn to the best target it sees."""
        reach = _REACH[sq].__getitem__
        best = 0.0
        for gain, squares in self.targets(rank):
            if gain <= best:
                break  # gain / reach <= gain: no target left can do better
            best = max(best, gain / min(map(reach, squares)))
        return best + _FORWARD[self.side][sq]

    def staying(self, sq: int) -> tuple[bool, float, float]:
        """(exposed, danger, pull) of our non-flag piece on `sq` where it stands: what all
        its moves are weighed against."""
        got = self._staying.get(sq)
        if got is None:
            piece, rank = self.board[sq], self.my_rank_at[sq]
            assert piece is not None
            exposed = self.exposed(piece)
            got = (exposed, self.danger(rank, sq, exposed), self.pull(rank, sq))
            self._staying[sq] = got
        return got

    def danger(self, rank: Rank, sq: int, exposed: bool, gone: int | None = None) -> float:
        """Expected loss of our non-flag piece standing on `sq` from enemy challenges;
        `gone` is an enemy square to leave out (the piece just beaten there)."""
        if sq not in self.enemy_neighbours:
            return 0.0
        survive = 1.0
        for n in _NEIGHBOURS[sq]:
            if n == gone:
                continue
            e = self.enemy_at.get(n)
            if e is not None:
                survive *= 1.0 - self.beaten_by(e, rank)
        if survive == 1.0:
            return 0.0
        return VALUE[rank] * (1.0 - survive) * (1.0 if exposed else 0.5)

    @cached_property
    def enemy_neighbours(self) -> set[int]:
        """The squares next to an enemy piece."""
        return {n for sq in self.enemy_sqs for n in _NEIGHBOURS[sq]}

    # -- our flag --------------------------------------------------------------------

    def nearest_enemy(self, sq: int, without: int | None = None) -> int:
        """Manhattan distance from `sq` to the nearest enemy piece, leaving out the one
        on `without` (99 when there is none)."""
        key = (sq, without)
        got = self._nearest.get(key)
        if got is None:
            dist = _MANHATTAN[sq]
            if without is None:
                got = min(map(dist.__getitem__, self.enemy_sqs), default=99)
            else:
                got = min([dist[e] for e in self.enemy_sqs if e != without], default=99)
            self._nearest[key] = got
        return got

    def flag_threat(self, flag_sq: int, mine: set[int], without: int | None = None) -> float:
        """How likely an enemy piece (not the one on `without`) gets onto our flag soon,
        from 0 to 1, with our pieces on `mine`."""
        safe = 1.0
        for n in _NEIGHBOURS[flag_sq]:
            d = self.nearest_enemy(n, without)
            if d >= len(_THREAT_BY_DISTANCE):
                continue
            t = _THREAT_BY_DISTANCE[d]
            if n in mine:
                t *= 0.25  # a guard stands there: the enemy must get through it first
            safe *= 1.0 - t
        return 1.0 - safe

    def flag_danger(self, flag_sq: int | None, mine: set[int], without: int | None = None) -> float:
        if flag_sq is None:
            return 0.0
        attack_chance = 1.0 if self.flag_known else 0.6
        return WIN * attack_chance * self.flag_threat(flag_sq, mine, without)

    @cached_property
    def before_flag(self) -> float:
        """Our flag's danger as the position stands."""
        return self.flag_danger(self.flag_sq, self.my_squares)

    # -- whole position --------------------------------------------------------------

    def rank_at(self, sq: int) -> Rank:
        """The rank of our piece on `sq`."""
        return self.my_rank_at[sq]

    def exposed(self, piece: Piece) -> bool:
        return self.open_mode and piece in self.challenged

    def material(self) -> tuple[float, float]:
        """(ours, the opponent's expected) material on the board, flags left out."""
        if self._material is None:
            ours = sum(VALUE[r] for _, r, _ in self.mine)
            groups, which = self.groups
            worth = [sum(map(mul, row, VALUE)) for row, _ in groups]
            theirs = 0.0
            for i in which:
                theirs += worth[i]
            self._material = (ours, theirs)
        return self._material


class HeuristicPlayer:
    """The one-ply bot for one side, playing with `style`'s weights. It keeps the belief
    of its last turn to lend to the next (`Belief`'s `previous`)."""

    #: Plies without a challenge after which a dead, balanced position is offered a draw.
    QUIET_DRAW_PLIES = 60
    #: Plies without a challenge after which any offered draw is taken.
    QUIET_ACCEPT_PLIES = 150

    def __init__(self, side: Side, rng: random.Random, style: Style = PLAIN) -> None:
        self.side = side
        self.rng = rng
        self.style = style
        self._last_offer_ply = -(10**9)
        self._belief: Belief | None = None  # the last one: reused while nothing is learned

    def new_belief(self, view: Game) -> Belief:
        """This turn's belief (what the opponent's ranks may be), lent the last one."""
        if self.style.naive:
            return NaiveBelief(view, self.side)
        return Belief(view, self.side, previous=self._belief)

    def position(self, view: Game) -> Position:
        """The position for `view`, with this turn's belief."""
        belief = self._belief = self.new_belief(view)
        return Position(view, self.side, belief, self.style.spy_blind)

    # -- the player interface --------------------------------------------------------

    def choose(self, view: Game) -> Choice:
        """What we do on our turn (`view.turn == side`, the game not over)."""
        claim = self.claim(view)
        if claim is not None:
            return claim
        moves = view.legal_moves
        if not moves:  # the engine ends such games itself; be safe anyway
            return Resign()
        pos = self.position(view)
        if self.hopeless(pos, moves):
            return Resign()
        run = self.flag_run(pos)
        if run is not None and run in moves:
            return PlayMove(run)
        best_score, best = self.best_move(pos, moves)
        if self.should_offer_draw(pos, best_score):
            self._last_offer_ply = view.ply
            return OfferDraw(best)
        return PlayMove(best)

    def best_move(self, pos: Position, moves: list[Move]) -> tuple[float, Move]:
        """The move of the best score, a little noise breaking ties."""
        scored = [(self.score(pos, m) + self.rng.random() * 0.05, m) for m in moves]
        return max(scored, key=itemgetter(0))

    def after_move_claim(self, view: Game) -> ClaimFlag | None:
        """Right after our own move: claim the win if our flag just arrived safely."""
        return self.claim(view)

    def wants_draw(self, view: Game) -> bool:
        """Accept the opponent's draw offer?"""
        if view.is_over:
            return False
        pos = self.position(view)
        if self.flag_run(pos) is not None:
            return False
        return self.accepts_draw(pos)

    def accepts_draw(self, pos: Position) -> bool:
        """The draw policy: take an offer in this position (no flag run on)?"""
        ours, theirs = pos.material()
        if pos.quiet_plies >= self.QUIET_ACCEPT_PLIES:
            return True
        if ours <= theirs * 1.05 + 0.5:
            return True
        few = len(pos.mine) <= 3 and len(pos.enemies) <= 3
        return few and ours <= theirs * 1.3

    # -- claims, resignation, draws --------------------------------------------------

    def claim(self, view: Game) -> ClaimFlag | None:
        if view.is_over:
            return None
        for piece, rank in view.known_ranks().items():  # a side has one flag
            if (
                piece.side is self.side
                and rank is Rank.FLAG
                and view.flag_claim_problem(self.side, piece) is None
            ):
                return ClaimFlag(piece)
        return None

    def hopeless(self, pos: Position, moves: list[Move]) -> bool:
        if pos.flag_sq is None:
            return False
        # The opponent knows our flag and every move leaves an enemy piece next to it.
        if pos.flag_known and self._flag_doomed(pos, moves):
            return True
        # Nothing left but a handful of pieces against a full army, and no way home.
        ours, theirs = pos.material()
        weak = len(pos.mine) <= 2 and len(pos.enemies) >= 10 and theirs > 3 * ours + 10
        return weak and self.flag_run(pos) is None

    def _flag_doomed(self, pos: Position, moves: list[Move]) -> bool:
        for move in moves:
            flag_sq = pos.flag_sq
            assert flag_sq is not None  # (asked only when the flag is known)
            if move.from_square == flag_sq:
                if move.to_square in pos.enemy_at:
                    continue  # the flag challenging: it only wins against the flag
                flag_sq = move.to_square
            removed = None
            target = pos.enemy_at.get(move.to_square)
            if target is not None and move.from_square != pos.flag_sq:
                pw, _, ps, _ = pos.attack(pos.rank_at(move.from_square), target)
                if pw + ps >= 1.0 - 1e-9:
                    removed = move.to_square
            if not any(n in pos.enemy_at and n != removed for n in neighbours(flag_sq)):
                return False
        return True

    def should_offer_draw(self, pos: Position, best_score: float) -> bool:
        if pos.view.ply < self._last_offer_ply:  # a new game for this bot object
            self._last_offer_ply = -(10**9)
        if pos.view.ply - self._last_offer_ply < 40:
            return False
        return self.offers_draw(pos, best_score)

    def offers_draw(self, pos: Position, best_score: float) -> bool:
        """The draw policy: offer one with our best move (no offer in the last 40 plies)?"""
        if pos.quiet_plies >= self.QUIET_ACCEPT_PLIES:
            return True  # nothing happens any more, whoever is ahead
        ours, theirs = pos.material()
        if ours > theirs * 1.15 + 0.5:
            return False  # ahead: play on
        if pos.quiet_plies >= self.QUIET_DRAW_PLIES and ours >= theirs * 0.85 - 0.5:
            return True
        # A handful of pieces each and nothing worth doing on the board.
        return len(pos.mine) <= 3 and len(pos.enemies) <= 3 and best_score < 1.0

    # -- the flag run ----------------------------------------------------------------

    def flag_run(self, pos: Position) -> Move | None:
        """The first step of a flag run no enemy piece can catch, if there is one."""
        plan = self.flag_run_plan(pos)
        return plan[0] if plan is not None else None

    def flag_run_plan(self, pos: Position) -> tuple[Move, int] | None:
        """(first step, moves to the back row) of the shortest flag run no enemy piece
        can catch, if there is one."""
        start = pos.flag_sq
        if start is None:
            return None
        goal_row = back_row(self.side)
        if start // 9 == goal_row:
            return None  # arrived: wait for the claim, do not wander
        immediate = pos.view.options.flag_rule is FlagRule.IMMEDIATE
        first: dict[int, int] = {start: -1}
        queue = deque([(start, 0)])
        while queue:
            sq, t = queue.popleft()
            if t >= 12:
                continue
            for n in _NEIGHBOURS[sq]:
                if n in first or pos.board[n] is not None:
                    continue
                arrive = t + 1
                on_goal = n // 9 == goal_row
                caught = pos.nearest_enemy(n) <= arrive
                if caught and not (on_goal and immediate):
                    continue
                first[n] = n if sq == start else first[sq]
                if on_goal:
                    return Move(start, first[n]), arrive
                queue.append((n, arrive))
        return None

    # -- move evaluation -------------------------------------------------------------

    def score(self, pos: Position, move: Move) -> float:
        src, dst = move.from_square, move.to_square
        rank = pos.my_rank_at[src]
        mine = pos.my_squares
        flag_sq = pos.flag_sq
        before_flag = pos.before_flag
        target = pos.enemy_at.get(dst)
        is_flag = rank is Rank.FLAG
        care, risk = self.style.flag_care, self.style.danger

        if target is None:
            if is_flag or src in pos.around_flag or dst in pos.around_flag:
                after_flag = pos.flag_danger(dst if is_flag else flag_sq, (mine - {src}) | {dst})
            else:
                after_flag = before_flag  # the squares around our flag stay as they are
            score = care * (before_flag - after_flag)
            if is_flag:
                goal = back_row(self.side)
                advance = abs(goal - src // 9) - abs(goal - dst // 9)
                score -= 1.5 * max(advance, 0) + 0.3
            else:
                exposed, danger_here, pull_here = pos.staying(src)
                score += risk * (danger_here - pos.danger(rank, dst, exposed))
                score += self.style.pull * (pos.pull(rank, dst) - pull_here)
            score -= pos.reversal.get((src, dst), 0.0)
            return score

        piece = pos.board[src]
        assert piece is not None
        pw, pl, ps, ev = pos.attack(rank, target)
        score = ev
        row = pos.row(target)
        if pos.open_mode:
            score += self.style.info_open * (1.0 - max(row))
            if not pos.exposed(piece) and not is_flag:
                score -= self.style.expose * VALUE[rank]
        else:
            score += self.style.info_blind * (1.0 - max(row))
        # An enemy piece about to reach our back row may be a running flag: stop it.
        to_go = abs(back_row(self.side.other) - dst // 9)
        if to_go <= 1:
            score += row[_FLAG] * WIN * (1.0 if to_go == 0 else 0.5) * (pw + ps)
        if is_flag:
            return score  # the flag wins only against the flag; EV says it all
        # Our flag's exposure: if we win or split the challenger is gone; if we lose it
        # stays, and our piece is gone.
        win_danger = pos.flag_danger(flag_sq, (mine - {src}) | {dst}, without=dst)
        split_danger = pos.flag_danger(flag_sq, mine - {src}, without=dst)
        lose_danger = pos.flag_danger(flag_sq, mine - {src})
        score += care * (before_flag - (pw * win_danger + ps * split_danger + pl * lose_danger))
        score += risk * pos.staying(src)[1]
        score -= risk * pw * pos.danger(rank, dst, pos.open_mode or pos.exposed(piece), gone=dst)
        return score


__all__ = ["BEGINNER", "PLAIN", "VALUE", "WIN", "HeuristicPlayer", "Position", "Style"]
