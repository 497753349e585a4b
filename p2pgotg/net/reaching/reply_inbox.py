"""How ``p2pgotg host --reply CODE`` hands a reply code to the host already running from the
same p2pgotg home on this computer (SPEC 3.8): a Unix socket named after the home's data
directory, in a folder of the user's own, ``p2pgotg-UID`` in the runtime directory
(``$XDG_RUNTIME_DIR``, else the system's temporary directory).

Only the same user reaches it. The folder is made with mode 0700; one that exists must be a
folder of ours that no one else may enter, since in a shared /tmp another user could make
it first: then neither side uses it, and both say why. And each side checks the other's
user id (SO_PEERCRED) before the code or an answer moves.

One line in (the code), lines out (what the host did with it), the last one starting with
``ok:`` or ``error:``; the lines are handed on with control characters escaped.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import socket
import stat
import struct
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from p2pgotg.protocol.printable import controls_escaped

MAX_LINE = 2048
MAX_ANSWER = 16384  # bytes of the host's answer that are read
READ_TIMEOUT = 5.0
ANSWER_TIMEOUT = 30.0  # the host punches for at most PUNCH_TIME (offer.py) before it answers

Reply = Callable[[str], None]


class InboxError(OSError):
    """The reply inbox cannot be used safely; the text says why and what to do."""


def inbox_path(data_dir: Path) -> Path:
    """``RUNTIME/p2pgotg-UID/reply-`` and 24 hex digits of SHA-256 of the data dir's path."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = Path(runtime) if runtime and Path(runtime).is_absolute() else \
        Path(tempfile.gettempdir())
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:24]
    return base / f"p2pgotg-{os.getuid()}" / f"reply-{digest}"


def _check_folder(folder: Path) -> None:
    """InboxError unless ``folder`` is a folder of ours that no one else may enter
    (FileNotFoundError when there is none)."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise InboxError(f"the reply inbox's folder {folder} is not a folder (someone else may "
                         "have put it there): reply codes cannot be taken safely")
    if info.st_uid != os.getuid():
        raise InboxError(f"the reply inbox's folder {folder} belongs to another user (uid "
                         f"{info.st_uid}), who made it first: reply codes cannot be taken "
                         "safely. Remove it, or set XDG_RUNTIME_DIR to a folder of your own")
    if info.st_mode & 0o077:
        raise InboxError(f"the reply inbox's folder {folder} is open to other users (mode "
                         f"{stat.S_IMODE(info.st_mode):o}): run chmod 700 on it")


def _peer_uid(sock: trio.socket.SocketType) -> int | None:
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", raw)[1])


async def _someone_listens(path: Path) -> bool:
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with sock:
        try:
            await sock.connect(str(path))
        except OSError:
            return False
    return True


async def _listen(path: Path) -> trio.socket.SocketType:
    """A listening socket at ``path``, taking over the file of a host that died."""
    for _ in range(2):
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            await sock.bind(str(path))
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                raise
            if await _someone_listens(path):
                raise InboxError("another p2pgotg host from this home is running and takes "
                                 "the reply codes") from None
            path.unlink(missing_ok=True)  # (a host that stopped without removing it)
            continue
        os.chmod(path, 0o600)
        sock.listen(4)
        return sock
    raise InboxError(f"the reply inbox {path} could not be opened")


async def serve_inbox(data_dir: Path, take: Callable[[str, Reply], Awaitable[None]], *,
                      task_status: trio.TaskStatus[str | None] = trio.TASK_STATUS_IGNORED,
                      ) -> None:
    """Listen for reply codes; ``take(code, say)`` handles each. Reports None once
    listening, or (and returns) why the inbox cannot be opened, in words for the user."""
    path = inbox_path(data_dir)
    try:
        with contextlib.suppress(FileExistsError):
            path.parent.mkdir(mode=0o700)
        _check_folder(path.parent)
        sock = await _listen(path)
    except InboxError as exc:
        task_status.started(str(exc))
        return
    except OSError as exc:
        task_status.started(f"the reply inbox {path} cannot be opened: {exc.strerror or exc}")
        return
    ours = os.stat(path).st_ino
    listener = trio.SocketListener(sock)
    task_status.started(None)

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            if _peer_uid(stream.socket) != os.getuid():
                return  # (only the same user is heard: unknown means no)
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

    try:
        async with listener:
            await trio.serve_listeners(handle, [listener])
    finally:
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == ours:
                path.unlink()


async def send_reply(data_dir: Path, code: str) -> list[str]:
    """Give ``code`` to the running host; its answer lines, control characters escaped.
    InboxError when the inbox is not safe to use; another OSError when no host runs."""
    path = inbox_path(data_dir)
    _check_folder(path.parent)
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream = trio.SocketStream(sock)
    async with stream:
        await sock.connect(str(path))
        uid = _peer_uid(sock)
        if uid != os.getuid():
            raise InboxError(f"the program at the reply inbox {path} runs as another user "
                             f"(uid {uid}): the code was not given to it")
        await stream.send_all(code.strip().encode("ascii", "replace") + b"\n")
        data = b""
        with trio.move_on_after(ANSWER_TIMEOUT):
            while len(data) < MAX_ANSWER:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    break
                data += chunk
    return [controls_escaped(line) for line in data[:MAX_ANSWER].decode("utf-8", "replace")
            .splitlines()]
