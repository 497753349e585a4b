"""The STUN client against servers that misbehave, on loopback: a clear line each time,
never a traceback and never a wrong address."""

from __future__ import annotations

import socket
from functools import partial

import pytest
import trio

from p2pgotg.net.reuse import PortReservation
from p2pgotg.net.stun_client import StunFailed, parse_server, probe, query
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
