"""SOCKS5 (RFC 1928) as a joiner speaks it to its own tor: a user name and password (RFC
1929) fresh for each attempt, which tor takes as a mark of isolation (its SocksPort's
IsolateSOCKSAuth, on by default), so that no attempt reuses the circuits of one that
failed; one CONNECT to an onion name (address type 3, a domain name, so the name is
resolved by tor, never by us); and the replies checked field by field (SPEC 3.8).

>>> GREETING.hex(), connect_request("ab.onion", 4000).hex()
('05020002', '050100030861622e6f6e696f6e0fa0')
>>> credentials("p2pgotg", "x1").hex()
'0107703270676f7467027831'
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

VERSION = 5
NO_AUTHENTICATION = 0x00
USERNAME_PASSWORD = 0x02
NO_ACCEPTABLE_METHOD = 0xFF
CONNECT = 0x01
ATYP_IPV4, ATYP_DOMAIN, ATYP_IPV6 = 0x01, 0x03, 0x04
#: Both methods offered: tor picks the user name and password (and isolates by them); a
#: proxy that takes none is fine too.
GREETING = bytes([VERSION, 2, NO_AUTHENTICATION, USERNAME_PASSWORD])
METHOD_REPLY_SIZE = 2
AUTH_VERSION = 1  # RFC 1929's sub-negotiation
AUTH_REPLY_SIZE = 2
REPLY_HEAD_SIZE = 5  # VER REP RSV ATYP and the first address byte (a domain's length)

#: RFC 1928 6, then Tor's extended errors for onion services (its SocksPort flag
#: ExtendedErrors; tor-spec's socks-extensions 3).
REPLY_WORDS = {
    0x01: "general failure",
    0x02: "not allowed by tor's rules",
    0x03: "network unreachable",
    0x04: "host unreachable",
    0x05: "connection refused (the service is up, but nothing listens behind it)",
    0x06: "timed out",
    0x07: "command not supported",
    0x08: "address type not supported",
    0xF0: "the onion service's descriptor cannot be found (not published yet, or gone)",
    0xF1: "the onion service's descriptor is invalid",
    0xF2: "the introduction to the onion service failed",
    0xF3: "the rendezvous with the onion service failed",
    0xF4: "the onion service asks for client authorization",
    0xF5: "the onion service refused our client authorization",
    0xF6: "the onion address is invalid",
    0xF7: "the introduction to the onion service timed out",
}
#: Answers that end the attempt: trying the same address again cannot help.
FINAL = frozenset({0x02, 0x07, 0x08, 0xF1, 0xF4, 0xF5, 0xF6})


class SocksError(Exception):
    """The SOCKS server refused or answered garbage; ``code`` is the reply code (None for
    garbage) and ``final`` whether trying again could help."""

    def __init__(self, text: str, code: int | None = None) -> None:
        super().__init__(text)
        self.code = code
        self.final = code is None or code in FINAL


@dataclass(frozen=True)
class Bound:
    """The address and port the proxy reports for the connection (tor reports zeros)."""

    address: str
    port: int


def connect_request(host: str, port: int) -> bytes:
    """CONNECT to a name (address type 3: tor resolves it, so an onion name works)."""
    name = host.encode("ascii")
    if not 1 <= len(name) <= 255:
        raise ValueError("a SOCKS5 domain name is 1 to 255 bytes")
    if not 1 <= port <= 0xFFFF:
        raise ValueError(f"port {port} is not in 1..65535")
    return bytes([VERSION, CONNECT, 0, ATYP_DOMAIN, len(name)]) + name + port.to_bytes(2, "big")


def chosen_method(reply: bytes) -> int:
    """The method the server chose of the two offered."""
    if len(reply) != METHOD_REPLY_SIZE or reply[0] != VERSION:
        raise SocksError(f"not a SOCKS5 server (it answered {reply[:8].hex() or 'nothing'})")
    if reply[1] == NO_ACCEPTABLE_METHOD:
        raise SocksError("the SOCKS server takes neither no authentication nor a user name "
                         "and password (tor's SocksPort takes both)")
    if reply[1] not in (NO_AUTHENTICATION, USERNAME_PASSWORD):
        raise SocksError(f"the SOCKS server chose method {reply[1]}, which was not offered")
    return reply[1]


def credentials(username: str, password: str) -> bytes:
    """RFC 1929's request: version 1, then the user name and password, each with its
    length byte."""
    user, word = username.encode("ascii"), password.encode("ascii")
    if not (1 <= len(user) <= 255 and 1 <= len(word) <= 255):
        raise ValueError("a SOCKS5 user name and password are 1 to 255 bytes each")
    return bytes([AUTH_VERSION, len(user)]) + user + bytes([len(word)]) + word


def check_credentials_reply(reply: bytes) -> None:
    """RFC 1929's answer: status 0 is success."""
    if len(reply) != AUTH_REPLY_SIZE or reply[0] != AUTH_VERSION:
        raise SocksError(f"not a SOCKS5 password answer ({reply[:8].hex() or 'nothing'})")
    if reply[1] != 0:
        raise SocksError("the SOCKS server refused our user name and password")


def reply_size(head: bytes) -> int:
    """The whole reply's length from its first REPLY_HEAD_SIZE bytes (a failure reply may
    be that short or longer: read what it says, then judge it)."""
    if len(head) != REPLY_HEAD_SIZE or head[0] != VERSION:
        raise SocksError(f"not a SOCKS5 reply ({head.hex() or 'nothing'})")
    atyp = head[3]
    if atyp == ATYP_IPV4:
        return 4 + 4 + 2
    if atyp == ATYP_IPV6:
        return 4 + 16 + 2
    if atyp == ATYP_DOMAIN:
        return 4 + 1 + head[4] + 2
    raise SocksError(f"a SOCKS5 reply with unknown address type {atyp}")


def parse_reply(reply: bytes) -> Bound:
    """Success, or SocksError naming the server's reason."""
    if len(reply) < REPLY_HEAD_SIZE or len(reply) != reply_size(reply[:REPLY_HEAD_SIZE]):
        raise SocksError("a SOCKS5 reply of the wrong length")
    code = reply[1]
    if code != 0x00:
        words = REPLY_WORDS.get(code, f"unknown reply code 0x{code:02x}")
        raise SocksError(words, code)
    atyp, body = reply[3], reply[4:-2]
    port = int.from_bytes(reply[-2:], "big")
    if atyp == ATYP_DOMAIN:
        return Bound(body[1:].decode("ascii", "replace"), port)
    return Bound(str(ipaddress.ip_address(body)), port)
