"""Learn our public address with STUN over TCP (RFC 8489), and what kind of NAT we are
behind, by asking two servers from the same local port (RFC 5780's idea, with two servers
instead of one server's two addresses): the same public port twice means an
endpoint-independent mapping, where hole punching can work; two different ports mean a
symmetric NAT, where it cannot.

TCP, not UDP, because the game runs over TCP and a NAT keeps separate mappings per
protocol: the mapping we report must be the one a TCP connection from that port gets.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import trio

from p2pgotg.net.reaching.invite import NAT_EASY, NAT_NONE, NAT_SYMMETRIC, NAT_UNKNOWN
from p2pgotg.net.reaching.reuse import connect_from
from p2pgotg.net.transport._stream import STREAM_ERRORS, close_quietly
from p2pgotg.reach.stun import (
    HEADER_SIZE,
    StunError,
    binding_request,
    message_size,
    parse_binding_response,
)

STUN_PORT = 3478
# Public servers that answer STUN over TCP (Nextcloud's and sipgate's). Anyone may run
# coturn and pass --stun HOST:PORT instead.
DEFAULT_SERVERS = ("stun.nextcloud.com:3478", "stun.sipgate.net:3478")
QUERY_TIMEOUT = 2.0
# What asking a server can raise besides its answer: the stream's errors (OSError covers
# a name that does not resolve) and UnicodeError (a name that cannot be a name at all).
QUERY_ERRORS: tuple[type[Exception], ...] = (*STREAM_ERRORS, UnicodeError)


class StunFailed(Exception):
    """No usable answer from a STUN server; the text says why (shown to the user)."""


def parse_server(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST`` (port 3478) or ``[IPv6]:PORT``; ValueError says what is wrong."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, ""
    if not host:
        raise ValueError(f"{text!r} names no STUN server")
    try:
        port = int(port_text) if port_text else STUN_PORT
    except ValueError:
        raise ValueError(f"{text!r}: the port must be a number") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"{text!r}: the port must be 1 to 65535")
    return host, port


async def _read_exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise StunFailed("the STUN server closed the connection before answering")
        data += chunk
    return bytes(data)


async def query(server: tuple[str, int], local_port: int,
                timeout: float = QUERY_TIMEOUT) -> tuple[str, int]:
    """Our (address, port) as ``server`` sees a TCP connection from ``local_port``."""
    host, port = server
    where = f"STUN server {host}:{port}"
    txid = secrets.token_bytes(12)
    try:
        with trio.fail_after(timeout):
            infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
            address = str(infos[0][4][0])
            stream = await connect_from(local_port, address, port)
            try:
                await stream.send_all(binding_request(txid))
                header = await _read_exactly(stream, HEADER_SIZE)
                rest = await _read_exactly(stream, message_size(header) - HEADER_SIZE)
            finally:
                await close_quietly(stream, 0.5)
        return parse_binding_response(header + rest, txid)
    except trio.TooSlowError:
        raise StunFailed(f"no answer from {where} within {timeout:g} s") from None
    except StunError as exc:
        raise StunFailed(f"{where} gave an unusable answer: {exc}") from None
    except QUERY_ERRORS as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise StunFailed(f"could not ask {where}: {reason}") from None


@dataclass(frozen=True)
class NatProbe:
    """What STUN told us: the NAT kind (invite.NAT_*), our public mapping, and notes."""

    nat: int
    mapped: tuple[str, int] | None
    notes: tuple[str, ...] = ()


async def probe(servers: list[tuple[str, int]], local_port: int, local_addresses: list[str],
                timeout: float = QUERY_TIMEOUT) -> NatProbe:
    """Ask every server at once from ``local_port`` and compare what they saw."""
    answers: dict[tuple[str, int], tuple[str, int]] = {}
    notes: list[str] = []

    async def ask(server: tuple[str, int]) -> None:
        try:
            answers[server] = await query(server, local_port, timeout)
        except StunFailed as exc:
            notes.append(str(exc))

    async with trio.open_nursery() as nursery:
        for server in servers:
            nursery.start_soon(ask, server)
    seen = [answers[s] for s in servers if s in answers]
    if not seen:
        return NatProbe(NAT_UNKNOWN, None, tuple(notes))
    first = seen[0]
    if any(mapped != first for mapped in seen[1:]):
        ports = ", ".join(f"{a}:{p}" for a, p in seen)
        notes.append(f"the STUN servers saw different public ports for one local port ({ports})")
        return NatProbe(NAT_SYMMETRIC, first, tuple(notes))
    if first[0] in local_addresses and first[1] == local_port:
        return NatProbe(NAT_NONE, first, tuple(notes))
    if len(seen) == 1:
        notes.append("only one STUN server answered, so a symmetric NAT cannot be ruled out")
    return NatProbe(NAT_EASY, first, tuple(notes))
