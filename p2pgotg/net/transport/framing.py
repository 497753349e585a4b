"""Length-prefixed frames over a byte stream, with keepalives and a silence timeout.

Wire format: a 4-byte big-endian unsigned length, then that many payload bytes. The
payload is opaque here (the protocol layer's msgpack message). A length of 0 is a
keepalive: it carries nothing and only says "still here". A length above MAX_FRAME is an
error as soon as the 4 length bytes arrive, before any of the body is read or stored.

``FrameDecoder`` is the sans-IO codec; ``FramedChannel`` is the trio driver that owns the
clock (keepalive interval, silence timeout) and translates trio errors into net errors.
"""

from __future__ import annotations

import math
import struct
from typing import Self

import trio

from p2pgotg.net.transport._stream import STREAM_ERRORS, close_quietly
from p2pgotg.net.transport.errors import (
    ConnectionClosedError,
    FrameTooLargeError,
    NetError,
    PeerSilentError,
    TruncatedFrameError,
)

MAX_FRAME = 64 * 1024
HEADER = struct.Struct(">I")
KEEPALIVE = HEADER.pack(0)

DEFAULT_KEEPALIVE_INTERVAL = 15.0
DEFAULT_SILENCE_TIMEOUT = 60.0
_READ_SIZE = MAX_FRAME + HEADER.size


def encode_frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Header plus payload. Empty payloads are reserved for keepalives (use KEEPALIVE)."""
    if not payload:
        raise ValueError("an empty frame is a keepalive; send KEEPALIVE for that")
    if len(payload) > MAX_FRAME:
        raise ValueError(f"frame of {len(payload)} bytes exceeds MAX_FRAME ({MAX_FRAME})")
    return HEADER.pack(len(payload)) + bytes(payload)


class FrameDecoder:
    """Bytes in, frames out; no I/O (h11 style).

    ``receive_data`` buffers, ``next_frame`` hands back one frame at a time, so a bad
    length is only reported once every good frame before it has been taken. Keepalives
    come out as ``b""``. Once a length is too large the decoder stays broken.
    """

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._error: FrameTooLargeError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held that are not yet a complete frame (non-zero at EOF means truncation)."""
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Add received bytes (dropped once a length was too large: nothing after it can
        be trusted, and a broken decoder must not keep growing)."""
        if self._error is None:
            self._buffer += data

    def next_frame(self) -> bytes | None:
        """The next complete frame, ``b""`` for a keepalive, None if more bytes are needed."""
        if self._error is not None:
            raise _fresh(self._error)
        if len(self._buffer) < HEADER.size:
            return None
        (length,) = HEADER.unpack_from(self._buffer)
        if length > self.max_frame:
            self._buffer.clear()  # nothing after a bad length can be trusted
            self._error = FrameTooLargeError(
                f"announced {length} bytes; the limit is {self.max_frame}"
            )
            raise _fresh(self._error)
        end = HEADER.size + length
        if len(self._buffer) < end:
            return None
        frame = bytes(self._buffer[HEADER.size : end])
        del self._buffer[:end]
        return frame

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """``receive_data`` then every complete frame (keepalives as ``b""``).

        Frames before an oversized length are lost with the exception; a driver that
        needs them uses ``next_frame``.
        """
        self.receive_data(data)
        frames = []
        while (frame := self.next_frame()) is not None:
            frames.append(frame)
        return frames


class FramedChannel:
    """Frames over any trio stream: one sender at a time (a lock), one receiver at a time.

    Run ``keep_alive()`` in a nursery to send a keepalive after ``keepalive_interval``
    seconds without sending. ``receive()`` raises PeerSilentError after ``silence_timeout``
    seconds without any frame, keepalives included; the channel stays usable after that,
    so the caller may choose to wait longer. Any other receive error is final.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        keepalive_interval: float | None = DEFAULT_KEEPALIVE_INTERVAL,
        silence_timeout: float | None = DEFAULT_SILENCE_TIMEOUT,
        max_frame: int = MAX_FRAME,
    ) -> None:
        self.stream = stream
        self.keepalive_interval = keepalive_interval
        self.silence_timeout = silence_timeout
        self._decoder = FrameDecoder(max_frame)
        self._send_lock = trio.Lock()
        self._receiving = False
        self._closed = trio.Event()
        self._send_error: NetError | None = None
        self._receive_error: NetError | None = None
        now = trio.current_time()
        self._last_sent = now
        self._last_heard = now

    # -- sending -------------------------------------------------------------------------

    async def send(self, payload: bytes) -> None:
        """Send one frame. Raises ValueError for an empty or oversized payload (our bug),
        ConnectionClosedError when the connection is gone."""
        await self._send_raw(encode_frame(payload))

    async def _send_raw(self, data: bytes) -> None:
        async with self._send_lock:
            self._check_can_send()
            try:
                await self.stream.send_all(data)
            except STREAM_ERRORS as exc:
                self._send_error = _closed_error("sending", exc)
                raise _fresh(self._send_error) from exc
            except trio.Cancelled:
                # Part of the frame may be on the wire: the byte stream is now out of step.
                self._send_error = ConnectionClosedError("a send was interrupted midway")
                raise
            self._last_sent = trio.current_time()

    def _check_can_send(self) -> None:
        if self._closed.is_set():
            raise ConnectionClosedError("the channel was closed on this side")
        if self._send_error is not None:
            raise ConnectionClosedError(f"an earlier send failed: {self._send_error}")

    async def keep_alive(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Background task: a keepalive whenever nothing was sent for keepalive_interval.

        Returns when the channel is closed or sending fails (the receiver reports why).
        """
        task_status.started()
        if self.keepalive_interval is None:
            await self._closed.wait()
            return
        while not self._closed.is_set():
            with trio.move_on_at(self._last_sent + self.keepalive_interval):
                await self._closed.wait()
                return
            if self._send_lock.locked():
                # A send is under way (maybe blocked by flow control): it will count.
                await trio.sleep(self.keepalive_interval / 4)
                continue
            if trio.current_time() < self._last_sent + self.keepalive_interval:
                continue  # something was sent while we slept
            try:
                await self._send_raw(KEEPALIVE)
            except NetError:
                return

    # -- receiving -----------------------------------------------------------------------

    async def receive(self) -> bytes:
        """The next frame's payload; keepalives are swallowed."""
        if self._receiving:
            raise trio.BusyResourceError("another task is already receiving on this channel")
        self._receiving = True
        try:
            return await self._receive()
        finally:
            self._receiving = False

    async def _receive(self) -> bytes:
        if self._receive_error is not None:
            raise _fresh(self._receive_error)
        # Silence counts from the last frame or from now, whichever is later: bytes that
        # waited in the kernel while nobody was receiving are not silence.
        self._last_heard = max(self._last_heard, trio.current_time())
        while True:
            try:
                frame = self._decoder.next_frame()
            except FrameTooLargeError as exc:
                self._receive_error = _fresh(exc)
                raise
            if frame is not None:
                self._last_heard = trio.current_time()
                if frame:
                    return frame
                continue  # keepalive
            await self._fill()

    async def _fill(self) -> None:
        deadline = (
            math.inf if self.silence_timeout is None else self._last_heard + self.silence_timeout
        )
        with trio.move_on_at(deadline):
            try:
                data = await self.stream.receive_some(_READ_SIZE)
            except STREAM_ERRORS as exc:
                self._receive_error = _closed_error("receiving", exc)
                raise _fresh(self._receive_error) from exc
            if not data:
                if self._decoder.buffered:
                    self._receive_error = TruncatedFrameError(
                        f"{self._decoder.buffered} bytes of an unfinished frame at end of stream"
                    )
                else:
                    self._receive_error = ConnectionClosedError("the other player closed it")
                raise _fresh(self._receive_error)
            self._decoder.receive_data(data)
            return
        raise PeerSilentError(f"nothing received for {self.silence_timeout:g} s")

    # -- closing -------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the stream (gracefully if it is quick) and stop keep_alive()."""
        self._closed.set()
        await close_quietly(self.stream)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _fresh(error: NetError) -> NetError:
    """A new instance of a remembered error, to raise. The one remembered is never raised
    itself: a raised exception holds its traceback, whose frames hold the channel that holds
    the exception, a cycle that only a full collection frees (SPEC 3.4: refused connections
    must leave nothing behind)."""
    return type(error)(error.detail)


def _closed_error(doing: str, exc: BaseException) -> ConnectionClosedError:
    if isinstance(exc, trio.ClosedResourceError):
        return ConnectionClosedError("the channel was closed on this side")
    cause = exc.__cause__ or exc
    reason = str(cause) or type(cause).__name__
    return ConnectionClosedError(f"connection broken while {doing}: {reason}")
