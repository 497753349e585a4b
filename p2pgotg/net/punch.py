"""TCP hole punching by simultaneous open (RFC 793 3.4; Ford, Srisuresh and Kegel 2005).

Both sides connect, at about the same time, from the local port whose public mapping STUN
reported to the other's public mapping. Each side's outgoing SYN opens its own NAT for the
other's SYN, so the SYNs cross and TCP makes one connection of them, with no listener
anywhere. TLS then runs over it unchanged: the host is the TLS server whichever side's SYN
won, so the pin check is the same as for a direct connection.

Routers that drop unsolicited packets (rather than refusing them) make this forgiving: a
SYN that arrives before the other side's hole is open is dropped and the kernel sends it
again. An attempt still gets a fresh socket every few seconds, in case a refusal did end
it.
"""

from __future__ import annotations

import contextlib

import trio

from p2pgotg.net.reuse import connect_from
from p2pgotg.reach.candidates import Candidate

RETRY = 2.0  # seconds before a fresh connect() from the same port


class PunchFailed(Exception):
    """No punched connection came up in time; the text says what to try instead."""


async def simultaneous_open(local_port: int, targets: list[Candidate],
                            deadline: float) -> trio.SocketStream:
    """The first TCP connection from ``local_port`` to any target, before ``deadline``
    (trio time); PunchFailed after it."""
    winner: list[trio.SocketStream] = []

    async def keep_trying(target: Candidate, nursery: trio.Nursery) -> None:
        while True:
            with trio.move_on_after(RETRY):
                with contextlib.suppress(OSError):
                    stream = await connect_from(local_port, target.address, target.port)
                    if winner:
                        await stream.aclose()
                        return
                    winner.append(stream)
                    nursery.cancel_scope.cancel()
                    return
                await trio.sleep(0.1)  # refused at once: do not spin

    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:
            for target in targets:
                nursery.start_soon(keep_trying, target, nursery)
    if not winner:
        shown = ", ".join(str(t) for t in targets)
        raise PunchFailed(f"no connection through the NATs to {shown}")
    return winner[0]
