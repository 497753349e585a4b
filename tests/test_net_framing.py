"""Frames over byte streams: the sans-IO decoder, then the trio channel on memory streams.

Expected bytes come from the wire format in p2pgotg/net/transport/framing.py's docstring: a 4-byte
big-endian length, then the payload; length 0 is a keepalive.
"""

from __future__ import annotations

import struct

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.net.transport.errors import (
    ConnectionClosedError,
    FrameTooLargeError,
    PeerSilentError,
    TruncatedFrameError,
)
from p2pgotg.net.transport.framing import (
    KEEPALIVE,
    MAX_FRAME,
    FramedChannel,
    FrameDecoder,
    encode_frame,
)


def wire(payload: bytes) -> bytes:
    """The frame as the format describes it, written independently of encode_frame."""
    return struct.pack(">I", len(payload)) + payload


payloads = st.lists(st.binary(min_size=1, max_size=300), max_size=12)


# -- encode_frame and FrameDecoder -------------------------------------------------------


def test_encode_frame_matches_format():
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert encode_frame(b"x" * MAX_FRAME)[:4] == MAX_FRAME.to_bytes(4, "big")
    assert KEEPALIVE == b"\x00\x00\x00\x00"


def test_encode_frame_refuses_empty_and_oversized():
    with pytest.raises(ValueError, match="keepalive"):
        encode_frame(b"")
    with pytest.raises(ValueError, match="exceeds"):
        encode_frame(b"x" * (MAX_FRAME + 1))


def test_decoder_trickle_one_byte_at_a_time():
    frames = [b"hello", b"x" * 1000, b"\x00", b"world"]
    data = b"".join(wire(f) for f in frames)
    decoder = FrameDecoder()
    out = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    assert out == frames
    assert decoder.buffered == 0


@given(payloads, st.data())
def test_decoder_random_chunks(frames, data):
    stream = b"".join(wire(f) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    decoder = FrameDecoder()
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        out += decoder.feed(stream[start:end])
    assert out == frames
    assert decoder.buffered == 0


def test_decoder_reports_keepalives_as_empty_frames():
    assert FrameDecoder().feed(KEEPALIVE + wire(b"a") + KEEPALIVE) == [b"", b"a", b""]


def test_decoder_accepts_exactly_max_frame():
    assert FrameDecoder().feed(wire(b"m" * MAX_FRAME)) == [b"m" * MAX_FRAME]


@pytest.mark.parametrize("length", [MAX_FRAME + 1, 0xFFFFFFFF])
def test_oversized_length_fails_on_the_header_alone(length):
    decoder = FrameDecoder()
    assert decoder.feed(struct.pack(">I", length)[:3]) == []
    # The error comes from the 4 header bytes: no body was sent, none is buffered.
    with pytest.raises(FrameTooLargeError, match=str(length)):
        decoder.feed(struct.pack(">I", length)[3:])
    assert decoder.buffered == 0
    with pytest.raises(FrameTooLargeError):  # and it stays broken
        decoder.feed(wire(b"fine"))


def test_frames_before_an_oversized_length_still_come_out():
    decoder = FrameDecoder()
    decoder.receive_data(wire(b"one") + wire(b"two") + struct.pack(">I", MAX_FRAME + 1))
    assert decoder.next_frame() == b"one"
    assert decoder.next_frame() == b"two"
    with pytest.raises(FrameTooLargeError):
        decoder.next_frame()


@given(st.binary(max_size=2000), st.integers(1, 64))
def test_garbage_gives_frames_or_a_net_error(garbage, chunk):
    decoder = FrameDecoder()
    try:
        for i in range(0, len(garbage), chunk):
            for frame in decoder.feed(garbage[i : i + chunk]):
                assert len(frame) <= MAX_FRAME
    except FrameTooLargeError:
        pass
    assert decoder.buffered < MAX_FRAME + 4  # never more than one unfinished frame


def test_decoder_keeps_at_most_one_unfinished_frame():
    decoder = FrameDecoder()
    for _ in range(3):
        assert decoder.feed(wire(b"z" * MAX_FRAME)[:-1]) == []
        assert decoder.buffered == MAX_FRAME + 3
        assert decoder.feed(b"z") == [b"z" * MAX_FRAME]
        assert decoder.buffered == 0


# -- FramedChannel on memory streams -----------------------------------------------------


async def send_in_chunks(stream: trio.abc.SendStream, data: bytes, cuts: list[int]) -> None:
    """Send ``data`` cut at ``cuts``, letting the reader run between chunks."""
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        if end > start:
            await stream.send_all(data[start:end])
            await trio.testing.wait_all_tasks_blocked()


async def test_channel_frames_both_ways():
    a, b = trio.testing.memory_stream_pair()
    left, right = FramedChannel(a), FramedChannel(b)
    await left.send(b"ping")
    assert await right.receive() == b"ping"
    await right.send(b"pong" * 1000)
    assert await left.receive() == b"pong" * 1000


async def test_channel_trickle_one_byte_at_a_time():
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    frames = [b"first", b"\xff" * 300, b"third"]
    data = b"".join(wire(f) for f in frames)
    got = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_in_chunks, raw, data, list(range(1, len(data))))
        for _ in frames:
            got.append(await channel.receive())
    assert got == frames


@settings(max_examples=40, deadline=None)
@given(payloads.filter(bool), st.data())
async def test_channel_random_chunks(frames, data):
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    stream = b"".join(wire(f) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    got = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_in_chunks, raw, stream, cuts)
        for _ in frames:
            got.append(await channel.receive())
    assert got == frames


async def test_channel_swallows_keepalives():
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    await raw.send_all(KEEPALIVE + wire(b"a") + KEEPALIVE * 3 + wire(b"b") + KEEPALIVE)
    assert await channel.receive() == b"a"
    assert await channel.receive() == b"b"


async def test_channel_refuses_bad_payloads_before_sending():
    a, _b = trio.testing.memory_stream_pair()
    channel = FramedChannel(a)
    with pytest.raises(ValueError):
        await channel.send(b"")
    with pytest.raises(ValueError):
        await channel.send(b"x" * (MAX_FRAME + 1))


async def test_oversized_frame_from_peer_is_final():
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    await raw.send_all(wire(b"ok") + struct.pack(">I", MAX_FRAME + 1))
    assert await channel.receive() == b"ok"
    with pytest.raises(FrameTooLargeError):
        await channel.receive()
    await raw.send_all(wire(b"too late"))
    with pytest.raises(FrameTooLargeError):
        await channel.receive()


async def test_clean_close_is_connection_closed():
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    await raw.send_all(wire(b"last"))
    await raw.aclose()
    assert await channel.receive() == b"last"
    with pytest.raises(ConnectionClosedError) as info:
        await channel.receive()
    assert not isinstance(info.value, TruncatedFrameError)


@pytest.mark.parametrize("partial", [b"\x00\x00", wire(b"cut in half")[:-5]])
async def test_half_frame_at_eof_is_truncation(partial):
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    await raw.send_all(partial)
    await raw.aclose()
    with pytest.raises(TruncatedFrameError, match=f"{len(partial)} bytes"):
        await channel.receive()


async def test_concurrent_senders_never_interleave():
    a, b = trio.testing.memory_stream_pair()
    sender, receiver = FramedChannel(a), FramedChannel(b)

    async def send_many(tag: bytes) -> None:
        for i in range(30):
            await sender.send(tag * 50 + b"%d" % i)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_many, b"a")
        nursery.start_soon(send_many, b"b")
        got = [await receiver.receive() for _ in range(60)]
    for tag in (b"a", b"b"):
        assert [f for f in got if f[:1] == tag] == [tag * 50 + b"%d" % i for i in range(30)]


async def test_only_one_receiver_at_a_time():
    _a, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(channel.receive)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            await channel.receive()
        nursery.cancel_scope.cancel()


async def test_send_after_close_and_to_a_gone_peer():
    a, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(a)
    await b.aclose()
    with pytest.raises(ConnectionClosedError, match="broken"):
        await channel.send(b"anyone?")
    await channel.aclose()
    with pytest.raises(ConnectionClosedError, match="closed on this side"):
        await channel.send(b"x")
    with pytest.raises(ConnectionClosedError):
        await channel.receive()


# -- timing, on trio's virtual clock -------------------------------------------------------


async def test_silence_timeout_fires_and_channel_stays_usable(autojump_clock):
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b, keepalive_interval=None, silence_timeout=30)
    start = trio.current_time()
    with pytest.raises(PeerSilentError):
        await channel.receive()
    assert trio.current_time() - start == pytest.approx(30)
    await raw.send_all(wire(b"late but here"))
    assert await channel.receive() == b"late but here"


async def test_partial_frames_are_not_signs_of_life(autojump_clock):
    raw, b = trio.testing.memory_stream_pair()
    channel = FramedChannel(b, keepalive_interval=None, silence_timeout=30)

    async def dribble() -> None:
        for byte in wire(b"slow"):
            await raw.send_all(bytes([byte]))
            await trio.sleep(10)

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(dribble)
        with pytest.raises(PeerSilentError):
            await channel.receive()
        nursery.cancel_scope.cancel()
    assert trio.current_time() - start == pytest.approx(30)


async def test_keepalives_keep_a_quiet_peer_alive(autojump_clock):
    a, b = trio.testing.memory_stream_pair()
    sender = FramedChannel(a, keepalive_interval=10, silence_timeout=None)
    receiver = FramedChannel(b, keepalive_interval=None, silence_timeout=30)
    async with trio.open_nursery() as nursery:
        await nursery.start(sender.keep_alive)
        with trio.move_on_after(300) as waited:
            await receiver.receive()  # only keepalives arrive: no frame, no timeout
        assert waited.cancelled_caught
        nursery.cancel_scope.cancel()  # the sender stops its keepalives...
    start = trio.current_time()
    with pytest.raises(PeerSilentError):  # ...and the receiver notices
        await receiver.receive()
    assert trio.current_time() - start == pytest.approx(30)


async def test_keepalives_are_sent_only_when_idle(autojump_clock):
    a, raw = trio.testing.memory_stream_pair()
    channel = FramedChannel(a, keepalive_interval=10, silence_timeout=None)
    start = trio.current_time()
    arrivals: list[tuple[float, bytes]] = []

    async def read_raw() -> None:
        decoder = FrameDecoder()
        while data := await raw.receive_some():
            arrivals.extend((trio.current_time() - start, f) for f in decoder.feed(data))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_raw)
        await nursery.start(channel.keep_alive)
        for i in range(7):  # a message every 5 s up to t=30: no keepalive needed
            await channel.send(b"m%d" % i)
            await trio.sleep(5)
        await trio.sleep(30)  # idle until t=65
        await channel.aclose()  # also ends keep_alive
    keepalive_times = [t for t, frame in arrivals if frame == b""]
    assert keepalive_times == pytest.approx([40, 50, 60])
    assert [f for _t, f in arrivals if f] == [b"m%d" % i for i in range(7)]
