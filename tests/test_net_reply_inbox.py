"""The reply inbox between `p2pgotg host --reply CODE` and the running host (SPEC 3.8):
reachable by the same user only, checked on both sides with SO_PEERCRED against a
process of another real user (nobody), taken over from a host that died, refused to a
second host of the same home, and its answers shown escaped by the real command. The
whole path against a squatter, with the real host, runs in test_net_lan.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

from p2pgotg.net.reaching.reply_inbox import InboxError, inbox_path, send_reply, serve_inbox
from p2pgotg.reach.candidates import PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="needs root to run as nobody")


@pytest.fixture
def runtime(monkeypatch):
    """A runtime directory (XDG_RUNTIME_DIR) that another user may enter, as /tmp is
    (pytest's tmp_path is not: it is closed to other users)."""
    path = Path(tempfile.mkdtemp(prefix="p2pgotg-test-runtime-"))
    path.chmod(0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(["/usr/bin/python3", "-c", script, *args], user=NOBODY,
                            group=NOBODY, extra_groups=[], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


async def test_the_hosts_answer_reaches_the_command_escaped(runtime, tmp_path):
    home = tmp_path / "home"
    code = ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 40001)], int(time.time()),
                          os.urandom(8), os.urandom(16)).encode()
    taken: list[str] = []

    async def take(got: str, say) -> None:
        taken.append(got)
        say("punching to \x1b]0;pwned\x07 \u202eevil")
        say("ok: \x1b[31mred")

    async with trio.open_nursery() as nursery:
        assert await nursery.start(serve_inbox, home / "data", take) is None
        folder = inbox_path(home / "data").parent
        assert (folder.stat().st_mode & 0o777) == 0o700 and folder.stat().st_uid == os.getuid()
        result = await trio.run_process(
            [sys.executable, "-m", "p2pgotg", "host", "--reply", code],
            env={**os.environ, "P2PGOTG_HOME": str(home)}, capture_stdout=True,
            capture_stderr=True, check=False)
        nursery.cancel_scope.cancel()
    assert taken == [code]
    assert result.returncode == 0, result
    assert result.stdout.decode().splitlines() == [
        "punching to \\x1b]0;pwned\\x07 \\u202eevil", "ok: \\x1b[31mred"]


async def test_a_host_that_died_leaves_a_socket_the_next_host_takes_over(runtime, tmp_path):
    data = tmp_path / "home" / "data"
    path = inbox_path(data)
    path.parent.mkdir(mode=0o700)
    import socket

    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # (the file stays, as after a crash)

    async def take(code: str, say) -> None:
        say(f"ok: {code}")

    async with trio.open_nursery() as nursery:
        assert await nursery.start(serve_inbox, data, take) is None
        assert await send_reply(data, "gr1-x") == ["ok: gr1-x"]
        second = await nursery.start(serve_inbox, data, take)
        assert "another p2pgotg host from this home is running" in second
        nursery.cancel_scope.cancel()
    assert not path.exists()  # the host removes its socket when it stops


CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(5)
try:
    s.sendall(b"gr1-from-another-user\n")
    print("answer", repr(s.recv(4096)), flush=True)
except OSError as exc:
    print("answer closed", exc.errno, flush=True)
"""


async def test_a_process_of_another_user_is_not_heard(runtime, tmp_path):
    """Even with the folder opened to it (by a mistake), another user's process gets no
    answer and its code is not taken: the host checks who connects."""
    data = tmp_path / "home" / "data"
    taken: list[str] = []

    async def take(code: str, say) -> None:
        taken.append(code)
        say("ok: taken")

    async with trio.open_nursery() as nursery:
        await nursery.start(serve_inbox, data, take)
        path = inbox_path(data)
        path.parent.chmod(0o755)
        path.chmod(0o666)
        client = as_nobody(CLIENT, str(path))
        out, _ = await trio.to_thread.run_sync(client.communicate, None, 30)
        nursery.cancel_scope.cancel()
    assert "answer b''" in out or "answer closed" in out, out
    assert taken == []


SERVER = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
print("ready", flush=True)
s.settimeout(10)
try:
    c, _ = s.accept()
    print("got", c.recv(4096), flush=True)
except OSError:
    print("got nothing", flush=True)
"""


async def test_a_listener_of_another_user_is_not_given_the_code(runtime, tmp_path):
    """Another user's program at the inbox's place (its folder was open when it bound):
    `send_reply` sees who listens and sends nothing."""
    data = tmp_path / "home" / "data"
    path = inbox_path(data)
    path.parent.mkdir(mode=0o777)
    path.parent.chmod(0o777)
    server = as_nobody(SERVER, str(path))
    assert server.stdout is not None
    assert server.stdout.readline().strip() == "ready"
    path.parent.chmod(0o700)  # (our folder again, with its socket in it)
    with pytest.raises(InboxError, match="runs as another user"):
        await send_reply(data, "gr1-secret")
    out, _ = await trio.to_thread.run_sync(server.communicate, None, 30)
    assert "gr1-secret" not in out


async def test_a_folder_of_another_user_is_refused_by_both_sides(runtime, tmp_path):
    data = tmp_path / "home" / "data"
    folder = inbox_path(data).parent
    squat = as_nobody("import os, sys; os.mkdir(sys.argv[1], 0o700)", str(folder))
    assert await trio.to_thread.run_sync(squat.wait) == 0

    async def take(code: str, say) -> None:
        raise AssertionError("no code may come through a folder of another user")

    async with trio.open_nursery() as nursery:
        problem = await nursery.start(serve_inbox, data, take)
        nursery.cancel_scope.cancel()
    assert problem is not None and "belongs to another user" in problem
    with pytest.raises(InboxError, match="belongs to another user"):
        await send_reply(data, "gr1-secret")
