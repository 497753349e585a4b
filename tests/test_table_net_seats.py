"""A table's seats over real TLS on loopback (SPEC 3.4 "At a table", 5.4, 5.7): only the
holder of a seat's key can take that seat's connection; a seat that stops while it owes is
claimed by the seat after it, and disputes when it comes back; a joiner whose host is gone
gives up at the abandonment limit; a dropped connection comes back and gets exactly what it
missed. Every seat's file verifies to one verdict (SPEC 5.9)."""

from __future__ import annotations

import dataclasses
import random
from functools import partial
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tablenet import (
    QUICK,
    SAFETY,
    assert_one_clean_verdict,
    host_config,
    invite_of,
    partial_host,
    wait_for_files,
    wait_for_game_id,
)

from p2pgotg.crypto import public_bytes
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import bot_key, host_table
from p2pgotg.net.play.table_joiner import join_table, saved_seat
from p2pgotg.net.play.table_proof import prove_seat
from p2pgotg.net.play.table_session import TableSession
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import open_pinned_connection
from p2pgotg.protocol import JOINER, control
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.transcript import encode_table_header, encode_table_record
from p2pgotg.testing.table_relay import keys, make_table


async def impostor(invite, game: bytes, seat: int,  # type: ignore[no-untyped-def]
                   key: Ed25519PrivateKey) -> control.Refusal | control.Ok:
    """A holder of the join secret that names `seat` and signs the `ok`'s nonce with `key`:
    what the host answers after its proof (an `error` frame), or its `ok` when it asks no
    proof (the connection is then the seat's)."""
    stream = await open_pinned_connection(invite.address, invite.port, invite.pin)
    channel = FramedChannel(stream)
    try:
        await channel.send(control.encode(control.Hi(invite.secret, game, (1, 1, 1), None,
                                                     seat=seat)))
        ok = control.decode(await channel.receive())
        assert isinstance(ok, control.Ok), ok
        if ok.nonce is None:
            return ok
        await channel.send(control.encode(control.Prove(prove_seat(key, ok.nonce, game,
                                                                     seat))))
        answer = control.decode(await channel.receive())
        assert isinstance(answer, control.Refusal | control.Ok), answer
        return answer
    finally:
        await channel.aclose()


async def test_a_holder_of_the_join_secret_cannot_take_another_seats_connection(
        tmp_path: Path) -> None:
    config = host_config(tmp_path, 3)
    status: list[str] = []
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            hosting = await nursery.start(partial(
                host_table, config, table_bot(1, think=0.05), bot_seats=2,
                bot=lambda k: table_bot(10 + k, think=0.05), on_status=status.append))
            invite = invite_of(hosting)
            files = await wait_for_files(config.save_dir, 3)
            host_file, = (p for p in files if _is_host(p, config.key))
            game = await wait_for_game_id(host_file)
            bots = {public_bytes(k): k for k in
                    (bot_key(config.key, invite.secret, n) for n in (1, 2))}
            seated = _seat_keys(host_file)
            # A stranger's key for seat 1; seat 1's own (a co-player's) key for seat 2.
            attempts = [(1, Ed25519PrivateKey.generate()), (2, bots[seated[1]])]
            answers = [await impostor(invite, game, seat, key) for seat, key in attempts]
    for (seat, _), answer in zip(attempts, answers, strict=True):
        assert isinstance(answer, control.Refusal), answer
        assert f"did not prove that it holds seat {seat}'s key" in answer.reason
    assert not [line for line in status if "dropping its old connection" in line], status
    # (the seats kept their connections: nobody was away, nobody was claimed)
    assert_one_clean_verdict(sorted(config.save_dir.glob("*.gtr")), 3)


def _is_host(path: Path, key: Ed25519PrivateKey) -> bool:
    from p2pgotg.net.play.table_file import read_table_file

    return read_table_file(path).key == public_bytes(key)


def _seat_keys(path: Path) -> dict[int, bytes]:
    from p2pgotg.games.towers.table import restored_seat
    from p2pgotg.net.play.table_file import read_table_file

    seat = restored_seat(Ed25519PrivateKey.generate(), bytes(32), read_table_file(path).records,
                         False)
    return {n: bytes(seat.flow.key_of(n)) for n in range(3)}


async def test_a_joiner_whose_host_is_gone_gives_up_at_the_abandonment_limit(
        tmp_path: Path) -> None:
    config = host_config(tmp_path, 3)
    joiner_dir = tmp_path / "joiner"
    status: list[str] = []
    # (our limit: the host's, for the other seats, stays far away)
    limits = dataclasses.replace(QUICK, abandon=3.0)
    found: list[TableSession] = []
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as outer, trio.open_nursery() as host_nursery:
            hosting = await host_nursery.start(partial_host(config, 3))
            joiner = JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting),
                                joiner_dir, limits)

            async def play() -> None:
                found.append(await join_table(joiner, table_bot(7),
                                              on_status=status.append))

            outer.start_soon(play)
            await wait_for_game_id((await wait_for_files(joiner_dir, 1))[0])
            host_nursery.cancel_scope.cancel()  # (the host's program is gone, its bots too)
    session, = found
    assert not session.done  # (nothing decided it: the table waits for its host)
    saved, = joiner_dir.glob("*.gtr")
    assert any("the host has not let us back in for 3 s" in line and saved.name in line
               for line in status), status
    assert saved_seat(joiner) == saved  # kept, unfinished: `join` again resumes it
    again: list[str] = []
    with trio.fail_after(SAFETY):
        await join_table(joiner, table_bot(7), on_status=again.append)
    assert f"resuming the unfinished table saved in {saved.name}" in again


async def test_a_seat_restored_from_its_file_resends_its_chain_from_its_hello(
        tmp_path: Path) -> None:
    """`ok.have` counts a seat's messages from its hello (`seq` 0, SPEC 5.2); a joiner
    resends its own from that count on (5.4), so its list must start at its hello. (A
    restored joiner that left its hello out skipped its first unsent message, and the table
    waited for it for ever: the stall seen under load.)"""
    rng = random.Random(3)
    table = make_table(3, rng)
    table.settle(rng)  # (hellos, roster, every coin opened)
    table.collect()
    joiner = table.links[0].joiner
    path = tmp_path / "joiner.gtr"
    path.write_bytes(encode_table_header("joiner", joiner.public_key)
                     + encode_table_record(("secrets", {"join": bytes(16)}))
                     + b"".join(encode_table_record(r)
                                for r in table.records[id(joiner)]))
    key, = (k for k in keys(3) if public_bytes(k) == joiner.public_key)
    session = TableSession.resume(path, key, JOINER, QUICK)
    try:
        me = session.seat.my_seat
        assert me is not None
        seqs = [TableBody.decode(Envelope.decode(data).body_bytes).seq
                for data in session.mine]
        assert seqs == list(range(session.have()[me])) and seqs[0] == 0  # hello first
    finally:
        session.close()
