"""The transcript file's flushes: on a worker thread, awaited before anything is sent.

What the driver relies on (SPEC 2.8): after `sync_in_thread` returns, every record appended
before the call is in the file and a completed fsync covered it; a failed fsync is raised
to the caller (nothing would be sent), never lost; closing flushes what is left.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import trio

from p2pgotg.net.play.game_lock import GameInUseError
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.protocol import HOST, parse

KEY = bytes(range(32))


def records(n: int) -> list[tuple]:
    return [("secrets", {"join": bytes([i]) * 16}) for i in range(n)]


def spy_on_fsync(monkeypatch: pytest.MonkeyPatch) -> dict[Path, int]:
    """path -> the file size the last completed fsync covered (at least)."""
    covered: dict[Path, int] = {}
    fsync = TranscriptFile._fsync

    def watched(self: TranscriptFile) -> None:
        size = os.fstat(self._fd).st_size
        fsync(self)
        covered[self.path] = max(covered.get(self.path, 0), size)

    monkeypatch.setattr(TranscriptFile, "_fsync", watched)
    return covered


async def test_sync_in_thread_covers_every_append_made_before_it(tmp_path, monkeypatch):
    covered = spy_on_fsync(monkeypatch)
    f = TranscriptFile.create(tmp_path / "g.gtr", HOST, KEY)
    f.append(records(3))
    assert not f.durable
    f.begin_sync()  # a flush already running when more is appended and waited for
    f.append(records(2))
    await f.sync_in_thread()
    assert f.durable
    size = (tmp_path / "g.gtr").stat().st_size
    assert covered[f.path] == size  # the whole file, the last two records included
    f.close()
    transcript = parse((tmp_path / "g.gtr").read_bytes())
    assert len(transcript.records) == 5 and not transcript.torn_tail


async def test_a_failed_fsync_is_raised_to_the_waiting_sender(tmp_path, monkeypatch):
    f = TranscriptFile.create(tmp_path / "g.gtr", HOST, KEY)
    f.append(records(1))

    def broken(self: TranscriptFile) -> None:
        raise OSError(errno.EIO, "input/output error")

    monkeypatch.setattr(TranscriptFile, "_fsync", broken)
    with pytest.raises(OSError, match="input/output error"):
        await f.sync_in_thread()
    assert not f.durable  # nothing may be sent on the strength of it
    monkeypatch.undo()
    await f.sync_in_thread()  # the disk is back: the next flush covers everything
    assert f.durable
    f.close()


async def test_closing_during_a_flush_loses_nothing(tmp_path):
    f = TranscriptFile.create(tmp_path / "g.gtr", HOST, KEY)
    f.append(records(4))
    f.begin_sync()
    f.close()  # flushes on this thread; the worker's late fsync of a closed file is moot
    await trio.sleep(0.05)  # (let the worker's result arrive: it must not raise)
    transcript = parse((tmp_path / "g.gtr").read_bytes())
    assert len(transcript.records) == 4 and not transcript.torn_tail


def test_a_write_that_fails_part_way_leaves_no_torn_record(tmp_path, monkeypatch):
    """A disk that fills in the middle of a record (ENOSPC after a short write): the error
    reaches the sender, and the file is cut back to its last whole record."""
    f = TranscriptFile.create(tmp_path / "g.gtr", HOST, KEY)
    f.append(records(2))
    before = (tmp_path / "g.gtr").read_bytes()
    real_write = os.write
    calls = []

    def filling(fd: int, data) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", filling)
    with pytest.raises(OSError, match="No space left"):
        f.append(records(1))
    monkeypatch.undo()
    assert len(calls) == 2  # the short write happened, then the failure
    assert (tmp_path / "g.gtr").read_bytes() == before
    f.close()
    transcript = parse(before)
    assert len(transcript.records) == 2 and not transcript.torn_tail


def test_closing_after_a_failed_flush_still_frees_the_descriptor(tmp_path, monkeypatch):
    f = TranscriptFile.create(tmp_path / "g.gtr", HOST, KEY)
    f.append(records(1))
    fd = f._fd

    def broken(self: TranscriptFile) -> None:
        raise OSError(errno.EIO, "input/output error")

    monkeypatch.setattr(TranscriptFile, "_fsync", broken)
    with pytest.raises(OSError, match="input/output error"):
        f.close()
    with pytest.raises(OSError) as closed:
        os.fstat(fd)
    assert closed.value.errno == errno.EBADF
    f.close()  # a second close is a no-op


# -- one process per game file (issue 23, finding 2; SPEC 3.5) ----------------------------

def test_an_open_transcript_cannot_be_opened_again_until_it_is_closed(tmp_path):
    """Locked from creation; a second open (a second process resuming it) is refused,
    naming the holder, before it reads or changes a byte: here the torn tail the holder
    would cut stays as it is. Closing lets go."""
    path = tmp_path / "g.gtr"
    held = TranscriptFile.create(path, HOST, KEY)
    held.append([("secrets", {"join": bytes(16)})])
    held.sync()
    torn = path.read_bytes() + b"\x00\x00\x01\x00partial"
    path.write_bytes(torn)  # (the same inode: still the locked file)
    with pytest.raises(GameInUseError) as refused:
        TranscriptFile.open_existing(path)
    assert refused.value.pid == os.getpid()
    assert str(refused.value) == (f"this game (g.gtr) is open in another p2pgotg process "
                                  f"(pid {os.getpid()}): play on there, or stop that one "
                                  "and run this command again")
    assert path.read_bytes() == torn
    held.close()
    reopened, transcript = TranscriptFile.open_existing(path)
    assert not transcript.torn_tail and len(transcript.records) == 1
    with pytest.raises(GameInUseError):
        TranscriptFile.open_existing(path)
    reopened.close()
