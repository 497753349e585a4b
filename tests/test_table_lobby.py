"""A joiner that leaves before the roster gives its place back (SPEC 5.3), in the sans-IO
kernel: the host withdraws its hello, which the roster then cannot seat and the host
relays no more; a host restored from its file before the roster holds no joiner's hello
(every joiner comes back on a new connection and sends it again)."""

from __future__ import annotations

import random

import pytest

from p2pgotg.crypto import public_bytes
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table import TableSeat, TableViolation
from p2pgotg.protocol.table.flow import WITHDRAWN
from p2pgotg.testing.table_relay import TLS, keys

SEATS = 3


def lobby() -> tuple[TableSeat, list[TableSeat], list[bytes]]:
    """A host of three seats and three would-be joiners whose hellos are made (one more
    than the table has places for)."""
    rng = random.Random(5)
    ks = keys(SEATS + 1)
    host = TableSeat.host(TOWERS_TABLE, ks[0], RuleOptions(seats=SEATS), TLS, rng.randbytes)
    host.start()
    host_hello = host.take_outgoing()[0]
    joiners, hellos = [], []
    for key in ks[1:]:
        joiner = TableSeat.joiner(TOWERS_TABLE, key, host_hello, TLS, rng.randbytes)
        joiner.start()
        hellos.append(joiner.take_outgoing()[0])
        joiners.append(joiner)
    return host, joiners, hellos


def test_a_withdrawn_hello_gives_its_place_to_the_next() -> None:
    host, _, (gone, second, third) = lobby()
    host.receive(gone)
    assert host.withdraw_hello(gone)
    assert not host.withdraw_hello(gone)  # (nothing more to let go)
    assert (WITHDRAWN, gone) in host.accepted
    assert gone not in host.lacking([1])  # (relayed no more, SPEC 5.4's backlog included)
    host.receive(second)
    host.receive(third)
    status = host.status()
    assert status.game_id is not None  # (two hellos held: the roster is out)
    seated = {bytes(host.flow.key_of(s)) for s in range(1, SEATS)}
    assert seated == {public_bytes(k) for k in keys(SEATS + 1)[2:]}
    assert not host.withdraw_hello(second)  # (seated: the roster is signed)
    with pytest.raises(TableViolation, match="the roster is made"):
        host.receive(gone)  # (back too late: no place)


def test_a_hello_withdrawn_then_sent_again_is_seated() -> None:
    host, joiners, (back, other, _) = lobby()
    host.receive(back)
    assert host.withdraw_hello(back)
    host.receive(back)  # (its joiner came back before the table filled)
    host.receive(other)
    seated = {bytes(host.flow.key_of(s)) for s in range(1, SEATS)}
    assert seated == {public_bytes(k) for k in keys(SEATS + 1)[1:3]}
    # A joiner that held the first copy (relayed before it was withdrawn) takes the roster.
    joiners[1].receive(back)
    for _, data in host.accepted:
        if data != other:
            joiners[1].receive(data)
    assert joiners[1].status().game_id == host.status().game_id


def test_a_host_restored_before_the_roster_holds_no_joiners_hello() -> None:
    host, _, (first, *_rest) = lobby()
    host.receive(first)
    records = host.take_records()
    restored = TableSeat.restore(TOWERS_TABLE, keys(SEATS + 1)[0], TLS, records, is_host=True)
    assert not restored.flow.pending
    assert all(author != -1 for author, _ in restored.accepted)
    assert Envelope.decode(first).hash not in restored.flow.by_hash
    restored.receive(first)  # (its joiner, back on a new connection, sends it again)
    assert len(restored.flow.pending) == 1
