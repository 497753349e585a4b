"""A second, slow Towers implementation written from the rule text (seed
`002_836edfe2f167b267.txt`) and SPEC chapter 4's readings, for the tests to hold the engine
against. It shares nothing with the engine but the `Action` value type: its own board
geometry (coordinates, the border walked square by square), its own state (plain dicts),
its own legality and its own endings, and its own reading of a seat that leaves (SPEC
4.13: the seat's pieces stay, it is skipped, it cannot win).

`Reference.of(game)` reads a position through the game's public accessors only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2pgotg.games.towers.rules import Action, Game, Kind, Phase, RuleOptions
from p2pgotg.games.towers.rules.options import CaptureRule

# The seed's "Contents" and "Setup" table.
POOL = 50
PAWNS = 6
FLAGS = {2: 13, 3: 11, 4: 9}


def xy(sq: int) -> tuple[int, int]:
    return sq % 5, sq // 5


def at(x: int, y: int) -> int:
    return y * 5 + x


def orthogonal(sq: int) -> list[int]:
    """"Pawns can be moved only toward a bordering square (no diagonal move)"."""
    x, y = xy(sq)
    return [at(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= x + dx < 5 and 0 <= y + dy < 5]


def border_ring() -> list[int]:
    """The outer border, walked from a1 keeping the edge on one side."""
    ring, sq = [0], 0
    while True:
        nxt = [n for n in orthogonal(sq) if n not in ring and _on_edge(n)]
        if not nxt:
            return ring
        sq = nxt[0]
        ring.append(sq)


def _on_edge(sq: int) -> bool:
    x, y = xy(sq)
    return x in (0, 4) or y in (0, 4)


RING = border_ring()


def squares_between(a: int, b: int) -> int:
    """Border squares strictly between a and b, going round the shorter way."""
    i, j = RING.index(a), RING.index(b)
    one_way = (j - i) % len(RING) - 1
    other_way = (i - j) % len(RING) - 1
    return min(one_way, other_way)


@dataclass
class Reference:
    options: RuleOptions
    height: dict[int, int]
    pawn: dict[int, int]  # square -> seat
    flag: dict[int, int]  # square -> seat
    reserve_pawns: list[int]
    reserve_flags: list[int]
    captured: dict[tuple[int, int], int]  # (capturer, victim) -> pawns
    starts: dict[int, int]  # seat -> claimed square
    phase: str
    turn: int
    first: Action | None = None  # the first action of the turn under way
    extra_layer_used: bool = False
    first_claimer: int | None = None
    ended: tuple[str, int | None] | None = None
    gone: set[int] = field(default_factory=set)  # seats that left
    log: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, game: Game) -> Reference:
        n = game.options.seats
        return cls(
            options=game.options,
            height={sq: game.height(sq) for sq in range(25)},
            pawn={sq: p for sq in range(25) if (p := game.pawn_at(sq)) is not None},
            flag={sq: f for sq in range(25) if (f := game.flag_at(sq)) is not None},
            reserve_pawns=[game.reserve_pawns(s) for s in range(n)],
            reserve_flags=[game.reserve_flags(s) for s in range(n)],
            captured={(c, v): game.captured(c, v) for c in range(n) for v in range(n)},
            starts={s: st for s in range(n) if (st := game.start(s)) is not None},
            phase=game.phase.value,
            turn=game.turn,
            first=game.first_action,
            extra_layer_used=False,
            first_claimer=None,
            gone={s for s in range(n) if game.has_left(s)},
        )

    @property
    def seats(self) -> int:
        return self.options.seats

    def team(self, seat: int) -> int:
        return seat % 2 if self.options.teams else seat

    def pool(self) -> int:
        return POOL - sum(self.height.values())

    def still_in(self) -> list[int]:
        return [s for s in range(self.seats) if s not in self.gone]

    def next_in(self, seat: int, inclusive: bool = False) -> int:
        """The next seat still in, going round from `seat` (from `seat` itself when
        `inclusive`)."""
        order = [(seat + i) % self.seats for i in range(0 if inclusive else 1, self.seats + 1)]
        return next(s for s in order if s not in self.gone)

    def unclaimed(self) -> list[int]:
        """Seats still in without a start: only they count for "every player but one"."""
        return [s for s in self.still_in() if s not in self.starts]

    # -- what may be done --------------------------------------------------------------

    def legal(self) -> set[Action]:
        if self.phase == "over":
            return set()
        if self.phase == "setup":
            return self._setup_legal()
        return self._play_legal()

    def _setup_legal(self) -> set[Action]:
        out: set[Action] = set()
        last = len(self.unclaimed()) == 1
        two_players = self.seats == 2 and not self.options.teams
        # "Place a tower layer on any square of the board" -- but the last must claim,
        # except in a 2-player game, where it may place one last layer first.
        if self.pool() > 0 and (not last or (two_players and not self.extra_layer_used)):
            out |= {Action.layer(sq) for sq in range(25)}
        for sq in RING:
            if all(squares_between(sq, other) >= self.options.start_gap
                   for other in self.starts.values()):
                out.add(Action.claim(sq))
        return out

    def _play_legal(self) -> set[Action]:
        me = self.turn
        out: set[Action] = set()
        first = self.first
        # "the same action twice ... with two different pawns": the pawn the first action
        # used, where it stands now.
        used = None if first is None else (first.to if first.to is not None else first.square)
        mine = [sq for sq, s in self.pawn.items() if s == me]
        for sq in mine:
            if self.pool() > 0 and not (first and first.kind is Kind.LAYER and used == sq):
                out.add(Action.layer(sq))
            if first and first.kind is Kind.MOVE and used == sq:
                continue
            for dst in orthogonal(sq):
                if self._may_move(me, sq, dst):
                    out.add(Action.move(sq, dst))
        if self.reserve_pawns[me] > 0:
            for sq, owner in self.flag.items():
                if owner == me and sq not in self.pawn:
                    out.add(Action.spawn(sq))
        return out

    def _may_move(self, me: int, src: int, dst: int) -> bool:
        there = self.pawn.get(dst)
        if there == me:
            return False  # "never onto a square where you already have one pawn"
        hs, hd = self.height[src], self.height[dst]
        if there is not None:
            if self.options.partners_block and self.team(there) == self.team(me):
                return False
            if self.options.capture is CaptureRule.HIGHER and not hs > hd:
                return False  # "only if the pawn moving comes from a higher tower"
            if self.options.capture is CaptureRule.NOT_LOWER and not hs >= hd:
                return False
        if self.options.climb_limit and hd - hs > self.options.climb_limit:
            return False
        return not (self.options.descent_limit and hs - hd > self.options.descent_limit)

    # -- doing it ----------------------------------------------------------------------

    def apply(self, action: Action) -> None:
        assert action in self.legal(), action
        me = self.turn
        if self.phase == "setup":
            self._apply_setup(me, action)
            return
        sq = action.square
        if action.kind is Kind.LAYER:
            self.height[sq] += 1
        elif action.kind is Kind.SPAWN:
            self.pawn[sq] = me
            self.reserve_pawns[me] -= 1
        else:
            dst = action.to
            assert dst is not None
            # "returns any flag already present on the square to its owner and capture for
            # himself any pawn that was already present in that square. Then, he places
            # one of its flag on the square."
            if dst in self.flag:
                self.reserve_flags[self.flag.pop(dst)] += 1
            if dst in self.pawn:
                victim = self.pawn.pop(dst)
                self.captured[(me, victim)] += 1
            del self.pawn[sq]
            self.pawn[dst] = me
            self.flag[dst] = me
            self.reserve_flags[me] -= 1
        if self.first is None:
            self.first = action
        else:
            self.first = None
            self.turn = self.next_in(me)
        self._endings(me)

    def _apply_setup(self, me: int, action: Action) -> None:
        if action.kind is Kind.LAYER:
            self.height[action.square] += 1
            if len(self.unclaimed()) == 1:
                self.extra_layer_used = True
        else:
            self.starts[me] = action.square
            self.pawn[action.square] = me
            self.flag[action.square] = me
            self.reserve_pawns[me] -= 1
            self.reserve_flags[me] -= 1
            if self.first_claimer is None:
                self.first_claimer = me
        self._setup_next(me)

    def _setup_next(self, me: int) -> None:
        unclaimed = self.unclaimed()
        if not unclaimed:
            # "the game can start with the first player to have claim its initial location"
            # (or, if it left, the first still in after it)
            assert self.first_claimer is not None
            self.phase, self.first = "play", None
            self.turn = self.next_in(self.first_claimer, inclusive=True)
            self._endings(me)
            return
        order = [(me + i) % self.seats for i in range(1, self.seats + 1)]
        self.turn = next(s for s in order if s in unclaimed)

    def leave(self, seat: int, why: str) -> None:
        """SPEC 4.13: the seat is out; its pieces stay where they are."""
        assert self.phase != "over" and seat not in self.gone
        self.gone.add(seat)
        if len({self.team(s) for s in self.still_in()}) == 1:
            self.end(why, seat)
        elif self.turn == seat and self.phase == "setup":
            self._setup_next(seat)
        elif self.turn == seat:
            self.first = None
            self.turn = self.next_in(seat)
            self._endings(self.turn)

    def _endings(self, me: int) -> None:
        if self.pool() == 0:
            self.end("pool_empty", None)
        elif any(self.reserve_flags[s] == 0 for s in self.still_in()):
            self.end("all_flags_planted", next(
                s for s in [(me + i) % self.seats for i in range(self.seats)]
                if self.reserve_flags[s] == 0 and s not in self.gone))
        elif not self.legal():
            if self.first is not None and self.options.short_turn:
                self.first = None
                self.turn = self.next_in(self.turn)
                if self.legal():
                    return
            self.end("no_action", self.turn)

    def end(self, why: str, seat: int | None) -> None:
        self.phase, self.ended = "over", (why, seat)

    # -- the score ---------------------------------------------------------------------

    def seat_points(self) -> list[int]:
        """"1 point for each flag on the board. 1 point for each opponent pawn captured",
        and the bonuses when their options are on."""
        points = [0] * self.seats
        for owner in self.flag.values():
            points[owner] += 1
        for (c, _v), k in self.captured.items():
            points[c] += k
        if self.options.bonus_highest_tower:
            top = max(self.height.values())
            holders = {self.flag[sq] for sq in self.flag if self.height[sq] == top}
            if top > 0 and len(holders) == 1:
                points[holders.pop()] += 1
        if self.options.bonus_most_pawns:
            on_board = [list(self.pawn.values()).count(s) for s in range(self.seats)]
            best = max(on_board)
            if best > 0 and on_board.count(best) == 1:
                points[on_board.index(best)] += 1
        return points

    def team_points(self) -> list[int]:
        out = [0] * (2 if self.options.teams else self.seats)
        for seat, p in enumerate(self.seat_points()):
            out[self.team(seat)] += p
        return out

    def winners(self) -> tuple[int, ...]:
        scores = self.team_points()
        # a team whose seats all left cannot win (SPEC 4.13)
        teams = sorted({self.team(s) for s in self.still_in()})
        if self.ended and self.ended[0] == "no_action" and self.options.stuck_loses:
            assert self.ended[1] is not None
            teams.remove(self.team(self.ended[1]))
        best = max(scores[t] for t in teams)
        return tuple(t for t in teams if scores[t] == best)

    def same_as(self, game: Game) -> list[str]:
        """What differs between this model and the game (empty when they agree)."""
        other = Reference.of(game)
        wrong = [name for name in ("height", "pawn", "flag", "reserve_pawns",
                                   "reserve_flags", "captured", "starts", "phase", "first",
                                   "gone")
                 if getattr(self, name) != getattr(other, name)]
        if self.phase != "over" and self.turn != game.turn:
            wrong.append("turn")
        if self.pool() != game.pool:
            wrong.append("pool")
        if (game.phase is Phase.OVER) != (self.ended is not None):
            wrong.append("ended")
        elif self.ended is not None:
            outcome = game.outcome
            assert outcome is not None
            if (outcome.termination.value, outcome.seat) != self.ended:
                wrong.append("termination")
            if list(outcome.scores) != self.team_points():
                wrong.append("scores")
            if outcome.winners != self.winners():
                wrong.append("winners")
        return wrong


def perft(game: Game, depth: int) -> int:
    """Action sequences of `depth` actions from here, by the engine."""
    if depth == 0 or game.is_over:
        return 1
    total = 0
    for action in game.legal_actions:
        game.push(action)
        total += perft(game, depth - 1)
        game.pop()
    return total


def reference_perft(ref: Reference, depth: int) -> int:
    """The same count by the reference model (copying its state at each step)."""
    if depth == 0 or ref.phase == "over":
        return 1
    total = 0
    for action in ref.legal():
        child = _copy(ref)
        child.apply(action)
        total += reference_perft(child, depth - 1)
    return total


def _copy(ref: Reference) -> Reference:
    return Reference(
        ref.options, dict(ref.height), dict(ref.pawn), dict(ref.flag),
        list(ref.reserve_pawns), list(ref.reserve_flags), dict(ref.captured),
        dict(ref.starts), ref.phase, ref.turn, ref.first, ref.extra_layer_used,
        ref.first_claimer, ref.ended, set(ref.gone))
