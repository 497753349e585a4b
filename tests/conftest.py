"""Shared helpers for the tests: hand-made setups and positions for the rules engine.

They are plain functions handed out as fixtures, so test modules never import conftest:

- `setup_with(side, {"e3": Rank.FLAG, ...}, empty=("d3",))`: a valid setup with the named
  ranks on the named squares; the rest of the 21-piece set is filled in a fixed order.
- `position({"e7": Rank.FLAG}, {"d8": Rank.PRIVATE}, turn=Side.WHITE, options=...)`: a game
  from an arbitrary position (`Game.from_position`, full view unless a rank is None).
- `play(game, "e3-e4", "e6-e5", ...)`: push moves written in notation (full view).
- `piece_on(game, "e4")`: the piece standing on a named square.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping

import pytest

from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.rules import (
    FULL_SET,
    Game,
    Move,
    Piece,
    PlyRecord,
    Rank,
    RuleOptions,
    Setup,
    Side,
    parse_square,
)

# No test uses the public STUN servers, or starts a tor that knows the public Tor network,
# unless it names them: these are the defaults of --stun and --tor (README) for every
# p2pgotg the tests run, in this process or started from it. tests/torbed.py's tors know
# only its own authorities.
os.environ["P2PGOTG_STUN"] = "off"
os.environ["P2PGOTG_TOR"] = "off"


def setup_with(side: Side, placed: Mapping[str, Rank], empty: Iterable[str] = ()) -> Setup:
    """A valid setup for `side`: `placed` ranks on the named squares, the named `empty`
    squares left empty, and the rest of the 21-piece set (in rank order, Flag first)
    filled into the other home squares from the side's back row forward, file a to i.
    The home squares left over at the end of that order stay empty too."""
    rows = (0, 1, 2) if side is Side.WHITE else (7, 6, 5)
    order = [row * 9 + f for row in rows for f in range(9)]
    fixed = {parse_square(name): rank for name, rank in placed.items()}
    blank = {parse_square(name) for name in empty}
    assert not set(fixed) & blank, "a square cannot be both placed and empty"
    rest = Counter(FULL_SET)
    rest.subtract(fixed.values())
    assert all(n >= 0 for n in rest.values()), f"more pieces placed than the set has: {placed}"
    fill = [r for r in Rank for _ in range(rest[r])]
    free = [sq for sq in order if sq not in fixed and sq not in blank]
    assert len(free) >= len(fill), "not enough free home squares"
    placement = dict(fixed)
    placement.update(zip(free, fill, strict=False))  # (more squares than pieces)
    return Setup(side, placement)


def position(
    white: Mapping[str, Rank | None],
    black: Mapping[str, Rank | None],
    turn: Side = Side.WHITE,
    options: RuleOptions | None = None,
) -> Game:
    placement: dict[int | str, tuple[Side, Rank | None]] = {}
    for side, pieces in ((Side.WHITE, white), (Side.BLACK, black)):
        for name, rank in pieces.items():
            placement[name] = (side, rank)
    return Game.from_position(placement, turn, options)


def play(game: Game, *moves: str) -> list[PlyRecord]:
    return [game.push(Move.parse(m)) for m in moves]


def piece_on(game: Game, name: str) -> Piece:
    piece = game.piece_at(parse_square(name))
    assert piece is not None, f"no piece on {name}"
    return piece


@pytest.fixture(scope="session", name="setup_with")
def _setup_with_fixture():
    return setup_with


@pytest.fixture(scope="session", name="position")
def _position_fixture():
    return position


@pytest.fixture(scope="session", name="play")
def _play_fixture():
    return play


@pytest.fixture(scope="session", name="piece_on")
def _piece_on_fixture():
    return piece_on


@pytest.fixture(autouse=True)
def _inline_fsync_on_a_virtual_clock(request: pytest.FixtureRequest,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Under trio's autojump clock a task waiting for a worker thread counts as idle and
    virtual time leaps ahead; transcripts fsync on the event loop's thread there."""
    if "autojump_clock" in request.fixturenames:
        monkeypatch.setattr(TranscriptFile, "THREADED", False)
