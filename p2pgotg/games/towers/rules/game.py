"""The Towers game: towers, pawns, flags and the pool; the setup ("push your luck") and the
turns of two actions; legal actions, `push`/`pop`, the end and the score (seed
`002_836edfe2f167b267.txt`; every reading in SPEC chapter 4).

Perfect information: one `Game` is every seat's view, and the protocol, the screens and
the bot all play on it. Positions change only through `push`, which refuses an illegal
action with the rule it breaks, and `pop`, which undoes the last push exactly.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from p2pgotg.games.towers.rules.actions import ALL_ACTIONS, Action, Kind
from p2pgotg.games.towers.rules.board import (
    BORDER,
    SIZE,
    SQUARES,
    border_distance,
    on_border,
    parse_square,
    square_name,
)
from p2pgotg.games.towers.rules.errors import IllegalActionError, TowersError
from p2pgotg.games.towers.rules.options import CaptureRule, RuleOptions
from p2pgotg.games.towers.rules.outcome import LEAVING, OUTSIDE, Outcome, Termination
from p2pgotg.games.towers.rules.scoring import (
    NOBODY,
    base_points,
    bonus_points,
    team_points,
    winners,
)
from p2pgotg.games.towers.rules.seats import (
    LAYERS,
    PAWNS,
    Colour,
    flags_per_seat,
    team_of,
)


class Phase(enum.Enum):
    SETUP = "setup"  # seats place layers or claim their starting squares
    PLAY = "play"  # turns of two actions
    OVER = "over"


_LAYER = {a.square: a for a in ALL_ACTIONS if a.kind is Kind.LAYER}
_SPAWN = {a.square: a for a in ALL_ACTIONS if a.kind is Kind.SPAWN}
_CLAIM = {a.square: a for a in ALL_ACTIONS if a.kind is Kind.CLAIM}
_MOVES: tuple[tuple[tuple[int, Action], ...], ...] = tuple(
    tuple((a.to, a) for a in ALL_ACTIONS if a.kind is Kind.MOVE and a.square == sq
          if a.to is not None)
    for sq in range(SQUARES))


_BORDER_SORTED = tuple(sorted(BORDER))  # (claims listed in code order)


def _pawn_after(action: Action) -> int:
    """The square of the pawn an action used, after it (a move's pawn is on its target)."""
    return action.to if action.to is not None else action.square


class _Scalars(NamedTuple):
    """What `pop` restores besides the squares and counts a push changed (a named tuple:
    one is made at every push, so it must be cheap)."""

    pool: int
    phase: Phase
    turn: int
    left: int
    first: Action | None
    first_claimer: int
    extra_used: bool
    outcome: Outcome | None


#: One push's undo record: the scalars before it, (list, index, old value) for each
#: element it changed, and the legal actions before it (when they had been listed).
_Undo = tuple[_Scalars, list[tuple[list[int], int, int]], "tuple[Action, ...] | None"]


class Game:
    """A Towers game from its first setup choice to its end.

    >>> g = Game()
    >>> for text in ("+c3", "+c3", "@a1", "+b2", "@e5"):  # Red, Blue, Red; Blue last
    ...     g.push_text(text)
    >>> g.phase.value, g.turn, g.height(parse_square("c3")), g.pool
    ('play', 0, 2, 47)
    >>> g.push_text("a1-b1"); g.push_text("+b1")
    >>> g.turn, g.points(0), g.reserve_flags(0)
    (1, 2, 11)
    """

    def __init__(self, options: RuleOptions | None = None) -> None:
        self.options = options or RuleOptions()
        n = self.options.seats
        self._n = n
        self._heights = [0] * SQUARES
        self._pawn = [NOBODY] * SQUARES
        self._flag = [NOBODY] * SQUARES
        self._reserve_pawns = [PAWNS] * n
        self._reserve_flags = [flags_per_seat(n)] * n
        self._captures = [0] * (n * n)  # [capturer * n + victim]
        self._starts = [NOBODY] * n
        self._team = [team_of(s, self.options.teams) for s in range(n)]
        self._gone = [False] * n  # seats that left (SPEC 4.13); never undone by `pop`
        self._barrier = 0  # `pop` stops here: the undo records before the last leave
        self._s = _Scalars(pool=LAYERS, phase=Phase.SETUP, turn=0, left=1, first=None,
                           first_claimer=NOBODY, extra_used=False, outcome=None)
        self._history: list[Action] = []
        self._undo: list[_Undo] = []
        self._changes: list[tuple[list[int], int, int]] = []
        self._legal: tuple[Action, ...] | None = None

    def copy(self) -> Game:
        """An independent game in the same position (no history to `pop`)."""
        twin = Game.__new__(Game)
        twin.options, twin._n, twin._team, twin._s = self.options, self._n, self._team, self._s
        twin._barrier = 0
        for name in ("_heights", "_pawn", "_flag", "_reserve_pawns", "_reserve_flags",
                     "_captures", "_starts", "_gone"):
            setattr(twin, name, list(getattr(self, name)))
        twin._history, twin._undo, twin._changes = list(self._history), [], []
        twin._legal = self._legal
        return twin

    @classmethod
    def from_position(
        cls,
        options: RuleOptions | None = None,
        *,
        heights: Mapping[int | str, int] | None = None,
        pawns: Mapping[int | str, int] | None = None,
        flags: Mapping[int | str, int] | None = None,
        captures: Mapping[tuple[int, int], int] | None = None,
        reserve_pawns: Sequence[int] | None = None,
        turn: int = 0,
        first: Action | None = None,
    ) -> Game:
        """A game in its play phase from an arbitrary position: for tests, puzzles and
        analysis (a real game starts with `Game()`).

        Squares are indices or names. Every pawn stands on a flag of its own colour (as in
        every real game: a pawn arrives by a move, a claim or a spawn, each of which leaves
        its flag there). `captures[(c, v)]` counts seat v's pawns taken by seat c; a seat's
        pawns not on the board nor captured are in its reserve unless `reserve_pawns` says
        fewer (the rest then count as taken by no one, which no real game has). Flags not
        on the board are in their owners' reserves; the pool holds the layers not on the
        board. `turn` is to act; with `first` it has made that action and has one left.
        The position's ending, if it has one, is found at once.

        >>> g = Game.from_position(heights={"b2": 2}, pawns={"b2": 0, "b3": 1},
        ...                        flags={"b2": 0, "b3": 1})
        >>> Action.from_text("b2-b3") in g.legal_actions, g.pool
        (True, 48)
        """
        g = cls(options)
        n = g._n
        for sq, h in _by_square(heights):
            if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                raise TowersError(f"height of {square_name(sq)} must be a whole number >= 0")
            g._heights[sq] = h
        for target, values, what in ((g._pawn, pawns, "pawn"), (g._flag, flags, "flag")):
            for sq, seat in _by_square(values):
                if not (isinstance(seat, int) and 0 <= seat < n):
                    raise TowersError(f"the {what} on {square_name(sq)} has no seat {seat!r}")
                target[sq] = seat
        for sq in range(SQUARES):
            if g._pawn[sq] != NOBODY and g._flag[sq] != g._pawn[sq]:
                raise TowersError(f"the pawn on {square_name(sq)} stands on no flag of its own")
        for (c, v), k in (captures or {}).items():
            if not (0 <= c < n and 0 <= v < n and c != v and k >= 0):
                raise TowersError(f"no capture of seat {v} by seat {c}")
            g._captures[c * n + v] = k
        for seat in range(n):
            on_board = g._pawn.count(seat)
            taken = sum(g._captures[c * n + seat] for c in range(n))
            free = PAWNS - on_board - taken
            reserve = free if reserve_pawns is None else reserve_pawns[seat]
            if not 0 <= reserve <= free:
                raise TowersError(f"{Colour(seat).display_name} has more than {PAWNS} pawns")
            g._reserve_pawns[seat] = reserve
            g._reserve_flags[seat] = flags_per_seat(n) - g._flag.count(seat)
            if g._reserve_flags[seat] < 0:
                raise TowersError(f"{Colour(seat).display_name} has more flags than it owns")
        pool = LAYERS - sum(g._heights)
        if pool < 0:
            raise TowersError(f"the board holds more than the {LAYERS} layers")
        if not 0 <= turn < n:
            raise TowersError(f"no seat {turn} to act")
        g._s = _Scalars(pool=pool, phase=Phase.PLAY, turn=turn, left=2, first=None,
                        first_claimer=turn, extra_used=False, outcome=None)
        if first is not None:
            g._s = g._s._replace(left=1, first=first)
        g._check_end(turn)
        return g

    # -- the position -------------------------------------------------------------------

    @property
    def seats(self) -> int:
        return self._n

    @property
    def phase(self) -> Phase:
        return self._s.phase

    @property
    def turn(self) -> int:
        """The seat to act (after the end: the seat that acted last)."""
        return self._s.turn

    @property
    def actions_left(self) -> int:
        """Actions left in this turn: 2 or 1 in play, 1 in the setup, 0 after the end."""
        return 0 if self._s.phase is Phase.OVER else self._s.left

    @property
    def first_action(self) -> Action | None:
        """The first action of the turn under way, once it is made."""
        return self._s.first

    @property
    def pool(self) -> int:
        """Layers left in the shared pool (placed ones are on the board: 50 in all)."""
        return self._s.pool

    @property
    def heights(self) -> Sequence[int]:
        """Layers on each square, by index (read only)."""
        return self._heights

    @property
    def pawn_owners(self) -> Sequence[int]:
        """The seat whose pawn stands on each square, or `NOBODY` (-1), by index (read
        only: for code that scans the whole board, such as the bot's evaluation)."""
        return self._pawn

    @property
    def flag_owners(self) -> Sequence[int]:
        """The seat whose flag stands on each square, or `NOBODY` (-1) (read only)."""
        return self._flag

    @property
    def capture_table(self) -> Sequence[int]:
        """`captured(by, of)` for every pair, flat: index `by * seats + of` (read only)."""
        return self._captures

    def height(self, sq: int) -> int:
        return self._heights[sq]

    def pawn_at(self, sq: int) -> int | None:
        """The seat whose pawn stands on `sq` (a square holds at most one pawn)."""
        p = self._pawn[sq]
        return None if p == NOBODY else p

    def flag_at(self, sq: int) -> int | None:
        """The seat whose flag stands on `sq` (a square holds at most one flag)."""
        f = self._flag[sq]
        return None if f == NOBODY else f

    def pawn_squares(self, seat: int) -> tuple[int, ...]:
        return tuple(sq for sq in range(SQUARES) if self._pawn[sq] == seat)

    def flag_squares(self, seat: int) -> tuple[int, ...]:
        return tuple(sq for sq in range(SQUARES) if self._flag[sq] == seat)

    def reserve_pawns(self, seat: int) -> int:
        return self._reserve_pawns[seat]

    def reserve_flags(self, seat: int) -> int:
        return self._reserve_flags[seat]

    def captured(self, by: int, of: int) -> int:
        """How many of seat `of`'s pawns seat `by` has captured."""
        return self._captures[by * self._n + of]

    def start(self, seat: int) -> int | None:
        """The starting square a seat claimed (None before it claims, and in a position
        made by `from_position`)."""
        s = self._starts[seat]
        return None if s == NOBODY else s

    def team(self, seat: int) -> int:
        return self._team[seat]

    @property
    def seats_in(self) -> tuple[int, ...]:
        """The seats still in the game, in seat order (all of them until one leaves)."""
        return tuple(s for s in range(self._n) if not self._gone[s])

    def has_left(self, seat: int) -> bool:
        """Whether `seat` has left the game (SPEC 4.13)."""
        return self._gone[seat]

    @property
    def history(self) -> tuple[Action, ...]:
        return tuple(self._history)

    @property
    def ply(self) -> int:
        """Actions pushed so far (setup choices included)."""
        return len(self._history)

    @property
    def outcome(self) -> Outcome | None:
        return self._s.outcome

    @property
    def is_over(self) -> bool:
        return self._s.phase is Phase.OVER

    # -- points -------------------------------------------------------------------------

    def seat_points(self) -> tuple[int, ...]:
        """Each seat's points as they stand: flags on the board, pawns captured, and the
        bonuses whose options are on."""
        base = base_points(self._n, self._flag, self._captures)
        bonus = bonus_points(self.options, self._flag, self._pawn, self._heights)
        return tuple(b + x for b, x in zip(base, bonus, strict=True))

    def points(self, seat: int) -> int:
        return self.seat_points()[seat]

    def team_points(self) -> tuple[int, ...]:
        """Points by team (by seat outside the team variant)."""
        return team_points(self.options, self.seat_points())

    # -- legality -----------------------------------------------------------------------

    @property
    def legal_actions(self) -> tuple[Action, ...]:
        """Every action the seat to act may make now, in code order (empty after the end)."""
        if self._legal is None:
            self._legal = tuple(self._generate())
        return self._legal

    def is_legal(self, action: Action) -> bool:
        return self.problem(action) is None

    def problem(self, action: Action) -> str | None:
        """Why `action` is illegal now, in words; None when it is legal."""
        s = self._s
        if s.phase is Phase.OVER:
            return "the game is over"
        if s.phase is Phase.SETUP:
            return self._setup_problem(action)
        seat, sq = s.turn, action.square
        if action.kind is Kind.CLAIM:
            return "starting squares are claimed in the setup, not in play"
        first = s.first
        same_pawn = (first is not None and first.kind is action.kind
                     and action.kind is not Kind.SPAWN and _pawn_after(first) == sq)
        if action.kind is Kind.LAYER:
            if self._pawn[sq] != seat:
                return f"a layer is built only under one of your pawns; {square_name(sq)} has none"
            if same_pawn:
                return "the same action twice needs two different pawns"
            return None if s.pool > 0 else "the pool of layers is empty"
        if action.kind is Kind.SPAWN:
            if self._reserve_pawns[seat] == 0:
                return "no pawn left in your reserve"
            if self._flag[sq] != seat:
                return f"a pawn is spawned only on one of your flags; {square_name(sq)} has none"
            return None if self._pawn[sq] == NOBODY else f"{square_name(sq)} already holds a pawn"
        if self._pawn[sq] != seat:
            return f"you have no pawn on {square_name(sq)}"
        if same_pawn:
            return "the same action twice needs two different pawns"
        assert action.to is not None
        return self._move_problem(seat, sq, action.to)

    def _move_problem(self, seat: int, src: int, dst: int) -> str | None:
        occupant = self._pawn[dst]
        if occupant == seat:
            return f"you already have a pawn on {square_name(dst)}"
        h_from, h_to = self._heights[src], self._heights[dst]
        if occupant != NOBODY:
            if self.options.partners_block and self._team[occupant] == self._team[seat]:
                return f"your partner's pawn stands on {square_name(dst)}"
            if self.options.capture is CaptureRule.HIGHER and h_from <= h_to:
                return (f"a pawn takes an opponent's only from a higher tower "
                        f"({h_from} against {h_to})")
            if h_from < h_to:
                return (f"a pawn takes an opponent's only from a tower at least as high "
                        f"({h_from} against {h_to})")
        climb = h_to - h_from
        if self.options.climb_limit and climb > self.options.climb_limit:
            return f"a move climbs at most {self.options.climb_limit} (this one {climb})"
        if self.options.descent_limit and -climb > self.options.descent_limit:
            return f"a move goes down at most {self.options.descent_limit} (this one {-climb})"
        return None

    def _setup_problem(self, action: Action) -> str | None:
        sq = action.square
        if action.kind is Kind.LAYER:
            if self._s.pool == 0:
                return "the pool of layers is empty: claim your starting square"
            if self._unclaimed() == 1 and not self._may_place_last():
                return "the last seat to claim must claim now"
            return None
        if action.kind is not Kind.CLAIM:
            return "in the setup a seat places a layer (+c3) or claims its start (@a1)"
        if not on_border(sq):
            return f"a starting square is on the outer border; {square_name(sq)} is not"
        gap = self.options.start_gap
        for other in self._starts:
            if other != NOBODY and border_distance(sq, other) <= gap:
                return (f"{square_name(sq)} is too near the start on {square_name(other)}: "
                        f"at least {gap} border square{'s' if gap > 1 else ''} must lie "
                        "between")
        return None

    def _unclaimed(self) -> int:
        """Seats still in that have not claimed (a seat that left never claims: T7)."""
        return sum(1 for s in range(self._n) if self._starts[s] == NOBODY and not self._gone[s])

    def _may_place_last(self) -> bool:
        """In a 2-player game the last seat to claim may place one layer before it does."""
        return self._n == 2 and not self.options.teams and not self._s.extra_used

    def _generate(self) -> Iterable[Action]:
        s = self._s
        if s.phase is Phase.OVER:
            return []
        if s.phase is Phase.SETUP:
            return self._generate_setup()
        return self._generate_play()

    def _generate_setup(self) -> list[Action]:
        out: list[Action] = []
        last = self._unclaimed() == 1
        if self._s.pool > 0 and (not last or self._may_place_last()):
            out.extend(_LAYER[sq] for sq in range(SQUARES))
        taken = [st for st in self._starts if st != NOBODY]
        gap = self.options.start_gap
        out.extend(_CLAIM[sq] for sq in _BORDER_SORTED
                   if all(border_distance(sq, st) > gap for st in taken))
        return out

    def _generate_play(self) -> list[Action]:
        """In code order (SPEC 4.9): layers, spawns, moves by square and direction."""
        s = self._s
        seat = s.turn
        first = s.first
        no_layer = no_move = NOBODY
        if first is not None:
            if first.kind is Kind.LAYER:
                no_layer = first.square
            elif first.kind is Kind.MOVE:
                no_move = _pawn_after(first)
        pawn = self._pawn
        mine = [sq for sq in range(SQUARES) if pawn[sq] == seat]
        out: list[Action] = []
        if s.pool:
            out.extend(_LAYER[sq] for sq in mine if sq != no_layer)
        if self._reserve_pawns[seat]:
            flag = self._flag
            out.extend(_SPAWN[sq] for sq in range(SQUARES)
                       if flag[sq] == seat and pawn[sq] == NOBODY)
        heights, options = self._heights, self.options
        higher = options.capture is CaptureRule.HIGHER
        climb_limit, descent_limit = options.climb_limit, options.descent_limit
        partners = options.partners_block
        team = self._team
        for sq in mine:
            if sq == no_move:
                continue
            h = heights[sq]
            for dst, action in _MOVES[sq]:
                occupant = pawn[dst]
                if occupant == seat:
                    continue
                climb = heights[dst] - h
                if occupant != NOBODY and (climb >= 0 if higher else climb > 0):
                    continue
                if occupant != NOBODY and partners and team[occupant] == team[seat]:
                    continue
                if climb_limit and climb > climb_limit:
                    continue
                if descent_limit and -climb > descent_limit:
                    continue
                out.append(action)
        return out

    def _can_act(self) -> bool:
        """Whether the seat to act has any legal action (cheaper than listing them)."""
        s = self._s
        if s.first is None and s.phase is Phase.PLAY:
            seat = s.turn
            if s.pool and seat in self._pawn:
                return True  # (a pawn on the board can always have a layer built under it)
        return bool(self.legal_actions)

    # -- making and unmaking actions ----------------------------------------------------

    def push(self, action: Action) -> None:
        """Make `action` for the seat to act; IllegalActionError says why it may not."""
        if self._legal is None or action not in self._legal:
            problem = self.problem(action)
            if problem is not None:
                raise IllegalActionError(f"{action.text()}: {problem}")
        self._undo.append((self._s, self._changes, self._legal))
        self._changes = []
        self._history.append(action)
        self._legal = None
        if self._s.phase is Phase.SETUP:
            self._apply_setup(action)
        else:
            self._apply_play(action)

    def push_text(self, text: str) -> None:
        """Read an action in notation (SPEC 4.9) and push it."""
        self.push(Action.from_text(text))

    def parse(self, text: str) -> Action:
        """The legal action a text names; the notation error or the rule broken otherwise."""
        action = Action.from_text(text)
        problem = self.problem(action)
        if problem is not None:
            raise IllegalActionError(f"{action.text()}: {problem}")
        return action

    def pop(self) -> Action:
        """Undo the last push exactly, and return its action."""
        if self._s.outcome is not None and self._s.outcome.termination in OUTSIDE:
            raise TowersError("an ending decided outside the rules cannot be taken back")
        if self._undo and len(self._undo) <= self._barrier:
            raise TowersError("an action made before a seat left cannot be taken back")
        if not self._undo:
            raise TowersError("no action to take back")
        for target, index, old in reversed(self._changes):
            target[index] = old
        self._s, self._changes, self._legal = self._undo.pop()
        return self._history.pop()

    def _set(self, target: list[int], index: int, value: int) -> None:
        self._changes.append((target, index, target[index]))
        target[index] = value

    def _apply_setup(self, action: Action) -> None:
        s, seat, sq = self._s, self._s.turn, action.square
        if action.kind is Kind.LAYER:
            self._set(self._heights, sq, self._heights[sq] + 1)
            extra = s.extra_used or self._unclaimed() == 1
            self._s = s._replace(pool=s.pool - 1, extra_used=extra)
            self._next_in_setup(seat)
            return
        self._set(self._starts, seat, sq)
        self._set(self._pawn, sq, seat)
        self._set(self._flag, sq, seat)
        self._set(self._reserve_pawns, seat, self._reserve_pawns[seat] - 1)
        self._set(self._reserve_flags, seat, self._reserve_flags[seat] - 1)
        first_claimer = seat if s.first_claimer == NOBODY else s.first_claimer
        self._s = s._replace(first_claimer=first_claimer)
        self._next_in_setup(seat)

    def _next_in_setup(self, seat: int) -> None:
        """After `seat`'s setup choice (or its leaving): the next seat still in that has
        not claimed acts; when there is none, play begins with the first seat still in from
        the first claimer (T9, SPEC 4.13) and the endings are checked."""
        if self._unclaimed():
            self._s = self._s._replace(turn=self._next_seat(
                seat, lambda c: self._starts[c] == NOBODY))
            return
        self._s = self._s._replace(phase=Phase.PLAY, left=2, first=None,
                                   turn=self._next_seat(self._s.first_claimer - 1))
        # (`_next_seat(c - 1)` is c itself when c is still in)
        self._check_end(seat)

    def _next_seat(self, seat: int, also: Callable[[int], bool] = lambda c: True) -> int:
        """The first seat still in after `seat` in seat order (`seat` itself last) for
        which `also` holds."""
        n = self._n
        return next(c for c in ((seat + i) % n for i in range(1, n + 1))
                    if not self._gone[c] and also(c))

    def _apply_play(self, action: Action) -> None:
        s, seat, sq = self._s, self._s.turn, action.square
        if action.kind is Kind.LAYER:
            self._set(self._heights, sq, self._heights[sq] + 1)
            s = s._replace(pool=s.pool - 1)
        elif action.kind is Kind.SPAWN:
            self._set(self._pawn, sq, seat)
            self._set(self._reserve_pawns, seat, self._reserve_pawns[seat] - 1)
        else:
            dst = action.to
            assert dst is not None
            victim, owner = self._pawn[dst], self._flag[dst]
            if victim != NOBODY:
                k = seat * self._n + victim
                self._set(self._captures, k, self._captures[k] + 1)
            if owner != NOBODY:
                self._set(self._reserve_flags, owner, self._reserve_flags[owner] + 1)
            self._set(self._pawn, sq, NOBODY)
            self._set(self._pawn, dst, seat)
            self._set(self._flag, dst, seat)
            self._set(self._reserve_flags, seat, self._reserve_flags[seat] - 1)
        if s.left == 2:
            self._s = s._replace(left=1, first=action)
        else:
            self._s = s._replace(turn=self._next_seat(seat), left=2, first=None)
        self._check_end(seat)

    def _check_end(self, actor: int) -> None:
        """The seed's endings, at once after any action (and once the setup is done): the
        pool empty, a seat still in with all its flags placed, the seat to act unable to
        act (a seat that left ends nothing by its reserve: SPEC 4.13)."""
        s = self._s
        if s.pool == 0:
            self._finish(Termination.POOL_EMPTY, None)
            return
        for offset in range(self._n):
            seat = (actor + offset) % self._n
            if self._reserve_flags[seat] == 0 and not self._gone[seat]:
                self._finish(Termination.ALL_FLAGS_PLANTED, seat)
                return
        if self._can_act():
            return
        if s.left == 1 and s.first is not None and self.options.short_turn:
            self._s = s._replace(turn=self._next_seat(s.turn), left=2, first=None)
            self._legal = None
            if self._can_act():
                return
        self._finish(Termination.NO_ACTION, self._s.turn)

    def end(self, termination: Termination, winners: Iterable[int],
            seat: int | None = None) -> Outcome:
        """End the game for a reason outside the rules (a resignation, a draw agreed, a
        time forfeit, an abandonment: SPEC 4.7), with the winning teams the protocol
        decided and the points as they stand. Final: `pop` cannot take it back."""
        if termination not in OUTSIDE:
            raise TowersError(f"{termination.value} is decided by the rules, not declared")
        if self.is_over:
            raise TowersError("the game is over")
        teams = tuple(sorted(set(winners)))
        if any(not 0 <= t < len(self.team_points()) for t in teams):
            raise TowersError(f"no team {teams} to win")
        outcome = Outcome(termination, self.team_points(), teams, seat, self._n,
                          self.options.teams)
        self._s = self._s._replace(phase=Phase.OVER, outcome=outcome)
        self._legal = ()
        return outcome

    def resign(self, seat: int) -> Outcome:
        """`seat` resigns: with two teams the other team wins. (With more, the game goes
        on without it: `leave`.)"""
        if len(self.team_points()) != 2:
            raise TowersError("with more than two teams a resignation ends nothing by itself")
        return self.end(Termination.RESIGNATION, [1 - self._team[seat]], seat)

    def leave(self, seat: int, termination: Termination) -> Outcome | None:
        """`seat` leaves (it resigned, or a time or abandonment claim removed it: SPEC
        4.13) and the game goes on without it: its pawns and flags stay on the board, it
        takes no more turns and cannot win. When one team alone is still in, the game
        ends with `termination` and that team wins; the Outcome is returned when the game
        is over (None while it goes on). Final: `pop` cannot take it back."""
        if termination not in LEAVING:
            raise TowersError(f"a seat leaves by {', '.join(sorted(t.value for t in LEAVING))}"
                              f", not {termination.value}")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self._n:
            raise TowersError(f"no seat {seat!r} to leave")
        if self.is_over:
            raise TowersError("the game is over")
        if self._gone[seat]:
            raise TowersError(f"{Colour(seat).display_name} has already left")
        self._gone[seat] = True
        self._barrier = len(self._undo)  # (the pushes made so far stay made)
        self._legal = None
        teams_in = {self._team[s] for s in self.seats_in}
        if len(teams_in) == 1:
            self._end_outcome(Outcome(termination, self.team_points(), tuple(teams_in), seat,
                                      self._n, self.options.teams))
        elif self._s.turn == seat:
            if self._s.phase is Phase.SETUP:
                self._next_in_setup(seat)
            else:
                self._s = self._s._replace(turn=self._next_seat(seat), left=2, first=None)
                self._check_end(self._s.turn)
        return self._s.outcome

    def _finish(self, termination: Termination, seat: int | None) -> None:
        scores = self.team_points()
        out = {self._team[s] for s in range(self._n)} - {self._team[s] for s in self.seats_in}
        if termination is Termination.NO_ACTION and self.options.stuck_loses:
            assert seat is not None
            out.add(self._team[seat])
        self._end_outcome(Outcome(termination, scores, winners(scores, out), seat, self._n,
                                  self.options.teams))

    def _end_outcome(self, outcome: Outcome) -> None:
        self._s = self._s._replace(phase=Phase.OVER, outcome=outcome)
        self._legal = ()

    # -- for people ---------------------------------------------------------------------

    def picture(self) -> str:
        """The board as text, rank 5 on top: each square its height, then the colour
        letter of its pawn (upper case, on its own flag) or its flag (lower case) or `.`.

        >>> print(Game.from_position(heights={"a1": 3}, pawns={"a1": 1}, flags={"a1": 1,
        ...                          "b1": 0}).picture().splitlines()[-2])
        1  3B 0r 0. 0. 0.
        """
        lines = []
        for row in range(SIZE - 1, -1, -1):
            cells = []
            for f in range(SIZE):
                sq = row * SIZE + f
                p, fl = self._pawn[sq], self._flag[sq]
                mark = (Colour(p).letter if p != NOBODY
                        else Colour(fl).letter.lower() if fl != NOBODY else ".")
                cells.append(f"{self._heights[sq]}{mark}")
            lines.append(f"{row + 1}  " + " ".join(cells))
        lines.append("   " + " ".join(f"{c} " for c in "abcde").rstrip())
        return "\n".join(lines)


def _by_square(values: Mapping[int | str, int] | None) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for key, value in (values or {}).items():
        sq = parse_square(key) if isinstance(key, str) else key
        square_name(sq)  # (raises for an index off the board)
        out.append((sq, value))
    return out
