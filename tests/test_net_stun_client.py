"""The STUN client against servers that misbehave, on loopback: a clear line each time,
never a traceback and never a wrong address."""

from __future__ import annotations

import random
import socket
import struct
from functools import partial

import pytest
import trio

from p2pgotg.net.reaching.reuse import PortReservation
from p2pgotg.net.reaching.stun_client import StunFailed, parse_server, probe, query
from p2pgotg.reach.candidates import address_problem
from p2pgotg.reach.stun import HEADER_SIZE


async def _server(nursery: trio.Nursery, answer) -> int:
    async def handle(stream: trio.SocketStream) -> None:
        request = await stream.receive_some(1024)
        reply = answer(request)
        if reply:
            await stream.send_all(reply)
        await trio.sleep(5)  # a server that sends nothing more keeps the line open

    listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
    return int(listeners[0].socket.getsockname()[1])


@pytest.mark.parametrize(("answer", "says"), [
    (lambda req: b"HTTP/1.1 400 Bad Request\r\n\r\n", "unusable answer: .*first two bits"),
    (lambda req: b"\x01\x01\x00\x00" + req[4:8] + bytes(12), "another request"),
    (lambda req: b"", "no answer"),
    (lambda req: req[:HEADER_SIZE - 2], "no answer"),
])
async def test_a_garbage_stun_answer_says_what_was_wrong(answer, says):
    async with trio.open_nursery() as nursery:
        port = await _server(nursery, answer)
        reservation = await PortReservation.new()
        with pytest.raises(StunFailed, match=says):
            await query(("127.0.0.1", port), reservation.port, timeout=0.5)
        reservation.close()
        nursery.cancel_scope.cancel()


def _success(request: bytes, address: bytes, port: int = 40000, family: int = 1) -> bytes:
    """A Binding success for ``request`` whose XOR-MAPPED-ADDRESS is ``address`` (RFC 8489
    14.2), as a server that lies or is broken would send it."""
    txid = request[8:HEADER_SIZE]
    mask = struct.pack(">I", 0x2112A442) + txid
    value = struct.pack(">BBH", 0, family, port ^ 0x2112) + bytes(
        a ^ b for a, b in zip(address, mask, strict=False))
    body = struct.pack(">HH", 0x0020, len(value)) + value + bytes(-len(value) % 4)
    return struct.pack(">HHI", 0x0101, len(body), 0x2112A442) + txid + body


GARBAGE = [
    lambda req: _success(req, bytes(4)),  # 0.0.0.0
    lambda req: _success(req, bytes([224, 0, 0, 1])),
    lambda req: _success(req, bytes([255] * 4)),
    lambda req: _success(req, bytes(16), family=2),
    lambda req: _success(req, bytes([198, 51, 100, 9]), port=0),
    lambda req: _success(req, bytes([198, 51, 100, 9, 1])),  # a fifth byte
    lambda req: _success(req, bytes([198, 51, 100, 9]), family=7),
    lambda req: _success(req, bytes([198, 51, 100, 9]))[:-2],  # cut short
    lambda req: struct.pack(">HHI", 0x0101, 2040, 0x2112A442) + req[8:20],  # says 2 KB, sends 0
    lambda req: struct.pack(">HHI", 0x0101, 65532, 0x2112A442) + req[8:20] + bytes(64),
    *[lambda req, seed=seed: random.Random(seed).randbytes(random.Random(seed).randrange(1, 80))
      for seed in range(12)],
    *[lambda req, seed=seed: req[:4] + bytes([0x21, 0x12, 0xA4, 0x42]) + req[8:20]
      + random.Random(seed).randbytes(8) for seed in range(6)],
]


@pytest.mark.parametrize("answer", GARBAGE)
async def test_no_garbage_answer_over_tcp_gives_an_address_or_escapes(answer):
    """Whatever a STUN server sends over a real connection: StunFailed with a reason (or
    a usable address), and probe() then reports no mapping; never another exception."""
    async with trio.open_nursery() as nursery:
        port = await _server(nursery, answer)
        reservation = await PortReservation.new()
        try:
            got = await query(("127.0.0.1", port), reservation.port, timeout=0.5)
        except StunFailed as exc:
            assert str(exc).startswith(("STUN server 127.0.0.1", "no answer from", "could not"))
        else:
            assert address_problem(got[0]) is None and 1 <= got[1] <= 0xFFFF
        result = await probe([("127.0.0.1", port)], reservation.port, [], timeout=0.5)
        assert result.mapped is None or address_problem(result.mapped[0]) is None
        reservation.close()
        nursery.cancel_scope.cancel()


async def test_nobody_listening_is_said_plainly_and_probe_reports_unknown():
    reservation = await PortReservation.new()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    result = await probe([("127.0.0.1", closed)], reservation.port, [], timeout=1)
    reservation.close()
    assert result.nat == 0 and result.mapped is None
    assert "could not ask STUN server 127.0.0.1" in result.notes[0]


@pytest.mark.parametrize(("text", "server"), [
    ("stun.example.org", ("stun.example.org", 3478)),
    ("192.0.2.1:3479", ("192.0.2.1", 3479)),
    ("[2001:db8::1]:5349", ("2001:db8::1", 5349)),
])
def test_stun_server_names(text, server):
    assert parse_server(text) == server


@pytest.mark.parametrize("text", ["host:port", "host:0", ":3478", "h:70000"])
def test_bad_stun_server_names(text):
    with pytest.raises(ValueError):
        parse_server(text)


async def test_a_stun_server_name_that_cannot_be_a_name_is_said_plainly():
    with pytest.raises(StunFailed, match="could not ask STUN server"):
        await query(("a" * 70 + ".example", 3478), 40000, timeout=1)
