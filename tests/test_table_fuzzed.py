"""What the table targets of `bench/fuzz.py` found, each as the smallest input that shows
it: a seat's signed message that proves nothing must never convict it (SPEC 5.2), and a
damaged or edited file gets a verdict, never a traceback (SPEC 5.9)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import trio

from p2pgotg.crypto import sign
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_session import TableSession
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table import TableViolation
from p2pgotg.protocol.table.events import ChatSaid
from p2pgotg.protocol.table.transcript import encode_table_header, encode_table_record
from p2pgotg.protocol.wire import pack, unpack
from p2pgotg.testing.table_relay import Table, file_bytes, make_table
from protocol.table_scenarios import forged, seat_key
from tests.tablekit import verdict_of


def _seated(n: int, seed: int) -> Table:
    rng = random.Random(seed)
    table = make_table(n, rng)
    table.settle(rng)
    return table


def _resigned(table: Table, seat: int, data: bytes, **changes: object) -> bytes:
    """`seat`'s message `data` with fields changed, signed again by `seat` (a body the
    table's own types could not build)."""
    raw = {**unpack(Envelope.decode(data).body_bytes), **changes}
    body = pack(raw)
    return Envelope(body, sign(seat_key(table, seat), body)).encode()


def _with_message(table: Table, data: bytes, author: int | None, folder: Path) -> Path:
    """The host's file with one more message record at its end."""
    path = folder / "seat-0.gtr"
    path.write_bytes(file_bytes(table, table.host) + encode_table_record(("msg", author, data)))
    return path


@pytest.mark.parametrize("seat", [-1, -2**63])
def test_a_from_below_zero_names_no_seat_and_proves_nothing(tmp_path: Path, seat: int
                                                            ) -> None:
    # Seat 2 signs a message whose `from` is below zero. Read as a list index, -1 was seat
    # 2's key: the signature verified, "seat -1" was convicted, and verify then failed on
    # it; -2**63 raised IndexError out of the host's `receive`.
    table = _seated(3, 1)
    data = _resigned(table, 2, forged(table, 2, "chat", {"text": "hi"}), **{"from": seat})
    with pytest.raises(TableViolation) as caught:
        table.host.receive(data)
    assert (caught.value.rule, caught.value.signed) == ("malformed-envelope", False)
    assert table.host.failed is None and table.host.flow.violation is None

    code, out = verdict_of(_with_message(table, data, None, tmp_path))
    assert code == 2, out  # (damaged: nothing proven against anyone, SPEC 5.9)
    assert f"no seat {seat} at this table" in out


def test_a_message_of_the_same_key_at_a_table_of_four_convicts_nobody_at_three(
        tmp_path: Path) -> None:
    # The host's key sits at a table of three and at a table of four (one identity, two
    # tables). Its chat at the four, with four `acks`, put in a file of the three, was
    # judged by the three's schema first: "malformed-message", the host convicted.
    three, four = _seated(3, 1), _seated(4, 2)
    assert three.host.public_key == four.host.public_key
    elsewhere = forged(four, 0, "chat", {"text": "hello, table of four"})
    joiner = three.links[0].joiner
    with pytest.raises(TableViolation) as caught:
        joiner.flow.process(elsewhere)  # (as `verify` and a resumed seat take a file's)
    assert (caught.value.rule, caught.value.signed) == ("game-id", False)
    assert joiner.flow.violation is None

    code, out = verdict_of(_with_message(three, elsewhere, 0, tmp_path))
    assert code == 2, out
    assert "a message of another table" in out


def test_the_roster_of_a_table_of_four_convicts_nobody_before_the_roster_of_three() -> None:
    # Before its roster a joiner has no game id to compare: the host's roster of another
    # table does not chain to this table's host hello, so it is that table's, not a broken
    # roster of this one.
    four = _seated(4, 2)
    rng = random.Random(3)
    three = make_table(3, rng)
    joiner = three.links[0].joiner
    assert joiner.flow.game_id is None and three.host.public_key == four.host.public_key
    roster = four.host.flow.chains[0][1].env
    with pytest.raises(TableViolation) as caught:
        joiner.flow.process(roster)
    assert (caught.value.rule, caught.value.signed) == ("game-id", False)
    assert joiner.flow.violation is None


def test_a_damaged_saved_coin_secret_refuses_to_resume_with_a_clear_error(
        tmp_path: Path) -> None:
    # A joiner's file cut after the roster (a crash before its coin opening was written),
    # its saved coin secret damaged: the restored seat owed its opening, could not sign
    # it, and resuming raised LocalProtocolError out of `TableSession.resume`.
    rng = random.Random(4)
    table = make_table(3, rng)
    table.settle(rng)
    joiner = table.links[0].joiner
    records = list(table.records[id(joiner)])
    roster = next(i for i, r in enumerate(records) if r[0] == "msg" and r[1] == 0
                  and unpack(Envelope.decode(r[2]).body_bytes)["t"] == "roster")
    kept = [("secrets", {"coin": bytes(32)}) if r[0] == "secrets" and "coin" in r[1] else r
            for r in records[:roster + 1]]
    path = tmp_path / "seat.gtr"
    path.write_bytes(encode_table_header("joiner", joiner.public_key)
                     + encode_table_record(("secrets", {"join": bytes(range(16))}))
                     + b"".join(encode_table_record(r) for r in kept))
    before = path.read_bytes()

    async def resume() -> None:
        TableSession.resume(path, joiner._key, "joiner", Timeouts())

    with pytest.raises(ValueError, match="saved coin secret does not open"):
        trio.run(resume)
    assert path.read_bytes() == before  # (refused: the file as it was)


def test_a_message_that_waited_and_proves_nothing_costs_no_other_connection() -> None:
    # Seat 1's message with a broken signature acknowledges seat 2's next message, so it
    # waits (SPEC 5.4). Seat 2's message arrives on its own connection and makes it ready:
    # the broken one was refused inside seat 2's `receive`, which raised, so seat 2's
    # connection was dropped and what its message did (here its chat) never reported.
    table = _seated(3, 1)
    host = table.host
    real = forged(table, 2, "chat", {"text": "from seat two"})
    acks = tuple(Envelope.decode(real).hash if j == 2 else
                 (bytes(32) if j == 1 else host.flow.chains[j][-1].hash) for j in range(3))
    body = Envelope.decode(forged(table, 1, "chat", {"text": "x"}, acks=acks)).body_bytes
    broken = Envelope(body, bytes(64)).encode()
    assert host.receive(broken, "seat 1's connection") == []  # (it waits)

    events = host.receive(real, "seat 2's connection")
    assert [(e.seat, e.text) for e in events if isinstance(e, ChatSaid)] == [
        (2, "from seat two")]
    assert host.failed is None and host.flow.chains[1][-1].body.type != "chat"
    assert host._waiting == []  # (refused when its turn came: it proves nothing)
