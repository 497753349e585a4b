"""Towers' recorded games (SPEC 4.11): honest games of both variants, each ending, and one
dishonest game for each row of SPEC 4.11's table, written with the Game of the Generals
scenarios by `python -m protocol.scenarios protocol/transcripts` (file names `towers-*`)."""

from __future__ import annotations

import random
from collections.abc import Callable

from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.errors import RemoteProtocolError
from p2pgotg.protocol.flow import HOST, JOINER
from p2pgotg.testing.forging import forge
from p2pgotg.testing.towers import Table
from protocol.scenarios import Result, Scenario


def _kept(table: Table, role: str, error: RemoteProtocolError | None = None) -> Result:
    """`role`'s file as its owner keeps it, and the winner the game played tells."""
    honest = table.peer(role)
    records = table.records[role] + honest.take_records()
    result = Result(honest, error, records=records)  # type: ignore[arg-type]
    if error is None and honest.flow.result is not None:
        result.winner = honest.flow.result[1] or "draw"
    return result


def _played(table: Table, seed: int, actions: int) -> None:
    """`actions` random legal actions (fewer if the game ends first)."""
    table.play_random(random.Random(seed), limit=actions)


def _honest(options: RuleOptions, owner: str) -> Callable[[int], Result]:
    def run(seed: int) -> Result:
        table = Table(options, seed=f"towers-honest-{seed}-{options.teams}")
        _played(table, seed, 2000)
        assert table.host.flow.is_over
        return _kept(table, owner)
    return run


def _into_play(seed: int, options: RuleOptions | None = None) -> Table:
    table = Table(options, seed=f"towers-scenario-{seed}")
    table.play("@a1")
    table.play("@e5")
    return table


def _act(table: Table, offer_draw: bool = False) -> None:
    """The player to act makes its first legal action (in code order)."""
    view = table.to_act().view
    assert view is not None
    table.to_act().act(view.legal_actions[0], offer_draw)
    table.deliver()


def draw_agreed(seed: int) -> Result:
    table = _into_play(seed)
    mover = table.to_act()
    _act(table)
    _act(table, offer_draw=True)
    table.other(mover).accept_draw()
    table.deliver()
    return _kept(table, HOST)


def resignation(seed: int) -> Result:
    table = _into_play(seed)
    _played(table, seed, 10)
    table.joiner.resign()
    table.deliver()
    return _kept(table, HOST)


def _convicted(table: Table, cheater_role: str, data: bytes) -> Result:
    honest = table.peer(JOINER if cheater_role == HOST else HOST)
    try:
        honest.receive(data)
    except RemoteProtocolError as exc:
        return _kept(table, honest.role, exc)
    raise AssertionError("the honest side took the cheat")


def illegal_action(seed: int) -> Result:
    """A start claimed beside another (T6: two border squares must lie between)."""
    table = Table(seed=f"towers-scenario-{seed}")
    table.play("@a1")
    cheater = table.to_act()
    data = forge(cheater, "action", {"ply": 1, "code": Action.from_text("@b1").code()})
    return _convicted(table, cheater.role, data)


def out_of_turn(seed: int) -> Result:
    table = _into_play(seed)
    waiting = table.other(table.to_act())
    view = waiting.view
    assert view is not None
    square = view.pawn_squares(1 - view.turn if view.seats == 2 else (view.turn + 1) % 4)[0]
    data = forge(waiting, "action", {"ply": view.ply, "code": Action.layer(square).code()})
    return _convicted(table, waiting.role, data)


def wrong_ply(seed: int) -> Result:
    table = _into_play(seed)
    mover = table.to_act()
    view = mover.view
    assert view is not None
    action = view.legal_actions[0]
    data = forge(mover, "action", {"ply": view.ply + 1, "code": action.code()})
    return _convicted(table, mover.role, data)


def equivocate(seed: int) -> Result:
    table = Table(seed=f"towers-scenario-{seed}")
    mover = table.to_act()
    mover.act(Action.from_text("+c3"))
    first = mover.data_to_send()[0]
    honest = table.other(mover)
    honest.receive(first)
    table.records[mover.role] += mover.take_records()
    table.records[honest.role] += honest.take_records()
    seq = mover.flow.next_seq(mover.role) - 1
    twin = forge(mover, "action", {"ply": 0, "code": Action.from_text("+c2").code()},
                 seq=seq, prev=mover.flow.senders[mover.role].hashes[seq - 1])
    return _convicted(table, mover.role, twin)


def claim_without_clock(seed: int) -> Result:
    table = _into_play(seed)
    waiting = table.other(table.to_act())
    return _convicted(table, waiting.role, forge(waiting, "forfeit_claim", {"reason": "time"}))


def claim_while_owing(seed: int) -> Result:
    table = _into_play(seed, RuleOptions(turn_seconds=60))
    mover = table.to_act()
    return _convicted(table, mover.role, forge(mover, "forfeit_claim", {"reason": "time"}))


def no_draw_offer(seed: int) -> Result:
    table = _into_play(seed)
    mover = table.to_act()
    return _convicted(table, mover.role, forge(mover, "draw_accept", {}))


def time_claim(seed: int) -> Result:
    """The player to act lets its turn run out; the other claims (its word: exit 4)."""
    table = _into_play(seed, RuleOptions(turn_seconds=60))
    waiting = table.other(table.to_act())
    waiting.claim_forfeit("time")
    table.deliver()
    return _kept(table, waiting.role)


def crossing_claim_at_the_coin(seed: int) -> Result:
    """Found by the Towers walks (SPEC 4.11): the host claims while the joiner owes the
    opening of its coin; the joiner's opening and its first setup choice cross the claim.
    Both files: one verdict, the claim's."""
    for n in range(64):  # a table where the coin makes the joiner play first
        table = Table(seed=f"towers-coin-{seed}-{n}", start=False)
        host, joiner = table.host, table.joiner
        host.start()
        joiner.receive(host.data_to_send()[0])
        joiner.accept()
        host.receive(joiner.data_to_send()[0])
        joiner.receive(host.data_to_send()[0])  # the coin; the joiner opens its own at once
        if joiner.my_turn:
            break
    else:
        raise AssertionError("no coin made the joiner first in 64 tables")
    host.claim_forfeit("abandoned")
    joiner.act(Action.from_text("@a1"))
    table.deliver(keep=False)  # (each file is taken from its peer: both are recorded)
    result = Result(host, None, winner=HOST)  # type: ignore[arg-type]
    result.other = joiner  # type: ignore[assignment]
    return result


TOWERS_SCENARIOS = (
    Scenario("towers-honest-game", "none: a whole honest game of Towers, two colours (seed "
             "1's random game: the host's colour plants all its flags)", None, None, 0,
             _honest(RuleOptions(), HOST), "host", "all_flags_planted"),
    Scenario("towers-honest-teams", "none: a whole honest game of Towers, two colours each "
             "(seed 1's random game: all 50 layers placed, the host's team ahead)", None,
             None, 0, _honest(RuleOptions(seats=4, teams=True), JOINER), "host",
             "pool_empty"),
    Scenario("towers-draw-agreed", "none: a draw offered with an action and accepted",
             None, None, 0, draw_agreed, "draw", "draw_agreed"),
    Scenario("towers-resignation", "none: a short game of Towers ended by resignation",
             None, None, 0, resignation, "host", "resignation"),
    Scenario("towers-illegal-action", "an illegal action (a start beside another)", None,
             "illegal-action", 1, illegal_action),
    Scenario("towers-out-of-turn", "act for the other player's colour", None,
             "out-of-turn", 1, out_of_turn),
    Scenario("towers-wrong-ply", "an action for another position (a ply that is not the "
             "count)", None, "out-of-turn", 1, wrong_ply),
    Scenario("towers-equivocate", "two different actions with one sequence number", None,
             "equivocation", 1, equivocate),
    Scenario("towers-claim-without-clock", "claim time with no clock", None, "false-claim",
             1, claim_without_clock),
    Scenario("towers-claim-while-owing", "claim time while owing an action oneself", None,
             "false-claim", 1, claim_while_owing),
    Scenario("towers-no-draw-offer", "accept a draw that was never offered", None,
             "no-draw-offer", 1, no_draw_offer),
    Scenario("towers-time-claim", "none: the player to act lets its turn run out; the other "
             "claims", None, None, 4, time_claim, None, "time_forfeit"),
    Scenario("towers-crossing-claim-at-the-coin", "none: a claim crossed by the coin's "
             "opening and the first setup choice", None, None, 4, crossing_claim_at_the_coin,
             "host", "abandonment"),
)
