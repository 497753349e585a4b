"""STUN Binding (RFC 8489), the part a client needs to learn its public address: build a
request, frame messages on a stream, read the mapped address out of a response.

Sans-IO: bytes in, values out. Over TCP a STUN message is self-delimiting (its header
says how long it is), so ``message_size`` tells the driver how much to read. Every check a
client should make is made, so a garbage answer becomes a ``StunError`` that says what
was wrong, never a wrong address.

>>> txid = bytes(range(12))
>>> request = binding_request(txid)
>>> len(request), request[:2].hex(), message_size(request[:HEADER_SIZE])
(28, '0001', 28)
"""

from __future__ import annotations

import ipaddress
import struct
import zlib

from p2pgotg.reach.candidates import address_problem

MAGIC_COOKIE = 0x2112A442
HEADER_SIZE = 20
TXID_SIZE = 12
MAX_MESSAGE = 2048  # a Binding response is far smaller; anything longer is refused

BINDING_REQUEST = 0x0001
BINDING_SUCCESS = 0x0101
BINDING_ERROR = 0x0111

MAPPED_ADDRESS = 0x0001
ERROR_CODE = 0x0009
XOR_MAPPED_ADDRESS = 0x0020
SOFTWARE = 0x8022
FINGERPRINT = 0x8028
FINGERPRINT_XOR = 0x5354554E

FAMILY_IPV4 = 0x01
FAMILY_IPV6 = 0x02

_HEADER = struct.Struct(">HHI12s")


class StunError(ValueError):
    """The STUN server's answer cannot be used; the text says why."""


def _fingerprint(message_so_far: bytes) -> bytes:
    return struct.pack(">I", zlib.crc32(message_so_far) ^ FINGERPRINT_XOR)


def binding_request(txid: bytes, *, fingerprint: bool = True) -> bytes:
    """A Binding request with transaction id ``txid`` (12 random bytes, from the caller),
    ending in a FINGERPRINT attribute unless told otherwise (RFC 8489 14.7)."""
    if len(txid) != TXID_SIZE:
        raise ValueError(f"a transaction id is {TXID_SIZE} bytes")
    if not fingerprint:
        return _HEADER.pack(BINDING_REQUEST, 0, MAGIC_COOKIE, txid)
    header = _HEADER.pack(BINDING_REQUEST, 8, MAGIC_COOKIE, txid)
    # The CRC covers the message before the attribute, with the header's length already
    # counting the attribute (RFC 8489 14.7).
    return header + struct.pack(">HH", FINGERPRINT, 4) + _fingerprint(header)


def message_size(header: bytes) -> int:
    """The whole message's size, read from its first 20 bytes (for reading from TCP)."""
    if len(header) < HEADER_SIZE:
        raise StunError("the answer is shorter than a STUN header")
    kind, length, cookie, _txid = _HEADER.unpack_from(header)
    length = int(length)
    if kind & 0xC000:
        raise StunError("the answer is not a STUN message (its first two bits are not 0)")
    if cookie != MAGIC_COOKIE:
        raise StunError("the answer has no STUN magic cookie: is this a STUN server?")
    if length % 4:
        raise StunError(f"a STUN message length is a multiple of 4, not {length}")
    if HEADER_SIZE + length > MAX_MESSAGE:
        raise StunError(f"the answer says it is {HEADER_SIZE + length} bytes long: too long")
    return HEADER_SIZE + length


def parse_binding_response(data: bytes, txid: bytes) -> tuple[str, int]:
    """The (address, port) a success response to request ``txid`` reports.

    XOR-MAPPED-ADDRESS is preferred; MAPPED-ADDRESS is accepted from old servers. A
    FINGERPRINT, if present, must be right. An error response raises StunError with the
    server's code and reason.
    """
    size = message_size(data)
    if len(data) != size:
        raise StunError(f"the answer is {len(data)} bytes but its header says {size}")
    kind, _length, _cookie, got_txid = _HEADER.unpack_from(data)
    if got_txid != txid:
        raise StunError("the answer is for another request (transaction id differs)")
    attributes = _attributes(data)
    if kind == BINDING_ERROR:
        raise StunError(f"the STUN server refused: {_error_text(attributes)}")
    if kind != BINDING_SUCCESS:
        raise StunError(f"the answer is not a Binding response (type 0x{kind:04x})")
    for wanted, xored in ((XOR_MAPPED_ADDRESS, True), (MAPPED_ADDRESS, False)):
        for attr_type, value in attributes:
            if attr_type == wanted:
                return _address(value, txid if xored else None)
    raise StunError("the answer holds no mapped address")


def _attributes(data: bytes) -> list[tuple[int, bytes]]:
    """Every attribute as (type, value), checking lengths and a FINGERPRINT if present."""
    found: list[tuple[int, bytes]] = []
    offset = HEADER_SIZE
    while offset < len(data):
        if offset + 4 > len(data):
            raise StunError("an attribute header is cut off")
        attr_type, length = struct.unpack_from(">HH", data, offset)
        start, end = offset + 4, offset + 4 + length
        if end > len(data):
            raise StunError(f"attribute 0x{attr_type:04x} runs past the end of the answer")
        value = data[start:end]
        if attr_type == FINGERPRINT:
            if length != 4 or end != len(data):
                raise StunError("FINGERPRINT must be the last attribute, 4 bytes long")
            # The CRC covers the message up to the attribute, with the header's length
            # counting the attribute (it is the last one, so the length is the real one).
            if _fingerprint(data[:offset]) != value:
                raise StunError("the FINGERPRINT does not match: the answer is damaged")
        found.append((attr_type, value))
        offset = end + (-length % 4)
    if offset != len(data):
        raise StunError("the last attribute's padding runs past the end of the answer")
    return found


def _address(value: bytes, txid: bytes | None) -> tuple[str, int]:
    if len(value) < 4:
        raise StunError("a mapped address is cut off")
    family, port = value[1], struct.unpack_from(">H", value, 2)[0]
    raw = value[4:]
    if family == FAMILY_IPV4 and len(raw) == 4:
        mask = struct.pack(">I", MAGIC_COOKIE)
    elif family == FAMILY_IPV6 and len(raw) == 16:
        mask = struct.pack(">I", MAGIC_COOKIE) + (txid or bytes(TXID_SIZE))
    else:
        raise StunError(f"a mapped address of family {family} and {len(raw)} bytes")
    if txid is not None:
        port ^= MAGIC_COOKIE >> 16
        raw = bytes(a ^ b for a, b in zip(raw, mask, strict=True))
    if port == 0:
        raise StunError("the mapped port is 0")
    address = str(ipaddress.ip_address(raw))
    problem = address_problem(address)
    if problem is not None:
        raise StunError(f"the mapped address {address} {problem}")
    return address, port


def _error_text(attributes: list[tuple[int, bytes]]) -> str:
    for attr_type, value in attributes:
        if attr_type == ERROR_CODE and len(value) >= 4:
            code = (value[2] & 0x07) * 100 + value[3]
            reason = value[4:].decode("utf-8", "replace")[:80]
            shown = "".join(c if c.isprintable() else "?" for c in reason)
            return f"error {code} {shown}".strip()
    return "an error response without an error code"
