"""A table's host is a seat like the others: stopped mid-game, it resumes from its own
file (SPEC 5.4), on the port and with the join secret its file keeps, so the invite its
joiners hold still reaches it; the bot seats resume from their own files, and the game
ends with one clean verdict in every file (SPEC 5.9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.net.play.hosting import HostConfig
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_session import TableSession, unfinished_tables
from p2pgotg.net.transport.tls import make_certificate

SAFETY = 300  # seconds: a net against hangs, never a measure of speed
LIMITS = Timeouts(handshake=30.0, keepalive=1.0, silence=30.0, abandon=600.0, bye=5.0,
                  retry=(0.05, 0.5))


async def test_a_host_stopped_mid_game_resumes_its_table_from_its_file(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    cert, tls_key = make_certificate()
    config = HostConfig(key, cert, tls_key, RuleOptions(seats=3), tmp_path / "games",
                        bind="127.0.0.1", limits=LIMITS)
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            first: list[TableSession] = []

            async def host(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                           ) -> None:
                first.append(await host_table(config, table_bot(1), bot_seats=2,
                                              bot=lambda k: table_bot(10 + k),
                                              task_status=task_status))

            hosting = await nursery.start(host)
            port = hosting.port
            files = tmp_path / "games"
            while True:  # (until the game is well under way, then the host's program stops)
                await trio.sleep(0.05)
                tables = unfinished_tables(files, "host", key)
                if tables and _actions(tables[0]) >= 12:
                    break
            nursery.cancel_scope.cancel()
    [path] = unfinished_tables(files, "host", key)
    resumed = TableSession.resume(path, key, "host", LIMITS)
    assert resumed.port == port  # (kept in the file: the joiners' invite reaches it)
    assert not resumed.done
    with trio.fail_after(SAFETY):
        session = await host_table(config, table_bot(1), bot_seats=2,
                                   bot=lambda k: table_bot(10 + k), session=resumed)
    assert session.done and session.failure is None and session.path == path
    paths = sorted(files.glob("*.gtr"))
    assert len(paths) == 3  # (the same table: no new file for anyone)
    results = [subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(p)],
                              capture_output=True, text=True, timeout=SAFETY) for p in paths]
    together = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", *map(str, paths)],
                              capture_output=True, text=True, timeout=SAFETY)
    assert all(r.returncode == 0 for r in [*results, together]), [r.stdout for r in results]
    lines = {tuple(x for x in r.stdout.splitlines() if x.startswith("result:"))
             for r in [*results, together]}
    assert len(lines) == 1 and all(len(found) == 1 for found in lines), lines


def _actions(path: Path) -> int:
    """How many actions the table's file holds (read without touching it)."""
    from p2pgotg.net.play.table_file import read_table_file
    from p2pgotg.protocol.envelope import Envelope
    from p2pgotg.protocol.table.body import TableBody

    try:
        records = read_table_file(path).records
    except (OSError, ValueError):
        return 0
    return sum(1 for r in records if r[0] == "msg"
               and TableBody.decode(Envelope.decode(r[2]).body_bytes).type == "action")
