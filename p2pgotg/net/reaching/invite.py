"""Invite codes: everything a joiner needs to reach and authenticate the host, in one token.

Text form: ``gg1-`` followed by the lowercase, unpadded RFC 4648 base32 of the layout
below. The token has only ``a-z``, ``2-7`` and one ``-``, so shells, terminals and chat
programs leave it alone. Decoding ignores whitespace and letter case.

Byte layout (big-endian integers)::

    offset  size  field
    0       1     address kind: 0x04 IPv4, 0x06 IPv6, 0x00 hostname
    1       A     address: 4 bytes (IPv4), 16 bytes (IPv6), or for a hostname
                  1 length byte n (1..253) then n ASCII bytes (lowercase LDH labels)
    1+A     2     TCP port, 1..65535
    3+A     32    pin: SHA-256 of the host certificate's SubjectPublicKeyInfo DER
    35+A    16    join secret (128 random bits)
    51+A    4     check: CRC-32 (IEEE, as zlib.crc32) of b"p2pgotg/invite/v1" followed
                  by the first 51+A bytes, stored little-endian

The check is a CRC, not a hash, on purpose: it is not there for security (the pin and the
secret are) but to catch typing errors, and a CRC-32 catches every error burst of up to 32
bits. One base32 character covers 5 bits spanning at most two bytes, so every
single-character substitution and every swap of two adjacent characters is caught for
certain, not with odds. Stored little-endian, the CRC makes the whole layout one codeword,
so this holds in the check bytes too. A stray, missing or extra character is caught by the
length rules or, failing that, by the CRC with odds of 1 in 2**32 of slipping through.

Version 2 (``gg2-``, SPEC 3.3) lists typed candidates instead of one address: the host's
LAN addresses, the external address its router maps for it, and the public address STUN
saw (for hole punching), with a byte saying what kind of NAT the host found. It keeps the
pin, the secret and the check. A reader takes both versions.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import ipaddress
import re
import secrets
import socket
import struct
import zlib
from dataclasses import dataclass, field

from p2pgotg.net.transport.errors import BadInviteError
from p2pgotg.reach.candidates import (
    LAN,
    MAX_CANDIDATES,
    Candidate,
    CodeError,
    read_candidates,
    write_candidates,
)
from p2pgotg.reach.codetext import from_text, to_text

PREFIX = "gg1-"
CHECK_TAG = b"p2pgotg/invite/v1"
PIN_SIZE = 32
SECRET_SIZE = 16
CHECK_SIZE = 4
KIND_HOSTNAME = 0x00
KIND_IPV4 = 0x04
KIND_IPV6 = 0x06
MAX_HOSTNAME = 253
_TAIL = 2 + PIN_SIZE + SECRET_SIZE + CHECK_SIZE  # port, pin, secret, check
_MIN_SIZE = 1 + 2 + _TAIL  # hostname of one character
_ALPHABET = set("abcdefghijklmnopqrstuvwxyz234567")
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_VERSION_PREFIX = re.compile(r"gg(\d+)-")
PREFIX_V2 = "gg2-"
CHECK_TAG_V2 = b"p2pgotg/invite/v2"
#: The shortest version 2 code, its check included: the NAT byte, a count of one, one
#: candidate with a one-letter hostname (kind, family, length, letter, port), pin, secret.
MIN_SIZE_V2 = 1 + 1 + 6 + PIN_SIZE + SECRET_SIZE + CHECK_SIZE

# What the host found out about its own NAT (the byte after the prefix in a v2 invite).
NAT_UNKNOWN = 0  # no STUN server answered (or none was asked: LAN play)
NAT_NONE = 1  # the host's own address is public
NAT_EASY = 2  # endpoint-independent mapping: hole punching can work
NAT_SYMMETRIC = 3  # a new public port per destination: punching cannot work
NAT_NAMES = {NAT_UNKNOWN: "unknown", NAT_NONE: "no NAT", NAT_EASY: "endpoint-independent NAT",
             NAT_SYMMETRIC: "symmetric NAT"}


def _check(body: bytes) -> bytes:
    return struct.pack("<I", zlib.crc32(body, zlib.crc32(CHECK_TAG)))


def _normalize_address(address: str) -> tuple[int, str]:
    """(kind, canonical text); ValueError says what is wrong."""
    if not isinstance(address, str):
        raise TypeError(f"the address must be text, not {type(address).__name__}")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        pass
    else:
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.scope_id:
                raise ValueError(f"{address!r} has a scope, which only means something here")
            return KIND_IPV6, str(ip)
        return KIND_IPV4, str(ip)
    name = address.lower()
    labels = name.split(".")
    if not name or len(name) > MAX_HOSTNAME or not all(_LABEL.fullmatch(x) for x in labels):
        raise ValueError(f"{address!r} is not an IP address or a valid hostname")
    if labels[-1].isdigit():
        # "1.2.3" is no hostname, and resolvers would read it as the address 1.2.0.3.
        raise ValueError(f"{address!r} is neither a full IP address nor a hostname")
    return KIND_HOSTNAME, name


@dataclass(frozen=True)
class Invite:
    """Where the host listens, its public-key pin and the join secret.

    >>> code = Invite("192.0.2.7", 4000, bytes(32), bytes(16)).encode()
    >>> code[:4], Invite.decode(code.upper()).port
    ('gg1-', 4000)
    """

    address: str
    port: int
    pin: bytes = field(repr=False)
    secret: bytes = field(repr=False)
    candidates: tuple[Candidate, ...] = ()  # v2 only; empty for a gg1- code
    nat: int = NAT_UNKNOWN  # v2 only

    def __post_init__(self) -> None:
        _kind, address = _normalize_address(self.address)
        object.__setattr__(self, "address", address)
        if not isinstance(self.port, int) or not 1 <= self.port <= 0xFFFF:
            raise ValueError(f"port {self.port!r} is not in 1..65535")
        if not isinstance(self.pin, bytes) or len(self.pin) != PIN_SIZE:
            raise ValueError(f"the pin must be {PIN_SIZE} bytes")
        if not isinstance(self.secret, bytes) or len(self.secret) != SECRET_SIZE:
            raise ValueError(f"the join secret must be {SECRET_SIZE} bytes")

    @classmethod
    def v2(cls, candidates: list[Candidate], pin: bytes, secret: bytes,
           nat: int = NAT_UNKNOWN) -> Invite:
        """A version 2 invite; its address and port are the first candidate's."""
        if not candidates:
            raise ValueError("an invite lists at least one candidate")
        if nat not in NAT_NAMES:
            raise ValueError(f"unknown NAT kind {nat}")
        first = candidates[0]
        return cls(first.address, first.port, pin, secret, tuple(candidates), nat)

    def all_candidates(self) -> list[Candidate]:
        """Every way to reach the host: a v1 code's one address is a LAN candidate."""
        if self.candidates:
            return list(self.candidates)
        return [Candidate(LAN, self.address, self.port)]

    @classmethod
    def new(cls, address: str, port: int, pin: bytes) -> Invite:
        """An invite with a fresh random join secret."""
        return cls(address, port, pin, secrets.token_bytes(SECRET_SIZE))

    def to_bytes(self) -> bytes:
        """The binary layout, check included."""
        kind, address = _normalize_address(self.address)
        if kind in (KIND_IPV4, KIND_IPV6):
            packed = ipaddress.ip_address(address).packed
        else:
            packed = bytes([len(address)]) + address.encode("ascii")
        body = bytes([kind]) + packed + self.port.to_bytes(2, "big") + self.pin + self.secret
        return body + _check(body)

    def encode(self) -> str:
        """The copy-pasteable code: ``gg2-`` when there are candidates, else ``gg1-``."""
        if self.candidates:
            body = bytes([self.nat]) + write_candidates(list(self.candidates)) + self.pin \
                + self.secret
            return to_text(PREFIX_V2, CHECK_TAG_V2, body)
        return PREFIX + base64.b32encode(self.to_bytes()).decode("ascii").rstrip("=").lower()

    @classmethod
    def decode(cls, text: str) -> Invite:
        """Parse a code; BadInviteError says what is wrong with it."""
        code = "".join(text.split()).lower()
        if code.startswith(PREFIX_V2):
            return cls._decode_v2(code)
        if not code.startswith(PREFIX):
            found = _VERSION_PREFIX.match(code)
            if found:
                raise BadInviteError(
                    f"this code starts with {found.group(0)!r}, a format this version of"
                    f" p2pgotg does not know (it reads {PREFIX!r} and {PREFIX_V2!r}); update"
                    " p2pgotg"
                )
            raise BadInviteError(f"an invite code starts with {PREFIX_V2!r} (or {PREFIX!r}, "
                                 "from a host on one network only)")
        letters = code[len(PREFIX) :]
        for i, char in enumerate(letters):
            if char not in _ALPHABET:
                raise BadInviteError(
                    f"character {char!r} at position {len(PREFIX) + i + 1} cannot be in a code"
                    " (codes use only the letters a-z and the digits 2-7)"
                )
        return cls.from_bytes(_unbase32(letters))

    @classmethod
    def _decode_v2(cls, code: str) -> Invite:
        try:
            body = from_text(PREFIX_V2, CHECK_TAG_V2, code, "invite code", MIN_SIZE_V2)
            nat = body[0]
            candidates, offset = read_candidates(body, 1)
        except CodeError as exc:
            raise BadInviteError(str(exc)) from None
        if nat not in NAT_NAMES:
            raise BadInviteError(f"unknown NAT kind {nat}")
        if len(body) != offset + PIN_SIZE + SECRET_SIZE:
            raise BadInviteError(
                f"the code has {len(body) - offset} bytes after its candidates, not"
                f" {PIN_SIZE + SECRET_SIZE} (truncated or padded)")
        pin = body[offset:offset + PIN_SIZE]
        secret = body[offset + PIN_SIZE:]
        return cls.v2(candidates, pin, secret, nat)

    @classmethod
    def from_bytes(cls, raw: bytes) -> Invite:
        """Parse the binary layout; BadInviteError says what is wrong with it."""
        if len(raw) < _MIN_SIZE:
            raise BadInviteError("the code is too short: it looks cut off")
        body, check = raw[:-CHECK_SIZE], raw[-CHECK_SIZE:]
        if _check(body) != check:
            raise BadInviteError("the check does not match: a character is wrong, missing or extra")
        kind = body[0]
        if kind == KIND_IPV4:
            size, start = 4, 1
        elif kind == KIND_IPV6:
            size, start = 16, 1
        elif kind == KIND_HOSTNAME:
            size, start = body[1], 2
        else:
            raise BadInviteError(f"unknown address kind {kind}")
        end = start + size
        if len(body) != end + _TAIL - CHECK_SIZE:
            raise BadInviteError(
                f"the code is {len(raw)} bytes long, but its address kind needs"
                f" {end + _TAIL} (truncated or padded)"
            )
        if kind == KIND_HOSTNAME:
            try:
                address = body[start:end].decode("ascii")
            except UnicodeDecodeError:
                raise BadInviteError("the host name is not ASCII") from None
        else:
            address = str(ipaddress.ip_address(body[start:end]))
        port = int.from_bytes(body[end : end + 2], "big")
        if port == 0:
            raise BadInviteError("port 0 is not a port anyone can connect to")
        pin = body[end + 2 : end + 2 + PIN_SIZE]
        secret = body[end + 2 + PIN_SIZE :]
        try:
            return cls(address, port, pin, secret)
        except ValueError as exc:
            raise BadInviteError(str(exc)) from None


def _unbase32(letters: str) -> bytes:
    """Unpadded base32 to bytes, rejecting lengths and spare bits no encoder makes."""
    if len(letters) % 8 in (1, 3, 6):
        raise BadInviteError(
            f"{len(letters)} characters after {PREFIX!r} cannot be a whole code:"
            " a character is missing or extra"
        )
    padded = letters.upper() + "=" * (-len(letters) % 8)
    try:
        raw = base64.b32decode(padded)
    except binascii.Error as exc:  # not reachable after the checks above, kept as a guard
        raise BadInviteError(f"not base32: {exc}") from None
    if len(raw) < _MIN_SIZE:
        raise BadInviteError("the code is too short: it looks cut off")
    if base64.b32encode(raw).decode("ascii") != padded:
        # The last character's spare bits are not zero: a typo the bytes alone would hide.
        raise BadInviteError("the last character is wrong, or characters are missing or extra")
    return raw


# -- addresses a peer could use --------------------------------------------------------

_WILDCARDS_V4 = {"0.0.0.0"}
_WILDCARDS_V6 = {"::"}


def reachable_addresses(bound_host: str | None) -> list[str]:
    """Addresses to put in invites when listening on ``bound_host``.

    A specific address is returned as is. For a wildcard (None, "", "0.0.0.0", "::") we list
    this machine's own addresses, found without sending a packet: the host name's
    addresses, and on Linux each interface's IPv4 address (SIOCGIFADDR) and the global
    IPv6 addresses in /proc/net/if_inet6. LAN and global addresses come first, IPv4
    before IPv6; loopback is always there, last.
    """
    if bound_host and bound_host not in _WILDCARDS_V4 | _WILDCARDS_V6:
        return [bound_host]
    want4 = bound_host not in _WILDCARDS_V6
    want6 = bound_host not in _WILDCARDS_V4 and socket.has_ipv6
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for text in [*_hostname_addresses(), *_linux_ipv4_addresses(), *_linux_ipv6_addresses()]:
        try:
            ip = ipaddress.ip_address(text)
        except ValueError:
            continue
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
            continue
        if ip not in found and (want4 if ip.version == 4 else want6):
            found.append(ip)
    found.sort(key=lambda ip: ip.version)  # stable: keeps discovery order within a family
    result = [str(ip) for ip in found]
    if want4:
        result.append("127.0.0.1")
    if want6:
        result.append("::1")
    return result


def _hostname_addresses() -> list[str]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


_SIOCGIFADDR = 0x8915  # Linux: read an interface's IPv4 address


def _linux_ipv4_addresses() -> list[str]:
    """Each interface's IPv4 address via ioctl; a socket that never sends anything."""
    try:
        import fcntl  # Unix only
    except ImportError:
        return []
    addresses: list[str] = []
    try:
        names = [name for _index, name in socket.if_nameindex()]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            for name in names:
                request = struct.pack("256s", name.encode()[:15])
                with contextlib.suppress(OSError):  # interface without an IPv4 address
                    reply = fcntl.ioctl(sock.fileno(), _SIOCGIFADDR, request)
                    addresses.append(socket.inet_ntoa(reply[20:24]))
    except (OSError, AttributeError):
        return addresses
    return addresses


_IFA_F_DADFAILED = 0x08
_IFA_F_TENTATIVE = 0x40


def _linux_ipv6_addresses() -> list[str]:
    """Global-scope, usable IPv6 addresses listed by the Linux kernel."""
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    addresses = []
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or len(parts[0]) != 32:
            continue
        try:
            scope, flags = int(parts[3], 16), int(parts[4], 16)
            packed = bytes.fromhex(parts[0])
        except ValueError:
            continue
        if scope == 0 and not flags & (_IFA_F_DADFAILED | _IFA_F_TENTATIVE):
            addresses.append(str(ipaddress.IPv6Address(packed)))
    return addresses


def one_invite(codes: list[str]) -> str:
    """One v2 code listing the addresses of a host's v1 codes (one per address, same port,
    pin and secret), so one code can go to everyone and the joiner races the addresses.
    The many-game host uses it: it makes no reach offer (see README), but its addresses
    still belong in one code. At most MAX_CANDIDATES, in the given order."""
    invites = [Invite.decode(code) for code in codes]
    if not invites:
        raise ValueError("no invite to combine")
    first = invites[0]
    if any(i.pin != first.pin or i.secret != first.secret for i in invites):
        raise ValueError("these invites are not from one host")
    candidates = list(dict.fromkeys(c for i in invites for c in i.all_candidates()))
    return Invite.v2(candidates[:MAX_CANDIDATES], first.pin, first.secret).encode()


#: Words people paste around a code: the command that uses it, a label, a shell prompt.
_AROUND_A_CODE = {"p2pgotg", "join", "invite", "invite:", "code", "code:", "$", "#"}


def pasted_code(text: str) -> str:
    """The invite code in whatever was pasted: a code broken over lines, quoted, with a
    shell's line continuations, or the whole `p2pgotg join CODE` command.

    >>> pasted_code("p2pgotg join 'gg1-abc\\ndef'")
    'gg1-abcdef'
    """
    for mark in ("\\\n", "\\", "'", '"', "`"):
        text = text.replace(mark, " ")
    words = text.split()
    while words and words[0].lower() in _AROUND_A_CODE:
        words.pop(0)
    return "".join(w for w in words if not w.startswith("--"))
