"""The bot's belief about the opponent's ranks: what each kind of evidence allows, the
21-piece set (seed 000's table: 1 of each officer, 6 Privates, 2 Spies, 1 Flag), and that it
never excludes the truth nor depends on ranks the view does not hold.

Challenge results follow seed 000 "Determining result of a Challenge": higher officer wins,
equal ranks split, the Spy beats every officer, only the Private beats the Spy, anything
takes the Flag.
"""

from __future__ import annotations

import random

import pytest

from p2pgotg.players import Belief
from p2pgotg.rules import (
    COMPOSITION,
    ChallengeMode,
    ChallengeResult,
    Game,
    Move,
    Piece,
    Rank,
    RuleOptions,
    Setup,
    Side,
    parse_square,
)

W, B = Side.WHITE, Side.BLACK
BLIND = RuleOptions(challenge_mode=ChallengeMode.BLIND)
OFFICERS_ABOVE_CAPTAIN = {r for r in Rank if r > Rank.CAPTAIN}


def assert_sums(belief: Belief) -> None:
    for piece in belief.pieces:
        assert sum(belief.row(piece)) == pytest.approx(1.0)
    for rank in Rank:
        total = sum(belief.prob(p, rank) for p in belief.pieces)
        assert total == pytest.approx(COMPOSITION[rank], abs=1e-3), rank


def blind_pair(white: dict, black: dict, turn: Side) -> tuple[Game, Game]:
    """(referee, White's blind view) from a position."""
    ref = Game.from_position(
        {k: (W, r) for k, r in white.items()} | {k: (B, r) for k, r in black.items()}, turn, BLIND
    )
    view = Game.from_position(
        {k: (W, r) for k, r in white.items()} | {k: (B, None) for k in black}, turn, BLIND
    )
    return ref, view


def push_both(ref: Game, view: Game, text: str):
    move = Move.parse(text)
    rec = ref.push(move)
    if rec.defender is None:
        view.push(move)
    else:
        view.push(move, rec.result, rec.lost_flag)
    return rec


def test_a_fresh_view_spreads_the_whole_set_over_the_pieces():
    rng = random.Random(3)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    belief = Belief(Game.for_player(white, black.squares), W)
    assert_sums(belief)
    assert all(belief.known(p) is None for p in belief.pieces)
    assert belief.consistent


def test_revealed_ranks_are_certain_and_use_up_the_set():
    rng = random.Random(4)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    view = Game.for_player(white, black.squares)
    spies = [Piece(B, pid) for pid, r in enumerate(black.ranks) if r is Rank.SPY]
    for p in spies:
        view.reveal(p, Rank.SPY)
    belief = Belief(view, W)
    assert all(belief.known(p) is Rank.SPY for p in spies)
    assert all(belief.prob(p, Rank.SPY) == 0 for p in belief.pieces if p not in spies)
    assert_sums(belief)


def test_the_last_unknown_piece_is_whatever_the_set_has_left():
    rng = random.Random(5)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    view = Game.for_player(white, black.squares)
    for pid, rank in enumerate(black.ranks[:-1]):
        view.reveal(Piece(B, pid), rank)
    belief = Belief(view, W)
    assert belief.known(Piece(B, 20)) is black.ranks[-1]


def test_blind_a_piece_that_beat_our_captain_is_above_it_or_a_spy():
    ref, view = blind_pair(
        {"a1": Rank.FLAG, "e4": Rank.CAPTAIN}, {"i8": Rank.FLAG, "e5": Rank.COLONEL}, B
    )
    push_both(ref, view, "e5-e4")
    attacker = view.piece_at(parse_square("e4"))
    belief = Belief(view, W)
    assert set(belief.possible(attacker)) == OFFICERS_ABOVE_CAPTAIN | {Rank.SPY}
    assert_sums(belief)


def test_blind_a_split_names_the_rank_and_our_private_beating_a_piece_names_a_spy():
    ref, view = blind_pair(
        {"a1": Rank.FLAG, "e4": Rank.MAJOR, "c4": Rank.PRIVATE, "h1": Rank.SERGEANT},
        {"i8": Rank.FLAG, "e5": Rank.MAJOR, "c5": Rank.SPY},
        W,
    )
    split = push_both(ref, view, "e4-e5")
    assert split.result is ChallengeResult.BOTH_ELIMINATED
    push_both(ref, view, "i8-h8")
    won = push_both(ref, view, "c4-c5")
    assert won.result is ChallengeResult.ATTACKER_WINS
    belief = Belief(view, W)
    assert belief.known(split.defender) is Rank.MAJOR
    assert belief.known(won.defender) is Rank.SPY
    others = [p for p in belief.pieces if p not in (split.defender, won.defender)]
    assert all(belief.prob(p, Rank.MAJOR) == 0 for p in others)


def test_blind_a_piece_that_lost_attacking_our_private_is_a_spy():
    ref, view = blind_pair(
        {"a1": Rank.FLAG, "e4": Rank.PRIVATE}, {"i8": Rank.FLAG, "e5": Rank.SPY}, B
    )
    rec = push_both(ref, view, "e5-e4")
    assert rec.result is ChallengeResult.DEFENDER_WINS
    assert Belief(view, W).known(rec.piece) is Rank.SPY


def test_a_piece_that_moves_is_less_likely_the_flag_than_one_that_waits_at_the_back():
    rng = random.Random(6)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    view = Game.for_player(white, black.squares)
    view.push(next(m for m in view.legal_moves if not view.is_challenge(m)))
    mover_move = next(
        m for m in view.legal_moves if not view.is_challenge(m) and m.from_square // 9 == 5
    )
    mover = view.piece_at(mover_move.from_square)
    view.push(mover_move)
    belief = Belief(view, W)
    waiting = [p for p in belief.pieces if view.square_of(p) // 9 == 7]
    assert waiting
    assert all(belief.prob(mover, Rank.FLAG) < belief.prob(p, Rank.FLAG) for p in waiting)


def test_the_belief_depends_only_on_what_the_view_shows():
    rng = random.Random(8)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    ranks = list(black.ranks)
    rng.shuffle(ranks)
    other = Setup(B, dict(zip(black.squares, ranks, strict=True)))
    a = Belief(Game.for_player(white, black.squares), W)
    b = Belief(Game.for_player(white, other.squares), W)
    assert a.probs == b.probs and a.domain == b.domain


@pytest.mark.parametrize("mode", list(ChallengeMode))
@pytest.mark.parametrize("seed", range(6))
def test_random_games_never_rule_out_the_true_rank(mode, seed):
    """Random play fed to both views as the driver would; at every step the true rank of
    every opponent piece stays possible and the sums stay right."""
    rng = random.Random(seed)
    options = RuleOptions(challenge_mode=mode)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    ref = Game.from_setups(white, black, options)
    views = {
        W: Game.for_player(white, black.squares, options),
        B: Game.for_player(black, white.squares, options),
    }
    while not ref.is_over and ref.ply < 200:
        move = rng.choice(ref.legal_moves)
        attacker, defender = ref.piece_at(move.from_square), ref.piece_at(move.to_square)
        if defender is not None and mode is ChallengeMode.OPEN:
            for v in views.values():
                v.reveal(attacker, ref.rank_of(attacker))
                v.reveal(defender, ref.rank_of(defender))
        rec = ref.push(move)
        for v in views.values():
            v.push(move, rec.result, rec.lost_flag) if defender else v.push(move)
        if ref.ply % 10 == 0 or defender is not None:
            for side, v in views.items():
                belief = Belief(v, side)
                assert belief.consistent
                for p in belief.pieces:
                    assert ref.rank_of(p) in belief.possible(p)
                    assert belief.prob(p, ref.rank_of(p)) > 0
                assert_sums(belief)


@pytest.mark.parametrize("mode", list(ChallengeMode))
def test_a_belief_lent_the_previous_turns_equals_a_fresh_one(mode):
    """`previous` only saves work: along a random game, the belief built with the last one's
    help is exactly the belief built from scratch, and the help is taken on some turns."""
    rng = random.Random(21)
    options = RuleOptions(challenge_mode=mode)
    white, black = Setup.random(W, rng), Setup.random(B, rng)
    ref = Game.from_setups(white, black, options)
    view = Game.for_player(white, black.squares, options)
    previous = None
    lent = 0
    while not ref.is_over and ref.ply < 200:
        move = rng.choice(ref.legal_moves)
        attacker, defender = ref.piece_at(move.from_square), ref.piece_at(move.to_square)
        if defender is not None and mode is ChallengeMode.OPEN:
            view.reveal(attacker, ref.rank_of(attacker))
            view.reveal(defender, ref.rank_of(defender))
        rec = ref.push(move)
        if defender is None:
            view.push(move)
        else:
            view.push(move, rec.result, rec.lost_flag)
        belief, fresh = Belief(view, W, previous=previous), Belief(view, W)
        assert belief.probs == fresh.probs
        assert (belief.domain, belief.consistent) == (fresh.domain, fresh.consistent)
        lent += previous is not None and previous._prior == belief._prior
        previous = belief
    assert lent > 10
