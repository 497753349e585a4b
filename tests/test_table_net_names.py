"""Names at a table over real TLS on loopback (SPEC 3.4 `names`): the host tells every
joiner each seat's name (its own, each joiner's from its `hi`, `bot` for its bot seats),
as they become known and on every connection, so every seat sees every other's; a name
the host sends that is not a name (too long, a control character, not text), or a `names`
frame of another shape, is said in a status line and left out, and the game goes on over
the same connection. Names are never saved: a joiner coming back from its file, and a host
started again, learn them anew.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgpack
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

from p2pgotg.crypto import public_bytes
from p2pgotg.games.towers.table import joiner_seat
from p2pgotg.net.play.hosting import HostConfig
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import bot_key, host_table
from p2pgotg.net.play.table_joiner import join_table
from p2pgotg.net.play.table_session import TableSession, unfinished_tables
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    open_pinned_connection,
    peer_certificate,
)
from p2pgotg.protocol import control
from p2pgotg.ui.towers.table_model import TableScreen

HOST = "Ana"


def named_host(tmp_path: Path, seats: int) -> HostConfig:
    return dataclasses.replace(host_config(tmp_path, seats), name=HOST)


def joiner(hosting: object, directory: Path, name: str | None) -> JoinConfig:
    return JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting),  # type: ignore[arg-type]
                      directory, QUICK, name=name)


def shown(session: TableSession, seats: int) -> dict[int, str]:
    """Each seat's label on this seat's table screen (SPEC 3.4: the name, `you`)."""
    screen = TableScreen(seats=seats, role=session.role, session=session)
    return {seat: screen.label(seat) for seat in range(seats)}


async def test_every_seat_of_four_sees_every_other_seats_name(tmp_path: Path) -> None:
    seats, names = 4, ["Bo", "Cy", "Dee"]
    config = named_host(tmp_path, seats)
    sessions: dict[str, TableSession] = {}
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            async def host(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED
                           ) -> None:
                sessions[HOST] = await host_table(config, table_bot(1, think=0.01),
                                                  task_status=task_status)

            hosting = await nursery.start(host)

            async def join(k: int, name: str) -> None:
                config = joiner(hosting, tmp_path / name, name)
                sessions[name] = await join_table(config, table_bot(20 + k, think=0.01))

            for k, name in enumerate(names):
                nursery.start_soon(join, k, name)
    by_key = {session.public_key: name for name, session in sessions.items()}
    for name, session in sessions.items():
        assert session.done and session.failure is None
        me = session.seat.my_seat
        assert me is not None
        seated = {seat: by_key[bytes(session.seat.flow.key_of(seat))] for seat in range(seats)}
        expected = {seat: "you" if seat == me else who for seat, who in seated.items()}
        assert shown(session, seats) == expected, name
    assert_one_clean_verdict([session.path for session in sessions.values()
                              if session.path is not None], seats)


async def test_names_come_after_the_hosts_hello_and_as_each_becomes_known(
        tmp_path: Path) -> None:
    """A `names` frame never comes where an older joiner waits for another frame (the
    host's hello after `ok`): it ignores the kind as unknown (SPEC 3.4); and a joiner's
    name is told before the roster, once its hello is in."""
    config = named_host(tmp_path, 3)
    key = Ed25519PrivateKey.generate()
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial(host_table, config, table_bot(1)))
            invite = invite_of(hosting)
            stream = await open_pinned_connection(invite.address, invite.port, invite.pin)
            channel = FramedChannel(stream)
            await channel.send(control.encode(control.Hi(invite.secret, None, 0, None,
                                                         "Zed")))
            assert isinstance(control.decode(await channel.receive()), control.Ok)
            hello = await channel.receive()
            assert control.decode(hello) is None  # (a game message: the host's hello)
            first = control.decode(await channel.receive())
            assert first == control.Names(((public_bytes(config.key), HOST),))
            seat = joiner_seat(key, hello, certificate_fingerprint(peer_certificate(stream)))
            seat.start()
            for frame in seat.take_outgoing():
                await channel.send(frame)
            told = control.decode(await channel.receive())
            assert told == control.Names(((public_bytes(config.key), HOST),
                                          (public_bytes(key), "Zed")))
            await channel.aclose()
            nursery.cancel_scope.cancel()


def lying(monkeypatch: pytest.MonkeyPatch, frame: Callable[[control.Names], bytes]) -> None:
    """Make the host's `names` frames `frame(what it would send)`: a lying host."""
    honest = control.encode

    def encode(value: control.Known) -> bytes:
        return frame(value) if isinstance(value, control.Names) else honest(value)

    monkeypatch.setattr(control, "encode", encode)


#: Three values that are no name by SPEC 3.4 (1..24 characters that print), and the words
#: that say so.
BAD_NAMES = ["x" * 30, "Eve\x1b[2J", 42]
BAD_WORDS = ["a name has at most 24 characters (30 given)",
             "a name holds only characters that print (no control codes)",
             "a name is text, not a number"]


@pytest.mark.parametrize("kind", ["bad names", "bad shape"])
async def test_a_malformed_name_from_the_host_is_said_and_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    seats = 4
    config = named_host(tmp_path, seats)
    honest = control.encode
    if kind == "bad names":
        def frame(names: control.Names) -> bytes:
            """The host's own name (first) kept, each other seat's one that is no name."""
            lie = [(key, name if n == 0 else BAD_NAMES[n - 1])
                   for n, (key, name) in enumerate(names.names)]
            return honest(control.Names(tuple(lie)))
    else:
        def frame(names: control.Names) -> bytes:
            data: bytes = msgpack.packb({"ctl": "names", "v": 1, "names": HOST},
                                        use_bin_type=True)
            return data
    lying(monkeypatch, frame)
    status: list[str] = []
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial_host(config, seats))
            session = await join_table(joiner(hosting, tmp_path / "joiner", "Bo"),
                                       table_bot(7, think=0.01), on_status=status.append)
            nursery.cancel_scope.cancel()
    assert session.done and session.failure is None  # (the game went on to its end)
    assert status.count("connected to the host") == 1, status  # (never dropped for it)
    assert not [line for line in status if "\x1b" in line], status
    if kind == "bad names":
        for words in BAD_WORDS:
            assert any("the host's name for " in line and f"is ignored: {words}" in line
                       for line in status), (words, status)
        assert session.names == {public_bytes(config.key): HOST}  # (the good one stays)
        assert shown(session, seats)[0] == HOST
    else:
        assert any(line.startswith("the host's seat names are ignored: the names frame's "
                                   "names must be an array") for line in status), status
        assert session.names == {}
        assert set(shown(session, seats).values()) <= {"you", ""}


async def test_a_joiner_back_from_its_file_is_told_the_names_again(tmp_path: Path) -> None:
    seats = 3
    config = named_host(tmp_path, seats)
    joiner_dir = tmp_path / "joiner"
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial_host(config, seats))
            bo = joiner(hosting, joiner_dir, "Bo")
            with trio.CancelScope() as first:
                nursery.start_soon(stop_after_messages, joiner_dir, 30, first)
                await join_table(bo, table_bot(7))
            assert first.cancelled_caught, "the game ended before the stop: make it longer"
            session = await join_table(bo, table_bot(7))  # (a new program: from its file)
            nursery.cancel_scope.cancel()
    assert session.done and session.failure is None
    bot = public_bytes(bot_key(config.key, bo.invite.secret, 1))
    assert session.names == {public_bytes(config.key): HOST, bot: "bot",
                             session.public_key: "Bo"}
    me = session.seat.my_seat
    assert sorted(label for seat, label in shown(session, seats).items()
                  if seat != me) == sorted([HOST, "bot"])


async def test_a_host_started_again_learns_its_joiners_names_anew(tmp_path: Path) -> None:
    """As a host of two (SPEC 3.5) a table's host shows its joiners' names after a restart;
    a table's file keeps none (SPEC 3.4), so it takes each from the `hi` its joiner comes
    back with, and tells the others again."""
    seats = 3
    config = named_host(tmp_path, seats)
    joiner_dir = tmp_path / "joiner"
    found: list[TableSession] = []
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as outer:
            async with trio.open_nursery() as host_nursery:
                hosting = await host_nursery.start(partial_host(config, seats))
                bo = joiner(hosting, joiner_dir, "Bo")

                async def play() -> None:
                    found.append(await join_table(bo, table_bot(7)))

                outer.start_soon(play)
                await wait_for_files(joiner_dir, 1)
                await stop_after_messages(config.save_dir, 30, host_nursery.cancel_scope)
            path, = unfinished_tables(config.save_dir, "host", config.key)
            resumed = TableSession.resume(path, config.key, "host", QUICK)
            assert resumed.names == {}  # (nothing of them was saved)
            host = await host_table(config, table_bot(1, think=0.01), bot_seats=1,
                                    bot=lambda k: table_bot(10 + k, think=0.01),
                                    session=resumed)
    session, = found
    assert host.done and session.done
    bot = public_bytes(bot_key(config.key, bo.invite.secret, 1))
    assert host.names == {public_bytes(config.key): HOST, session.public_key: "Bo",
                          bot: "bot"}
    assert session.names == host.names  # (told again after the restart)
