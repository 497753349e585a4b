"""Lines for the operator that never block the event loop.

A host's status lines go to a terminal or a pipe. Written from the event loop, a reader
that stops reading (a paused terminal, a full pipe nobody drains) would stop every game
on the host at its next line. So lines go into a bounded queue that one thread writes
out; when the queue is full, new lines are dropped and counted, and the count is written
as one line as soon as there is room again ("N lines not shown").
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TextIO

CAPACITY = 1000  # lines waiting at most; beyond that they are dropped and counted


def dropped_words(count: int) -> str:
    return f"({count} line{'s' if count != 1 else ''} not shown: the output was not being read)"


class LineWriter:
    """`write(stream, text)` queues one line and returns at once; a daemon thread writes
    the lines in order. `drain(timeout)` waits (at most `timeout` seconds) until every
    queued line is written: call it where blocking is fine, e.g. after the event loop."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._queue: deque[tuple[TextIO, str]] = deque()
        self._lock = threading.Condition()
        self._dropped = 0
        self._writing = False  # the thread holds a line it has not finished writing
        self._thread: threading.Thread | None = None
        self._stream: TextIO | None = None  # where the last line went (for a last notice)

    def write(self, stream: TextIO, text: str) -> None:
        """Queue `text` as a line for `stream`; never blocks (drops when full)."""
        with self._lock:
            self._stream = stream
            if len(self._queue) >= self.capacity:
                self._dropped += 1
                return
            if self._dropped:
                self._queue.append((stream, dropped_words(self._dropped)))
                self._dropped = 0
            self._queue.append((stream, text))
            self._lock.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="p2pgotg-lines",
                                                daemon=True)
                self._thread.start()

    @property
    def dropped(self) -> int:
        """Lines dropped since the last notice about them was queued."""
        return self._dropped

    def drain(self, timeout: float = 2.0) -> bool:
        """Wait until every queued line is written (True), at most `timeout` seconds."""
        with self._lock:
            if self._dropped and self._stream is not None:  # (the count is always told)
                self._queue.append((self._stream, dropped_words(self._dropped)))
                self._dropped = 0
                self._lock.notify()
            return self._lock.wait_for(lambda: not self._queue and not self._writing,
                                       timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: bool(self._queue))
                stream, text = self._queue.popleft()
                self._writing = True
            try:
                stream.write(text + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # (the reader is gone or the stream closed: nothing to tell it)
            finally:
                with self._lock:
                    self._writing = False
                    self._lock.notify_all()
