"""Helpers shared by the TLS and framing drivers: which errors mean "connection gone",
and closing without caring whether the peer already left."""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct

import trio

# Errors a stream can raise that mean "this connection is unusable".
STREAM_ERRORS: tuple[type[Exception], ...] = (
    trio.BrokenResourceError, trio.ClosedResourceError, ssl.SSLError, OSError)

CLOSE_TIMEOUT = 2.0


async def close_quietly(stream: trio.abc.AsyncResource, timeout: float = CLOSE_TIMEOUT) -> None:
    """Close, trying a graceful close (TLS close_notify) for at most ``timeout`` seconds,
    never raising for a connection that is already broken."""
    with trio.move_on_after(timeout):
        with contextlib.suppress(*STREAM_ERRORS):
            await stream.aclose()
    # aclose() releases the resource even when the timeout cancels it (trio's contract).


async def _handshake_done() -> None:
    """Stands in for a closed stream's handshake (see `release_stream`)."""


def release_stream(stream: trio.SSLStream) -> None:
    """Cut the reference cycle of a closed `trio.SSLStream`, so that reference counting
    frees it and its SSL object at once.

    trio's stream keeps its handshake in a helper that holds a bound method of the stream
    itself: every stream is a cycle, freed only by a collection of the oldest generation,
    which a many-game host runs minutes apart (`tune_collector_for_many_games`), so
    refused connections piled up. The helper is replaced by one that holds nothing."""
    once = getattr(stream, "_handshook", None)
    if once is not None:
        with contextlib.suppress(TypeError, AttributeError):
            done = type(once)(_handshake_done)
            if once.done:  # (as it was: a late call sees the same state)
                done.started = True
                done._done.set()
            stream._handshook = done  # type: ignore[attr-defined]


def abort_on_close(stream: trio.abc.Stream, abort: bool = True) -> None:
    """Make closing ``stream`` (or the TCP stream under its TLS) end the connection with a
    reset instead of a goodbye (``abort`` False: a goodbye again). For a connection already
    lost: a socket left closing (FIN-WAIT, TIME-WAIT) would hold its four addresses for a
    minute or more, and a punched connection's are the very ones the next punch needs
    (SPEC 3.8)."""
    while isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    if isinstance(stream, trio.SocketStream):
        with contextlib.suppress(OSError):
            stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", int(abort), 0))
