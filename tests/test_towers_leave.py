"""A seat that leaves a Towers game of three or four seats, and the game goes on (SPEC 4.13;
seed `002_836edfe2f167b267.txt` for every count): its pieces stay, it takes no turns, it
cannot win. Hand-built positions, each expected value worked out from the text."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games.towers.players import Budget, RandomPlayer, TowersBot, play_game
from p2pgotg.games.towers.rules import (
    Action,
    Game,
    IllegalActionError,
    Kind,
    Phase,
    RuleOptions,
    Termination,
    TowersError,
    parse_square,
)

R, B, G, Y = 0, 1, 2, 3
THREE = RuleOptions(seats=3)
TEAMS = RuleOptions(seats=4, teams=True)


def play(game: Game, *texts: str) -> Game:
    for text in texts:
        game.push_text(text)
    return game


def sq(name: str) -> int:
    return parse_square(name)


def claims(game: Game) -> set[str]:
    return {a.text() for a in game.legal_actions if a.kind is Kind.CLAIM}


def state(game: Game) -> tuple:
    return (tuple(game.heights), tuple(game.pawn_owners), tuple(game.flag_owners),
            tuple(game.capture_table), game.phase, game.turn, game.actions_left,
            game.first_action, game.outcome, game.history, game.legal_actions,
            game.seats_in, tuple(game.reserve_flags(s) for s in range(game.seats)))


# -- the setup ---------------------------------------------------------------------------

def test_the_seat_to_act_leaves_before_claiming_and_the_setup_goes_on_without_it():
    """Red leaves at once: Blue acts; once Blue has claimed, Green is the only seat still
    in that has not, so it must claim (T7); play begins with Blue, the first to claim (T9),
    and goes Blue, Green, Blue: Red never acts and never has a start."""
    game = Game(THREE)
    assert game.leave(R, Termination.RESIGNATION) is None
    assert (game.phase, game.turn, game.seats_in) == (Phase.SETUP, B, (B, G))
    assert game.has_left(R) and not game.has_left(B)
    play(game, "@a1")
    assert game.turn == G
    assert all(a.kind is Kind.CLAIM for a in game.legal_actions)
    with pytest.raises(IllegalActionError, match="last seat to claim must claim"):
        game.push_text("+c3")
    play(game, "@e5")
    assert (game.phase, game.turn, game.actions_left) == (Phase.PLAY, B, 2)
    play(game, "+a1", "a1-a2")
    assert game.turn == G
    play(game, "+e5", "e5-e4")
    assert game.turn == B
    assert game.start(R) is None and game.pawn_squares(R) == ()
    assert (game.reserve_pawns(R), game.reserve_flags(R)) == (6, 11)


def test_a_start_claimed_by_a_seat_that_left_still_keeps_others_away():
    """Red claimed a1 and Blue c5, then Red leaves while Green is to act. Green is the last
    seat still in without a start: only claims, on border squares with at least two border
    squares between them and a1 (Red's start stays) and c5: a4, e4, e3, e2, e1, d1. Play
    then begins with Blue, the first seat still in from Red, the first claimer."""
    game = play(Game(THREE), "@a1", "@c5")
    assert game.leave(R, Termination.ABANDONMENT) is None
    assert (game.phase, game.turn) == (Phase.SETUP, G)
    assert {a.text() for a in game.legal_actions} == {"@a4", "@e4", "@e3", "@e2", "@e1", "@d1"}
    with pytest.raises(IllegalActionError, match="too near the start on a1"):
        game.push_text("@c1")
    play(game, "@e3")
    assert (game.phase, game.turn, game.actions_left) == (Phase.PLAY, B, 2)
    assert (game.start(R), game.pawn_at(sq("a1")), game.flag_at(sq("a1"))) == (sq("a1"), R, R)


def test_the_last_seat_to_claim_leaves_and_play_begins_with_the_first_claimer():
    game = play(Game(THREE), "@a1", "@c5")
    assert game.leave(G, Termination.TIME_FORFEIT) is None
    assert (game.phase, game.turn, game.actions_left) == (Phase.PLAY, R, 2)
    assert game.start(G) is None


def test_in_the_team_variant_a_seat_leaving_in_the_setup_makes_the_next_one_last():
    """Four colours, no last layer (T25). Red claims, Blue leaves: of the seats still in,
    Green and Yellow have not claimed, so Green may still place a layer; after Green
    claims, Yellow is the last and must claim."""
    game = play(Game(TEAMS), "@a1")
    game.leave(B, Termination.RESIGNATION)
    assert game.turn == G and Action.from_text("+c3") in game.legal_actions
    play(game, "@e1")
    assert game.turn == Y and all(a.kind is Kind.CLAIM for a in game.legal_actions)


# -- play --------------------------------------------------------------------------------

def started() -> Game:
    """Three seats in play, Red to act: starts a1, c5, e1."""
    return play(Game(THREE), "@a1", "@c5", "@e1")


def test_the_seat_to_act_leaves_mid_turn_and_the_next_seat_gets_a_fresh_turn():
    game = play(started(), "+a1")
    assert game.leave(R, Termination.ABANDONMENT) is None
    assert (game.turn, game.actions_left, game.first_action) == (B, 2, None)
    assert (game.height(sq("a1")), game.pawn_at(sq("a1")), game.flag_at(sq("a1"))) == (1, R, R)
    play(game, "+c5", "c5-d5")
    assert game.turn == G
    play(game, "+e1", "e1-d1")
    assert (game.turn, game.actions_left) == (B, 2)


def test_a_seat_not_to_act_leaves_and_is_skipped_when_the_turn_passes():
    game = started()
    assert game.leave(B, Termination.RESIGNATION) is None
    assert (game.turn, game.actions_left) == (R, 2)
    play(game, "+a1", "a1-a2")
    assert game.turn == G
    play(game, "+e1", "e1-d1")
    assert game.turn == R


def test_when_one_seat_alone_is_still_in_it_wins_whatever_the_points():
    """Red has planted a second flag (2 points against 1 and 1); Blue leaves, then Red: Green
    alone is still in, and wins by the termination of the last to leave."""
    game = play(started(), "+a1", "a1-a2")
    assert game.leave(B, Termination.RESIGNATION) is None
    assert game.turn == G
    outcome = game.leave(R, Termination.TIME_FORFEIT)
    assert outcome is not None and game.outcome == outcome and game.is_over
    assert (outcome.termination, outcome.winners, outcome.seat) == (
        Termination.TIME_FORFEIT, (G,), R)
    assert outcome.scores == (2, 1, 1)
    assert outcome.describe() == "Green wins 2-1-1 (time forfeit)"
    assert game.legal_actions == ()
    with pytest.raises(TowersError, match="the game is over"):
        game.leave(G, Termination.RESIGNATION)
    with pytest.raises(TowersError, match="cannot be taken back"):
        game.pop()


def test_with_two_seats_a_leave_ends_the_game_as_a_resignation():
    outcome = play(Game(), "@a1", "@e5").leave(R, Termination.RESIGNATION)
    assert outcome is not None
    assert (outcome.winners, outcome.seat, outcome.scores) == ((B,), R, (1, 1))


def test_in_the_team_variant_a_team_is_out_only_when_both_its_seats_left():
    game = play(Game(TEAMS), "@a1", "@c5", "@e1", "@a4")
    assert game.leave(B, Termination.RESIGNATION) is None
    assert game.seats_in == (R, G, Y)
    play(game, "+a1", "a1-a2")
    assert game.turn == G
    play(game, "+e1", "e1-d1")
    assert game.turn == Y
    outcome = game.leave(Y, Termination.ABANDONMENT)
    assert outcome is not None
    assert (outcome.termination, outcome.winners, outcome.seat) == (
        Termination.ABANDONMENT, (0,), Y)
    assert outcome.describe() == "Red and Green win 4-2 (abandonment)"


# -- what stays on the board -------------------------------------------------------------

def left_blue() -> Game:
    """Red to act with pawns on a2 (1 layer) and c2; Blue, gone, has a pawn on b2 and a flag
    alone on c3; Green a pawn on e5."""
    game = Game.from_position(
        THREE, heights={"a2": 1},
        pawns={"a2": R, "c2": R, "b2": B, "e5": G},
        flags={"a2": R, "c2": R, "b2": B, "c3": B, "e5": G})
    game.leave(B, Termination.RESIGNATION)
    return game


def test_a_left_seats_pawn_still_blocks_and_is_captured_and_scored_and_its_flag_goes_home():
    """Blue's pawn on b2 still blocks a move from a tower no higher (c2, 0 layers, T17); from
    a2 (1 layer) Red takes it (T19): Red scores the capture and plants a flag, Blue's flag
    goes back to its reserve. Red's c2 pawn then steps onto Blue's flag alone on c3: that
    flag goes back too. Blue: 11 flags, 2 on the board, back to 11 in reserve, 0 points;
    its 5 reserve pawns stay unused."""
    game = left_blue()
    with pytest.raises(IllegalActionError, match="only from a higher tower"):
        game.push_text("c2-b2")
    play(game, "a2-b2")
    assert (game.captured(R, B), game.pawn_at(sq("b2")), game.flag_at(sq("b2"))) == (1, R, R)
    assert game.reserve_flags(B) == 10
    play(game, "c2-c3")
    assert (game.flag_at(sq("c3")), game.reserve_flags(B)) == (R, 11)
    assert game.seat_points() == (4 + 1, 0, 1)
    assert game.turn == G and game.reserve_pawns(B) == 5


def test_the_winners_leave_out_a_seat_that_left_with_the_most_points():
    """The 50th layer ends the game (T22): Red 1 point, Blue (gone) 3, Green 2: Green wins
    and Blue's 3 points are still shown."""
    game = Game.from_position(
        THREE, heights={"c3": 49}, pawns={"c3": R, "a1": B, "e5": G},
        flags={"c3": R, "a1": B, "a2": B, "a3": B, "e5": G, "e4": G})
    game.leave(B, Termination.ABANDONMENT)
    play(game, "+c3")
    outcome = game.outcome
    assert outcome is not None
    assert (outcome.termination, outcome.scores, outcome.winners) == (
        Termination.POOL_EMPTY, (1, 3, 2), (G,))


def stuck_green(turn: int) -> Game:
    """Green has no pawn on the board and none in reserve (its 6 taken by no one): when its
    turn comes it can do none of the three actions (T13)."""
    return Game.from_position(
        THREE, pawns={"c3": R, "a1": B}, flags={"c3": R, "a1": B, "e5": G},
        reserve_pawns=[5, 5, 0], turn=turn)


def test_a_seat_that_left_ends_nothing_by_being_stuck():
    control = play(stuck_green(B), "+a1", "a1-a2")
    assert control.outcome is not None
    assert (control.outcome.termination, control.outcome.seat) == (Termination.NO_ACTION, G)
    game = stuck_green(B)
    game.leave(G, Termination.TIME_FORFEIT)
    play(game, "+a1", "a1-a2")
    assert not game.is_over and (game.turn, game.actions_left) == (R, 2)


def test_a_leave_that_passes_the_turn_to_a_stuck_seat_ends_the_game_no_action():
    """Blue leaves on its turn; Green, next, cannot act: the game ends no_action naming
    Green, and the winners are those with the most points among Red and Green (1 each)."""
    outcome = stuck_green(B).leave(B, Termination.RESIGNATION)
    assert outcome is not None
    assert (outcome.termination, outcome.seat, outcome.scores, outcome.winners) == (
        Termination.NO_ACTION, G, (1, 1, 1), (R, G))


# -- refusals, pop and copy --------------------------------------------------------------

def test_a_leave_that_is_no_leave_is_refused_and_changes_nothing():
    game = started()
    before = state(game)
    for termination in (Termination.DRAW_AGREED, Termination.POOL_EMPTY,
                        Termination.NO_ACTION, Termination.ALL_FLAGS_PLANTED):
        with pytest.raises(TowersError, match=f"not {termination.value}"):
            game.leave(R, termination)
    for seat in (3, -1, True):
        with pytest.raises(TowersError, match="no seat"):
            game.leave(seat, Termination.RESIGNATION)
    assert state(game) == before
    game.leave(B, Termination.RESIGNATION)
    with pytest.raises(TowersError, match="Blue has already left"):
        game.leave(B, Termination.RESIGNATION)


def test_pop_takes_back_what_came_after_a_leave_and_nothing_before():
    game = play(started(), "+a1")
    game.leave(B, Termination.RESIGNATION)
    after_leave = state(game)
    with pytest.raises(TowersError, match="before a seat left cannot be taken back"):
        game.pop()
    assert state(game) == after_leave
    play(game, "a1-a2", "+e1")
    game.pop()
    game.pop()
    assert state(game) == after_leave


def test_a_copy_keeps_who_left():
    game = started()
    game.leave(B, Termination.RESIGNATION)
    twin = game.copy()
    assert (twin.seats_in, twin.has_left(B)) == ((R, G), True)
    play(twin, "+a1", "a1-a2")
    assert twin.turn == G and game.turn == R


# -- the bot -----------------------------------------------------------------------------

class StillIn:
    """A player that checks, whenever it is asked to act, that its seat is still in."""

    def __init__(self, player: RandomPlayer | TowersBot) -> None:
        self.player = player

    def choose_action(self, game: Game) -> Action:
        assert not game.has_left(game.turn)
        return self.player.choose_action(game)


@pytest.mark.parametrize("seats", [3, 4])
def test_the_hard_bot_plays_legal_actions_after_others_leave(seats):
    """Seats other than the bot's leave at random moments, in the setup and in play; every
    action the bot and the others choose is pushed (a rule broken raises), a seat that
    left is never asked to act, and the game ends with a winner still in."""
    for seed in range(3):
        rng = random.Random(seed)
        players = {s: StillIn(RandomPlayer(s, random.Random(100 + s))) for s in range(seats)}
        players[0] = StillIn(TowersBot(0, random.Random(seed), "hard",
                                       Budget(nodes=120, seconds=None)))
        plies = rng.sample(range(1, 36), seats - 2)  # (these games last 39 to 62)
        leaves = dict(zip(plies, rng.sample(range(1, seats), seats - 2), strict=True))
        game = play_game(players, RuleOptions(seats=seats), leaves=leaves).game
        assert game.outcome is not None
        assert all(not game.has_left(s) for s in game.outcome.winners)
        gone = {s for s in range(seats) if game.has_left(s)}
        assert {s for p, s in leaves.items() if p < game.ply} <= gone <= set(leaves.values())


def test_the_bot_plays_against_the_seats_still_in_not_one_that_left():
    """Blue left with the most points (5 flags); Red's pawn on c3 may step onto Blue's flag
    on c4 or Green's on c2, each planting a Red flag (T19). Blue cannot win (SPEC 4.13), so
    the game is Red's against Green's: only the step onto c2 narrows Green's lead over Red.
    Both levels that read the evaluation take it."""
    def position() -> Game:
        game = Game.from_position(
            THREE, pawns={"c3": R, "a5": B, "e1": G},
            flags={"c3": R, "c4": B, "a5": B, "a4": B, "b5": B, "b4": B,
                   "c2": G, "e1": G, "e2": G})
        game.leave(B, Termination.RESIGNATION)
        return game

    for level in ("normal", "hard"):
        for seed in range(3):
            bot = TowersBot(R, random.Random(seed), level, Budget(nodes=400, seconds=None))
            assert bot.choose_action(position()).text() == "c3-c2", (level, seed)
