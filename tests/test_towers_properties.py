"""Property tests of the Towers rules engine: whole games of random legal actions under
random rule options, held at every action against what the rule text (seed
`002_836edfe2f167b267.txt`) says must hold, and against a second implementation written
from that text (`towers_reference.py`).

Hypothesis draws the options, the seed and a policy; the game is played by
`random.Random` (seeded). Policies: "uniform" picks any legal action; "builder" prefers
layers (games end by the pool, towers grow tall, captures from above happen); "mover"
prefers moves (flags change hands, games end by a seat's last flag); "claimer" claims at
once in the setup. With three or four seats, seats also leave now and then (SPEC 4.13),
in the setup and in play, the seat to act or another.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from towers_reference import Reference, perft, reference_perft

from p2pgotg.games.towers.rules import (
    ALL_ACTIONS,
    LAYERS,
    PAWNS,
    Action,
    CaptureRule,
    Game,
    IllegalActionError,
    Kind,
    Phase,
    RuleOptions,
    Termination,
    TowersError,
    flags_per_seat,
)


@st.composite
def options(draw: st.DrawFn) -> RuleOptions:
    teams = draw(st.booleans()) and draw(st.booleans())
    seats = 4 if teams else draw(st.sampled_from([2, 3, 4]))
    return RuleOptions(
        seats=seats, teams=teams,
        capture=draw(st.sampled_from(list(CaptureRule))),
        climb_limit=draw(st.sampled_from([0, 0, 1, 2])),
        descent_limit=draw(st.sampled_from([0, 0, 1, 3])),
        start_gap=draw(st.sampled_from([1, 2])),
        short_turn=draw(st.booleans()),
        stuck_loses=draw(st.booleans()),
        partners_block=teams and draw(st.booleans()),
        bonus_highest_tower=draw(st.booleans()),
        bonus_most_pawns=draw(st.booleans()),
    )


SEEDS = st.integers(0, 2**32 - 1)
POLICIES = st.sampled_from(["uniform", "builder", "mover", "claimer"])
#: A random game (any policy, any options) ends long before this many actions; the cap
#: only turns a bug that loops into a failure.
CAP = 3000
#: How often, before an action, a seat leaves a game of three or four seats.
LEAVES = st.sampled_from([0.0, 0.01, 0.05])
LEAVING = (Termination.RESIGNATION, Termination.TIME_FORFEIT, Termination.ABANDONMENT)


def maybe_leave(game: Game, rng: random.Random, rate: float) -> tuple[int, Termination] | None:
    """Now and then (at `rate`, with more than two seats) a random seat still in leaves;
    returns who left and how, for the reference to do the same."""
    if game.seats < 3 or rng.random() >= rate:
        return None
    seat, why = rng.choice(game.seats_in), rng.choice(LEAVING)
    outcome = game.leave(seat, why)
    assert not game.has_left(game.turn) or outcome is not None
    assert (outcome is not None) == game.is_over
    return seat, why


def choose(game: Game, rng: random.Random, policy: str) -> Action:
    legal = game.legal_actions
    prefer = {"builder": Kind.LAYER, "mover": Kind.MOVE, "claimer": Kind.CLAIM}.get(policy)
    if (prefer is not None and game.phase is not Phase.SETUP) or policy == "claimer":
        liked = [a for a in legal if a.kind is prefer]
        if liked and rng.random() < 0.7:
            return rng.choice(liked)
    return rng.choice(legal)


def playout(opts: RuleOptions, seed: int, policy: str):
    """Yield the game after each action of one random game."""
    rng = random.Random(seed)
    game = Game(opts)
    yield game
    while not game.is_over:
        assert game.ply < CAP, "a random game did not end"
        game.push(choose(game, rng, policy))
        yield game


def invariants(game: Game) -> None:
    """What the rule text says holds in every position."""
    n = game.seats
    # The shared pool of 50 layers: each layer is on the board or still in the pool.
    assert game.pool + sum(game.heights) == LAYERS
    assert game.pool >= 0
    for seat in range(n):
        # A flag is on the board or back with its owner.
        assert len(game.flag_squares(seat)) + game.reserve_flags(seat) == flags_per_seat(n)
        assert game.reserve_flags(seat) >= 0
        # A pawn is on the board, in its reserve, or captured by exactly one other seat.
        taken = [game.captured(c, seat) for c in range(n)]
        assert taken[seat] == 0
        assert len(game.pawn_squares(seat)) + game.reserve_pawns(seat) + sum(taken) == PAWNS
        # Every pawn arrived by a claim, a move or a spawn, each leaving its flag there.
        for sq in game.pawn_squares(seat):
            assert game.flag_at(sq) == seat
    if not (game.options.bonus_highest_tower or game.options.bonus_most_pawns):
        # "1 point for each flag on the board. 1 point for each opponent pawn captured."
        for seat in range(n):
            captures = sum(game.captured(seat, v) for v in range(n))
            assert game.points(seat) == len(game.flag_squares(seat)) + captures
    if game.phase is Phase.PLAY:
        assert game.actions_left in (1, 2)
        assert (game.actions_left == 1) == (game.first_action is not None)


def observable(game: Game) -> tuple:
    return (tuple(game.heights), tuple(game.pawn_at(sq) for sq in range(25)),
            tuple(game.flag_at(sq) for sq in range(25)),
            tuple(game.reserve_pawns(s) for s in range(game.seats)),
            tuple(game.reserve_flags(s) for s in range(game.seats)),
            tuple(game.captured(c, v) for c in range(game.seats) for v in range(game.seats)),
            tuple(game.start(s) for s in range(game.seats)), game.pool, game.phase,
            game.turn, game.actions_left, game.first_action, game.outcome, game.history,
            game.legal_actions, game.seat_points(), game.seats_in)


@settings(max_examples=60, deadline=None)
@given(opts=options(), seed=SEEDS, policy=POLICIES)
def test_every_position_keeps_the_counts_of_the_rule_text(opts, seed, policy):
    for game in playout(opts, seed, policy):
        invariants(game)
    assert game.outcome is not None


@settings(max_examples=60, deadline=None)
@given(opts=options(), seed=SEEDS, policy=POLICIES, leaves=LEAVES)
def test_the_engine_plays_as_the_reference_written_from_the_text(opts, seed, policy, leaves):
    """Legal actions are exactly those the reference allows, and every action (and every
    seat's leaving) leaves both in the same position, with the same ending, scores and
    winners."""
    rng = random.Random(seed)
    game = Game(opts)
    ref = Reference.of(game)
    while True:
        assert set(game.legal_actions) == ref.legal(), game.picture()
        assert ref.same_as(game) == [], game.picture()
        if game.is_over:
            break
        left = maybe_leave(game, rng, leaves)
        if left is not None:
            ref.leave(left[0], left[1].value)
            continue
        action = choose(game, rng, policy)
        game.push(action)
        ref.apply(action)


@settings(max_examples=40, deadline=None)
@given(opts=options(), seed=SEEDS, policy=POLICIES, leaves=LEAVES)
def test_pop_undoes_push_exactly(opts, seed, policy, leaves):
    """Back to the start, or, once a seat has left, back to the position right after the
    last leave (which `pop` does not take back)."""
    rng = random.Random(seed)
    game = Game(opts)
    states = [observable(game)]
    while not game.is_over:
        if maybe_leave(game, rng, leaves) is not None:
            states = [observable(game)]
            continue
        game.push(choose(game, rng, policy))
        states.append(observable(game))
        if rng.random() < 0.2:  # undo and redo now and then, mid-game
            action = game.pop()
            assert observable(game) == states[-2]
            game.push(action)
            assert observable(game) == states[-1]
    if game.outcome is not None and game.outcome.termination in LEAVING:
        return  # (ended by the last leave: final, as SPEC 4.13 says)
    while len(states) > 1:
        states.pop()
        game.pop()
        assert observable(game) == states[-1]
    if game.ply and any(game.has_left(s) for s in range(game.seats)):
        with pytest.raises(TowersError, match="cannot be taken back"):
            game.pop()
        assert observable(game) == states[-1]


@settings(max_examples=40, deadline=None)
@given(opts=options(), seed=SEEDS)
def test_an_illegal_action_is_refused_and_changes_nothing(opts, seed):
    """Every action that is not among the legal ones is refused with a reason, and the
    position stays as it was."""
    rng = random.Random(seed)
    game = Game(opts)
    for _ in range(rng.randrange(0, 60)):
        if game.is_over:
            break
        game.push(rng.choice(game.legal_actions))
    before = observable(game)
    legal = set(game.legal_actions)
    for action in ALL_ACTIONS:
        assert (game.problem(action) is None) == (action in legal), action
        if action not in legal:
            try:
                game.push(action)
            except IllegalActionError as exc:
                assert action.text() in str(exc)
            else:
                raise AssertionError(f"{action} was accepted")
            assert observable(game) == before


@settings(max_examples=40, deadline=None)
@given(opts=options(), seed=SEEDS)
def test_one_seat_that_builds_every_turn_ends_the_game_within_fifty_of_its_turns(opts, seed):
    """However the others stall (here: moving pawns between their own flags, never
    building), a seat that builds at every turn ends the game: each of its turns takes a
    layer from the pool (a pawn on the board can always have one built under it; with none,
    a spawn makes one, and with neither the seat cannot act and the game ends)."""
    rng = random.Random(seed)
    game = Game(opts)
    builder = rng.randrange(opts.seats)
    while game.phase is Phase.SETUP:
        claims = [a for a in game.legal_actions if a.kind is Kind.CLAIM]
        game.push(rng.choice(claims))
    pool_at_start, turns = game.pool, 0
    while not game.is_over:
        seat, legal = game.turn, game.legal_actions
        if seat == builder:
            if game.actions_left == 2:
                turns += 1
            layers = [a for a in legal if a.kind is Kind.LAYER]
            spawns = [a for a in legal if a.kind is Kind.SPAWN]
            game.push(rng.choice(layers or spawns or list(legal)))
            continue
        stall = [a for a in legal if a.kind is Kind.MOVE and a.to is not None
                 and game.flag_at(a.to) == seat]
        calm = [a for a in legal if a.kind is not Kind.LAYER]
        game.push(rng.choice(stall or calm or list(legal)))
    assert turns <= pool_at_start


# -- perft: counts of action sequences from fixed positions ------------------------------

def test_perft_of_the_setup_counts_what_the_text_allows():
    """At the start: a layer on any of the 25 squares, or a claim on any of the 16 border
    squares: 41. After a claim on a border square, the 5 border squares within two steps
    of it (itself included) are out, so every claim leaves 11: in 2 players the last seat
    may still place its one last layer (25 + 11 = 36), in 3 the next seat is not last.
    With `start_gap` 1 a claim shuts out 3 border squares: 13 claims remain."""
    assert perft(Game(), 1) == 25 + 16
    assert perft(Game(), 2) == 25 * 41 + 16 * (25 + 11)
    assert perft(Game(RuleOptions(seats=3)), 2) == 25 * 41 + 16 * (25 + 11)
    assert perft(Game(RuleOptions(seats=4, start_gap=1)), 2) == 25 * 41 + 16 * (25 + 13)


def test_perft_after_the_last_seats_extra_layer_in_two_players():
    """Blue claimed e5, Red (last) placed its one last layer: it must claim now, on one of
    the 11 border squares more than two steps from e5."""
    game = Game()
    for text in ("@e5", "+c3"):
        game.push_text(text)
    assert perft(game, 1) == 11
    assert all(a.kind is Kind.CLAIM for a in game.legal_actions)


def fixed_positions() -> list[Game]:
    """A few positions of the play phase, chosen so that captures, climbs, spawns, the
    second action's limits and the team variant all occur within three actions."""
    towers = Game.from_position(
        heights={"b2": 3, "b3": 1, "c2": 2, "c3": 4, "d4": 1},
        pawns={"b2": 0, "c2": 1, "b3": 1, "c3": 0},
        flags={"b2": 0, "c2": 1, "b3": 1, "c3": 0, "a1": 0, "e5": 1, "d4": 1})
    three = Game.from_position(
        RuleOptions(seats=3),
        heights={"a1": 2, "a2": 1, "b1": 1, "e3": 2},
        pawns={"a1": 0, "a2": 1, "b1": 2, "e3": 2},
        flags={"a1": 0, "a2": 1, "b1": 2, "e3": 2, "c3": 0, "d3": 1})
    teams = Game.from_position(
        RuleOptions(seats=4, teams=True, partners_block=True),
        heights={"c3": 2, "c4": 1, "b3": 1},
        pawns={"c3": 0, "c4": 2, "b3": 1, "d3": 3},
        flags={"c3": 0, "c4": 2, "b3": 1, "d3": 3})
    mid_turn = Game.from_position(
        heights={"a1": 1},
        pawns={"a1": 0, "a2": 0, "e5": 1},
        flags={"a1": 0, "a2": 0, "e5": 1, "b2": 0},
        first=Action.from_text("+a1"))
    return [towers, three, teams, mid_turn]


def test_perft_at_depth_one_counts_by_hand():
    """`towers`, Red to act: the pawn on b2 (height 3) may go to a2 and b1 (empty) and
    take on c2 and b3 (Blue's pawns on 2 and 1 layers: lower); the pawn on c3 (height 4)
    to c4 and d3 (empty: going down any height) and take on c2 and b3; layers under b2
    and c3; a spawn on a1 (Red's flag, no pawn). 4 + 4 + 2 + 1 = 11.
    `mid_turn`, Red's second action after building under a1: no second layer under a1,
    a layer under a2; a1 to b1 (a2 holds Red's own pawn), a2 to a3 and b2; a spawn on b2
    (a Red flag). 1 + 1 + 2 + 1 = 5."""
    towers, _three, _teams, mid_turn = fixed_positions()
    assert perft(towers, 1) == 11
    assert perft(mid_turn, 1) == 5


def test_perft_agrees_with_the_reference_at_depth_three():
    for game in fixed_positions():
        assert perft(game, 3) == reference_perft(Reference.of(game), 3), game.picture()
