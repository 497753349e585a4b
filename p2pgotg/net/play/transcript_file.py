"""Transcript files on disk: created owner-only, appended record by record, fsynced.

The format is `p2pgotg.protocol.transcript`'s; this module only does the file I/O, so that
a crash never loses a message that was sent or acted upon. Write-ahead: the driver appends
before it sends and before it acts on what it received, and it sends nothing (and tells the
peer no count of what it holds) until `sync_in_thread` says every append so far is durable.
`append` itself only hands the bytes to the operating system, and the fsync runs on a worker
thread: a many-game host must not stall every game while one disk flush completes.

An open transcript is locked for this process (`game_lock`, SPEC 3.5): created locked, and
reopened locked before a byte of it is read, so two processes never resume one game.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from p2pgotg.net.play.game_lock import lock_game_file
from p2pgotg.net.transport.paths import fsync_dir
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.transcript import Transcript, encode_header, encode_record, parse

if TYPE_CHECKING:
    from outcome import Outcome  # (trio's own dependency: how a thread's result comes back)


class TranscriptFile:
    """An open transcript: `append` writes, `sync` / `sync_in_thread` make it durable."""

    #: Flush on a worker thread. Tests on trio's autojump clock turn it off: to that clock
    #: a task waiting for a thread is idle, so virtual time would leap during every flush.
    THREADED = True

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self._written = 0  # appends so far
        self._synced = 0  # appends known to be on disk
        self._new_entry = False  # the directory entry still needs its fsync
        self._in_flight: trio.Event | None = None  # set when the running fsync returns
        self._failure: Exception | None = None  # what the last flush raised

    @classmethod
    def create(cls, path: Path, role: str, key: bytes, header: bytes | None = None
               ) -> TranscriptFile:
        """A new file, owner-only (0600) and locked; refuses to overwrite an existing one.
        `header`: another header record than a game of two's (a table's, SPEC 5.9)."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        try:
            lock_game_file(fd, path)  # (another process that found it at once: never ours)
        except OSError:
            os.close(fd)
            raise
        f = cls(path, fd)
        f._new_entry = True
        f._write(header if header is not None else encode_header(role, key))
        return f

    @classmethod
    def open_existing(cls, path: Path, read: Callable[[bytes], Transcript] = parse
                      ) -> tuple[TranscriptFile, Transcript]:
        """Reopen for appending after a restart; a torn last record is cut off first.
        Locked before it is read: raises GameInUseError while another process has it
        open (what that one wrote after our read would otherwise be lost to us). `read`:
        another reader of the records than a game of two's (a table's, SPEC 5.9)."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            lock_game_file(fd, path)
            data = path.read_bytes()
            transcript = read(data)
            if transcript.torn_tail:
                os.ftruncate(fd, _intact_length(data))
                os.fsync(fd)
                transcript.torn_tail = False
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd), transcript

    @property
    def durable(self) -> bool:
        """Every append so far is on disk."""
        return self._synced == self._written

    def append(self, records: Iterable[Record]) -> None:
        """Write the records now (not yet durable: see `sync_in_thread`)."""
        data = b"".join(encode_record(r) for r in records)
        if data:
            self._write(data)

    def append_encoded(self, data: bytes) -> None:
        """Write records already framed (a table's, SPEC 5.9), as `append` does."""
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        """Write all of `data` or, when the write fails part way (ENOSPC, EIO), cut the
        file back to where it was, so that a game halted by the failure leaves no torn
        record behind; the OSError is raised either way."""
        start = os.fstat(self._fd).st_size
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError:
            if len(view) < len(data):
                with contextlib.suppress(OSError):  # (the torn tail is cut on reopening)
                    os.ftruncate(self._fd, start)
            raise
        self._written += 1

    def _fsync(self) -> None:
        """The flush itself (on whichever thread calls it)."""
        os.fsync(self._fd)
        if self._new_entry:
            fsync_dir(self.path.parent)
            self._new_entry = False

    def sync(self) -> None:
        """Make every append so far durable, on this thread."""
        if self._fd >= 0 and not self.durable:
            target = self._written
            self._fsync()
            self._synced = max(self._synced, target)

    def begin_sync(self) -> None:
        """Start a flush of every append so far on a worker thread, now, without waiting
        (call it from the event loop's thread as soon as something will need to be sent:
        the flush runs while the sender is still waiting its turn)."""
        if not self.THREADED or self._fd < 0 or self.durable or self._in_flight is not None:
            return
        target = self._written
        done = self._in_flight = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def deliver(result: Outcome[None]) -> None:  # (on the worker thread)
            # (the program is ending: `close` flushes what is left)
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self._flushed, target, done, result)

        trio.lowlevel.start_thread_soon(self._fsync_unless_closed, deliver)

    def _flushed(self, target: int, done: trio.Event, result: Outcome[None]) -> None:
        self._in_flight = None
        try:
            result.unwrap()
            self._synced = max(self._synced, target)
        except Exception as exc:  # noqa: BLE001  (raised to the sender, not to trio's loop)
            self._failure = exc
        finally:
            done.set()

    async def sync_in_thread(self) -> None:
        """Make every append so far durable, fsyncing on a worker thread. Callers that
        come while a flush runs wait for it and then flush what it did not cover; appends
        made meanwhile ride along with the next flush. A failed flush raises its OSError."""
        if not self.THREADED:
            self.sync()
            return
        while self._fd >= 0 and not self.durable:
            self.begin_sync()
            if self._in_flight is not None:
                await self._in_flight.wait()
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure

    def _fsync_unless_closed(self) -> None:
        try:
            self._fsync()
        except OSError:
            if self._fd >= 0:
                raise  # (closed meanwhile: `close` made everything durable itself)

    def close(self) -> None:
        """Flush what is not yet durable, then close."""
        if self._fd >= 0:
            try:
                self.sync()
            finally:  # even when the flush failed: a halted game holds no descriptor
                os.close(self._fd)
                self._fd = -1


def _intact_length(data: bytes) -> int:
    pos = 0
    while len(data) - pos >= 4:
        length = int.from_bytes(data[pos : pos + 4], "big")
        if len(data) - pos - 4 < length:
            break
        pos += 4 + length
    return pos
