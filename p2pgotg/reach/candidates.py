"""Connection candidates: the typed addresses an invite (v2) or a reply code lists, and the
byte layout they share (SPEC 3.3).

One candidate is ``kind (1) | family (1) | address | port (2)``; family 0x04 is 4 bytes of
IPv4, 0x06 16 bytes of IPv6, 0x00 a hostname (1 length byte, then lowercase ASCII). An
onion candidate is a hostname, the host's version 3 onion address, reachable only through
Tor (tor_onion.py).

>>> c = Candidate(LAN, "192.0.2.7", 4000)
>>> c.to_bytes().hex()
'0104c00002070fa0'
>>> read_candidates(bytes([1]) + c.to_bytes(), 0)
([Candidate(kind=1, address='192.0.2.7', port=4000)], 9)
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from p2pgotg.reach.tor_onion import OnionError, is_onion, onion_key

LAN = 0x01  # an address of the host's own: direct TCP (the LAN, or a public address)
MAPPED = 0x02  # the router's public address and a port it forwards to us (PCP/NAT-PMP/UPnP)
PUNCH = 0x03  # the public address STUN saw: reachable only by simultaneous open
ONION = 0x04  # the host's onion service: reachable only through Tor
KIND_NAMES = {LAN: "lan", MAPPED: "mapped", PUNCH: "punch", ONION: "onion"}

FAMILY_HOSTNAME = 0x00
FAMILY_IPV4 = 0x04
FAMILY_IPV6 = 0x06
MAX_CANDIDATES = 8
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


class CodeError(ValueError):
    """A code's bytes are not a valid layout; the text says what is wrong."""


@dataclass(frozen=True)
class Candidate:
    """One way to reach a peer: a kind (LAN, MAPPED, PUNCH, ONION), an address and a TCP
    port (for ONION, the service's virtual port)."""

    kind: int
    address: str
    port: int

    def __post_init__(self) -> None:
        if self.kind not in KIND_NAMES:
            raise CodeError(f"unknown candidate kind {self.kind} (a newer p2pgotg may have "
                            "made this code: update p2pgotg)")
        if not 1 <= self.port <= 0xFFFF:
            raise CodeError(f"port {self.port} is not in 1..65535")
        object.__setattr__(self, "address", _canonical(self.address))
        if self.kind == ONION:
            try:
                onion_key(self.address)
            except OnionError as exc:
                raise CodeError(f"an onion candidate's address: {exc}") from None
        elif is_onion(self.address):
            raise CodeError(f"{self.address} is reachable only through Tor, so only an onion "
                            "candidate may name it")

    @property
    def direct(self) -> bool:
        """A plain connect can reach it (no punching, no Tor needed)."""
        return self.kind not in (PUNCH, ONION)

    def to_bytes(self) -> bytes:
        try:
            ip = ipaddress.ip_address(self.address)
        except ValueError:
            raw = self.address.encode("ascii")
            packed = bytes([FAMILY_HOSTNAME, len(raw)]) + raw
        else:
            family = FAMILY_IPV4 if ip.version == 4 else FAMILY_IPV6
            packed = bytes([family]) + ip.packed
        return bytes([self.kind]) + packed + self.port.to_bytes(2, "big")

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port} ({KIND_NAMES[self.kind]})"


def _canonical(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        name = address.lower()
        labels = name.split(".")
        if not name or len(name) > 253 or not all(_LABEL.fullmatch(x) for x in labels) \
                or labels[-1].isdigit():
            raise CodeError(f"{address!r} is not an IP address or a hostname") from None
        return name
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        raise CodeError(f"{address!r} has a scope, which only means something here")
    return str(ip)


def address_problem(address: str) -> str | None:
    """Why an IP address a router, a STUN server or an announcement gave us cannot be where
    anyone is (None when it can): not an IP address at all, unspecified, multicast,
    loopback, broadcast or reserved. Such an answer is garbage, never a place to go."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "is not an IP address"
    if ip.is_unspecified:
        return "is the unspecified address"
    if ip.is_multicast:
        return "is a multicast address"
    if ip.is_loopback:
        return "is a loopback address"
    if isinstance(ip, ipaddress.IPv4Address) and (ip.is_reserved or ip.packed == b"\xff" * 4):
        return "is a reserved or broadcast address"
    return None


def write_candidates(candidates: list[Candidate]) -> bytes:
    """A count byte, then each candidate."""
    if not 1 <= len(candidates) <= MAX_CANDIDATES:
        raise CodeError(f"a code lists 1 to {MAX_CANDIDATES} candidates, not {len(candidates)}")
    return bytes([len(candidates)]) + b"".join(c.to_bytes() for c in candidates)


def read_candidates(data: bytes, offset: int) -> tuple[list[Candidate], int]:
    """The candidate list at ``offset`` and the offset after it; CodeError if malformed."""
    if offset >= len(data):
        raise CodeError("the code ends before its candidate list")
    count = data[offset]
    if not 1 <= count <= MAX_CANDIDATES:
        raise CodeError(f"the code lists {count} candidates (1 to {MAX_CANDIDATES} allowed)")
    offset += 1
    found = []
    for _ in range(count):
        if offset + 2 > len(data):
            raise CodeError("a candidate is cut off")
        kind, family = data[offset], data[offset + 1]
        offset += 2
        if family == FAMILY_IPV4:
            size = 4
        elif family == FAMILY_IPV6:
            size = 16
        elif family == FAMILY_HOSTNAME:
            if offset >= len(data):
                raise CodeError("a candidate is cut off")
            size = data[offset]
            offset += 1
            if size == 0:
                raise CodeError("a candidate has an empty hostname")
        else:
            raise CodeError(f"unknown address family {family}")
        if offset + size + 2 > len(data):
            raise CodeError("a candidate is cut off")
        raw = data[offset:offset + size]
        if family == FAMILY_HOSTNAME:
            try:
                address = raw.decode("ascii")
            except UnicodeDecodeError:
                raise CodeError("a hostname is not ASCII") from None
        else:
            address = str(ipaddress.ip_address(raw))
        port = int.from_bytes(data[offset + size:offset + size + 2], "big")
        offset += size + 2
        if port == 0:
            raise CodeError("port 0 is not a port anyone can connect to")
        found.append(Candidate(kind, address, port))
    return found, offset
