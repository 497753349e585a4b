"""Ask the home router to forward a TCP port to us: PCP (RFC 6887), then NAT-PMP
(RFC 6886), both small UDP exchanges with the default gateway written on trio, then
UPnP-IGD through miniupnpc in a worker thread. The mapping is renewed while the game lasts
and removed when it ends.

A router whose own internet address is private (carrier-grade NAT, or a second router
behind the first) cannot make us reachable even when it maps: we say so.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import socket
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import trio

from p2pgotg.reach import natpmp, pcp

LIFETIME = 3600  # seconds asked for; renewed at half of what the router grants
TRIES = (0.25, 0.5, 1.0)  # the wait after each UDP try (RFC 6887 8.1.1 starts at 3 s; a
# home router answers within milliseconds, and a person is waiting)
UPNP_DISCOVERY_MS = 500
UPNP_WAIT = 2.0  # seconds, from the start, that port mapping may take in all


class MappingFailed(Exception):
    """A router did not map the port; the text says why (shown to the user)."""


@dataclass
class PortMapping:
    """A port the router forwards to us, and how to renew and remove it."""

    method: str  # "PCP", "NAT-PMP" or "UPnP-IGD"
    external_address: str
    external_port: int
    internal_port: int
    lifetime: int
    gateway: str = ""
    local_address: str = ""
    nonce: bytes = b""
    upnp: object = field(default=None, repr=False)

    @property
    def public(self) -> bool:
        """False when the router's own address is private or shared (carrier-grade NAT)."""
        return is_public(self.external_address)


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    shared = isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.ip_network("100.64.0.0/10")
    return ip.is_global and not shared


def default_gateway() -> str | None:
    """The IPv4 default gateway from /proc/net/route (Linux), or None."""
    try:
        with open("/proc/net/route", encoding="ascii") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) > 3 and parts[1] == "00000000" and int(parts[3], 16) & 0x2:
            return socket.inet_ntoa(struct.pack("<I", int(parts[2], 16)))
    return None


def _local_address_towards(gateway: str) -> str:
    """Our address on the gateway's link (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((gateway, natpmp.PORT))
        return str(s.getsockname()[0])


async def _exchange(gateway: str, request: bytes, accept: Callable[[bytes], object]) -> bytes:
    """Send ``request`` to the gateway's port 5351 until an answer ``accept`` takes."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        await sock.connect((gateway, natpmp.PORT))
        for wait in TRIES:
            with contextlib.suppress(OSError):
                await sock.send(request)
            with trio.move_on_after(wait):
                while True:
                    try:
                        data = await sock.recv(1100)
                    except ConnectionRefusedError:
                        raise MappingFailed(f"the router {gateway} answers neither PCP nor "
                                            "NAT-PMP") from None
                    if accept(data):
                        return data
    raise MappingFailed(f"no answer from the router {gateway} (port 5351)")


def _answers(opcode_byte: int) -> Callable[[bytes], bool]:
    return lambda data: len(data) >= 2 and data[1] == opcode_byte


async def _pcp(gateway: str, local: str, port: int, lifetime: int,
               nonce: bytes) -> PortMapping:
    request = pcp.map_request(local, port, port, lifetime, nonce)
    data = await _exchange(gateway, request,
                           lambda d: len(d) >= 2 and (d[0] == 0 or d[1] == 0x81))
    try:
        got = pcp.parse_map_response(data, nonce)
    except pcp.PcpError as exc:
        raise MappingFailed(f"PCP: {exc}") from None
    return PortMapping("PCP", got.external_address, got.external_port, port, got.lifetime,
                       gateway, local, nonce)


async def _natpmp(gateway: str, local: str, port: int, lifetime: int) -> PortMapping:
    try:
        address = natpmp.parse_external_address(await _exchange(
            gateway, natpmp.external_address_request(), _answers(128)))
        got = natpmp.parse_map_tcp(await _exchange(
            gateway, natpmp.map_tcp_request(port, port, lifetime), _answers(130)))
    except natpmp.NatPmpError as exc:
        raise MappingFailed(f"NAT-PMP: {exc}") from None
    return PortMapping("NAT-PMP", address.address, got.external_port, port, got.lifetime,
                       gateway, local)


def _upnp_discover() -> object:
    """Blocking (run in a thread): find the router's UPnP-IGD control point."""
    import miniupnpc

    upnp = miniupnpc.UPnP()
    upnp.discoverdelay = UPNP_DISCOVERY_MS
    try:
        found = upnp.discover()
        if found:
            upnp.selectigd()
    except Exception:  # noqa: BLE001 (miniupnpc's reasons are often just "Success")
        found = 0
    if not found:
        raise MappingFailed("UPnP-IGD: no internet gateway device answered")
    return upnp


def _upnp_map(upnp: object, port: int, lifetime: int) -> PortMapping:
    """Blocking (run in a thread): map the port, read the router's internet address."""
    try:
        external = upnp.externalipaddress()  # type: ignore[attr-defined]
        if not external:
            raise MappingFailed("UPnP-IGD: the router does not know its internet address")
        upnp.addportmapping(port, "TCP", upnp.lanaddr, port,  # type: ignore[attr-defined]
                            "p2pgotg game", "", lifetime)
    except MappingFailed:
        raise
    except Exception as exc:  # noqa: BLE001 (miniupnpc raises plain Exception with a reason)
        raise MappingFailed(f"UPnP-IGD: {exc}") from None
    return PortMapping("UPnP-IGD", external, port, port, lifetime, upnp=upnp)


async def map_port(port: int, lifetime: int = LIFETIME, *, upnp: bool = True,
                   on_note: Callable[[str], None] = lambda s: None) -> PortMapping | None:
    """Try PCP, NAT-PMP and UPnP-IGD in turn; the first mapping, or None (each failure
    goes to ``on_note`` in plain words). UPnP's discovery is slow (seconds when no router
    answers), so it starts at once, beside the other two, and is given UPNP_WAIT."""
    gateway = default_gateway()
    upnp = upnp and gateway is not None  # no router, nothing to ask (and nowhere to ask)
    found: list[object] = []
    discovered = trio.Event()

    async def discover() -> None:
        try:
            found.append(await trio.to_thread.run_sync(_upnp_discover, abandon_on_cancel=True))
        except MappingFailed as exc:
            found.append(exc)
        discovered.set()

    async with trio.open_nursery() as nursery:
        if upnp:
            nursery.start_soon(discover)
        with trio.move_on_after(UPNP_WAIT):
            if gateway is None:
                on_note("no default gateway: nothing to ask for a port mapping")
            else:
                local = _local_address_towards(gateway)
                try:
                    mapping = await _pcp(gateway, local, port, lifetime, secrets.token_bytes(12))
                except MappingFailed as exc:
                    on_note(str(exc))
                else:
                    nursery.cancel_scope.cancel()
                    return mapping
                try:
                    mapping = await _natpmp(gateway, local, port, lifetime)
                except MappingFailed as exc:
                    on_note(str(exc))
                else:
                    nursery.cancel_scope.cancel()
                    return mapping
            if upnp:
                await discovered.wait()
        nursery.cancel_scope.cancel()
    if not upnp:
        return None
    if not found:
        on_note(f"UPnP-IGD: no answer within {UPNP_WAIT:g} s")
        return None
    if isinstance(found[0], MappingFailed):
        on_note(str(found[0]))
        return None
    try:
        return await trio.to_thread.run_sync(_upnp_map, found[0], port, lifetime,
                                             abandon_on_cancel=True)
    except MappingFailed as exc:
        on_note(str(exc))
        return None


async def renew(mapping: PortMapping) -> None:
    """Ask again for the same mapping (same nonce for PCP), updating its lifetime."""
    if mapping.method == "PCP":
        got = await _pcp(mapping.gateway, mapping.local_address, mapping.internal_port,
                         LIFETIME, mapping.nonce)
    elif mapping.method == "NAT-PMP":
        got = await _natpmp(mapping.gateway, mapping.local_address, mapping.internal_port,
                            LIFETIME)
    else:
        got = await trio.to_thread.run_sync(_upnp_map, mapping.upnp, mapping.internal_port,
                                            LIFETIME, abandon_on_cancel=True)
    mapping.lifetime, mapping.external_port = got.lifetime, got.external_port


async def remove(mapping: PortMapping) -> None:
    """Delete the mapping (best effort: a router that is gone lets it expire)."""
    with contextlib.suppress(MappingFailed, OSError):
        if mapping.method == "PCP":
            await _exchange(mapping.gateway, pcp.map_request(
                mapping.local_address, mapping.internal_port, 0, 0, mapping.nonce),
                _answers(0x81))
        elif mapping.method == "NAT-PMP":
            await _exchange(mapping.gateway, natpmp.map_tcp_request(
                mapping.internal_port, 0, 0), _answers(130))
        elif mapping.upnp is not None:
            upnp = mapping.upnp

            def delete() -> None:
                with contextlib.suppress(Exception):
                    upnp.deleteportmapping(mapping.external_port, "TCP")  # type: ignore[attr-defined]

            await trio.to_thread.run_sync(delete, abandon_on_cancel=True)


@contextlib.asynccontextmanager
async def kept(mapping: PortMapping, on_note: Callable[[str], None] = lambda s: None,
               ) -> AsyncIterator[PortMapping]:
    """Renew the mapping at half its lifetime while the block runs; remove it after."""
    async with trio.open_nursery() as nursery:
        async def renewer() -> None:
            while True:
                await trio.sleep(max(30, mapping.lifetime // 2))
                try:
                    await renew(mapping)
                except MappingFailed as exc:
                    on_note(f"the port mapping could not be renewed: {exc}")
        nursery.start_soon(renewer)
        try:
            yield mapping
        finally:
            nursery.cancel_scope.cancel()
            with trio.CancelScope(shield=True), trio.move_on_after(3):
                await remove(mapping)
