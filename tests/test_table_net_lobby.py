"""The lobby of a table over real TLS on loopback (SPEC 5.3): a joiner that leaves before
the table fills gives its place back, and the table fills with another; one whose
connection drops there comes back to its place with the same join; one that comes back
after the table filled without it is told so and stops."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tablenet import (
    QUICK,
    SAFETY,
    assert_one_clean_verdict,
    host_config,
    invite_of,
)

from p2pgotg.net.play.hosting import HostConfig, Hosting
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_joiner import TableRefused, join_table
from p2pgotg.net.play.table_session import TableSession

SEATS = 3
PLACE_OPEN = "a joiner left before the table filled: its place is open again"


class Host:
    """The host's seat, played by its bot; the test watches what it holds."""

    def __init__(self) -> None:
        self.session: TableSession | None = None

    async def run(self, session: TableSession) -> None:
        self.session = session
        await table_bot(1)(session)

    async def rostered(self) -> None:
        """Until the host's roster is out (the table is full)."""
        while self.session is None or self.session.status.game_id is None:
            await trio.sleep(0.02)

    async def holds(self, hellos: int) -> None:
        """Until the host holds `hellos` joiners' hellos waiting for the roster."""
        while self.session is None or len(self.session.seat.flow.pending) != hellos:
            await trio.sleep(0.02)


async def leaves_in_the_lobby(joiner: JoinConfig, host: Host) -> None:
    """Join, and let the program go once the host holds our hello (the table not full)."""
    with trio.CancelScope() as program:
        async def stop() -> None:
            await host.holds(1)
            program.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop)
            await join_table(joiner, table_bot(5))
    assert program.cancelled_caught, "the table filled before the joiner left"


def joiner_of(hosting, directory: Path) -> JoinConfig:  # type: ignore[no-untyped-def]
    return JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting), directory, QUICK)


async def one_left(nursery: trio.Nursery, config: HostConfig, directory: Path,
                   said: list[str]) -> tuple[Host, Hosting, JoinConfig]:
    """A table hosted, one joiner in its lobby and gone; once the host let its hello go."""
    host = Host()
    hosting = await nursery.start(partial(host_table, config, host.run,
                                          on_status=said.append))
    leaver = joiner_of(hosting, directory)
    await leaves_in_the_lobby(leaver, host)
    await host.holds(0)
    assert PLACE_OPEN in said
    return host, hosting, leaver


async def test_a_joiner_that_leaves_the_lobby_gives_its_place_to_another(
        tmp_path: Path) -> None:
    config = host_config(tmp_path, SEATS)
    said: list[str] = []
    ended: list[TableSession] = []
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            host, hosting, gone = await one_left(nursery, config, tmp_path / "gone", said)
            for name in ("second", "third"):
                nursery.start_soon(_play, joiner_of(hosting, tmp_path / name), ended)
            await host.rostered()
            with pytest.raises(TableRefused, match="this table is full"):
                await join_table(gone, table_bot(5))  # (back, from its file: too late)
            while len(ended) < SEATS - 1:
                await trio.sleep(0.05)
    assert all(s.done and s.failure is None for s in ended)
    files = [*config.save_dir.glob("*.gtr"), *(tmp_path / "second").glob("*.gtr"),
             *(tmp_path / "third").glob("*.gtr")]
    assert_one_clean_verdict(sorted(files), SEATS)


async def _play(joiner: JoinConfig, ended: list[TableSession]) -> None:
    ended.append(await join_table(joiner, table_bot(7)))


async def test_a_joiner_dropped_in_the_lobby_comes_back_to_its_place(tmp_path: Path) -> None:
    config = host_config(tmp_path, SEATS)
    ended: list[TableSession] = []
    told: list[str] = []
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            host, hosting, dropped = await one_left(nursery, config, tmp_path / "dropped",
                                                    [])
            saved, = (tmp_path / "dropped").glob("*.gtr")
            nursery.start_soon(_play_told, dropped, ended, told)
            await host.holds(1)  # (its hello again)
            nursery.start_soon(_play, joiner_of(hosting, tmp_path / "other"), ended)
            while len(ended) < SEATS - 1:
                await trio.sleep(0.05)
    assert f"resuming the unfinished table saved in {saved.name}" in told
    assert all(s.done and s.failure is None for s in ended)
    files = [*config.save_dir.glob("*.gtr"), saved, *(tmp_path / "other").glob("*.gtr")]
    assert_one_clean_verdict(sorted(files), SEATS)


async def _play_told(joiner: JoinConfig, ended: list[TableSession], told: list[str]) -> None:
    ended.append(await join_table(joiner, table_bot(7), on_status=told.append))
