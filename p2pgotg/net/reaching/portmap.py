"""Ask the home router to forward a TCP port to us: PCP (RFC 6887), then NAT-PMP
(RFC 6886), both small UDP exchanges with the default gateway written on trio, then
UPnP-IGD: the gateway found by our own SSDP search (only the gateway's answer is taken),
then miniupnpc in a worker thread for its SOAP control. The mapping is renewed while the
game lasts and removed when it ends.

Whatever answers is checked before it is used: an answer that is not a mapping anyone
could use (port 0, no lifetime, an address that is no address, another request's nonce,
another device than the router) means no mapping, said in plain words, never an
exception (SPEC 3.8).

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
from urllib.parse import urlsplit

import trio

from p2pgotg.protocol.printable import printable
from p2pgotg.reach import natpmp, pcp
from p2pgotg.reach.candidates import address_problem

LIFETIME = 3600  # seconds asked for; renewed at half of what the router grants
TRIES = (0.25, 0.5, 1.0)  # the wait after each UDP try (RFC 6887 8.1.1 starts at 3 s; a
# home router answers within milliseconds, and a person is waiting)
UPNP_WAIT = 2.0  # seconds, from the start, that finding a router may take in all
UPNP_MAP_WAIT = 3.0  # seconds the UPnP router's control may take to map (or renew) a port
SSDP_GROUP = ("239.255.255.250", 1900)
IGD_TYPE = "urn:schemas-upnp-org:device:InternetGatewayDevice:1"
MAX_LOCATION = 512  # characters of an SSDP answer's LOCATION that we accept


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

    def __post_init__(self) -> None:
        """Nothing a router said reaches an invite unchecked: MappingFailed otherwise."""
        problem = address_problem(self.external_address)
        if problem is not None:
            raise MappingFailed(f"{self.method}: the router's internet address "
                                f"'{printable(self.external_address, 60)}' {problem}")
        if not 1 <= self.external_port <= 0xFFFF or not 1 <= self.internal_port <= 0xFFFF:
            raise MappingFailed(f"{self.method}: the router granted port "
                                f"{self.external_port}, which no one can connect to")

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
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((gateway, natpmp.PORT))
            return str(s.getsockname()[0])
    except OSError as exc:
        raise MappingFailed(f"the router {gateway} cannot be reached: "
                            f"{exc.strerror or exc}") from None


async def _exchange(gateway: str, request: bytes, accept: Callable[[bytes], object]) -> bytes:
    """Send ``request`` to the gateway's port 5351 until an answer ``accept`` takes."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        try:
            await sock.connect((gateway, natpmp.PORT))
        except OSError as exc:
            raise MappingFailed(f"the router {gateway} cannot be reached: "
                                f"{exc.strerror or exc}") from None
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
                    except OSError:  # (an ICMP error for an earlier try: try again)
                        break
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
        got = pcp.parse_map_response(data, nonce, port)
    except pcp.PcpError as exc:
        raise MappingFailed(f"PCP: {exc}") from None
    return PortMapping("PCP", got.external_address, got.external_port, port, got.lifetime,
                       gateway, local, nonce)


async def _natpmp(gateway: str, local: str, port: int, lifetime: int) -> PortMapping:
    try:
        address = natpmp.parse_external_address(await _exchange(
            gateway, natpmp.external_address_request(), _answers(128)))
        got = natpmp.parse_map_tcp(await _exchange(
            gateway, natpmp.map_tcp_request(port, port, lifetime), _answers(130)), port)
    except natpmp.NatPmpError as exc:
        raise MappingFailed(f"NAT-PMP: {exc}") from None
    return PortMapping("NAT-PMP", address.address, got.external_port, port, got.lifetime,
                       gateway, local)


def _msearch() -> bytes:
    return (f"M-SEARCH * HTTP/1.1\r\nHOST: {SSDP_GROUP[0]}:{SSDP_GROUP[1]}\r\n"
            f'MAN: "ssdp:discover"\r\nMX: 1\r\nST: {IGD_TYPE}\r\n\r\n').encode()


def ssdp_location(answer: bytes) -> str | None:
    """The LOCATION of an SSDP answer (RFC-less UPnP 1.1 Device Architecture, 1.3.3): an
    http URL with an IPv4 host, or None for anything else."""
    lines = answer[:2048].decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 200"):
        return None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() != "location":
            continue
        value = value.strip()
        if len(value) > MAX_LOCATION or not value.isprintable() or not value.isascii():
            return None
        try:
            url = urlsplit(value)
            ipaddress.IPv4Address(url.hostname or "")
            url.port  # noqa: B018 (raises ValueError for a port out of range)
        except ValueError:
            return None
        return value if url.scheme == "http" else None
    return None


async def _find_igd(gateway: str, local: str, wait: float) -> str:
    """The root description URL of the gateway's UPnP-IGD, from its own SSDP answer: a
    search goes to the multicast group and to the gateway itself, and an answer from any
    other device of the LAN (which cannot forward the router's port to us) is not taken."""
    others: list[str] = []
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        try:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(local))
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
            await sock.bind((local, 0))
        except OSError as exc:
            raise MappingFailed(f"UPnP-IGD: cannot search: {exc.strerror or exc}") from None

        async def search() -> None:
            for _ in range(2):
                for where in (SSDP_GROUP, (gateway, SSDP_GROUP[1])):
                    with contextlib.suppress(OSError):
                        await sock.sendto(_msearch(), where)
                await trio.sleep(wait / 3)

        with trio.move_on_after(wait):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(search)
                while True:
                    try:
                        answer, source = await sock.recvfrom(2048)
                    except OSError:
                        continue
                    location = ssdp_location(answer)
                    if location is None:
                        continue
                    if urlsplit(location).hostname == gateway:
                        nursery.cancel_scope.cancel()
                        return location
                    if source[0] not in others:
                        others.append(str(source[0]))
    if others:
        raise MappingFailed(f"UPnP-IGD: your router {gateway} did not answer; "
                            f"{', '.join(others[:3])} answered, which is not your router: "
                            "not used")
    raise MappingFailed(f"UPnP-IGD: your router {gateway} did not answer")


def _upnp_select(location: str, gateway: str) -> object:
    """Blocking (run in a thread): the gateway's UPnP-IGD control, from its description."""
    import miniupnpc

    upnp = miniupnpc.UPnP()
    try:
        control = str(upnp.selectigd(location))
    except Exception:  # noqa: BLE001 (miniupnpc's reasons are often just "Success")
        raise MappingFailed(f"UPnP-IGD: your router {gateway} describes no internet "
                            "gateway") from None
    if urlsplit(control).hostname != gateway:
        raise MappingFailed(f"UPnP-IGD: your router {gateway} sends its control elsewhere "
                            f"('{printable(control, 60)}'): not used")
    return upnp


def _upnp_map(upnp: object, local: str, port: int, lifetime: int) -> PortMapping:
    """Blocking (run in a thread): map the port, read the router's internet address."""
    try:
        external = str(upnp.externalipaddress())  # type: ignore[attr-defined]
        if not external:
            raise MappingFailed("UPnP-IGD: the router does not know its internet address")
        problem = address_problem(external)
        if problem is not None:
            raise MappingFailed(f"UPnP-IGD: your router gave '{printable(external, 60)}' as "
                                f"its internet address, which {problem}")
        upnp.addportmapping(port, "TCP", local, port,  # type: ignore[attr-defined]
                            "p2pgotg game", "", lifetime)
    except MappingFailed:
        raise
    except Exception as exc:  # noqa: BLE001 (miniupnpc raises plain Exception with a reason)
        raise MappingFailed(f"UPnP-IGD: {printable(str(exc), 120)}") from None
    return PortMapping("UPnP-IGD", external, port, port, lifetime, local_address=local,
                       upnp=upnp)


async def _upnp_map_in_time(upnp: object, local: str, port: int, lifetime: int,
                            ) -> PortMapping:
    """_upnp_map in a worker thread, given UPNP_MAP_WAIT (a control that never answers
    must not hold the host)."""
    with trio.move_on_after(UPNP_MAP_WAIT):
        return await trio.to_thread.run_sync(_upnp_map, upnp, local, port, lifetime,
                                              abandon_on_cancel=True)
    raise MappingFailed(f"UPnP-IGD: the router did not answer within {UPNP_MAP_WAIT:g} s")


async def map_port(port: int, lifetime: int = LIFETIME, *, upnp: bool = True,
                   on_note: Callable[[str], None] = lambda s: None) -> PortMapping | None:
    """Try PCP, NAT-PMP and UPnP-IGD in turn; the first mapping, or None (each failure
    goes to ``on_note`` in plain words). UPnP's search waits for answers, so it starts at
    once, beside the other two, and all of it is given UPNP_WAIT."""
    gateway = default_gateway()
    if gateway is None:
        on_note("no default gateway: nothing to ask for a port mapping")
        return None
    try:
        local = _local_address_towards(gateway)
    except MappingFailed as exc:
        on_note(str(exc))
        return None
    found: list[object] = []  # the gateway's UPnP control, or why there is none
    searched = trio.Event()

    async def search() -> None:
        try:
            location = await _find_igd(gateway, local, UPNP_WAIT * 0.75)
            found.append(await trio.to_thread.run_sync(_upnp_select, location, gateway,
                                                       abandon_on_cancel=True))
        except MappingFailed as exc:
            found.append(exc)
        searched.set()

    async with trio.open_nursery() as nursery:
        if upnp:
            nursery.start_soon(search)
        with trio.move_on_after(UPNP_WAIT):
            for ask in (lambda: _pcp(gateway, local, port, lifetime, secrets.token_bytes(12)),
                        lambda: _natpmp(gateway, local, port, lifetime)):
                try:
                    mapping = await ask()
                except MappingFailed as exc:
                    on_note(str(exc))
                else:
                    nursery.cancel_scope.cancel()
                    return mapping
            if upnp:
                await searched.wait()
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
        return await _upnp_map_in_time(found[0], local, port, lifetime)
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
        got = await _upnp_map_in_time(mapping.upnp, mapping.local_address,
                                      mapping.internal_port, LIFETIME)
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
