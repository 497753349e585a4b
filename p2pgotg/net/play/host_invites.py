"""The invite codes a host hands out and the ways in they open (SPEC 3.3, 3.7, 3.8): on
the LAN, a code per address; across NATs, the one invite of the offer, its short code
(whose gate the host keeps to admit a joiner that came by it) and the connections punched
to us, which enter as strangers like any other. A host of games (`hosting.Host`) and a
table's host (`table_host.TableHost`) make them alike.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol

import trio

from p2pgotg.net.reaching.invite import Invite, reachable_addresses
from p2pgotg.net.reaching.offer import offer
from p2pgotg.net.reaching.pake_link import ShortCodeGate
from p2pgotg.net.transport.admission import Gate, Ticket, peer_address, serve_one
from p2pgotg.net.transport.tls import public_key_pin
from p2pgotg.reach.tor_onion import game_seed

if TYPE_CHECKING:
    from p2pgotg.net.play.hosting import HostConfig


@dataclass
class Hosting:
    """What a host reports through `task_status.started`: the invite codes."""

    port: int
    invites: list[str]
    short_code: str | None = None  # announced on the LAN (SPEC 3.7)
    notes: list[str] = field(default_factory=list)  # what the host found about its network
    resumed: int = 0  # unfinished games picked up from disk


class InvitingHost(Protocol):
    """What making the invites reads of a host, and the handler its joiners reach."""

    config: HostConfig
    join_secret: bytes
    fingerprint: bytes  # of our TLS certificate
    strangers: Gate  # connections not yet admitted
    gates: list[ShortCodeGate]  # the short code's, from the moment it is shown
    on_status: Callable[[str], None]
    on_invite: Callable[[str], None]
    on_short_code: Callable[[str], None]

    async def handler(self, stream: trio.SSLStream, ticket: Ticket) -> None: ...


async def open_invites(host: InvitingHost, nursery: trio.Nursery, port: int,
                       context: ssl.SSLContext, *,
                       away: Callable[[], bool] = lambda: False) -> Hosting:
    """The LAN invite codes; or, with `config.reach`, the one invite of the offer that
    reaches us across NATs (SPEC 3.8), its short code and what it found, the offer served
    in `nursery`. `away()` says whether a joiner of ours is away (the offer then punches
    back to it)."""
    config = host.config
    pin = public_key_pin(config.tls_cert)
    if config.reach is None:
        return Hosting(port, [Invite(address, port, pin, host.join_secret).encode()
                              for address in reachable_addresses(config.bind)])

    async def accept_punched(tcp: trio.SocketStream) -> None:
        ticket = host.strangers.enter(peer_address(tcp))
        if ticket is None:
            tcp.socket.close()
            return
        await serve_one(tcp, ticket, host.handler, context)

    def short_code_up(code: str, gate: ShortCodeGate) -> None:
        host.gates.append(gate)  # (before anyone can read the code)
        host.on_short_code(code)

    found = await nursery.start(partial(
        offer, config.reach, port, config.bind, pin, host.join_secret, host.fingerprint,
        accept_punched, on_status=host.on_status, on_invite=host.on_invite,
        on_short_code=short_code_up, away=away,
        onion_seed=game_seed(config.key.private_bytes_raw(), host.join_secret)))
    return Hosting(port, [found.invite], found.short_code, found.notes)
