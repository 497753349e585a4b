"""One process per game file (SPEC 3.5): an exclusive lock on the open transcript.

Two processes that resumed the same game would each sign their own next message with the
same sequence number, which is equivocation, proven by the signer's own signatures: an
honest player convicted for running `join CODE` twice. So a transcript is locked
(`flock`, exclusive, not waiting) on the descriptor it is written through, from before it
is read for resuming until it is closed; the kernel lets go of it when the process ends,
however it ends, so a crash leaves no stale lock. Readers (`verify`, `show`, `games`) take
no lock and read any file at any time.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

#: Where Linux lists the locks held, with the process holding each.
PROC_LOCKS = Path("/proc/locks")


class GameInUseError(OSError):
    """This game is open in another p2pgotg process: a game file belongs to one process at
    a time, so that no two of them sign different messages with one sequence number."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"another p2pgotg process (pid {pid})" if pid else "another p2pgotg process"
        super().__init__(errno.EWOULDBLOCK,
                         f"this game ({path.name}) is open in {holder}: play on there, or "
                         "stop that one and run this command again", str(path))

    def __str__(self) -> str:
        return str(self.strerror)


def lock_game_file(fd: int, path: Path) -> None:
    """Take the game's lock on `fd` (an open descriptor of the transcript at `path`), or
    raise GameInUseError naming the process that holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise GameInUseError(path, holder_of(fd)) from None


def holder_of(fd: int) -> int | None:
    """The process holding a `flock` on the file open as `fd`, where the system says
    (Linux's /proc/locks); None when it does not."""
    st = os.fstat(fd)
    wanted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    try:
        lines = PROC_LOCKS.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2146534 0 EOF" (waiters start "1: ->")
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK" or fields[3] != "WRITE":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == wanted:
                return int(fields[4])
        except ValueError:
            continue
    return None
