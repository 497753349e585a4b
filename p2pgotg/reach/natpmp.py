"""NAT-PMP (RFC 6886) messages: ask the home router for its public address and for a TCP
port mapping. Sans-IO; the driver sends them over UDP to the gateway's port 5351.

>>> map_tcp_request(4000, 4000, 7200).hex()
'000200000fa00fa000001c20'
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

PORT = 5351
VERSION = 0
OP_EXTERNAL_ADDRESS = 0
OP_MAP_UDP = 1
OP_MAP_TCP = 2
RESPONSE = 128

RESULTS = {
    0: "success",
    1: "unsupported version",
    2: "not authorized or refused (the router does not allow port mappings)",
    3: "network failure (the router has no public address of its own)",
    4: "out of resources (no free ports or mappings)",
    5: "unsupported opcode",
}


class NatPmpError(ValueError):
    """The router's NAT-PMP answer cannot be used; the text says why."""

    def __init__(self, message: str, result: int | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class ExternalAddress:
    epoch: int
    address: str


@dataclass(frozen=True)
class PortMapping:
    epoch: int
    internal_port: int
    external_port: int
    lifetime: int


def external_address_request() -> bytes:
    """RFC 6886 3.2: version 0, opcode 0."""
    return bytes([VERSION, OP_EXTERNAL_ADDRESS])


def map_tcp_request(internal_port: int, suggested_port: int, lifetime: int) -> bytes:
    """RFC 6886 3.3: map a TCP port; lifetime 0 with suggested port 0 removes the mapping."""
    if not 1 <= internal_port <= 0xFFFF or not 0 <= suggested_port <= 0xFFFF:
        raise ValueError("ports are 16-bit, and the internal port is not 0")
    if not 0 <= lifetime <= 0xFFFFFFFF:
        raise ValueError("the lifetime is a 32-bit number of seconds")
    return struct.pack(">BBHHHI", VERSION, OP_MAP_TCP, 0, internal_port, suggested_port,
                       lifetime)


def _header(data: bytes, opcode: int, size: int) -> tuple[int, int]:
    if len(data) < 4:
        raise NatPmpError("the router's answer is too short to be NAT-PMP")
    version, op, result = struct.unpack_from(">BBH", data)
    if version != VERSION:
        raise NatPmpError(f"the router answered NAT-PMP with version {version}")
    if op != RESPONSE + opcode:
        raise NatPmpError(f"the router answered opcode {op}, not {RESPONSE + opcode}")
    if result != 0:
        text = RESULTS.get(result, f"result code {result}")
        raise NatPmpError(f"the router refused: {text}", result)
    if len(data) < size:
        raise NatPmpError(f"the router's answer has {len(data)} bytes, not {size}")
    return result, struct.unpack_from(">I", data, 4)[0]


def parse_external_address(data: bytes) -> ExternalAddress:
    _result, epoch = _header(data, OP_EXTERNAL_ADDRESS, 12)
    return ExternalAddress(epoch, str(ipaddress.IPv4Address(data[8:12])))


def parse_map_tcp(data: bytes) -> PortMapping:
    _result, epoch = _header(data, OP_MAP_TCP, 16)
    internal, external, lifetime = struct.unpack_from(">HHI", data, 8)
    return PortMapping(epoch, internal, external, lifetime)
