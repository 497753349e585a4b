"""Transcript files on disk: created owner-only, appended record by record, fsynced.

The format is `p2pgotg.protocol.transcript`'s; this module only does the file I/O, so that
a crash never loses a message that was sent or acted upon (write-ahead: the driver appends
before it sends and before it acts on what it received).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from p2pgotg.net.paths import fsync_dir
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.transcript import Transcript, encode_header, encode_record, parse


class TranscriptFile:
    """An open transcript, appended to with `append` (each call is flushed and fsynced)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def create(cls, path: Path, role: str, key: bytes) -> TranscriptFile:
        """A new file, owner-only (0600); refuses to overwrite an existing one."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        f = cls(path, fd)
        f._write(encode_header(role, key))
        fsync_dir(path.parent)
        return f

    @classmethod
    def open_existing(cls, path: Path) -> tuple[TranscriptFile, Transcript]:
        """Reopen for appending after a restart; a torn last record is cut off first."""
        data = path.read_bytes()
        transcript = parse(data)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        if transcript.torn_tail:
            os.ftruncate(fd, _intact_length(data))
            os.fsync(fd)
            transcript.torn_tail = False
        return cls(path, fd), transcript

    def append(self, records: Iterable[Record]) -> None:
        data = b"".join(encode_record(r) for r in records)
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
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
