"""Tables of three and four over real TLS on loopback (SPEC 5.4): one host plays seat 0 and
relays for the joiners, bots take every seat, a whole game is played, a joiner stopped
mid-game resumes from its own file, and every seat's file verifies to one clean verdict
(`p2pgotg verify`, SPEC 5.9)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tablenet import (
    QUICK,
    SAFETY,
    assert_one_clean_verdict,
    host_config,
    invite_of,
    partial_host,
    stop_after_messages,
    wait_for_files,
)

from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_joiner import TableRefused, join_table
from p2pgotg.net.play.table_session import TableSession


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


@pytest.mark.parametrize("slow_disk", [False, True])
async def test_the_host_leaves_once_every_joiner_said_it_holds_everything(
        tmp_path: Path, slow_disk: bool) -> None:
    """SPEC 3.4's `bye`: a joiner that holds every message says so before it leaves, and
    the host keeps what each said after that joiner left, so the host stops as soon as the
    last one has said it, not after its linger (the wait for a joiner that missed the end).
    The net below is half the linger: a host that waited it out would be caught. With the
    host's disk slow once the game is over, every joiner's `bye` settles the table before
    the host's last `bye` has gone out: the host still tells each joiner its last counts
    before it closes, or that joiner, its file and the host's apparently apart, would knock
    at a host that is gone (and this table would never end here)."""
    config = host_config(tmp_path, 3)
    ended: list[float] = []

    async def watch(session: TableSession) -> None:
        while not session.done:
            await session.wait_changed()
        ended.append(trio.current_time())

    def watching_bot(seed: int) -> Any:
        play = table_bot(seed)

        async def run(session: TableSession) -> None:
            if slow_disk:
                durable = session.durable

                async def slow_durable() -> None:
                    if session.done:
                        await trio.sleep(0.5)
                    await durable()
                session.durable = slow_durable  # type: ignore[method-assign]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch, session)
                await play(session)

        return run

    async def net() -> None:
        while not ended:
            await trio.sleep(0.1)
        await trio.sleep(config.limits.linger / 2)
        raise AssertionError("the table did not end within half the linger after the game")

    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(net)
            session = await host_table(config, watching_bot(1), bot_seats=2,
                                       bot=lambda k: table_bot(10 + k))
            nursery.cancel_scope.cancel()
    assert session.done and ended
    assert trio.current_time() - ended[0] < config.limits.linger / 2
