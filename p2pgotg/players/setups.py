"""Setups for a bot, drawn from a distribution so that no formation gives the flag away.

`varied_setup` (every level but `legacy`): a shipped formation as a starting point, one
game in five (`hard`: one in ten), always varied (`varied_shipped`: mirrored or not, its
Flag swapped with one of its Privates on the back two rows or left, its generals and its
officers shuffled among their squares, and never left as shipped, so that a player who
knows the three formations cannot find the Flag by them); otherwise a generated one. Its
flag stands on the back row about six games in seven and in the middle row the others, in
any file, always with friendly pieces on every square next to it, two of them Privates; the
Spies follow one of several plans (one per flank, one guarding the flag, both in the
centre, anywhere); the generals lead from the two front rows, one of them sometimes held
back near the flag; the empty squares are mostly at the back, away from the flag. (Measured
against the `legacy` bot, formations with the flag in the front row, or with empty squares
beside it, lost more often.)

`sensible_setup` is the `legacy` level's: a generated formation puts the flag on the back
row, with friendly pieces on every square next to it (Privates among them), one Spy on each
half of the board, the generals in the two front rows, and the six empty squares mostly at
the back, away from the flag.

>>> import random
>>> from p2pgotg.rules import Rank, Side
>>> s = sensible_setup(Side.BLACK, random.Random(7))  # validated on construction
>>> s.side, len(s.squares)
(<Side.BLACK: 1>, 21)
"""

from __future__ import annotations

import random

from p2pgotg.rules import Rank, Setup, Side, formation_names, formation_text

_GENERALS = (
    Rank.GENERAL_OF_THE_ARMY,
    Rank.GENERAL,
    Rank.LIEUTENANT_GENERAL,
    Rank.MAJOR_GENERAL,
    Rank.BRIGADIER_GENERAL,
)
_OFFICERS = (
    Rank.COLONEL,
    Rank.LIEUTENANT_COLONEL,
    Rank.MAJOR,
    Rank.CAPTAIN,
    Rank.FIRST_LIEUTENANT,
    Rank.SECOND_LIEUTENANT,
    Rank.SERGEANT,
)

Grid = list[list[Rank | None]]  # [line][col]: line 0 = front row, col 0 = player's left


def _pick(rng: random.Random, cells: list[tuple[int, int]], weight) -> tuple[int, int]:
    weights = [weight(c) for c in cells]
    return rng.choices(cells, weights=weights)[0]


def generated_formation(rng: random.Random) -> Grid:
    grid: Grid = [[None] * 9 for _ in range(3)]
    free = {(line, col) for line in range(3) for col in range(9)}

    def put(cell: tuple[int, int], rank: Rank) -> None:
        grid[cell[0]][cell[1]] = rank
        free.discard(cell)

    flag_col = rng.choices(range(9), weights=[2, 3, 4, 4, 4, 4, 4, 3, 2])[0]
    flag = (2, flag_col)
    put(flag, Rank.FLAG)
    guards = [(2, c) for c in (flag_col - 1, flag_col + 1) if 0 <= c < 9] + [(1, flag_col)]
    near_flag = set(guards) | {(1, c) for c in (flag_col - 1, flag_col + 1) if 0 <= c < 9}

    # Six empty squares, mostly on the back row and never next to the flag.
    def empty_weight(cell: tuple[int, int]) -> float:
        if cell in near_flag:
            return 0.0
        return (0.4, 1.0, 3.0)[cell[0]]

    empties: set[tuple[int, int]] = set()
    while len(empties) < 6:
        cell = _pick(rng, sorted(free - empties), empty_weight)
        empties.add(cell)
    free -= empties

    # Guards: at least two Privates next to the flag, the rest officers.
    rng.shuffle(guards)
    bag_privates = 6
    for i, cell in enumerate(guards):
        if i < 2:
            put(cell, Rank.PRIVATE)
            bag_privates -= 1
    officers = list(_OFFICERS)
    rng.shuffle(officers)
    for cell in guards[2:]:
        put(cell, officers.pop())

    # One Spy on each half, in the two front rows.
    for half in (range(4), range(5, 9)):
        cells = sorted(c for c in free if c[1] in half and c[0] < 2) or sorted(
            c for c in free if c[1] in half
        )
        put(_pick(rng, cells, lambda c: 2.0 if c[0] == 0 else 1.0), Rank.SPY)

    # Generals spread over the two front rows.
    for rank in _GENERALS:
        cells = sorted(c for c in free if c[0] < 2) or sorted(free)
        put(_pick(rng, cells, lambda c: 1.5 if c[0] == 0 else 1.0), rank)

    rest = officers + [Rank.PRIVATE] * bag_privates
    rng.shuffle(rest)
    for cell, rank in zip(sorted(free), rest, strict=False):
        put(cell, rank)
    return grid


def _cells_next_to(cell: tuple[int, int]) -> list[tuple[int, int]]:
    line, col = cell
    out = [(line + dl, col + dc) for dl, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))]
    return [(li, c) for li, c in out if 0 <= li < 3 and 0 <= c < 9]


def varied_formation(rng: random.Random, room: bool = False) -> Grid:
    """One draw of the distribution described in the module's docstring. With `room`, one
    square beside the flag on its own row is left empty, for a flag that means to move."""
    grid: Grid = [[None] * 9 for _ in range(3)]
    free = {(line, col) for line in range(3) for col in range(9)}

    def put(cell: tuple[int, int], rank: Rank) -> None:
        grid[cell[0]][cell[1]] = rank
        free.discard(cell)

    flag_line = rng.choices((2, 1, 0), weights=(85, 15, 0))[0]
    flag_col = rng.choices(range(9), weights=[3, 3, 4, 4, 4, 4, 4, 3, 3])[0]
    flag = (flag_line, flag_col)
    put(flag, Rank.FLAG)
    guards = _cells_next_to(flag)
    near = set(guards) | {n for g in guards for n in _cells_next_to(g)}
    empties: set[tuple[int, int]] = set()
    if room:
        empties.add(rng.choice([c for c in guards if c[0] == flag_line]))
        guards = [c for c in guards if c not in empties]

    # Six empty squares, mostly at the back, none within two steps of the flag.
    def empty_weight(cell: tuple[int, int]) -> float:
        return 0.0 if cell in near else (0.6, 1.0, 3.0)[cell[0]]

    while len(empties) < 6:
        cells = sorted(free - empties)
        if not any(c not in near for c in cells):
            near = set(guards)  # (a flag in a corner of a crowded grid: guards only)
        empties.add(_pick(rng, cells, empty_weight))
    free -= empties

    # Two Privates beside the flag (they stop a Spy; a lost one costs little).
    privates_beside = min(2, len(guards))
    for cell in rng.sample(guards, privates_beside):
        put(cell, Rank.PRIVATE)

    plan = rng.choices(("flanks", "guard", "centre", "anywhere"), weights=(4, 3, 2, 2))[0]
    for i in range(2):
        cells = sorted(free)
        if plan == "flanks":
            half = range(4) if i == 0 else range(5, 9)
            cells = [c for c in cells if c[1] in half] or cells
        elif plan == "guard" and i == 0:
            cells = [c for c in cells if c in near] or cells
        elif plan == "centre":
            cells = [c for c in cells if 2 <= c[1] <= 6] or cells
        put(_pick(rng, cells, lambda c: 1.0 + (c[0] == 0)), Rank.SPY)

    reserve = rng.random() < 0.3  # one general held back, near the flag
    for i, rank in enumerate(rng.sample(_GENERALS, len(_GENERALS))):
        cells = sorted(free)
        if reserve and i == 0:
            cells = [c for c in cells if c in near] or cells
        elif any(c[0] < 2 for c in cells):
            cells = [c for c in cells if c[0] < 2]  # the generals lead from the front
        put(_pick(rng, cells, lambda c: 1.5 if c[0] == 0 else 1.0), rank)

    rest = list(_OFFICERS) + [Rank.PRIVATE] * (6 - privates_beside)
    rng.shuffle(rest)
    for cell, rank in zip(sorted(free, key=lambda _: rng.random()), rest, strict=True):
        put(cell, rank)
    return grid


def varied_setup(side: Side, rng: random.Random, shipped_share: float = 0.2,
                 room_share: float = 0.0) -> Setup:
    """A setup for `side`: a shipped formation varied (`varied_shipped`) a fifth of the
    time, else a draw of `varied_formation`, with room beside the flag `room_share` of the
    time."""
    if rng.random() < shipped_share:
        return Setup.from_formation(side, grid_text(varied_shipped(rng)))
    room = rng.random() < room_share
    return Setup.from_formation(side, grid_text(varied_formation(rng, room)))


def shipped_grids() -> list[Grid]:
    """Every shipped formation as a grid, as shipped and mirrored."""
    grids = []
    for name in formation_names():
        text = formation_text(name)
        for version in (text, _mirror(text)):
            grids.append(_grid(version))
    return grids


def _grid(text: str) -> Grid:
    rows = [line.split("#", 1)[0].split() for line in text.splitlines()]
    return [[None if cell == "." else Rank.from_code(cell) for cell in row]
            for row in rows if row]


def varied_shipped(rng: random.Random) -> Grid:
    """A shipped formation as a starting point, never played as shipped: mirrored or not,
    the Flag swapped with a Private of the back two rows (or left where it is), the
    generals shuffled among the generals' squares, the other officers among theirs."""
    shipped = shipped_grids()
    start = rng.choice(shipped)
    while True:
        grid = [list(row) for row in start]
        cells = {rank: [(line, col) for line in range(3) for col in range(9)
                        if grid[line][col] is rank] for rank in Rank}
        (flag,) = cells[Rank.FLAG]
        to = rng.choice([flag] + [c for c in cells[Rank.PRIVATE] if c[0] > 0])
        if to != flag:
            grid[flag[0]][flag[1]], grid[to[0]][to[1]] = Rank.PRIVATE, Rank.FLAG
        for group in (_GENERALS, _OFFICERS):
            squares = [c for rank in group for c in cells[rank]]
            ranks = [grid[line][col] for line, col in squares]
            rng.shuffle(ranks)
            for (line, col), rank in zip(squares, ranks, strict=True):
                grid[line][col] = rank
        if grid not in shipped:
            return grid


def random_army(side: Side, rng: random.Random) -> Setup:
    """The player's random setup (`r` on the setup screen): a draw of `varied_formation`,
    never a shipped formation (nor one mirrored), which a player who knows them would
    recognise (nor the bot's: it varies them, `varied_shipped`)."""
    shipped = shipped_grids()
    while True:
        grid = varied_formation(rng)
        if grid not in shipped:
            return Setup.from_formation(side, grid_text(grid))


def grid_text(grid: Grid) -> str:
    return (
        "\n".join(" ".join(r.code if r is not None else "." for r in line) for line in grid) + "\n"
    )


def _mirror(text: str) -> str:
    rows = [ln.split("#", 1)[0].split() for ln in text.splitlines()]
    rows = [r for r in rows if r]
    return "\n".join(" ".join(reversed(r)) for r in rows) + "\n"


def sensible_setup(side: Side, rng: random.Random, shipped_share: float = 0.25) -> Setup:
    """A shipped formation (randomly mirrored) a quarter of the time, else a generated one."""
    if rng.random() < shipped_share:
        text = formation_text(rng.choice(formation_names()))
        if rng.random() < 0.5:
            text = _mirror(text)
        return Setup.from_formation(side, text)
    return Setup.from_formation(side, grid_text(generated_formation(rng)))


__all__ = [
    "generated_formation", "grid_text", "random_army", "sensible_setup", "shipped_grids",
    "varied_formation", "varied_setup", "varied_shipped",
]
