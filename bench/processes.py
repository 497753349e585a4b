"""What the load and soak runs share: a host subprocess (started, its invite read, stopped),
a process's CPU time, memory and open files, read from /proc (Linux), and the replay of
every transcript a run left."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from p2pgotg.games import replay
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.protocol import TranscriptError, parse

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (the many-game host's bot worker)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):  # (any thread may have started it)
        with contextlib.suppress(OSError):  # (the thread ended meanwhile)
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def children_cpu_seconds(pid: int) -> float:
    """CPU seconds of the live children of `pid` (0 for those that already exited)."""
    total = 0.0
    for child in children(pid):
        with contextlib.suppress(OSError):  # (it exited meanwhile)
            total += cpu_seconds(child)
    return total


def rss_mib(pid: int | str = "self") -> float:
    """Resident memory of a process, MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def fd_count(pid: int | str = "self") -> int:
    """Open file descriptors of a process."""
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class HostProcess:
    """A host running as a subprocess, its output going to files in its folder."""

    proc: subprocess.Popen
    home: Path
    out: Path
    err: Path
    invite: Invite

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGINT, then SIGKILL if it has not stopped within `timeout` seconds (None)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                return None
        return self.proc.returncode


def start_host(base: Path, cmd: list[str], env: dict[str, str] | None = None,
               ready_within: float = 60.0, nofile: int | None = None) -> HostProcess:
    """Run `cmd` (a host that prints `invite: CODE`) with its home in `base`/host and its
    output in `base`/host.out and host.err; return once the invite is printed. With
    `nofile`, the host's soft limit of open files is that (a bench that raised its own
    limit can still run the host with the limit an operator's shell would give it)."""
    home = base / "host"
    home.mkdir(parents=True)
    out, err = base / "host.out", base / "host.err"
    env = dict(os.environ if env is None else env, P2PGOTG_HOME=str(home), PYTHONUNBUFFERED="1")
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env,
                                preexec_fn=None if nofile is None else _soft_nofile(nofile))
    deadline = time.monotonic() + ready_within
    while time.monotonic() < deadline:
        for line in out.read_text().splitlines():
            if line.startswith("invite: "):
                return HostProcess(proc, home, out, err, Invite.decode(line.split()[1]))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait(5)
    raise RuntimeError(f"the host printed no invite: {err.read_text()[-2000:]}")


def _soft_nofile(limit: int):
    """A preexec function that sets the soft RLIMIT_NOFILE to `limit` (within the hard one)."""

    def apply() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return apply


_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Group|Exit|Interrupt)\b")
_TRACEBACK = ("Traceback (most recent call last)",
              "  + Exception Group Traceback (most recent call last)")


def tracebacks(path: Path) -> Counter:
    """The Python tracebacks a process wrote to the file `path` (its stderr), counted by
    their last exception line (an exception group's last leaf)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return Counter()
    found: Counter = Counter()
    last: str | None = None  # inside a traceback: its last exception line so far
    for line in lines:
        if line.startswith(_TRACEBACK):
            if last is not None:
                found[last] += 1
            last = "(no exception line)"
            continue
        if last is None:
            continue
        bare = line.lstrip(" |+-")
        if _EXCEPTION.match(bare):
            last = bare[:120]
        if line and not line[0].isspace():  # (a line of its own: the traceback is over)
            found[last] += 1
            last = None
    if last is not None:
        found[last] += 1
    return found


def verify_all(paths: list[Path]) -> Counter:
    """How many transcripts `verify` finds clean, cheating, unfinished... (by finding name);
    UNREADABLE for a file that cannot be read or parsed."""
    found: Counter = Counter()
    for path in paths:
        try:
            found[replay(parse(path.read_bytes())).finding.name] += 1
        except (OSError, TranscriptError):
            found["UNREADABLE"] += 1
    return found
