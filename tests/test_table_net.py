"""Tables of three and four over real TLS on loopback (SPEC 5.4): one host plays seat 0 and
relays for the joiners, bots take every seat, a whole game is played, a joiner stopped
mid-game resumes from its own file, and every seat's file verifies to one clean verdict
(`p2pgotg verify`, SPEC 5.9)."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.net.play.hosting import HostConfig, Hosting
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_joiner import TableRefused, join_table
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate

# The table kernel (SPEC 5.2-5.9, `p2pgotg.protocol.table`) is built on its own branch; until
# it is merged these tests cannot run, and say so.
pytest.importorskip("p2pgotg.net.play.table_host", reason="needs the table kernel")

SAFETY = 120  # seconds: a net against hangs, never a measure of speed
QUICK = Timeouts(handshake=5.0, keepalive=1.0, silence=5.0, abandon=60.0, bye=2.0,
                 retry=(0.02, 0.2))


def host_config(tmp_path: Path, seats: int) -> HostConfig:
    key = Ed25519PrivateKey.generate()
    cert, tls_key = make_certificate()
    return HostConfig(key, cert, tls_key, RuleOptions(seats=seats), tmp_path / "host",
                      bind="127.0.0.1", limits=QUICK)


def invite_of(hosting: Hosting) -> Invite:
    return Invite.decode(hosting.invites[0])


def verdicts(paths: list[Path]) -> list[tuple[int, str]]:
    """`p2pgotg verify FILE` for each seat's file: (exit status, what it printed)."""
    found = []
    for path in paths:
        done = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(path)],
                              capture_output=True, text=True, timeout=SAFETY)
        found.append((done.returncode, done.stdout))
    return found


def assert_one_clean_verdict(paths: list[Path], seats: int) -> None:
    assert len(paths) == seats, paths
    results = verdicts(paths)
    assert all(code == 0 for code, _ in results), results
    lines = {tuple(line for line in out.splitlines() if line.startswith("result:"))
             for _, out in results}
    assert len(lines) == 1 and all(len(found) == 1 for found in lines), results
    # (one verdict, whichever seat's file: SPEC 5.9)


@pytest.mark.parametrize("seats", [3, 4])
async def test_a_table_of_bots_plays_a_whole_game_through_one_host(tmp_path: Path,
                                                                   seats: int) -> None:
    config = host_config(tmp_path, seats)
    with trio.fail_after(SAFETY):
        session = await host_table(config, table_bot(1), bot_seats=seats - 1,
                                   bot=lambda k: table_bot(10 + k))
    assert session.done and session.failure is None
    assert session.status.over
    assert_one_clean_verdict(sorted(config.save_dir.glob("*.gtr")), seats)


async def test_a_joiner_stopped_mid_game_resumes_from_its_file(tmp_path: Path) -> None:
    seats = 4
    config = host_config(tmp_path, seats)
    joiner_dir = tmp_path / "joiner"
    status: list[str] = []
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial_host(config, seats))
            joiner = JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting), joiner_dir,
                                QUICK)
            with trio.CancelScope() as first:
                nursery.start_soon(stop_after_messages, joiner_dir, 40, first)
                await join_table(joiner, table_bot(7), on_status=status.append)
            assert first.cancelled_caught, "the game ended before the stop: make it longer"
            saved, = joiner_dir.glob("*.gtr")
            session = await join_table(joiner, table_bot(7), on_status=status.append)
    assert f"resuming the unfinished table saved in {saved.name}" in status
    assert session.done and session.failure is None
    files = [*sorted(config.save_dir.glob("*.gtr")), saved]
    assert_one_clean_verdict(files, seats)


async def test_a_joiner_beyond_the_seats_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    config = host_config(tmp_path, 3)
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial(
                host_table, config, table_bot(1, think=0.05), bot_seats=2,
                bot=lambda k: table_bot(10 + k, think=0.05)))
            late = JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting),
                              tmp_path / "late", QUICK)
            await wait_for_files(config.save_dir, 3)  # (both joiner seats are the bots')
            with pytest.raises(TableRefused, match="this table is full: its 3 seats are "
                                                   "taken"):
                await join_table(late, table_bot(9))
            nursery.cancel_scope.cancel()
    assert not (tmp_path / "late").exists()  # nothing saved for a refused seat


def partial_host(config: HostConfig, seats: int):  # type: ignore[no-untyped-def]
    """host_table with the host's bot and `seats - 2` bot seats: one seat left for a test's
    joiner (all but one when the test plays none)."""
    async def run(task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED) -> None:
        await host_table(config, table_bot(1, think=0.01), bot_seats=seats - 2,
                         bot=lambda k: table_bot(10 + k, think=0.01), task_status=task_status)
    return run


async def stop_after_messages(directory: Path, count: int, scope: trio.CancelScope) -> None:
    """Cancel `scope` once the seat's file in `directory` holds `count` records or more."""
    while True:
        for path in directory.glob("*.gtr"):
            if path.stat().st_size and record_count(path) >= count:
                scope.cancel()
                return
        await trio.sleep(0.05)


def record_count(path: Path) -> int:
    from p2pgotg.protocol.table.transcript import TableRecordReader

    return len(TableRecordReader().feed_table(path.read_bytes()))


async def wait_for_files(directory: Path, count: int) -> None:
    while len(list(directory.glob("*.gtr"))) < count:
        await trio.sleep(0.05)
