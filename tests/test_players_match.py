"""The local arbiter (`play_match`): it plays a game to its end, feeds each view only what
the challenge mode shows, and refuses any choice the acting player's view does not allow."""

from __future__ import annotations

import random

import pytest

from p2pgotg.players import (
    Bot,
    ClaimFlag,
    IllegalChoiceError,
    OfferDraw,
    PlayMove,
    Resign,
    play_match,
)
from p2pgotg.rules import (
    ChallengeMode,
    Game,
    Move,
    Piece,
    Rank,
    RuleOptions,
    Setup,
    Side,
    Termination,
    load_formation,
)

W, B = Side.WHITE, Side.BLACK


class Scripted:
    """A player that plays fixed choices, then random legal moves; it answers draw offers
    with `accept`."""

    def __init__(self, side: Side, choices=(), accept: bool = False, setup=None) -> None:
        self.side = side
        self.choices = list(choices)
        self.accept = accept
        self.rng = random.Random(side)
        self.setup = setup or load_formation("balanced", side)
        self.seen_views: list[Game] = []

    def choose_setup(self) -> Setup:
        return self.setup

    def choose(self, view: Game):
        self.seen_views.append(view)
        if self.choices:
            choice = self.choices.pop(0)
            return choice(view) if callable(choice) else choice
        return PlayMove(self.rng.choice(view.legal_moves))

    def after_move_claim(self, view: Game):
        return None

    def wants_draw(self, view: Game) -> bool:
        return self.accept


@pytest.mark.parametrize("mode", list(ChallengeMode))
def test_a_bot_game_runs_to_an_end_with_the_views_checked(mode):
    result = play_match(
        Bot(W, random.Random(1)),
        Bot(B, random.Random(2), level=0),
        RuleOptions(challenge_mode=mode),
    )
    assert result.outcome is not None and result.outcome.termination in {
        Termination.FLAG_CAPTURED,
        Termination.FLAG_REACHED_BACK_RANK,
        Termination.RESIGNATION,
        Termination.DRAW_AGREED,
        Termination.NO_LEGAL_MOVE,
    }
    assert result.plies == result.arbiter.ply == result.views[0].ply == result.views[1].ply
    assert result.challenges == sum(1 for r in result.arbiter.history if r.defender)
    assert sum(result.choices) >= result.plies
    black_view = result.views[1]
    known_white = [p for p in black_view.known_ranks() if p.side is W]
    if mode is ChallengeMode.BLIND:
        # only a claimed flag is ever shown in the blind mode
        assert all(black_view.rank_of(p) is Rank.FLAG for p in known_white)
    else:
        challengers = {
            p
            for r in result.arbiter.history
            if r.defender
            for p in (r.piece, r.defender)
            if p.side is W
        }
        assert challengers <= set(known_white)


def test_an_illegal_move_is_refused():
    bad = Scripted(W, [PlayMove(Move.parse("a1-a8"))])
    with pytest.raises(IllegalChoiceError, match="illegal move"):
        play_match(bad, Scripted(B))


def test_a_flag_claim_that_is_not_valid_is_refused():
    bad = Scripted(W, [ClaimFlag(Piece(W, 0))])
    with pytest.raises(IllegalChoiceError, match="flag"):
        play_match(bad, Scripted(B))


def test_something_that_is_not_a_choice_is_refused():
    with pytest.raises(IllegalChoiceError, match="not a choice"):
        play_match(Scripted(W, ["e3-e4"]), Scripted(B))


def test_a_setup_for_the_wrong_side_is_refused():
    with pytest.raises(IllegalChoiceError, match="own side"):
        play_match(Scripted(W, setup=load_formation("balanced", B)), Scripted(B))


def test_resignation_ends_the_game_in_every_view():
    result = play_match(Scripted(W, [Resign()]), Scripted(B))
    assert result.outcome.termination is Termination.RESIGNATION
    assert result.winner is B
    assert all(v.outcome == result.outcome for v in result.views)


@pytest.mark.parametrize("accept", [True, False])
def test_a_draw_offer_rides_on_a_move_and_the_opponent_answers(accept):
    def first(view):
        return OfferDraw(view.legal_moves[0])

    result = play_match(Scripted(W, [first]), Scripted(B, accept=accept), max_plies=3)
    if accept:
        assert result.outcome.termination is Termination.DRAW_AGREED
        assert result.plies == 1  # the move was played, then the draw agreed
    else:
        assert result.outcome is None and result.plies == 3


def test_the_ply_cap_stops_a_game_without_an_ending():
    result = play_match(Scripted(W), Scripted(B), max_plies=10)
    assert result.outcome is None and result.plies == 10


def test_each_player_only_ever_sees_its_own_view():
    white, black = Scripted(W), Scripted(B)
    result = play_match(white, black, RuleOptions(challenge_mode=ChallengeMode.BLIND), max_plies=40)
    assert all(v is result.views[0] for v in white.seen_views)
    assert all(v is result.views[1] for v in black.seen_views)
    assert result.views[0] is not result.arbiter
