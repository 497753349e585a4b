"""TCP sockets that share one local port: the STUN queries, and later the hole-punching
connects, must leave from the port whose public mapping we tell the other side."""

from __future__ import annotations

import contextlib
import socket

import trio


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def reusable_socket(family: int = socket.AF_INET) -> trio.socket.SocketType:
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


class PortReservation:
    """A bound, unconnected socket that keeps a local port ours while we punch from it."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.sock = sock

    @classmethod
    async def new(cls, port: int = 0, family: int = socket.AF_INET) -> PortReservation:
        sock = reusable_socket(family)
        try:
            await sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
        except OSError:
            sock.close()
            raise
        return cls(sock)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def close(self) -> None:
        self.sock.close()


async def connect_from(local_port: int, host: str, port: int) -> trio.SocketStream:
    """A TCP connection to host:port leaving from ``local_port`` (no timeout here: the
    caller's cancel scope is the timeout)."""
    family = _family(host)
    sock = reusable_socket(family)
    try:
        await sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", local_port))
        await sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return trio.SocketStream(sock)
