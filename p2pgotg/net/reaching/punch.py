"""TCP hole punching by simultaneous open (RFC 9293 3.5; Ford, Srisuresh and Kegel 2005),
through routers that drop unsolicited packets and through routers that refuse them.

Both sides connect, at about the same time, from the local port whose public mapping STUN
reported to the other's public mapping. Each side's outgoing SYN opens its own NAT for the
other's SYN, so the SYNs cross and TCP makes one connection of them. TLS then runs over it
unchanged: the host is the TLS server whichever side's SYN won, so the pin check is the same
as for a direct connection.

A router that drops an unsolicited SYN is forgiving: the SYN that came too early is lost
and the kernel sends it again. A router that answers it with a TCP reset (OpenWrt's
default, and many home routers') is not: the reset ends the sender's connect at once and
closes the mapping its SYN had just opened. Then the two SYNs must cross on the way, each
sent within one one-way delay of the other; each side tries again at once after a reset,
and the pause before a new try is random, so that two sides retrying at the same pace do
not stay out of step for ever (measured in the test bed: with a fixed pause the two sides
locked 60 ms apart and never met; SPEC 3.8 gives the figures). Each try first sends a SYN
whose IP TTL (``OPENING_TTL``) runs out past our router and before the other's (the "TTL
trick" of STUNT, Guha and Francis 2005), which opens our own mapping without reaching the
other side's router, and connects for real right after it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from p2pgotg.net.reaching.reuse import reusable_socket
from p2pgotg.reach.candidates import Candidate

#: The TTL of the SYN that opens our own mapping: our router passes it on (1 hop), the
#: next router on the way, the provider's, lets it expire, so the other side's router
#: never sees it and never resets it.
OPENING_TTL = 2
TRY_TIME = 2.0  # seconds one real connect may take (a dropped SYN is sent again meanwhile)
PAUSE = 0.2  # the longest pause after a refusal; each pause is random in [0, PAUSE]


class PunchFailed(Exception):
    """No punched connection came up in time; the text says what to try instead."""


class PunchPort:
    """A local port to punch from, kept bound for as long as it lives, so that the public
    mapping STUN reports for it stays ours."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.sock = sock

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    async def punch(self, targets: list[Candidate], deadline: float) -> trio.SocketStream:
        """The first TCP connection from our port to any target before ``deadline`` (trio
        time); PunchFailed after it."""
        winner: list[trio.SocketStream] = []

        async def keep_trying(target: Candidate, nursery: trio.Nursery) -> None:
            while True:
                _open_mapping(self.port, target)
                try:
                    stream = await _connect_try(self.port, target)
                except OSError:  # refused (a reset), or these four addresses still busy
                    await trio.sleep(random.uniform(0, PAUSE))
                    continue
                if stream is None:
                    continue  # (no answer this time: a fresh SYN)
                if winner:
                    await stream.aclose()
                    return
                winner.append(stream)
                nursery.cancel_scope.cancel()
                return

        with trio.move_on_at(deadline):
            async with trio.open_nursery() as nursery:
                for target in targets:
                    nursery.start_soon(keep_trying, target, nursery)
        if not winner:
            shown = ", ".join(str(t) for t in targets)
            raise PunchFailed(f"no connection through the NATs to {shown}")
        return winner[0]

    def close(self) -> None:
        self.sock.close()


TCP_SYN_RECV = 3  # Linux's tcpi_state: the other SYN came, our SYN-ACK is on its way


def _tcp_state(sock: socket.socket) -> int | None:
    """The kernel's TCP state of ``sock`` (Linux), None where it does not say."""
    if not hasattr(socket, "TCP_INFO"):
        return None
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    except OSError:
        return None


async def _connect_try(local_port: int, target: Candidate) -> trio.SocketStream | None:
    """One real connect from ``local_port`` to ``target``, given TRY_TIME; None when it is
    still unanswered then. Raises OSError when refused. A connect whose handshake is under
    way when the time is up (the other side's SYN came: simultaneous open) is given one
    more TRY_TIME: cut then, the other side, already connected, would wait on a connection
    we had closed, and stop punching."""
    family = socket.AF_INET6 if ":" in target.address else socket.AF_INET
    sock = reusable_socket(family)
    try:
        await sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", local_port))
        raw = socket.socket(fileno=sock.detach())  # (the connect is ours to watch)
    except BaseException:
        sock.close()
        raise
    try:
        raw.setblocking(False)
        error = raw.connect_ex((target.address, target.port))
        if error not in (0, errno.EINPROGRESS):
            raise OSError(error, os.strerror(error))
        extended = False
        while True:
            with trio.move_on_after(TRY_TIME):
                await trio.lowlevel.wait_writable(raw)
                error = raw.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    raise OSError(error, os.strerror(error))
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return trio.SocketStream(trio.socket.from_stdlib_socket(raw))
            if extended or _tcp_state(raw) != TCP_SYN_RECV:
                raw.close()
                return None
            extended = True
    except BaseException:
        raw.close()
        raise


def _open_mapping(local_port: int, target: Candidate) -> None:
    """Send one SYN from ``local_port`` to ``target`` that expires after OPENING_TTL hops:
    it opens our router's mapping for the target and goes no further. The socket is closed
    again at once (a socket in SYN-SENT closes without a word), and any error (these four
    addresses still busy, no route) only means this try opens nothing ahead."""
    family = socket.AF_INET6 if ":" in target.address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, OPENING_TTL)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, OPENING_TTL)
        sock.setblocking(False)
        sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", local_port))
        with contextlib.suppress(BlockingIOError):
            sock.connect((target.address, target.port))
    except OSError:
        pass
    finally:
        sock.close()


@asynccontextmanager
async def punch_port(preferred: int = 0) -> AsyncIterator[PunchPort]:
    """A PunchPort on ``preferred`` (the same port every time a game is resumed, so its
    public mapping stays the one the other side knows), or any free port when that one is
    taken; closed on leaving."""
    sock = reusable_socket()
    try:
        try:
            await sock.bind(("0.0.0.0", preferred))
        except OSError:
            if not preferred:
                raise
            await sock.bind(("0.0.0.0", 0))
    except BaseException:
        sock.close()
        raise
    port = PunchPort(sock)
    try:
        yield port
    finally:
        port.close()
