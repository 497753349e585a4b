"""A fault-injecting TCP proxy on loopback, for tests and soak runs.

It listens on a port, forwards every connection to a target (the host), and does to each
connection what its `Plan` says: hold chunks back for a random delay (order kept), drip
bytes slowly, and once a number of bytes has gone through, cut the connection (both sides
reset), stall it (nothing more goes through, the sockets stay open), or half-close it (one
direction ends with an EOF, the other flows on). It knows nothing of TLS or frames: the
cut points fall anywhere, inside TLS records and frames alike.

Bounded and deterministic: every random choice comes from `random.Random` seeded with the
proxy's seed and the connection's number, each fault happens once per connection, a stall
ends in a cut after `stall_for` seconds, and `random_plans` makes only the first `faults`
connections faulty, so a game played through the proxy can always finish.

    proxy = FaultProxy("127.0.0.1", host_port, random_plans(faults=3, seed=7))
    port = await nursery.start(proxy.serve)      # then connect to 127.0.0.1:port
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

UP, DOWN = "up", "down"  # client -> target, target -> client
CUT, STALL, HALF_CLOSE = "cut", "stall", "half_close"
KINDS = (CUT, STALL, HALF_CLOSE)
_CHUNK = 16384
_NO_LIMIT = 1 << 62
_QUEUE = 64  # chunks held per direction before the proxy stops reading (back-pressure)


@dataclass(frozen=True)
class Plan:
    """What the proxy does to one connection. Byte counts are of the whole connection:
    both directions together, counted as they are forwarded."""

    delay: float = 0.0  # each chunk is held back a random 0..delay seconds (order kept)
    drip: int = 0  # when > 0, forward at most this many bytes at a time ...
    drip_interval: float = 0.0  # ... this many seconds apart
    fault: str | None = None  # CUT, STALL or HALF_CLOSE
    after: int = 0  # the fault happens once this many bytes went through
    direction: str = UP  # which direction a HALF_CLOSE ends (UP: the target sees EOF)
    stall_for: float = 30.0  # a stall ends in a cut after this long, if nobody left before

    def __post_init__(self) -> None:
        if self.fault not in (None, *KINDS):
            raise ValueError(f"unknown fault {self.fault!r}; use one of {KINDS}")
        if self.direction not in (UP, DOWN):
            raise ValueError("direction is 'up' or 'down'")
        if min(self.delay, self.drip_interval, self.after, self.drip, self.stall_for) < 0:
            raise ValueError("delays, sizes and byte counts are never negative")


Planner = Callable[[int, random.Random], Plan]


def random_plans(
    *,
    faults: int,
    kinds: Sequence[str] = (CUT,),
    after: tuple[int, int] = (200, 20000),
    delay: float = 0.0,
    drip: int = 0,
    drip_interval: float = 0.0,
    stall_for: float = 30.0,
) -> Planner:
    """Connections 0..faults-1 each get one fault of a kind from `kinds` (in turn) after a
    random number of bytes in `after`; every connection gets the same `delay` and drip."""

    def plan(index: int, rng: random.Random) -> Plan:
        common: dict[str, Any] = {"delay": delay, "drip": drip, "drip_interval": drip_interval,
                  "stall_for": stall_for}
        if index >= faults:
            return Plan(**common)
        return Plan(fault=kinds[index % len(kinds)], after=rng.randint(*after),
                    direction=rng.choice((UP, DOWN)), **common)

    return plan


def fixed_plans(plans: Sequence[Plan], then: Plan = Plan()) -> Planner:
    """The given plans for the first connections, `then` for the rest."""
    return lambda index, rng: plans[index] if index < len(plans) else then


@dataclass
class ConnectionLog:
    """What happened to one connection (for assertions and soak reports)."""

    index: int
    plan: Plan
    forwarded: dict[str, int] = field(default_factory=lambda: {UP: 0, DOWN: 0})
    faulted: str | None = None  # the fault that happened, if it did
    closed: bool = False


class _Connection:
    def __init__(self, log: ConnectionLog, rng: random.Random, client: trio.SocketStream,
                 target: trio.SocketStream) -> None:
        self.log = log
        self.plan = log.plan
        self.rng = rng
        self.streams = {UP: target, DOWN: client}  # where each direction writes
        self.sources = {UP: client, DOWN: target}  # where each direction reads
        self.ended: set[str] = set()  # directions that forward nothing more
        self.eof_sent: set[str] = set()
        self.stalled = trio.Event()
        self.half_closed = trio.Event()
        self.scope = trio.CancelScope()

    @property
    def total(self) -> int:
        return self.log.forwarded[UP] + self.log.forwarded[DOWN]

    async def run(self) -> None:
        with self.scope:
            async with trio.open_nursery() as nursery:
                for direction in (UP, DOWN):
                    send, receive = trio.open_memory_channel[tuple[float, bytes]](_QUEUE)
                    nursery.start_soon(self._read, direction, send)
                    nursery.start_soon(self._write, direction, receive)
                if self.plan.fault == STALL:
                    nursery.start_soon(self._stall_limit)
                if self.plan.fault == HALF_CLOSE:
                    nursery.start_soon(self._half_close)
        await self._close(abort=self.log.faulted in (CUT, STALL))

    async def _read(self, direction: str,
                    out: trio.MemorySendChannel[tuple[float, bytes]]) -> None:
        """Read chunks as they come and queue each with the time it may go on."""
        due = 0.0
        async with out:
            while True:
                try:
                    data = await self.sources[direction].receive_some(_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    self.scope.cancel()  # one side is gone for good: so is the connection
                    return
                if not data:
                    if self.stalled.is_set():
                        self.scope.cancel()  # an end left the stalled connection
                    return  # EOF: the writer passes it on once the queue is drained
                if self.stalled.is_set() or direction in self.ended:
                    continue  # swallowed
                now = trio.current_time()
                hold = self.rng.uniform(0, self.plan.delay) if self.plan.delay else 0.0
                due = max(due, now + hold)
                await out.send((due, data))

    async def _write(self, direction: str,
                     queue: trio.MemoryReceiveChannel[tuple[float, bytes]]) -> None:
        async with queue:
            async for due, data in queue:
                await trio.sleep_until(due)
                view = memoryview(data)
                while view and not self.stalled.is_set() and direction not in self.ended:
                    piece = view[: self.plan.drip] if self.plan.drip else view
                    piece = piece[: self._room()]
                    if piece:
                        try:
                            await self.streams[direction].send_all(piece)
                        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                            self.scope.cancel()
                            return
                        self.log.forwarded[direction] += len(piece)
                        view = view[len(piece):]
                    if self._room() == 0:
                        self._fault()
                        if self.plan.fault == CUT:
                            return  # not one byte more (the connection is being torn down)
                    elif view and self.plan.drip and self.plan.drip_interval:
                        await trio.sleep(self.plan.drip_interval)
        # the source said EOF (or the direction was ended): pass the half-close on
        await self._end(direction)
        if self.ended >= {UP, DOWN}:
            self.scope.cancel()

    def _room(self) -> int:
        """Bytes that may still go through before the fault."""
        if self.plan.fault is None or self.log.faulted is not None:
            return _NO_LIMIT
        return max(0, self.plan.after - self.total)

    def _fault(self) -> None:
        plan = self.plan
        self.log.faulted = plan.fault
        if plan.fault == CUT:
            self.scope.cancel()
        elif plan.fault == STALL:
            self.stalled.set()
        elif plan.fault == HALF_CLOSE:
            self.ended.add(plan.direction)
            self.half_closed.set()

    async def _half_close(self) -> None:
        await self.half_closed.wait()
        await self._end(self.plan.direction)

    async def _end(self, direction: str) -> None:
        self.ended.add(direction)
        if direction in self.eof_sent:
            return
        self.eof_sent.add(direction)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self.streams[direction].send_eof()

    async def _stall_limit(self) -> None:
        await self.stalled.wait()
        await trio.sleep(self.plan.stall_for)
        self.scope.cancel()

    async def _close(self, abort: bool) -> None:
        for stream in (self.streams[UP], self.streams[DOWN]):
            if abort:  # a reset, as when a network path dies, not a polite FIN
                with contextlib.suppress(OSError):
                    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                             struct.pack("ii", 1, 0))
            with trio.CancelScope(shield=True):
                await stream.aclose()
        self.log.closed = True


class FaultProxy:
    """Forward connections from `listen_host`:port to `target_host`:`target_port`, with the
    faults that `planner(index, rng)` gives each connection."""

    def __init__(self, target_host: str, target_port: int, planner: Planner | None = None,
                 *, seed: int = 0, listen_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.planner = planner or fixed_plans([])
        self.seed = seed
        self.listen_host = listen_host
        self.port: int | None = None
        self.connections: list[ConnectionLog] = []
        self.accepted = trio.Event()  # set at the first connection

    def faults(self, kind: str | None = None) -> int:
        """How many connections had a fault (of `kind`)."""
        return sum(1 for c in self.connections
                   if c.faulted is not None and (kind is None or c.faulted == kind))

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
                    ) -> None:
        """Listen and forward until cancelled; `task_status.started(port)`."""
        listeners = await trio.open_tcp_listeners(0, host=self.listen_host)
        self.port = int(listeners[0].socket.getsockname()[1])
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._handle, listeners)
            task_status.started(self.port)

    async def _handle(self, client: trio.SocketStream) -> None:
        index = len(self.connections)
        rng = random.Random(f"{self.seed}/{index}")
        log = ConnectionLog(index, self.planner(index, rng))
        self.connections.append(log)
        self.accepted.set()
        try:
            target = await trio.open_tcp_stream(*self.target)
        except OSError:
            log.closed = True
            await client.aclose()
            return
        await _Connection(log, rng, client, target).run()
