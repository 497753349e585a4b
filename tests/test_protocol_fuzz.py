"""Malformed, truncated, out-of-turn and random input: always a clear RemoteProtocolError,
never another exception, and never a state change on rejected input."""

from __future__ import annotations

import random

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import p2pgotg.games.gotg  # noqa: F401  (its message types, registered)
from p2pgotg.protocol import RemoteProtocolError
from p2pgotg.protocol.messages import registered
from p2pgotg.protocol.pair import Pair
from p2pgotg.protocol.wire import WireError


def _in_play(seed: int = 0) -> Pair:
    pair = Pair.new(seed=f"fuzz-{seed}")
    pair.handshake(rng=random.Random(seed))
    return pair


def _state(peer) -> tuple:
    flow = peer.flow
    return (flow.phase, len(flow.transcript), flow.game.ascii() if flow.game else None,
            flow.next_seq(peer.peer_role))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_are_refused_cleanly(data: bytes) -> None:
    pair = _PAIR
    peer = pair.host
    before = _state(peer)
    try:
        peer.receive(data)
    except RemoteProtocolError as exc:
        assert str(exc)
    finally:
        peer._error = None  # reuse the same peer for the next example
    assert _state(peer) == before


_PAIR = _in_play()


def _mutations(data: bytes, rng: random.Random) -> list[bytes]:
    out = [data[:n] for n in range(0, len(data), max(1, len(data) // 20))]
    for _ in range(40):
        b = bytearray(data)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        out.append(bytes(b))
    return out


def test_truncated_and_bit_flipped_messages_of_every_phase() -> None:
    rng = random.Random(7)
    pair = Pair.new(seed="mut")
    pair.host.start()
    pair.joiner.receive(pair.host.data_to_send()[0])
    pair.joiner.accept()
    # a joiner hello, a coin, the setup messages and moves, each mutated
    samples = [pair.joiner.data_to_send()[0]]
    pair.host.receive(samples[0])
    for data in _mutations(samples[0], rng):
        fresh = Pair.new(seed="mut")
        fresh.host.start()
        fresh.host.data_to_send()
        before = _state(fresh.host)
        try:
            fresh.host.receive(data)
        except RemoteProtocolError:
            assert _state(fresh.host) == before
    play = _in_play(3)
    mover = play.host if play.host.my_turn else play.joiner
    mover.move(mover.view.legal_moves[0])
    (move,) = mover.data_to_send()
    receiver = play.peer(mover.peer_role)
    for data in _mutations(move, rng):
        before = _state(receiver)
        try:
            receiver.receive(data)
        except RemoteProtocolError as exc:
            assert exc.violation.rule
            assert _state(receiver) == before
            receiver._error = None
        else:
            break  # an unmodified prefix cannot be; a flip that still verifies cannot be


BAD_VALUES = [None, -1, 2**40, "x" * 400, b"", b"\x00" * 33, [1, 2, 3], {"a": 1}, True, 1.5]


def _signed_raw(peer, raw: dict) -> bytes:
    """Sign an arbitrary body map with the peer's key: a signed, malformed message."""
    from p2pgotg.crypto import sign

    flow = peer.flow
    theirs = flow.senders[peer.peer_role].hashes
    body = msgpack.packb({"t": raw.pop("t"), "seq": flow.next_seq(peer.role),
                          "prev": flow.last_hash(peer.role), "ack": theirs[-1],
                          "game": flow.game_id, **raw}, use_bin_type=True)
    return msgpack.packb({"body": body, "sig": sign(peer._key, body)}, use_bin_type=True)


def test_every_field_of_every_message_type_with_a_wrong_value_is_refused() -> None:
    pair = _in_play(4)
    mover = pair.host if pair.host.my_turn else pair.joiner
    receiver = pair.peer(mover.peer_role)
    checked = 0
    for type_, fields in registered().items():
        for name, (validator, _required) in fields.items():
            for bad in BAD_VALUES:
                try:
                    validator(bad)
                    continue  # a valid value for this field
                except WireError:
                    pass  # a value the schema refuses: send it
                data = _signed_raw(mover, {"t": type_, name: bad})
                before = _state(receiver)
                try:
                    receiver.receive(data)
                except RemoteProtocolError as exc:
                    assert exc.violation.rule == "malformed-message", exc
                    assert exc.violation.signed
                    receiver._error = None
                    receiver.flow.transcript.pop()  # drop the kept evidence for the next case
                else:
                    raise AssertionError(f"{type_}.{name}={bad!r} was accepted")
                assert _state(receiver) == before
                checked += 1
    assert checked > 100
