"""The joiner's race over an invite's candidates, on loopback: the first connection whose
pin checks out wins, another program's certificate loses, and a NAT that rules punching
out is said at once the first time, while a later reconnect keeps waiting for the host."""

from __future__ import annotations

import socket
from functools import partial

import pytest
import trio

from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import NAT_SYMMETRIC, NAT_UNKNOWN, Invite
from p2pgotg.net.reaching.racing import JoinReach, race
from p2pgotg.net.transport.errors import ConnectFailedError, PinMismatchError
from p2pgotg.net.transport.tls import (
    listening_port,
    make_certificate,
    public_key_pin,
    serve_tls,
    server_context,
)
from p2pgotg.reach.candidates import LAN, MAPPED, Candidate

SECRET = bytes(16)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def tls_server(nursery: trio.Nursery) -> tuple[int, bytes]:
    cert, key = make_certificate()

    async def hold(stream: trio.SSLStream) -> None:
        await trio.sleep_forever()

    listeners = await nursery.start(partial(serve_tls, hold, server_context(cert, key), 0,
                                            "127.0.0.1"))
    return listening_port(listeners), public_key_pin(cert)


async def test_the_candidate_with_the_right_pin_wins_over_a_dead_one_and_an_impostor():
    async with trio.open_nursery() as nursery:
        impostor, _other_pin = await tls_server(nursery)
        real, pin = await tls_server(nursery)
        invite = Invite.v2([Candidate(LAN, "127.0.0.1", closed_port()),
                            Candidate(MAPPED, "127.0.0.1", impostor),
                            Candidate(LAN, "127.0.0.1", real)], pin, SECRET)
        stream = await race(invite, JoinReach([]), Timeouts(), lambda s: None)
        assert stream.getpeercert(binary_form=True)
        assert public_key_pin(stream.getpeercert(binary_form=True)) == pin
        await stream.aclose()
        nursery.cancel_scope.cancel()


async def test_only_impostors_is_a_pin_mismatch():
    async with trio.open_nursery() as nursery:
        impostor, _pin = await tls_server(nursery)
        invite = Invite.v2([Candidate(LAN, "127.0.0.1", impostor)], bytes(32), SECRET)
        with pytest.raises(PinMismatchError):
            await race(invite, JoinReach([]), Timeouts(), lambda s: None)
        nursery.cancel_scope.cancel()


async def test_a_symmetric_host_fails_fast_the_first_time_and_is_waited_for_later():
    invite = Invite.v2([Candidate(LAN, "127.0.0.1", closed_port())], bytes(32), SECRET,
                       NAT_SYMMETRIC)
    with pytest.raises(SessionError, match=r"symmetric NAT.*What to do") as info:
        await race(invite, JoinReach([]), Timeouts(), lambda s: None, first=True)
    assert info.value.fatal
    with pytest.raises(ConnectFailedError):
        await race(invite, JoinReach([]), Timeouts(), lambda s: None, first=False)


async def test_a_host_not_running_is_retried_not_given_up():
    invite = Invite.v2([Candidate(LAN, "127.0.0.1", closed_port())], bytes(32), SECRET,
                       NAT_UNKNOWN)
    with pytest.raises(ConnectFailedError, match=r"127\.0\.0\.1"):
        await race(invite, JoinReach([]), Timeouts(), lambda s: None)
