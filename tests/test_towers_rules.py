"""One test per rule of the Towers rulebook (seed `002_836edfe2f167b267.txt`) and per rule
option (SPEC chapter 4), each with its expected values taken from the text."""

from __future__ import annotations

import pytest

from p2pgotg.games.towers.rules import (
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
    parse_square,
)

R, B, G, Y = 0, 1, 2, 3


def play(game: Game, *texts: str) -> Game:
    for text in texts:
        game.push_text(text)
    return game


def refused(game: Game, text: str, why: str) -> None:
    """Not among the legal actions, and pushing it is refused with the rule it breaks."""
    assert Action.from_text(text) not in game.legal_actions
    with pytest.raises(IllegalActionError, match=why):
        game.push_text(text)


def sq(name: str) -> int:
    return parse_square(name)


def legal_texts(game: Game) -> set[str]:
    return {a.text() for a in game.legal_actions}


# -- setup ("Beginning of the game") -----------------------------------------------------

def test_each_colour_takes_6_pawns_and_13_11_or_9_flags():
    for seats, flags in ((2, 13), (3, 11), (4, 9)):
        game = Game(RuleOptions(seats=seats))
        assert flags_per_seat(seats) == flags
        assert [game.reserve_flags(s) for s in range(seats)] == [flags] * seats
        assert [game.reserve_pawns(s) for s in range(seats)] == [6] * seats
    assert Game(RuleOptions(seats=4, teams=True)).reserve_flags(0) == 9
    assert Game().pool == 50


def test_the_setup_goes_round_the_seats_in_order_from_seat_0():
    game = Game(RuleOptions(seats=3))
    assert (game.phase, game.turn) == (Phase.SETUP, R)
    assert [play(game, "+c3").turn, play(game, "+c3").turn, play(game, "+c3").turn] == [B, G, R]
    assert game.height(sq("c3")) == 3 and game.pool == 47


def test_a_layer_may_go_on_any_square_piling_on_another():
    game = play(Game(), "+c3", "+c3", "+a1")
    assert (game.height(sq("c3")), game.height(sq("a1"))) == (2, 1)
    assert len([a for a in Game().legal_actions if a.kind is Kind.LAYER]) == 25


def test_a_claim_marks_the_square_with_one_pawn_and_one_flag():
    game = play(Game(), "@a1")
    assert (game.pawn_at(sq("a1")), game.flag_at(sq("a1")), game.start(R)) == (R, R, sq("a1"))
    assert (game.reserve_pawns(R), game.reserve_flags(R)) == (5, 12)


def test_a_seat_that_claimed_passes_until_everyone_has():
    game = play(Game(RuleOptions(seats=3)), "@a1")
    assert game.turn == B
    play(game, "+c3")
    assert game.turn == G
    play(game, "+c3")
    assert game.turn == B  # (Red passes)


def test_a_starting_square_is_on_the_outer_border():
    game = Game()
    refused(game, "@c3", "outer border")
    refused(game, "@b2", "outer border")
    assert {a.text() for a in game.legal_actions if a.kind is Kind.CLAIM} == {
        f"@{f}{r}" for f in "abcde" for r in "12345" if f in "ae" or r in "15"}


def test_two_starts_are_separated_by_at_least_two_border_squares():
    """a1 claimed: a2 and a3 lie within one border square of it (a3 has only a2 between),
    so do b1 and c1 round the corner; a4 (a2, a3 between) and d1 (b1, c1) are far enough."""
    game = play(Game(RuleOptions(seats=3)), "@a1")
    for near in ("@a2", "@a3", "@b1", "@c1"):
        refused(game, near, "too near the start on a1")
    assert {"@a4", "@d1", "@e5", "@b5"} <= legal_texts(game)
    play(game, "@a4")
    refused(game, "@b5", "too near the start on a4")  # a5 only between b5 and a4
    assert "@c5" in legal_texts(game)


def test_start_gap_1_asks_for_one_border_square_between():
    game = play(Game(RuleOptions(start_gap=1)), "@a1")
    refused(game, "@a2", "at least 1 border squares must lie between")
    refused(game, "@b1", "too near")
    assert {"@a3", "@c1"} <= legal_texts(game)


def test_a_start_may_be_claimed_on_a_tower():
    game = play(Game(), "+a1", "+a1", "@a1")
    assert (game.height(sq("a1")), game.pawn_at(sq("a1"))) == (2, R)


def test_when_all_but_one_have_claimed_the_last_must_claim():
    game = play(Game(RuleOptions(seats=3)), "@a1", "@c5")
    assert game.turn == G
    refused(game, "+c3", "must claim")
    assert all(a.kind is Kind.CLAIM for a in game.legal_actions)
    play(game, "@e1")
    assert game.phase is Phase.PLAY


def test_in_two_players_the_last_may_place_one_last_layer_before_claiming():
    game = play(Game(), "@a1", "+c3")
    assert game.turn == B
    refused(game, "+c3", "must claim")
    play(game, "@e5")
    assert (game.phase, game.turn) == (Phase.PLAY, R)


def test_the_last_may_also_claim_at_once():
    game = play(Game(), "@a1", "@e5")
    assert game.phase is Phase.PLAY and game.pool == 50


def test_the_team_variant_has_no_last_layer_it_is_played_as_four():
    game = play(Game(RuleOptions(seats=4, teams=True)), "@a1", "@c5", "@e1")
    assert game.turn == Y
    refused(game, "+c3", "must claim")


def test_the_first_to_claim_plays_first_then_clockwise():
    game = play(Game(RuleOptions(seats=3)), "+c3", "@a1", "+c3", "@e5", "@e1")
    assert (game.phase, game.turn, game.actions_left) == (Phase.PLAY, B, 2)
    first = game.legal_actions[0]
    game.push(first)
    game.push(next(a for a in game.legal_actions))
    assert game.turn == G


def test_a_setup_that_uses_the_whole_pool_ends_the_game_when_it_is_done():
    """The last layers go in the setup; then every seat must claim, and the game ends at
    once: all 50 layers are placed. One flag each: a tie."""
    game = Game()
    for _ in range(50):
        game.push_text("+c3")
    assert game.pool == 0 and game.turn == R
    assert all(a.kind is Kind.CLAIM for a in game.legal_actions)
    play(game, "@a1", "@e5")
    assert game.outcome is not None
    assert game.outcome.termination is Termination.POOL_EMPTY
    assert game.outcome.scores == (1, 1) and game.outcome.winners == (R, B)


# -- the turn ----------------------------------------------------------------------------

def two(heights=None, pawns=None, flags=None, options=None, **kw) -> Game:
    """A 2-player position in play: flags default to the pawns' squares."""
    pawns = pawns or {}
    return Game.from_position(options, heights=heights, pawns=pawns,
                              flags={**pawns, **(flags or {})}, **kw)


def test_a_turn_is_two_actions_then_the_next_seat_acts():
    game = play(Game(RuleOptions(seats=3)), "@a1", "@c5", "@e1")
    assert (game.turn, game.actions_left) == (R, 2)
    play(game, "+a1")
    assert (game.turn, game.actions_left, game.first_action) == (R, 1, Action.from_text("+a1"))
    play(game, "a1-a2")
    assert (game.turn, game.actions_left, game.first_action) == (B, 2, None)


def test_a_pawn_moves_one_orthogonal_step():
    game = two(pawns={"c3": R, "e5": B})
    assert {a.text() for a in game.legal_actions if a.kind is Kind.MOVE} == {
        "c3-c4", "c3-d3", "c3-c2", "c3-b3"}
    refused(game, "d3-d4", "no pawn on d3")
    refused(game, "e5-e4", "no pawn on e5")  # (Blue's pawn, Red to act)


def test_never_onto_a_square_where_you_already_have_a_pawn():
    game = two(heights={"c3": 3}, pawns={"c3": R, "c4": R, "e5": B})
    refused(game, "c3-c4", "already have a pawn on c4")


def test_onto_an_opponents_pawn_only_from_a_higher_tower():
    game = two(heights={"c3": 2, "c4": 1, "d3": 2, "b3": 3},
               pawns={"c3": R, "c4": B, "d3": B, "b3": B})
    assert "c3-c4" in legal_texts(game)  # 2 over 1
    refused(game, "c3-d3", "only from a higher tower")  # 2 against 2
    refused(game, "c3-b3", "only from a higher tower")  # 2 against 3


def test_a_move_returns_the_flag_there_captures_the_pawn_there_and_plants_a_flag():
    game = two(heights={"c3": 2}, pawns={"c3": R, "c4": B, "a1": B})
    play(game, "c3-c4")
    assert (game.pawn_at(sq("c4")), game.flag_at(sq("c4"))) == (R, R)
    assert game.pawn_at(sq("c3")) is None and game.flag_at(sq("c3")) == R  # left behind
    assert game.captured(R, B) == 1
    assert game.reserve_flags(B) == 13 - 1  # c4's flag went back to Blue
    assert game.reserve_flags(R) == 13 - 2
    assert game.points(R) == 2 + 1 and game.points(B) == 1


def test_a_pawn_climbs_onto_a_taller_empty_tower_and_goes_down_any_height():
    game = two(heights={"c4": 7, "b3": 0, "c3": 0, "a1": 9}, pawns={"c3": R, "a1": R, "e5": B})
    assert {"c3-c4", "a1-a2", "a1-b1"} <= legal_texts(game)


def test_a_move_onto_an_opponents_flag_alone_takes_the_square():
    game = two(pawns={"c3": R, "e5": B}, flags={"c4": B})
    assert game.points(B) == 2
    play(game, "c3-c4")
    assert (game.flag_at(sq("c4")), game.reserve_flags(B), game.points(B)) == (R, 12, 1)


def test_a_move_onto_ones_own_flag_changes_no_count():
    game = two(pawns={"c3": R, "e5": B}, flags={"c4": R})
    play(game, "c3-c4")
    assert (game.reserve_flags(R), game.points(R)) == (11, 2)


def test_a_layer_is_built_only_under_ones_own_pawn():
    game = two(pawns={"c3": R, "c4": B})
    refused(game, "+b2", "only under one of your pawns; b2 has none")
    refused(game, "+c4", "only under one of your pawns")
    play(game, "+c3")
    assert (game.height(sq("c3")), game.pool) == (1, 49)


def test_a_pawn_is_spawned_from_the_reserve_onto_an_own_flag_with_no_pawn():
    game = two(pawns={"c3": R, "c4": B}, flags={"a1": R, "e5": B})
    assert {a.text() for a in game.legal_actions if a.kind is Kind.SPAWN} == {"*a1"}
    refused(game, "*c3", "already holds a pawn")
    refused(game, "*e5", "only on one of your flags")
    refused(game, "*b2", "only on one of your flags")
    play(game, "*a1")
    assert (game.pawn_at(sq("a1")), game.reserve_pawns(R)) == (R, 4)


def test_no_spawn_once_the_reserve_is_empty():
    game = two(pawns={"c3": R, "c4": B}, flags={"a1": R}, reserve_pawns=[0, 5])
    refused(game, "*a1", "no pawn left in your reserve")


def test_the_same_action_twice_needs_two_different_pawns():
    game = two(pawns={"c3": R, "a1": R, "e5": B})
    play(game, "c3-c4")
    refused(game, "c4-c5", "two different pawns")
    assert "a1-a2" in legal_texts(game)
    game.pop()
    play(game, "+c3")
    refused(game, "+c3", "two different pawns")
    play(game, "+a1")
    assert game.turn == B


def test_two_spawns_in_one_turn_are_two_different_pawns():
    game = two(pawns={"c3": R, "e5": B}, flags={"a1": R, "b1": R})
    play(game, "*a1", "*b1")
    assert game.reserve_pawns(R) == 3 and game.turn == B


def test_two_different_actions_may_use_the_same_pawn():
    play(two(pawns={"c3": R, "e5": B}), "c3-c4", "+c4")
    play(two(pawns={"c3": R, "e5": B}), "+c3", "c3-c4")
    game = play(two(pawns={"c3": R, "e5": B}, flags={"a1": R}), "*a1", "a1-a2")
    assert game.pawn_at(sq("a2")) == R


# -- the end -----------------------------------------------------------------------------

def test_the_game_ends_at_once_when_the_50th_layer_is_placed():
    game = two(heights={"c3": 49}, pawns={"c3": R, "e5": B, "e4": B})
    play(game, "+c3")
    outcome = game.outcome
    assert outcome is not None and game.is_over and game.legal_actions == ()
    assert (outcome.termination, outcome.scores, outcome.winners) == (
        Termination.POOL_EMPTY, (1, 2), (B,))
    refused(game, "c3-c4", "the game is over")


def test_the_game_ends_at_once_when_a_seat_has_placed_all_its_flags():
    flags = {f"{f}1": R for f in "abcde"} | {f"{f}2": R for f in "abcde"} | {"a3": R}
    game = two(pawns={"c3": R, "e5": B}, flags=flags)  # 12 of Red's 13 flags placed
    play(game, "c3-c4")
    assert game.outcome is not None
    assert (game.outcome.termination, game.outcome.seat) == (Termination.ALL_FLAGS_PLANTED, R)
    assert game.outcome.scores == (13, 1) and game.outcome.winners == (R,)


def test_a_seat_that_can_do_none_of_the_three_ends_the_game():
    """Blue has no pawn on the board and none it could spawn: when its turn comes, the game
    ends, and the points decide (Blue has the more)."""
    game = two(pawns={"c3": R}, flags={"a1": B, "a2": B, "a3": B}, reserve_pawns=[5, 0],
               captures={(B, R): 0})
    play(game, "+c3", "c3-c4")
    assert game.outcome is not None
    assert (game.outcome.termination, game.outcome.seat) == (Termination.NO_ACTION, B)
    assert game.outcome.scores == (2, 3) and game.outcome.winners == (B,)


def boxed_in(options: RuleOptions | None = None) -> Game:
    """Red's only pawn sits in a1 under Blue's pawns on two taller towers, its reserve
    empty: it can build under a1 and then do nothing else."""
    return two(heights={"a2": 3, "b1": 3}, pawns={"a1": R, "a2": B, "b1": B},
               reserve_pawns=[0, 4], captures={(B, R): 5}, options=options)


def test_a_seat_with_no_second_action_ends_the_game():
    game = boxed_in()
    assert legal_texts(game) == {"+a1"}
    play(game, "+a1")
    assert game.outcome is not None
    assert (game.outcome.termination, game.outcome.seat) == (Termination.NO_ACTION, R)


def test_short_turn_lets_a_seat_with_no_second_action_end_its_turn():
    game = play(boxed_in(RuleOptions(short_turn=True)), "+a1")
    assert not game.is_over
    assert (game.turn, game.actions_left) == (B, 2)


def test_by_default_the_stuck_seat_may_still_win_on_points():
    game = two(pawns={"c3": R}, flags={"a1": B, "a2": B, "a3": B}, reserve_pawns=[5, 0])
    play(game, "+c3", "c3-c4")
    assert game.outcome is not None and game.outcome.winners == (B,)


def test_stuck_loses_makes_the_stuck_seat_lose_whatever_its_points():
    game = two(pawns={"c3": R}, flags={"a1": B, "a2": B, "a3": B}, reserve_pawns=[5, 0],
               options=RuleOptions(stuck_loses=True))
    play(game, "+c3", "c3-c4")
    assert game.outcome is not None
    assert game.outcome.scores == (2, 3) and game.outcome.winners == (R,)


def test_equal_points_are_a_tie_between_those_with_the_most():
    game = Game.from_position(RuleOptions(seats=3), heights={"c3": 49},
                              pawns={"c3": R, "a1": B, "e5": G}, flags={
                                  "c3": R, "a1": B, "e5": G, "a2": B, "e4": G})
    play(game, "+c3")
    outcome = game.outcome
    assert outcome is not None and outcome.winners == (B, G) and outcome.is_tie
    assert outcome.describe() == "tie between Blue / Green, 1-2-2 (all 50 layers placed)"


# -- the bonuses -------------------------------------------------------------------------

def test_bonus_highest_tower_goes_to_the_one_seat_holding_the_tallest_tower():
    on = RuleOptions(bonus_highest_tower=True)
    alone = two(heights={"c3": 4, "e5": 2}, pawns={"c3": R, "e5": B}, options=on)
    assert (alone.points(R), alone.points(B)) == (2, 1)
    shared = two(heights={"c3": 4, "e5": 4}, pawns={"c3": R, "e5": B}, options=on)
    assert (shared.points(R), shared.points(B)) == (1, 1)
    unheld = two(heights={"c3": 1, "b2": 4}, pawns={"c3": R, "e5": B}, options=on)
    assert (unheld.points(R), unheld.points(B)) == (1, 1)
    assert two(heights={"c3": 4}, pawns={"c3": R, "e5": B}).points(R) == 1  # off


def test_bonus_most_pawns_goes_to_the_one_seat_with_the_most_pawns_on_the_board():
    on = RuleOptions(bonus_most_pawns=True)
    more = two(pawns={"c3": R, "c4": R, "e5": B}, options=on)
    assert (more.points(R), more.points(B)) == (3, 1)
    level = two(pawns={"c3": R, "e5": B}, options=on)
    assert (level.points(R), level.points(B)) == (1, 1)


# -- the options that read the missing diagrams otherwise --------------------------------

def test_capture_not_lower_takes_from_a_tower_as_tall():
    game = two(heights={"c3": 2, "c4": 2, "c2": 3}, pawns={"c3": R, "c4": B, "c2": B},
               options=RuleOptions(capture=CaptureRule.NOT_LOWER))
    assert "c3-c4" in legal_texts(game)
    refused(game, "c3-c2", "at least as high")


def test_climb_limit_bounds_how_far_a_move_climbs():
    game = two(heights={"c4": 2, "d3": 1}, pawns={"c3": R, "e5": B},
               options=RuleOptions(climb_limit=1))
    refused(game, "c3-c4", "climbs at most 1")
    assert "c3-d3" in legal_texts(game)


def test_descent_limit_bounds_how_far_a_move_goes_down_captures_too():
    game = two(heights={"c3": 3, "c2": 1, "c4": 2, "d3": 1},
               pawns={"c3": R, "c2": B, "c4": B, "e5": B},
               options=RuleOptions(descent_limit=1))
    refused(game, "c3-d3", "goes down at most 1")
    refused(game, "c3-c2", "goes down at most 1")
    assert "c3-c4" in legal_texts(game)


def team_position(options: RuleOptions) -> Game:
    return Game.from_position(options, heights={"c3": 2},
                              pawns={"c3": R, "c4": G, "a1": B, "e5": Y},
                              flags={"c3": R, "c4": G, "a1": B, "e5": Y})


def test_in_the_team_variant_a_partners_pawn_is_taken_like_any_other_by_default():
    game = play(team_position(RuleOptions(seats=4, teams=True)), "c3-c4")
    assert game.captured(R, G) == 1
    assert game.team_points() == (3, 2)  # Red 2 flags + 1 capture, Green 0; Blue, Yellow 1


def test_partners_block_keeps_a_partners_pawn_like_ones_own():
    game = team_position(RuleOptions(seats=4, teams=True, partners_block=True))
    refused(game, "c3-c4", "partner's pawn")


def test_the_team_variant_sums_points_by_team_and_plays_colours_in_turn():
    game = play(Game(RuleOptions(seats=4, teams=True)), "@a1", "@c5", "@e1", "@a4")
    assert [game.team(s) for s in range(4)] == [0, 1, 0, 1]
    play(game, "a1-a2", "+a2")
    assert game.turn == B
    assert game.team_points() == (3, 2)  # Red's a1 and a2 and Green's e1; Blue's, Yellow's
    play(game, "+c5", "c5-b5", "+e1", "e1-d1", "+a4", "a4-a3")
    assert game.turn == R


def test_a_team_victory_names_both_colours():
    game = Game.from_position(RuleOptions(seats=4, teams=True), heights={"c3": 2, "d1": 47},
                              pawns={"c3": R, "c4": G, "a1": B, "e5": Y},
                              flags={"c3": R, "c4": G, "a1": B, "e5": Y, "b2": G})
    play(game, "+c3")
    assert game.outcome is not None
    assert game.outcome.describe() == "Red and Green win 3-2 (all 50 layers placed)"


# -- positions and errors ----------------------------------------------------------------

def test_from_position_refuses_what_no_game_reaches():
    with pytest.raises(TowersError, match="stands on no flag of its own"):
        Game.from_position(pawns={"c3": R}, flags={"c3": B})
    with pytest.raises(TowersError, match="more than the 50 layers"):
        Game.from_position(heights={"c3": 51})
    with pytest.raises(TowersError, match="more flags than it owns"):
        Game.from_position(flags={sq: R for sq in range(14)})
    with pytest.raises(TowersError, match="more than 6 pawns"):
        Game.from_position(pawns={"c3": R}, flags={"c3": R}, captures={(B, R): 6})
    with pytest.raises(TowersError, match="no seat 2"):
        Game.from_position(pawns={"c3": 2}, flags={"c3": 2})


def test_pop_with_nothing_to_take_back_says_so():
    with pytest.raises(TowersError, match="no action to take back"):
        Game().pop()


def test_parse_reads_a_legal_action_and_names_the_rule_an_illegal_one_breaks():
    game = play(Game(), "@a1", "@e5")
    assert game.parse(" A1-a2 ") == Action.from_text("a1-a2")
    with pytest.raises(IllegalActionError, match="in the setup, not in play"):
        game.parse("@a1")


def test_endings_outside_the_rules_are_declared_with_their_winners_and_are_final():
    game = play(Game(), "@a1", "@e5", "a1-a2")
    outcome = game.resign(R)
    assert (outcome.termination, outcome.winners, outcome.seat) == (
        Termination.RESIGNATION, (B,), R)
    assert outcome.scores == (2, 1) and game.legal_actions == ()
    assert outcome.describe() == "Blue wins 2-1 (resignation)"
    with pytest.raises(TowersError, match="cannot be taken back"):
        game.pop()
    drawn = play(Game(), "@a1", "@e5")
    assert drawn.end(Termination.DRAW_AGREED, []).describe() == "draw 1-1 (draw agreed)"
    with pytest.raises(TowersError, match="decided by the rules"):
        Game().end(Termination.POOL_EMPTY, [0])
    with pytest.raises(TowersError, match="more than two teams"):
        Game(RuleOptions(seats=3)).resign(0)
