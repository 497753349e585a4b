"""The bot worker: the decisions it makes are the bot's own, and a host whose worker fails
plays on without it."""

from __future__ import annotations

import pickle
import random

import pytest
import trio

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.bot_worker import SetupRequest, TurnRequest, ViewDelta, _Games
from p2pgotg.net.play.bot_worker_client import RemoteBotSeat, open_bot_worker
from p2pgotg.players.bot_seat import BotSeat, action_for, rules_to_accept
from p2pgotg.rules import ChallengeMode, FlagRule, RuleOptions, Side
from p2pgotg.testing.pair import Pair

OPTIONS = [
    RuleOptions(),
    RuleOptions(challenge_mode=ChallengeMode.BLIND),
    RuleOptions(flag_rule=FlagRule.IMMEDIATE, two_squares=True, chasing=True),
]


def play(pair: Pair, host_step, joiner_step, max_rounds: int = 5000) -> None:
    """Both seats act in turn, every message delivered at once, until neither acts."""
    pair.host.start()
    pair.deliver()
    for _ in range(max_rounds):
        acted = False
        for peer, step in ((pair.host, host_step), (pair.joiner, joiner_step)):
            action = step(peer)
            if action is not None:
                action(peer)
                pair.deliver()
                acted = True
        if not acted:
            return
    raise AssertionError("the game did not end")


def across_processes(message):
    """What the other process receives: a pickle made when it was sent."""
    return pickle.loads(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def worker_step(seat: RemoteBotSeat, games: _Games):
    def step(peer: GotgPeer):
        request = seat.request(peer)
        if request is None:
            return rules_to_accept(peer)
        return action_for(across_processes(games.answer(across_processes(request))))
    return step


@pytest.mark.parametrize("options", OPTIONS, ids=["open", "blind", "immediate-flag"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_worker_decides_exactly_as_the_bot_in_the_host_would(options, seed):
    # The same game twice from deterministic peers: the host's bot thinking in its own
    # process, then in the worker's code from the deltas it is sent. Every message of the
    # two games is the same, byte for byte: every setup, move, claim and draw answer.
    local = Pair.new(options, seed=f"worker/{seed}")
    play(local, BotSeat(random.Random(seed)).step, BotSeat(random.Random(seed + 100)).step)
    remote = Pair.new(options, seed=f"worker/{seed}")
    play(remote, worker_step(RemoteBotSeat(1, seed), _Games()),
         BotSeat(random.Random(seed + 100)).step)

    assert local.host.flow.is_over and local.host.view is not None
    assert len(local.host.view.history) >= 20  # a real game, not one cut short
    assert remote.log == local.log
    assert remote.host.flow.verdict == local.host.flow.verdict


@pytest.mark.parametrize("level", ["easy", "hard"])
def test_the_worker_plays_each_level_as_the_host_would(level, monkeypatch):
    """The level travels with every request. (The hard level's budget is counted in worlds
    here, with no deadline, so that both runs think exactly alike.)"""
    import p2pgotg.players.bot as bot_module
    from p2pgotg.players.search import Budget

    monkeypatch.setattr(bot_module, "Budget", lambda: Budget(seconds=None, max_worlds=4))
    local = Pair.new(RuleOptions(), seed=f"worker/{level}")
    play(local, BotSeat(random.Random(7), level).step, BotSeat(random.Random(8)).step)
    remote = Pair.new(RuleOptions(), seed=f"worker/{level}")
    seat = RemoteBotSeat(1, 7, level)
    play(remote, worker_step(seat, _Games()), BotSeat(random.Random(8)).step)
    assert local.host.flow.is_over and len(local.host.view.history) >= 10
    assert remote.log == local.log


def test_after_the_first_request_only_what_is_new_is_sent():
    pair = Pair.new(RuleOptions(), seed="worker/delta")
    seat, games = RemoteBotSeat(1, 5), _Games()
    sent: list[SetupRequest | TurnRequest] = []

    def step(peer: GotgPeer):
        request = seat.request(peer)
        if request is None:
            return rules_to_accept(peer)
        sent.append(request)
        return action_for(across_processes(games.answer(across_processes(request))))

    play(pair, step, BotSeat(random.Random(6)).step)
    turns = [r for r in sent if isinstance(r, TurnRequest)]
    assert isinstance(sent[0], SetupRequest) and len(turns) > 10
    assert turns[0].delta.game is not None
    assert all(t.delta.game is None for t in turns[1:])
    # between two of our turns the view gains our move and the opponent's (two plies)
    assert all(len(t.delta.plies) == 2 for t in turns[2:])
    # the mirror ends as the view was at our last decision
    view = pair.host.view
    assert view is not None
    mirror = games.views[1]
    assert mirror.history == view.history[:len(mirror.history)]
    assert len(mirror.history) >= len(view.history) - 2


def test_a_request_the_worker_cannot_answer_is_told_not_raised():
    games = _Games()
    request = TurnRequest(7, 1, 1, Side.WHITE,
                          ViewDelta(), False)
    with pytest.raises(ValueError, match="whole view"):
        games.answer(request)


async def test_the_worker_process_answers_and_a_dead_worker_is_an_answer_not_a_hang():
    pair = Pair.new(RuleOptions(), seed="worker/process")
    seat = RemoteBotSeat(1, 9)
    local = BotSeat(random.Random(9))
    async with open_bot_worker() as worker:
        pair.host.start()
        pair.deliver()
        pair.joiner.accept()
        pair.deliver()
        request = seat.request(pair.host)
        assert isinstance(request, SetupRequest)
        decision = await worker.ask(request)
        expected = local.bot_for(pair.host.side).choose_setup()  # (same seed, same bot)
        assert decision == ("setup", expected)

        bad = await worker.ask(TurnRequest(2, 1, 1, pair.host.side, ViewDelta(), False))
        assert bad[0] == "error" and "whole view" in bad[1]

        worker._process.kill()
        with trio.fail_after(10):
            dead = await worker.ask(request)
        assert dead[0] == "error" and worker.broken is not None
