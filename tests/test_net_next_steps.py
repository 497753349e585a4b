"""Every failure to reach the other player names the next step (SPEC 3.8), on loopback:
a joiner whose STUN server does not answer is told that no reply code could be made and
that --stun would help (not that the host's LAN address is the problem), a joiner whose
host never punched is told to send a fresh code, and a host with --stun off does not
claim that no STUN server answered."""

from __future__ import annotations

import socket
import struct
from functools import partial

import pytest
import trio

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import NAT_EASY, NAT_UNKNOWN, Invite
from p2pgotg.net.reaching.offer import describe
from p2pgotg.net.reaching.racing import JoinReach, race, race_opener
from p2pgotg.net.transport.errors import ConnectFailedError
from p2pgotg.reach.candidates import LAN, PUNCH, Candidate
from p2pgotg.reach.stun import HEADER_SIZE

SECRET = bytes(range(16))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def punchable_invite() -> Invite:
    """A host behind an easy NAT: its LAN address (nothing listens there) and its public
    mapping to punch to (nothing answers there either)."""
    return Invite.v2([Candidate(LAN, "127.0.0.1", closed_port()),
                      Candidate(PUNCH, "127.0.0.1", closed_port())], bytes(32), SECRET,
                     NAT_EASY)


async def test_no_stun_answer_tells_the_joiner_no_reply_code_and_about_stun():
    invite = punchable_invite()
    reach = JoinReach([("127.0.0.1", closed_port())])
    with pytest.raises(ConnectFailedError) as info:
        await race(invite, reach, Timeouts(), lambda s: None)
    said = info.value.detail
    assert said.startswith("no reply code could be made: no STUN server answered you")
    assert "--stun HOST:PORT" in said

    said_off = ""
    with pytest.raises(ConnectFailedError) as info:
        await race(invite, JoinReach([]), Timeouts(), lambda s: None)
    said_off = info.value.detail
    assert "no STUN server was asked (--stun off)" in said_off


async def test_a_joiner_that_gives_up_says_why_not_which_lan_address(tmp_path):
    """Issue 27: the joiner was told "no host answers at 192.168.1.2:33591", the host's
    LAN address, as if that were the problem."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from p2pgotg.selfplay import bot_runner

    invite = punchable_invite()
    opener = race_opener(invite, JoinReach([("127.0.0.1", closed_port())]), Timeouts())
    config = JoinConfig(Ed25519PrivateKey.generate(), invite, tmp_path, Timeouts(),
                        give_up=1.0, opener=opener)
    with pytest.raises(SessionError) as info:
        await join_game(config, bot_runner(1))
    said = str(info.value)
    assert said.startswith("the host cannot be reached: no reply code could be made")
    assert "--stun HOST:PORT" in said and "no host answers at" not in said


def _stun_answer(request: bytes) -> bytes:
    """A Binding success saying 203.0.113.5:40000 (RFC 8489 14.2)."""
    txid = request[8:HEADER_SIZE]
    mask = struct.pack(">I", 0x2112A442) + txid
    value = struct.pack(">BBH", 0, 1, 40000 ^ 0x2112) + bytes(
        a ^ b for a, b in zip(bytes([203, 0, 113, 5]), mask, strict=False))
    body = struct.pack(">HH", 0x0020, len(value)) + value
    return struct.pack(">HHI", 0x0101, len(body), 0x2112A442) + txid + body


async def _stun_server(nursery: trio.Nursery) -> int:
    async def handle(stream: trio.SocketStream) -> None:
        await stream.send_all(_stun_answer(await stream.receive_some(1024)))
        await trio.sleep(1)

    listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
    return int(listeners[0].socket.getsockname()[1])


async def test_a_host_that_never_punches_gets_a_fresh_reply_code_asked_for():
    async with trio.open_nursery() as nursery:
        servers = [("127.0.0.1", await _stun_server(nursery)),
                   ("127.0.0.1", await _stun_server(nursery))]
        shown: list[str] = []
        reach = JoinReach(servers, shown.append, reply_wait=1.0)
        with pytest.raises(ConnectFailedError) as info:
            await race(punchable_invite(), reach, Timeouts(), lambda s: None)
        nursery.cancel_scope.cancel()
    assert len(shown) == 1 and shown[0].startswith("gr1-")  # (the code it waited on)
    said = info.value.detail
    assert said.startswith("the host did not punch through within 1 s. Next: send the host "
                           "a fresh reply code")


def test_a_host_with_stun_off_says_so_not_that_no_server_answered():
    """Issue 27: with --stun off the host said "no STUN server answered"."""
    off, = describe(NAT_UNKNOWN, None, None, 4000, False, stun_asked=False)
    assert "no STUN server was asked (--stun off)" in off and "answered" not in off
    silent, = describe(NAT_UNKNOWN, None, None, 4000, False, stun_asked=True)
    assert "no STUN server answered" in silent and "--stun HOST:PORT" in silent
