"""Whole games at tables of three and four seats (SPEC chapter 5) between sans-IO seats,
their messages moved by a relay loop in random causal orders (tests/tablekit.py)."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.table.coin import turn_order
from p2pgotg.protocol.table.events import OrderDecided, SeatTaken
from p2pgotg.testing.table_relay import make_table, play_random


@pytest.mark.parametrize("n,seed", [(3, 1), (3, 2), (4, 3), (4, 4), (3, 5), (4, 6)])
def test_a_whole_game_ends_alike_at_every_seat(n: int, seed: int) -> None:
    rng = random.Random(seed)
    table = make_table(n, rng)
    play_random(table, rng)
    statuses = [seat.status() for seat in table.seats]
    assert all(s.over for s in statuses)
    # one game: every seat saw the same order, the same actions and the same end
    assert len({(s.order, s.ply, s.winners, s.termination, s.game_id) for s in statuses}) == 1
    assert sorted(s.my_seat for s in statuses) == list(range(n))
    # the board every seat holds is the one the rules make from the actions in order
    games = [seat.game.game for seat in table.seats]
    history = games[0].history
    replayed = Game(RuleOptions(seats=n))
    for action in history:
        replayed.push(action)
    assert replayed.outcome == games[0].outcome
    assert all(g.history == history for g in games)


def test_the_roster_seats_every_joiner_and_the_order_is_the_formula_s() -> None:
    rng = random.Random(11)
    table = make_table(4, rng)
    table.settle(rng)
    host_events = table.events[id(table.links[0].joiner)]
    seated = [e.seat for e in host_events if isinstance(e, SeatTaken)]
    assert seated == [1, 2, 3]
    orders = {e.order for seat in table.seats for e in table.events.get(id(seat), [])
              if isinstance(e, OrderDecided)}
    host = table.host
    flow = host.flow
    secrets = [next(m.body["secret"] for m in flow.chains[s] if m.body.type == "coin_open")
               for s in range(4)]
    assert flow.game_id is not None
    assert orders == {turn_order(flow.game_id, secrets)}
    assert host.status().phase == "play"


def test_heads_follow_every_turn_from_the_seats_not_involved() -> None:
    """SPEC 5.6: after a turn ends, every seat still in but its author and the seat now to
    act owes heads, and pays at once; nobody owes anything but the seat to act then."""
    rng = random.Random(7)
    table = make_table(4, rng)
    table.settle(rng)
    by_seat = table.by_seat()
    for _ in range(6):
        status = table.host.status()
        actor = by_seat[status.seat_to_act]
        actor.act(next(iter(actor.game.game.legal_actions)))
        table.settle(rng)
        status = table.host.status()
        assert status.owes == {status.seat_to_act: "choice"}
    heads = [m for chain in table.host.flow.chains for m in chain if m.body.type == "heads"]
    assert len(heads) == 6 * 2  # four seats: two owe heads after each setup choice


def test_a_seat_restored_from_its_records_resumes_where_it_was() -> None:
    """SPEC 5.4: a joiner rebuilt from its file holds what it held; the host's `lacking`
    for its `have` is exactly what it missed meanwhile, in an order it can take."""
    from p2pgotg.games.towers.table import TOWERS_TABLE
    from p2pgotg.protocol.table import TableSeat
    from p2pgotg.testing.table_relay import TLS

    rng = random.Random(8)
    table = make_table(3, rng)
    table.settle(rng)
    link = table.links[0]
    joiner = link.joiner
    me = joiner.my_seat
    assert me is not None
    records = table.records[id(joiner)]
    restored = TableSeat.restore(TOWERS_TABLE, joiner._key, TLS, records, is_host=False)
    assert restored.status() == joiner.status()
    assert restored.take_outgoing() == []  # (it owes nothing: it sends nothing new)
    # the others play on while it is away
    by_seat = table.by_seat()
    link.withhold = lambda seat, data: True
    for _ in range(3):
        actor = by_seat[table.host.status().seat_to_act]
        if actor is joiner:
            break
        actor.act(next(iter(actor.game.game.legal_actions)))
        table.settle(rng)
    missed = table.host.lacking(restored.have())
    assert missed
    for data in missed:  # (in the host's order, each ready when it comes)
        assert restored.flow.ready(data)
        restored.receive(data)
    others = [j for j in range(3) if j != me]
    assert [restored.have()[j] for j in others] == [table.host.have()[j] for j in others]
    assert restored.status().ply == table.host.status().ply
