"""The Towers bot: its levels by name, legal play to the end at every level with 2, 3 and 4
seats and in the team variant, determinism under a fixed seed, the hard search's budget
(nodes, and a deadline through an injected clock), and positions whose right action
follows from the rules (SPEC chapter 4). Strength and time per decision are measured in
bench/bench_towers.py, not here; the games below use small budgets and fixed seeds."""

from __future__ import annotations

import ast
import random
from itertools import count
from pathlib import Path

import pytest

from p2pgotg.games.towers.players import (
    PLAYABLE,
    Budget,
    Level,
    RandomPlayer,
    TowersBot,
    as_level,
    play_game,
)
from p2pgotg.games.towers.players.search import Searcher
from p2pgotg.games.towers.rules import (
    Action,
    CaptureRule,
    Game,
    Kind,
    Phase,
    RuleOptions,
    Termination,
    parse_square,
)

R, B, G, Y = 0, 1, 2, 3
SMALL = Budget(nodes=150, seconds=None)  # reproducible and cheap
PLAYERS = Path(__file__).resolve().parent.parent / "p2pgotg" / "games" / "towers" / "players"


def bot(seat: int, seed: int, level: str, budget: Budget = SMALL) -> TowersBot:
    return TowersBot(seat, random.Random(seed), level, budget)


def test_levels_are_named_and_a_wrong_name_is_refused():
    assert [lv.value for lv in PLAYABLE] == ["easy", "normal", "hard"]
    assert as_level("hard") is Level.HARD and as_level(Level.EASY) is Level.EASY
    with pytest.raises(ValueError, match="is not a Towers bot level"):
        as_level("expert")
    with pytest.raises(ValueError, match="is not a Towers bot level"):
        TowersBot(0, random.Random(1), "Hard")


@pytest.mark.parametrize("options", [
    RuleOptions(), RuleOptions(seats=3), RuleOptions(seats=4),
    RuleOptions(seats=4, teams=True, partners_block=True),
    RuleOptions(capture=CaptureRule.NOT_LOWER, climb_limit=1, descent_limit=2,
                short_turn=True, stuck_loses=True, bonus_highest_tower=True,
                bonus_most_pawns=True),
], ids=["2", "3", "4", "teams", "every-option"])
def test_every_level_plays_legal_actions_to_the_end(options):
    """`play_game` pushes each choice into the real game, which refuses an illegal one."""
    levels = ["hard", "normal", "easy", "random"]
    players = {s: (RandomPlayer(s, random.Random(s)) if levels[s % 4] == "random"
                   else bot(s, s, levels[s % 4])) for s in range(options.seats)}
    result = play_game(players, options)
    assert result.game.is_over and result.game.outcome is not None
    assert all(len(times) > 0 for times in result.seconds.values())


def test_a_bot_acts_only_for_its_seat():
    game = Game()
    with pytest.raises(ValueError, match="not seat 1's turn"):
        bot(1, 1, "normal").choose_action(game)


def test_a_fixed_seed_repeats_a_game_exactly():
    def one_game() -> tuple[Action, ...]:
        players = {R: bot(R, 7, "hard"), B: bot(B, 8, "normal")}
        return play_game(players).game.history

    assert one_game() == one_game()


def test_other_seeds_give_other_games():
    games = {play_game({R: bot(R, seed, "normal"), B: bot(B, seed + 1, "easy")}).game.history
             for seed in range(4)}
    assert len(games) > 1


def test_the_node_budget_bounds_the_search():
    game = midgame()
    searcher = Searcher(game.team(game.turn), Budget(nodes=200, seconds=None))
    searcher.choose(game, random.Random(1))
    assert 0 < searcher.nodes <= 201  # (the node that finds it over counts too)


def test_the_deadline_stops_the_search_through_the_clock_it_is_given():
    """A clock that jumps a second at each reading: the deadline passes at the first check,
    and the search still answers with a legal action of the depths it finished."""
    game = midgame()
    ticks = count()
    searcher = Searcher(game.team(game.turn), Budget(nodes=None, seconds=0.5),
                        clock=lambda: float(next(ticks)))
    action = searcher.choose(game, random.Random(1))
    assert action in game.legal_actions
    assert searcher.nodes < 200


def midgame() -> Game:
    """A position after a few turns of two normal bots."""
    players = {R: bot(R, 3, "normal"), B: bot(B, 4, "normal")}
    game = Game()
    while game.ply < 16:
        game.push(players[game.turn].choose_action(game))
    assert game.phase is Phase.PLAY and not game.is_over
    return game


# -- positions whose right action the rules decide -----------------------------------------

def two(pawns, flags=None, heights=None, **kw) -> Game:
    return Game.from_position(heights=heights, pawns=pawns, flags={**pawns, **(flags or {})},
                              **kw)


def red_turn(game: Game, level: str, seed: int = 1) -> Game:
    """Let a Red bot make its whole turn (or end the game)."""
    red = bot(R, seed, level)
    while not game.is_over and game.turn == R:
        game.push(red.choose_action(game))
    return game


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_the_bot_plants_its_last_flag_when_that_wins(level):
    """Red has one flag left to place and the most points: a step onto any square without
    its flag ends the game (SPEC 4.7) with Red ahead, 13 to 1."""
    flags = {f"{f}1": R for f in "abcde"} | {f"{f}2": R for f in "abcde"} | {"a3": R}
    game = red_turn(two({"c3": R, "e5": B}, flags), level)
    assert game.outcome is not None
    assert game.outcome.termination is Termination.ALL_FLAGS_PLANTED
    assert game.outcome.winners == (R,) and game.outcome.scores == (13, 1)


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_the_bot_takes_a_pawn_from_a_higher_tower(level):
    """Red on 2 layers next to Blue on 1: the capture (a pawn, a flag planted, Blue's flag
    returned) is worth more than anything else Red's turn can do."""
    game = red_turn(two({"c3": R, "c4": B, "a1": B}, heights={"c3": 2, "c4": 1}), level)
    assert game.captured(R, B) == 1 and game.pawn_at(parse_square("c4")) == R


def test_hard_does_not_walk_into_a_capture():
    """Red's pawn on b2 (no layers) could step to b1 or c2, next to Blue's pawn on a
    3-layer tower at c1, which would take it at once (SPEC 4.5); hard steps elsewhere."""
    danger = {parse_square("b1"), parse_square("c2")}
    for seed in range(3):
        game = red_turn(two({"b2": R, "c1": B, "e5": B}, heights={"c1": 3},
                            flags={"a5": R}), "hard", seed)
        assert not danger & set(game.pawn_squares(R)), game.picture()


def test_hard_ends_the_game_with_the_pool_when_ahead():
    """One layer is left in the pool and Red leads 3 to 1: building under its pawn places
    the 50th layer and ends the game with Red ahead (SPEC 4.7); hard does it this turn
    (perhaps after a step that plants one more flag)."""
    game = red_turn(two({"c3": R, "e5": B}, flags={"a1": R, "a2": R}, heights={"b4": 49}),
                    "hard")
    assert game.outcome is not None
    assert game.outcome.termination is Termination.POOL_EMPTY
    assert game.outcome.winners == (R,)


def test_the_last_seat_of_two_raises_its_start_with_its_last_layer():
    """Red claimed; Blue, last, may place one more layer before claiming (SPEC 4.3): the
    bot places it and then claims the very square it raised."""
    game = Game()
    game.push_text("@a1")
    blue = bot(B, 5, "normal")
    first = blue.choose_action(game)
    assert first.kind is Kind.LAYER
    game.push(first)
    second = blue.choose_action(game)
    assert second == Action.claim(first.square)


def test_the_players_import_the_towers_rules_and_nothing_of_the_network_or_screens():
    wrong = []
    for path in sorted(PLAYERS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("p2pgotg"):
                if not node.module.startswith(("p2pgotg.games.towers.rules",
                                               "p2pgotg.games.towers.players")):
                    wrong.append(f"{path.name} imports {node.module}")
            elif isinstance(node, ast.Import):
                wrong += [f"{path.name} imports {a.name}" for a in node.names
                          if a.name.split(".")[0] in ("p2pgotg", "trio", "prompt_toolkit")]
    assert not wrong
