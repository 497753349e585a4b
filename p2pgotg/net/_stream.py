"""Helpers shared by the TLS and framing drivers: which errors mean "connection gone",
and closing without caring whether the peer already left."""

from __future__ import annotations

import contextlib
import ssl

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
