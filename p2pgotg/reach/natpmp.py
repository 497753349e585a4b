"""NAT-PMP (RFC 6886) messages: ask the home router for its public address and for a TCP
port mapping. Sans-IO; the driver sends them over UDP to the gateway's port 5351.

>>> map_tcp_request(4000, 4000, 7200).hex()
'000200000fa00fa000001c20'
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

from p2pgotg.reach.candidates import address_problem

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
    """The router's external address, or NatPmpError when it is no address anyone has."""
    _result, epoch = _header(data, OP_EXTERNAL_ADDRESS, 12)
    address = str(ipaddress.IPv4Address(data[8:12]))
    problem = address_problem(address)
    if problem is not None:
        raise NatPmpError(f"the router's external address {address} {problem}")
    return ExternalAddress(epoch, address)


def parse_map_tcp(data: bytes, internal_port: int | None = None) -> PortMapping:
    """The mapping granted, or NatPmpError: our ``internal_port`` when given, an external
    port 1..65535 and a lifetime."""
    _result, epoch = _header(data, OP_MAP_TCP, 16)
    internal, external, lifetime = struct.unpack_from(">HHI", data, 8)
    if internal_port is not None and internal != internal_port:
        raise NatPmpError(f"the router mapped port {internal}, not the {internal_port} asked "
                          "for")
    if external == 0:
        raise NatPmpError("the router granted external port 0, which no one can connect to")
    if lifetime == 0:
        raise NatPmpError("the router granted the mapping for 0 seconds")
    return PortMapping(epoch, internal, external, lifetime)
