"""How ``p2pgotg host --reply CODE`` hands a reply code to the host already running from the
same p2pgotg home on this computer: a Unix socket in Linux's abstract namespace, named after
the home's data directory, so nothing is left on disk and no path is too long.

One line in (the code), lines out (what the host did with it), the last one starting with
``ok:`` or ``error:``. Only a process of the same user is heard.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

MAX_LINE = 2048
READ_TIMEOUT = 5.0
ANSWER_TIMEOUT = 30.0  # the host punches for at most PUNCH_TIME (reach.py) before it answers

Reply = Callable[[str], None]


def inbox_name(data_dir: Path) -> bytes:
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:24]
    return b"\0p2pgotg-reply-" + digest.encode()


def _peer_uid(sock: trio.socket.SocketType) -> int | None:
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", raw)[1])


async def serve_inbox(data_dir: Path, take: Callable[[str, Reply], Awaitable[None]], *,
                      task_status: trio.TaskStatus[bool] = trio.TASK_STATUS_IGNORED) -> None:
    """Listen for reply codes; ``take(code, say)`` handles each. Reports False (and
    returns) when the inbox cannot be opened, e.g. another host runs from this home."""
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        await sock.bind(inbox_name(data_dir))
        sock.listen(4)
    except OSError:
        sock.close()
        task_status.started(False)
        return
    listener = trio.SocketListener(sock)
    task_status.started(True)

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            if _peer_uid(stream.socket) not in (None, os.getuid()):
                return
            line = b""
            with trio.move_on_after(READ_TIMEOUT):
                while b"\n" not in line and len(line) < MAX_LINE:
                    chunk = await stream.receive_some(MAX_LINE)
                    if not chunk:
                        break
                    line += chunk
            code = line.split(b"\n")[0].decode("ascii", "replace").strip()
            out: list[str] = []

            def say(text: str) -> None:
                out.append(text)

            await take(code, say)
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all("".join(f"{t}\n" for t in out).encode())

    async with listener:
        await trio.serve_listeners(handle, [listener])


async def send_reply(data_dir: Path, code: str) -> list[str]:
    """Give ``code`` to the running host; its answer lines. OSError when none runs."""
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream = trio.SocketStream(sock)
    async with stream:
        await sock.connect(inbox_name(data_dir))
        await stream.send_all(code.strip().encode("ascii", "replace") + b"\n")
        data = b""
        with trio.move_on_after(ANSWER_TIMEOUT):
            while True:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    break
                data += chunk
    return data.decode("utf-8", "replace").splitlines()
