"""Helpers of the table tests over real TLS on loopback (SPEC 5.4): a host's config, the
verdicts of `p2pgotg verify` on each seat's file, waiting on files.

Limits that decide a game (duty, abandonment) are kept far above anything a loaded machine
makes a healthy seat take, and the silence limit too, so that no test depends on speed; a
test that needs a limit to fire sets that one limit low and stops a seat for real.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.net.play.hosting import HostConfig, Hosting
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_file import read_table_file
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.protocol.table.transcript import TableRecordReader

SAFETY = 600  # seconds: a net against hangs, never a measure of speed
#: Short retries, so that a seat comes back at once; every limit that ends a connection or
#: a game far above what load makes anything take.
QUICK = Timeouts(handshake=60.0, keepalive=1.0, silence=60.0, duty=300.0, abandon=600.0,
                 bye=2.0, retry=(0.02, 0.2))


def host_config(tmp_path: Path, seats: int, limits: Timeouts = QUICK) -> HostConfig:
    key = Ed25519PrivateKey.generate()
    cert, tls_key = make_certificate()
    return HostConfig(key, cert, tls_key, RuleOptions(seats=seats), tmp_path / "host",
                      bind="127.0.0.1", limits=limits)


def invite_of(hosting: Hosting) -> Invite:
    return Invite.decode(hosting.invites[0])


def verdicts(paths: list[Path]) -> list[tuple[int, str]]:
    """`p2pgotg verify FILE` for each seat's file: (exit status, what it printed)."""
    return [verify(path) for path in paths]


def verify(*paths: Path) -> tuple[int, str]:
    """`p2pgotg verify FILE [FILE ...]`: (exit status, what it printed)."""
    done = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", *map(str, paths)],
                          capture_output=True, text=True, timeout=SAFETY)
    return done.returncode, done.stdout


def one_verdict(paths: list[Path], seats: int, code: int) -> str:
    """Every seat's file, and all of them together, verify with exit `code` and to the same
    `result:` line (SPEC 5.9); that line's text."""
    assert len(paths) == seats, paths
    results = [*verdicts(paths), verify(*paths)]
    assert all(found == code for found, _ in results), results
    lines = {tuple(line for line in out.splitlines() if line.startswith("result:"))
             for _, out in results}
    assert len(lines) == 1 and all(len(found) == 1 for found in lines), results
    (line,), = lines
    return line


def assert_one_clean_verdict(paths: list[Path], seats: int) -> None:
    one_verdict(paths, seats, 0)


def partial_host(config: HostConfig, seats: int, on_status=lambda text: None):  # type: ignore[no-untyped-def]
    """host_table with the host's bot and `seats - 2` bot seats: one seat left for a test's
    joiner."""
    async def run(task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED) -> None:
        await host_table(config, table_bot(1, think=0.01), bot_seats=seats - 2,
                         bot=lambda k: table_bot(10 + k, think=0.01), on_status=on_status,
                         task_status=task_status)
    return run


def record_count(path: Path) -> int:
    return len(TableRecordReader().feed_table(path.read_bytes()))


async def stop_after_messages(directory: Path, count: int, scope: trio.CancelScope) -> None:
    """Cancel `scope` once the seat's file in `directory` holds `count` records or more."""
    while True:
        for path in directory.glob("*.gtr"):
            if path.stat().st_size and record_count(path) >= count:
                scope.cancel()
                return
        await trio.sleep(0.05)


async def wait_for_files(directory: Path, count: int) -> list[Path]:
    while len(found := sorted(directory.glob("*.gtr"))) < count:
        await trio.sleep(0.05)
    return found


async def wait_for_game_id(path: Path) -> bytes:
    """The table's game id, once the seat's file holds the roster."""
    while True:
        table = read_table_file(path)
        from p2pgotg.games.towers.table import restored_seat

        seat = restored_seat(Ed25519PrivateKey.generate(), bytes(32), table.records, False)
        game = seat.status().game_id
        if game is not None:
            return bytes(game)
        await trio.sleep(0.05)
