"""Towers over the fair-play kernel (SPEC 4.11): honest games agree on both sides and in
`verify`, and every lie named in SPEC 4.11's table is convicted with the liar's message."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games import module_for, replay
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.games.towers.bot_seat import TowersBotSeat
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules.actions import Action, Kind
from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.rules.outcome import Termination
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.protocol.errors import LocalProtocolError, RemoteProtocolError
from p2pgotg.protocol.events import DrawDeclined, DrawOffered, Event, GameEnded
from p2pgotg.protocol.peer import Peer
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.testing.forging import forge
from p2pgotg.testing.pair import TLS_FP, DetRand, det_key
from p2pgotg.testing.towers import Table


def _transcript(peer: Peer) -> Transcript:
    return Transcript(peer.role, peer.public_key,
                      [("msg", role, data) for role, data in peer.flow.transcript])


def test_hello_names_towers_and_the_coin_chooses_who_sets_up_first() -> None:
    table = Table()
    assert table.host.flow.hellos[HOST]["rules"] == "towers"
    assert module_for("towers").peer is TowersPeer
    first = table.host.flow.first
    assert first is not None and first == table.joiner.flow.first
    # seed 002: "in clockwise order" from the first player; SPEC 4.11: the coin's winner
    assert table.to_act().role == first
    assert table.host.my_seats == ((0,) if first == HOST else (1,))


@pytest.mark.parametrize("options", [RuleOptions(), RuleOptions(seats=4, teams=True)],
                         ids=["two colours", "two colours each"])
@pytest.mark.parametrize("seed", range(4))
def test_honest_games_end_with_one_verdict_on_both_sides_and_in_verify(
        options: RuleOptions, seed: int) -> None:
    table = Table(options, seed=f"honest/{seed}")
    played = table.play_random(random.Random(seed))
    host, joiner = table.host.flow, table.joiner.flow
    assert host.is_over and host.verdict is not None
    assert host.verdict == joiner.verdict and host.verdict.clean
    # the result is the rules engine's, replayed apart from the protocol
    game = Game(options)
    for action in played:
        game.push(action)
    outcome = game.outcome
    assert outcome is not None and host.result is not None
    assert host.result[0] is outcome.termination
    winners = outcome.winners
    expected = None if len(winners) != 1 else (
        host.first if winners[0] == 0 else (JOINER if host.first == HOST else HOST))
    assert host.result[1] == expected
    for peer in (table.host, table.joiner):
        report = replay(_transcript(peer))
        assert int(report.finding) == 0
        assert report.verdict == host.verdict


def test_two_colours_each_alternate_players_and_colours() -> None:
    table = Table(RuleOptions(seats=4, teams=True), seed="teams")
    first = table.host.flow.first
    second = JOINER if first == HOST else HOST
    seats = []
    for _ in range(8):  # the setup: seats 0, 1, 2, 3 in turn, each one choice
        peer = table.to_act()
        assert peer.view is not None
        seats.append((peer.role, peer.view.turn))
        peer.act(next(a for a in peer.view.legal_actions if a.kind is Kind.LAYER))
        table.deliver()
    assert seats[:4] == [(first, 0), (second, 1), (first, 2), (second, 3)]


def _into_play(table: Table) -> None:
    table.play("@a1")
    table.play("@e5")


def _act(peer: TowersPeer, offer_draw: bool = False) -> list[Event]:
    """`peer` makes its first legal action (in code order)."""
    assert peer.view is not None
    return peer.act(peer.view.legal_actions[0], offer_draw)


def test_a_draw_offer_rides_on_an_action_and_is_accepted_on_the_other_turn() -> None:
    table = Table(seed="draw")
    _into_play(table)
    mover = table.to_act()
    other = table.other(mover)
    _act(mover)
    table.deliver()
    assert DrawOffered(mover.role) in _act(mover, offer_draw=True)
    table.deliver()
    assert other.draw_offered_to_me
    with pytest.raises(LocalProtocolError):  # (its turn is over: no answering its own)
        mover.accept_draw()
    other.accept_draw()
    table.deliver()
    assert table.host.flow.result == (Termination.DRAW_AGREED, None)
    assert table.host.flow.verdict == table.joiner.flow.verdict


def test_acting_declines_a_standing_offer() -> None:
    table = Table(seed="decline")
    _into_play(table)
    mover = table.to_act()
    _act(mover)
    table.deliver()
    _act(mover, offer_draw=True)
    table.deliver()
    other = table.other(mover)
    assert DrawDeclined(mover.role) in _act(other)
    table.deliver()
    assert not other.draw_offered_to_me and table.host.flow.draw_offer is None
    with pytest.raises(LocalProtocolError):  # (nothing stands to decline any more)
        other.decline_draw()


def _bot_answers(peer: TowersPeer, table: Table) -> None:
    """The Towers bot seat playing `peer` does what it decides now."""
    step = TowersBotSeat(random.Random(0)).step(peer)
    assert step is not None
    step(peer)
    table.deliver()


def test_the_bot_seat_takes_a_draw_when_not_ahead() -> None:
    """Draw offers as in Game of the Generals, whose bot takes one when it is not ahead in
    material: the Towers bot declined every offer, so no draw was ever agreed with a bot
    (conformance case 8.18). Points by SPEC 4.8: one per own flag on the board."""
    table = Table(seed="bot-draw")
    _into_play(table)  # Red on a1 (it claimed first: it plays first), Blue on e5
    table.play("+a1", offer_draw=True)
    table.play("a1-a2")  # Red 2 (a1, a2), Blue 1: Blue is behind
    blue = table.to_act()
    assert blue.view is not None and blue.view.team_points() == (2, 1)
    _bot_answers(blue, table)
    assert table.host.flow.result == (Termination.DRAW_AGREED, None)
    assert table.host.flow.verdict == table.joiner.flow.verdict


def test_the_bot_seat_plays_on_when_ahead() -> None:
    table = Table(seed="bot-draw")
    _into_play(table)
    for text in ("a1-a2", "*a1", "+e5", "e5-e4", "a2-a3", "a1-b1"):
        table.play(text)  # Red 4 (a1, a2, a3, b1), Blue 2 (e5, e4)
    table.play("+e4", offer_draw=True)
    table.play("*e5")
    red = table.to_act()
    assert red.view is not None and red.view.team_points() == (4, 2)
    _bot_answers(red, table)
    assert not table.host.flow.is_over and table.host.flow.draw_offer is None


def test_no_draw_offer_in_the_setup() -> None:
    table = Table(seed="setup-draw")
    with pytest.raises(LocalProtocolError):
        table.to_act().act(Action.from_text("+c3"), offer_draw=True)
    cheater = table.to_act()
    data = forge(cheater, "action", {"ply": 0, "code": Action.from_text("+c3").code(),
                                      "draw": True})
    _convicted(table, cheater, data, "illegal-action")


def _convicted(table: Table, cheater: TowersPeer, data: bytes, rule: str) -> None:
    honest = table.other(cheater)
    with pytest.raises(RemoteProtocolError) as caught:
        honest.receive(data)
    assert caught.value.violation.rule == rule
    assert caught.value.violation.role == cheater.role
    report = replay(_transcript(honest))
    assert int(report.finding) == 1
    assert report.verdict is not None and report.verdict.cheater == cheater.role
    assert report.verdict.rule == rule


def test_an_action_out_of_turn_is_convicted() -> None:
    table = Table(seed="out-of-turn")
    waiting = table.other(table.to_act())
    data = forge(waiting, "action", {"ply": 0, "code": Action.from_text("+c3").code()})
    _convicted(table, waiting, data, "out-of-turn")


def test_an_action_for_another_ply_is_convicted() -> None:
    table = Table(seed="ply")
    mover = table.to_act()
    data = forge(mover, "action", {"ply": 1, "code": Action.from_text("+c3").code()})
    _convicted(table, mover, data, "out-of-turn")


@pytest.mark.parametrize("text, why", [
    ("@c3", "a starting square lies on the outer border (seed 002)"),
    ("a1-a2", "a move needs a pawn of one's own"),
    ("*a1", "no spawn in the setup"),
])
def test_an_illegal_setup_choice_is_convicted(text: str, why: str) -> None:
    table = Table(seed="illegal")
    mover = table.to_act()
    data = forge(mover, "action", {"ply": 0, "code": Action.from_text(text).code()})
    _convicted(table, mover, data, "illegal-action")


def test_a_claim_too_close_to_another_start_is_convicted() -> None:
    table = Table(seed="gap")
    table.play("@a1")
    mover = table.to_act()
    # b1 and a2 touch a1, and c1 has only b1 between: seed 002 wants two border squares
    data = forge(mover, "action", {"ply": 1, "code": Action.from_text("@c1").code()})
    _convicted(table, mover, data, "illegal-action")


def test_equivocation_is_convicted() -> None:
    table = Table(seed="equivocation")
    mover = table.to_act()
    mover.act(Action.from_text("+c3"))
    first = mover.data_to_send()
    assert len(first) == 1
    table.other(mover).receive(first[0])
    seq = mover.flow.next_seq(mover.role) - 1
    prev = mover.flow.senders[mover.role].hashes[seq - 1]
    twin = forge(mover, "action", {"ply": 0, "code": Action.from_text("+c2").code()},
                 seq=seq, prev=prev)
    _convicted(table, mover, twin, "equivocation")


def test_a_time_claim_without_a_clock_is_convicted_and_with_one_it_stands() -> None:
    table = Table(seed="claim")
    waiting = table.other(table.to_act())
    data = forge(waiting, "forfeit_claim", {"reason": "time"})
    _convicted(table, waiting, data, "false-claim")
    clocked = Table(RuleOptions(turn_seconds=30), seed="claim-clock")
    waiting = clocked.other(clocked.to_act())
    events = waiting.claim_forfeit("time")
    clocked.deliver()
    assert any(isinstance(e, GameEnded) for e in events)
    verdict = clocked.host.flow.verdict
    assert verdict is not None and verdict == clocked.joiner.flow.verdict
    assert verdict.winner == waiting.role and verdict.claimants == (waiting.role,)
    assert int(replay(_transcript(clocked.host)).finding) == 4  # (a claim: its word)


def test_a_claim_by_the_side_that_owes_an_action_is_convicted() -> None:
    table = Table(RuleOptions(turn_seconds=30), seed="claim-owing")
    mover = table.to_act()
    data = forge(mover, "forfeit_claim", {"reason": "time"})
    _convicted(table, mover, data, "false-claim")


def test_accepting_a_draw_never_offered_is_convicted() -> None:
    table = Table(seed="no-offer")
    _into_play(table)
    mover = table.to_act()
    data = forge(mover, "draw_accept", {})
    _convicted(table, mover, data, "no-draw-offer")


def test_crossing_resignations_are_a_draw_on_both_sides() -> None:
    table = Table(seed="resign")
    table.play("+c3")
    table.host.resign()
    table.joiner.resign()
    table.deliver()
    assert table.host.flow.result == table.joiner.flow.result
    assert table.host.flow.result is not None and table.host.flow.result[1] is None


def test_a_restored_peer_is_the_same_game() -> None:
    table = Table(seed="restore")
    table.play_random(random.Random(7), limit=40)
    records = [("msg", role, data) for role, data in table.host.flow.transcript]
    again = TowersPeer.restore(HOST, table.host._key, TLS_FP, records)
    assert again.view is not None and table.host.view is not None
    assert again.view.history == table.host.view.history
    assert again.my_turn == table.host.my_turn


def test_a_game_of_the_generals_joiner_refuses_a_towers_hello() -> None:
    host = TowersPeer(HOST, det_key("mix/host"), TLS_FP, RuleOptions(),
                      DetRand("mix/host"))
    joiner = GotgPeer(JOINER, det_key("mix/joiner"), TLS_FP, None,
                      DetRand("mix/joiner"))
    host.start()
    with pytest.raises(RemoteProtocolError) as caught:
        joiner.receive(host.data_to_send()[0])
    assert caught.value.violation.rule == "options"


def test_three_colours_need_three_players() -> None:
    with pytest.raises(LocalProtocolError):
        TowersPeer(HOST, det_key("three"), TLS_FP, RuleOptions(seats=3),
                   DetRand("three")).start()


def test_setup_actions_that_crossed_a_claim_at_the_coin_are_judged_not_convicted() -> None:
    """Found by the Towers walks: the host claims while the joiner owes its coin's opening
    (a duty with a limit, SPEC 2.6); the joiner, not yet seeing the claim, opens its coin and,
    playing first, makes its first setup choice. Both crossed the claim: the host must judge
    them on the game the joiner saw (SPEC 2.4, crossing the end), and both files must give
    the claim's verdict."""
    for n in range(64):  # a table where the coin makes the joiner play first
        host = TowersPeer(HOST, det_key(f"coin/{n}/host"), TLS_FP, RuleOptions(),
                          DetRand(f"coin/{n}/host"))
        joiner = TowersPeer(JOINER, det_key(f"coin/{n}/joiner"), TLS_FP, None,
                            DetRand(f"coin/{n}/joiner"))
        host.start()
        joiner.receive(host.data_to_send()[0])
        joiner.accept()
        host.receive(joiner.data_to_send()[0])  # (the host's coin follows at once)
        coin = host.data_to_send()
        joiner.receive(coin[0])  # (the joiner's coin_open follows at once)
        if joiner.my_turn:
            break
    else:
        raise AssertionError("no coin made the joiner first in 64 tables")
    claim_events = host.claim_forfeit("abandoned")
    assert any(isinstance(e, GameEnded) for e in claim_events)
    joiner.act(Action.from_text("@a1"))
    for data in joiner.data_to_send():  # the coin's opening, then the setup choice
        host.receive(data)
    for data in host.data_to_send():
        joiner.receive(data)
    assert host.failed is None and joiner.failed is None
    verdict = host.flow.verdict
    assert verdict is not None and verdict == joiner.flow.verdict and verdict.clean
    assert verdict.claimants == (HOST,) and verdict.winner == HOST
    for peer in (host, joiner):
        report = replay(_transcript(peer))
        assert report.verdict == verdict
