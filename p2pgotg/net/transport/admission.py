"""What a host's port lets strangers hold before they are admitted (SPEC 3.4, "Limits
before admission").

Anyone who can reach the port can open connections before any secret is checked, so the
accept loop bounds them: at most `unadmitted` connections not yet admitted at once, at most
`per_address` of them from one source address; one over the bound is closed at once,
before any TLS. When the process runs out of descriptors (EMFILE, ENFILE) or kernel
memory, accepting pauses for a moment and says so in one line, while every game in play
goes on. A refused connection must leave nothing behind, whatever the collector's
settings: its TLS stream's reference cycle is cut by hand (`release_stream`).
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from p2pgotg.net.transport._stream import STREAM_ERRORS, close_quietly, release_stream
from p2pgotg.net.transport.errors import ListenError, NetError
from p2pgotg.net.transport.tls import open_listeners

#: accept() failing for want of descriptors or kernel memory: pause, never crash.
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
ACCEPT_PAUSE = 0.5  # seconds between accept attempts while out of descriptors
REPORT_EVERY = 10.0  # seconds: at most one line this often about a repeated refusal


@dataclass(frozen=True)
class AdmissionLimits:
    """What strangers may hold before admission (SPEC 3.4)."""

    unadmitted: int = 64  # connections not yet admitted, overall
    per_address: int = 8  # of those, from one source address
    tls_handshake: float = 10.0  # seconds from accept to a finished TLS handshake
    pregame: float = 120.0  # seconds from accept until the joiner's hello: the game begins
    pregame_per_source: int = 8  # games admitted but not yet begun, from one source
    # The many-game host: games in progress (begun or not) from one source, and how long a
    # source whose game lapsed (the pre-game limit, or the action limit, SPEC 3.6) waits
    # before it may start another.
    games_per_source: int = 8
    lapse_cooldown: float = 120.0


class Ticket:
    """One connection's place among those not yet admitted; `release()` gives it up."""

    def __init__(self, gate: Gate, address: str) -> None:
        self.gate = gate
        self.address = address
        self.since = trio.current_time()
        self._held = True

    @property
    def pregame_deadline(self) -> float:
        """When a game begun on this connection must have its id (both hellos)."""
        return self.since + self.gate.limits.pregame

    def release(self) -> None:
        """Admitted (the joiner showed the join secret) or gone: no longer a stranger."""
        if self._held:
            self._held = False
            self.gate.leave(self.address)


class Gate:
    """Counts the connections not yet admitted, overall and per source address."""

    def __init__(self, limits: AdmissionLimits) -> None:
        self.limits = limits
        self.total = 0
        self.by_address: Counter[str] = Counter()
        self.turned_away = 0  # over the bound, closed before TLS

    def enter(self, address: str) -> Ticket | None:
        """A ticket for a new connection from `address`, or None when over the bound."""
        if self.total >= self.limits.unadmitted \
                or self.by_address[address] >= self.limits.per_address:
            self.turned_away += 1
            return None
        self.total += 1
        self.by_address[address] += 1
        return Ticket(self, address)

    def leave(self, address: str) -> None:
        self.total -= 1
        self.by_address[address] -= 1
        if not self.by_address[address]:
            del self.by_address[address]


class Throttled:
    """A status line that a flood would repeat: said at most once per `REPORT_EVERY`
    seconds, with how many times it happened meanwhile."""

    def __init__(self, on_status: Callable[[str], None]) -> None:
        self.on_status = on_status
        self._last: dict[str, float] = {}
        self._count: Counter[str] = Counter()

    def say(self, text: str) -> None:
        now = trio.current_time()
        self._count[text] += 1
        last = self._last.get(text)
        if last is not None and now - last < REPORT_EVERY:
            return
        count, self._count[text] = self._count[text], 0
        self._last[text] = now
        self.on_status(text if count <= 1 else f"{text} ({count} times)")


Handler = Callable[[trio.SSLStream, Ticket], Awaitable[object]]


async def serve_admission(
    handler: Handler,
    context: ssl.SSLContext,
    port: int,
    bind: str | None,
    gate: Gate,
    on_status: Callable[[str], None],
    *,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept TLS connections forever, within the gate's limits, calling `handler(stream, ticket)`
    after each TLS handshake (the stream is closed and released when it returns).
    NetErrors from the handler end that connection only; anything else is a bug."""
    try:
        listeners = await open_listeners(port, bind)
    except OSError as exc:
        raise ListenError(f"could not listen on port {port}: {exc.strerror or exc}") from exc
    throttled = Throttled(on_status)
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept_loop, listener, gate, throttled, handler, context,
                               nursery)
        task_status.started(listeners)


async def _accept_loop(listener: trio.SocketListener, gate: Gate, throttled: Throttled,
                       handler: Handler, context: ssl.SSLContext,
                       nursery: trio.Nursery) -> None:
    paused = False
    async with listener:
        while True:
            try:
                tcp = await listener.accept()
            except OSError as exc:
                if exc.errno not in RESOURCE_ERRNOS:
                    raise
                if not paused:
                    throttled.on_status(
                        f"cannot take new connections: {exc.strerror or exc} (out of file "
                        "descriptors or memory); games in play go on, new connections wait")
                    paused = True
                await trio.sleep(ACCEPT_PAUSE)
                continue
            if paused:
                throttled.on_status("taking new connections again")
                paused = False
            ticket = gate.enter(peer_address(tcp))
            if ticket is None:
                tcp.socket.close()  # (over the bound: no TLS, no task, nothing kept)
                throttled.say(
                    f"connections turned away: more than {gate.limits.unadmitted} not yet "
                    f"admitted, or {gate.limits.per_address} from one address")
                continue
            nursery.start_soon(serve_one, tcp, ticket, handler, context)


async def serve_one(tcp: trio.SocketStream, ticket: Ticket, handler: Handler,
                    context: ssl.SSLContext) -> None:
    """TLS server side on an accepted (or hole-punched) connection, then the handler; the
    ticket and the stream are given up however it ends."""
    stream = trio.SSLStream(tcp, context, server_side=True, https_compatible=False)
    try:
        handshook = False
        with trio.move_on_after(ticket.gate.limits.tls_handshake):
            try:
                await stream.do_handshake()
                handshook = True
            except STREAM_ERRORS:
                pass
        if handshook:
            with contextlib.suppress(NetError):  # (this connection only: it is gone)
                await handler(stream, ticket)
    finally:
        ticket.release()
        await close_quietly(stream)
        release_stream(stream)


def peer_address(tcp: trio.SocketStream) -> str:
    """The source a connection counts against ("?" when the peer is gone): see
    `source_of`."""
    try:
        return source_of(str(tcp.socket.getpeername()[0]))
    except OSError:
        return "?"


def source_of(address: str) -> str:
    """The unit one party controls: an IPv4 address, or an IPv6 /64 (a home or a phone
    is given a whole /64 or more, so counting single IPv6 addresses would bound nothing);
    an IPv4-mapped IPv6 address counts as its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
