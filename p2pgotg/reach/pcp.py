"""PCP (RFC 6887) MAP requests for one TCP port, the successor of NAT-PMP on the same UDP
port 5351. Sans-IO: the driver picks the nonce and sends the bytes to the gateway.

A router that speaks only NAT-PMP answers a PCP request with a NAT-PMP "unsupported
version" (RFC 6887 9): ``parse_map_response`` reports that as ``PcpError.unsupported``,
so the driver falls back to NAT-PMP.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

from p2pgotg.reach.candidates import address_problem

PORT = 5351
VERSION = 2
OP_MAP = 1
RESPONSE_BIT = 0x80
PROTOCOL_TCP = 6
NONCE_SIZE = 12
REQUEST_SIZE = 24 + 36

RESULTS = {
    0: "success",
    1: "unsupported version",
    2: "not authorized (the router does not allow port mappings)",
    3: "malformed request",
    4: "unsupported opcode",
    5: "unsupported option",
    6: "malformed option",
    7: "network failure (the router has no public address of its own)",
    8: "no resources",
    9: "unsupported protocol",
    10: "user quota exceeded",
    11: "cannot provide an external port",
    12: "address mismatch (there is another NAT between us and the router)",
    13: "excessive remote peers",
}


class PcpError(ValueError):
    """The router's PCP answer cannot be used; the text says why."""

    def __init__(self, message: str, result: int | None = None,
                 unsupported: bool = False) -> None:
        super().__init__(message)
        self.result = result
        self.unsupported = unsupported


@dataclass(frozen=True)
class PcpMapping:
    lifetime: int
    epoch: int
    internal_port: int
    external_port: int
    external_address: str


def _v6(address: str) -> bytes:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv4Address):
        return bytes(10) + b"\xff\xff" + ip.packed  # IPv4-mapped (RFC 6887 5)
    return ip.packed


def _from_v6(raw: bytes) -> str:
    ip = ipaddress.IPv6Address(raw)
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else str(ip)


def map_request(client_address: str, internal_port: int, suggested_port: int,
                lifetime: int, nonce: bytes, suggested_address: str = "0.0.0.0") -> bytes:
    """A MAP request (RFC 6887 7.1 and 11.1) for TCP ``internal_port``; lifetime 0 deletes.

    ``client_address`` is our own address as the router sees it (the source address of the
    UDP packet); a router that sees another one answers ADDRESS_MISMATCH.
    """
    if len(nonce) != NONCE_SIZE:
        raise ValueError(f"a mapping nonce is {NONCE_SIZE} bytes")
    if not 1 <= internal_port <= 0xFFFF or not 0 <= suggested_port <= 0xFFFF:
        raise ValueError("ports are 16-bit, and the internal port is not 0")
    header = struct.pack(">BBHI", VERSION, OP_MAP, 0, lifetime) + _v6(client_address)
    body = nonce + struct.pack(">B3xHH", PROTOCOL_TCP, internal_port, suggested_port)
    return header + body + _v6(suggested_address)


def parse_map_response(data: bytes, nonce: bytes, internal_port: int | None = None,
                       ) -> PcpMapping:
    """The mapping a MAP response grants, or PcpError: only a mapping anyone could use
    passes (our nonce, TCP, our ``internal_port`` when given, an external port 1..65535, a
    lifetime, an external address that is one)."""
    if len(data) >= 2 and data[0] == 0:
        # A NAT-PMP-only router: version 0, opcode 128 + our opcode, "unsupported version"
        raise PcpError("the router speaks NAT-PMP, not PCP", unsupported=True)
    if len(data) < 24:
        raise PcpError("the router's answer is too short to be PCP")
    version, opcode, _reserved, result, lifetime, epoch = struct.unpack_from(">BBBBII", data)
    if version != VERSION:
        raise PcpError(f"the router answered PCP version {version}", unsupported=True)
    if opcode != RESPONSE_BIT | OP_MAP:
        raise PcpError(f"the router answered opcode {opcode}, not a MAP response")
    if result != 0:
        text = RESULTS.get(result, f"result code {result}")
        raise PcpError(f"the router refused: {text}", result, unsupported=result in (1, 4))
    if len(data) < REQUEST_SIZE:
        raise PcpError("the router's MAP answer is cut off")
    got_nonce = data[24:36]
    protocol, internal, external = struct.unpack_from(">B3xHH", data, 36)
    if got_nonce != nonce:
        raise PcpError("the router's answer is for another request (nonce differs)")
    if protocol != PROTOCOL_TCP:
        raise PcpError(f"the router mapped protocol {protocol}, not TCP")
    if internal_port is not None and internal != internal_port:
        raise PcpError(f"the router mapped port {internal}, not the {internal_port} asked for")
    if external == 0:
        raise PcpError("the router granted external port 0, which no one can connect to")
    if lifetime == 0:
        raise PcpError("the router granted the mapping for 0 seconds")
    address = _from_v6(data[44:60])
    problem = address_problem(address)
    if problem is not None:
        raise PcpError(f"the router's external address {address} {problem}")
    return PcpMapping(lifetime, epoch, internal, external, address)
