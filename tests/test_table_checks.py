"""Every check of SPEC 5.2 to 5.8, each with a signed message that breaks it: the rule the
host's flow names is SPEC's, and whether it convicts (signed) or proves nothing is as SPEC
marks it. The messages are made by hand with the seats' keys, as a cheating seat would."""

from __future__ import annotations

import random
from typing import Any

import pytest

from p2pgotg.crypto import public_bytes, sign
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.errors import LocalProtocolError
from p2pgotg.protocol.table import TableSeat, TableViolation
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.testing.table_relay import TLS, Table, keys, make_table
from protocol.table_scenarios import forged


def broken(table: Table, data: bytes) -> tuple[str, bool]:
    with pytest.raises(TableViolation) as caught:
        table.host.receive(data)
    return caught.value.rule, caught.value.signed


def seated(n: int = 3, seed: int = 1, plies: int = 0) -> Table:
    rng = random.Random(seed)
    table = make_table(n, rng)
    table.settle(rng)
    by_seat = table.by_seat()
    for _ in range(plies):
        actor = by_seat[table.host.status().seat_to_act]
        actor.act(rng.choice(list(actor.game.game.legal_actions)))
        table.settle(rng)
    return table


def a_joiner_not_to_act(table: Table) -> int:
    status = table.host.status()
    return next(s for s in range(1, status.seats) if s != status.seat_to_act)


def test_signature_game_id_and_gaps_prove_nothing() -> None:
    table = seated()
    good = forged(table, 1, "chat", {"text": "hi"})
    env = Envelope.decode(good)
    assert broken(table, Envelope(env.body_bytes, bytes(64)).encode()) == (
        "bad-signature", False)
    assert broken(table, forged(table, 1, "chat", {"text": "x"}, game=bytes(32))) == (
        "game-id", False)
    gap = forged(table, 1, "chat", {"text": "x"}, seq=len(table.host.flow.chains[1]) + 1)
    assert table.host.receive(gap) == []  # (it waits for the message before it, SPEC 5.4)
    with pytest.raises(TableViolation) as caught:
        table.host.flow.process(gap)
    assert (caught.value.rule, caught.value.signed) == ("sequence", False)
    assert table.host.failed is None  # (nothing proven: the table goes on)
    assert table.host.flow.violation is None


def test_own_acks_entry_not_zero_is_malformed() -> None:
    table = seated()
    flow = table.host.flow
    acks = tuple(flow.chains[j][-1].hash for j in range(3))
    assert broken(table, forged(table, 1, "chat", {"text": "x"}, acks=acks)) == (
        "malformed-message", True)


def test_two_versions_from_one_joiner_are_equivocation() -> None:
    table = seated()
    flow = table.host.flow
    seq = len(flow.chains[1])
    table.host.receive(forged(table, 1, "chat", {"text": "one"}))
    other = forged(table, 1, "chat", {"text": "two"}, seq=seq,
                   prev=flow.chains[1][seq - 1].hash)
    assert broken(table, other) == ("equivocation", True)
    assert table.host.failed is not None  # the evidence stops the table
    assert table.host.accepted[-1] == (1, other)  # and goes to every seat


def test_chain_prev() -> None:
    table = seated()
    assert broken(table, forged(table, 1, "chat", {"text": "x"}, prev=bytes(range(32)))) == (
        "chain-prev", True)


def test_an_ack_of_an_older_message_than_before_is_chain_ack() -> None:
    table = seated(plies=1)
    flow = table.host.flow
    acks = [ZERO_HASH, ZERO_HASH, flow.chains[2][-1].hash]
    acks[0] = flow.chains[0][0].hash  # (its previous message acked the host's latest)
    assert broken(table, forged(table, 1, "chat", {"text": "x"}, acks=tuple(acks))) == (
        "chain-ack", True)


def test_an_ack_that_skips_what_the_acked_message_saw_is_chain_ack() -> None:
    """SPEC 5.2 step 5: a view that is not closed. Seat 1 acks the host's coin opening,
    which saw seat 2's hello, and acks nothing of seat 2."""
    rng = random.Random(3)
    table = make_table(3, rng)
    for link in table.links:
        table.host.receive(link.up.pop(0))  # the hellos: the roster and the host's opening
    flow = table.host.flow
    assert flow.chains[0][-1].body.type == "coin_open" and flow.chains[0][-1].view[2] == 1
    acks = (flow.chains[0][-1].hash, ZERO_HASH, ZERO_HASH)
    secret = next(link.joiner for link in table.links
                  if public_bytes(link.joiner._key) == flow.key_of(1))._coin
    assert broken(table, forged(table, 1, "coin_open", {"secret": secret}, acks=acks)) == (
        "chain-ack", True)


def test_an_eleventh_chat_in_a_row_is_chat_limit() -> None:
    table = seated()
    for i in range(10):
        table.host.receive(forged(table, 1, "chat", {"text": str(i)}))
    assert broken(table, forged(table, 1, "chat", {"text": "11"})) == ("chat-limit", True)


def _joiner_to_act() -> Table:
    seed = 0
    while True:
        table = seated(plies=1, seed=seed)
        if table.host.status().seat_to_act != 0:
            return table
        seed += 1


def test_actions_out_of_turn_at_another_ply_and_illegal() -> None:
    table = _joiner_to_act()
    status = table.host.status()
    actor = status.seat_to_act
    assert actor is not None
    game = table.host.game.game
    code = next(iter(game.legal_actions)).code()
    other = a_joiner_not_to_act(table)
    assert broken(table, forged(table, other, "action", {"ply": status.ply, "code": code})) \
        == ("out-of-turn", True)
    table = _joiner_to_act()
    assert broken(table, forged(table, actor, "action", {"ply": status.ply + 1,
                                                         "code": code})) == (
        "out-of-turn", True)
    table = _joiner_to_act()
    illegal = next(c for c in range(175) if game.problem(_action(c)) is not None)
    assert broken(table, forged(table, actor, "action", {"ply": status.ply,
                                                         "code": illegal})) == (
        "illegal-action", True)


def _action(code: int) -> Any:
    from p2pgotg.games.towers.rules.actions import Action

    return Action.from_code(code)


def test_a_coin_opening_that_does_not_open_and_a_second_one() -> None:
    rng = random.Random(3)
    table = make_table(3, rng)
    # deliver the hellos and the roster only, by hand, to catch seat 1 before it opens
    for link in table.links:
        table.host.receive(link.up.pop(0))
    table.collect()
    flow = table.host.flow
    assert flow.rostered
    assert broken(table, forged(table, 1, "coin_open", {"secret": bytes(32)})) == (
        "coin-open", True)
    table2 = seated()
    assert broken(table2, forged(table2, 1, "coin_open", {"secret": bytes(32)})) == (
        "out-of-turn", True)


def test_an_action_after_resigning_is_after_end() -> None:
    table = seated(n=4, plies=1)
    status = table.host.status()
    seat = a_joiner_not_to_act(table)
    table.host.receive(forged(table, seat, "resign", {}))
    code = next(iter(table.host.game.game.legal_actions)).code()
    assert broken(table, forged(table, seat, "action", {"ply": status.ply, "code": code})) \
        == ("after-end", True)


def test_false_claims() -> None:
    table = seated(n=4, plies=1)
    status = table.host.status()
    actor = status.seat_to_act
    state = table.host.flow.state
    assert state is not None
    idle = next(s for s in range(1, 4) if s != actor and s != state.next_in(actor))
    # a seat that owes nothing
    owes_nothing = next(s for s in range(4) if s not in status.owes and s != idle)
    assert broken(table, forged(table, idle, "forfeit_claim",
                                {"seat": owes_nothing, "reason": "abandoned"})) == (
        "false-claim", True)
    # out of its place: not the first seat still in after the seat to act
    table2 = seated(n=4, plies=1)
    assert broken(table2, forged(table2, idle, "forfeit_claim",
                                 {"seat": actor, "reason": "abandoned"})) == (
        "false-claim", True)
    # time with no clock set, for an action
    table3 = seated(n=4, plies=1)
    claimant = state.next_in(actor)
    assert claimant is not None
    if claimant == 0:
        pytest.skip("the host claims here: its own claim is made, not received")
    assert broken(table3, forged(table3, claimant, "forfeit_claim",
                                 {"seat": actor, "reason": "time"})) == ("false-claim", True)


def test_a_dispute_of_no_claim_is_out_of_turn() -> None:
    table = seated()
    assert broken(table, forged(table, 1, "dispute", {"claim": [2, 1]})) == (
        "out-of-turn", True)


def test_a_whisper_to_oneself_is_malformed() -> None:
    table = seated()
    assert broken(table, forged(table, 1, "whisper", {"to": 1, "box": bytes(40)})) == (
        "malformed-message", True)


def test_the_seat_refuses_to_sign_what_breaks_a_rule() -> None:
    table = seated(plies=1)
    status = table.host.status()
    other = next(s for s in table.seats if s.my_seat != status.seat_to_act)
    with pytest.raises(LocalProtocolError):
        other.act(next(iter(other.game.game.legal_actions)))
    with pytest.raises(LocalProtocolError):
        other.claim(status.seat_to_act if other.my_seat != 0 else 1, "time")
    assert other.failed is None and other.flow.violation is None


@pytest.mark.parametrize("change,rule", [
    ({"options": RuleOptions(seats=4).to_dict()}, "options"),
    ({"tls": bytes(32)}, "tls-binding"),
    ({"role": "host"}, "hello-role"),
    ({"version": 2}, "version"),
    ({"host": bytes(32)}, "hello-fields"),
])
def test_a_joiners_hello_that_breaks_a_check_is_refused_unseated(change: dict[str, Any],
                                                                  rule: str) -> None:
    """SPEC 5.3: refused, never seated, proving nothing to the table."""
    rng = random.Random(2)
    table = make_table(3, rng)
    host_hello = table.host.accepted[0][1]
    joiner = TableSeat.joiner(TOWERS_TABLE, keys(3)[1], host_hello, TLS, rng.randbytes)
    hello = TableBody.decode(Envelope.decode(table.links[0].up[0]).body_bytes)
    fields = {**hello.fields, **change}
    body = TableBody("hello", 0, ZERO_HASH, None, None, None, fields)
    data = body.encode()
    assert joiner is not None
    with pytest.raises(TableViolation) as caught:
        table.host.receive(Envelope(data, sign(keys(3)[1], data)).encode())
    assert (caught.value.rule, caught.value.signed) == (rule, False)
    assert table.host.flow.pending == {}
