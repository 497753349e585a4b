"""Claims at a table over real TLS on loopback (SPEC 5.7, 4.13): a seat that stops acting
while it owes its action, or whose program is gone while it owes `heads`, is claimed by the
first seat still in after it once its limit passes; it leaves, the others play on to the
end, and every seat's file (each alone and all together) verifies to one verdict resting on
the claim (exit 4, SPEC 5.9)."""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tablenet import (
    QUICK,
    SAFETY,
    host_config,
    invite_of,
    one_verdict,
    partial_host,
    verify,
)

from p2pgotg.crypto import public_bytes
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_joiner import TableRunner, join_table
from p2pgotg.net.play.table_session import TableSession
from p2pgotg.protocol.table.events import ActionMade, ClaimMade, DisputeMade, SeatLeft


def stops_after(actions: int, seed: int) -> TableRunner:
    """A bot that makes `actions` actions and then walks away from the keyboard: it acts no
    more, while its program (its connection, its automatic answers) runs on."""
    async def run(session: TableSession) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(table_bot(seed, think=0.01), session)
            while _my_actions(session) < actions and not session.done:
                await session.wait_changed()
            nursery.cancel_scope.cancel()
        await trio.sleep_forever()
    return run


def _my_actions(session: TableSession) -> int:
    me = session.seat.my_seat
    return sum(1 for e in session.events if isinstance(e, ActionMade) and e.seat == me)


def claimed_against(session: TableSession, seat: int) -> list[ClaimMade]:
    return [e for e in session.events if isinstance(e, ClaimMade) and e.seat == seat]


def successor(session: TableSession, seat: int) -> int | None:
    """The first seat after `seat` in play order (colour order, SPEC 5.7) that had not left
    when `seat` did."""
    state = session.seat.flow.state
    assert state is not None and state.order is not None
    order = list(state.order)
    left_before = []
    for event in session.events:
        if isinstance(event, SeatLeft):
            if event.seat == seat:
                break
            left_before.append(event.seat)
    i = order.index(seat)
    return next((s for s in order[i + 1:] + order[:i] if s not in left_before), None)


async def test_a_joiner_that_stops_acting_while_it_owes_is_claimed_by_the_seat_after_it(
        tmp_path: Path) -> None:
    # (the abandonment limit low for the seats that may claim; the duty limit stays far)
    limits = dataclasses.replace(QUICK, abandon=3.0)
    config = host_config(tmp_path, 3, limits)
    joiner_dir = tmp_path / "joiner"
    found: list[TableSession] = []
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(partial_host(config, 3))
            joiner = JoinConfig(Ed25519PrivateKey.generate(), invite_of(hosting),
                                joiner_dir, QUICK)

            async def play() -> None:
                found.append(await join_table(joiner, stops_after(3, seed=7)))

            nursery.start_soon(play)
    session, = found
    me = session.seat.my_seat
    assert me is not None and session.done
    claims = claimed_against(session, me)
    assert [c.reason for c in claims] == ["abandoned"], session.events
    assert claims[0].claimant == successor(session, me)
    assert SeatLeft(me, "abandonment") in session.events
    # It was here all along (its connection up): its program disputes the claim (SPEC 5.7).
    assert DisputeMade(me, (claims[0].claimant, claims[0].seq)) in session.events
    paths = sorted([*config.save_dir.glob("*.gtr"), *joiner_dir.glob("*.gtr")])
    result = one_verdict(paths, 3, 4)
    assert "wins" in result, result
    _, printed = verify(*paths)
    assert f"(seat {me}) disputes the claim of " in printed, printed


def heads_paid(session: TableSession) -> bool:
    """No seat owes `heads` in this seat's view (SPEC 5.6): a player that waits for them
    before it acts holds the turn while a gone seat owes them."""
    flow, state = session.seat.flow, session.seat.flow.state
    if state is None:
        return True
    view = flow.view_of_all()
    return all(flow.owes(s, view, state) != "heads" for s in range(flow.n))


def seat_of_key(session: TableSession, key: bytes) -> int | None:
    flow = session.seat.flow
    if not flow.rostered:
        return None
    return next((s for s in range(flow.n) if bytes(flow.key_of(s)) == key), None)


def turn_done(session: TableSession, seat: int | None, actions: int) -> bool:
    """In this seat's view, `seat` has made `actions` actions or more and its turn is over."""
    if seat is None:
        return False
    made = sum(1 for t in session.seat.flow.chains[seat] if t.body.type == "action")
    return made >= actions and session.status.seat_to_act != seat


def held_by_another(session: TableSession) -> bool:
    """Another seat's message acknowledges our last action: the host holds it."""
    flow, me = session.seat.flow, session.seat.my_seat
    assert me is not None
    last = max(t.seq for t in flow.chains[me] if t.body.type == "action")
    return any(flow.chains[s] and flow.chains[s][-1].view[me] > last
               for s in range(flow.n) if s != me)


async def test_a_seat_gone_while_it_owes_heads_is_claimed_on_the_duty_limit(
        tmp_path: Path) -> None:
    """The joiner's program is cancelled (its connection closes) once its second turn is
    held by the host; the others wait meanwhile, and then each waits for every seat's
    `heads` before acting, so the table stands while the gone seat owes them."""
    # The duty limit low for the seats that may claim; the abandonment limit beyond the
    # test's net, so only the duty limit can remove the gone seat. The host keeps the
    # ended table for the gone seat as long as its linger (silence + handshake + back-off),
    # and returns then: those two lower, though far above what loopback needs.
    limits = dataclasses.replace(QUICK, duty=4.0, abandon=10 * SAFETY, silence=20.0,
                                 handshake=20.0)
    config = host_config(tmp_path, 3, limits)
    joiner_dir = tmp_path / "joiner"
    key = Ed25519PrivateKey.generate()
    mine = public_bytes(key)
    gone = trio.Event()
    found: list[TableSession] = []

    def ready(session: TableSession) -> bool:
        return heads_paid(session) and (
            gone.is_set() or not turn_done(session, seat_of_key(session, mine), 4))

    waiting: list[TableSession] = []  # (the patient seats' sessions, woken once it is gone)

    def patient(seed: int) -> TableRunner:
        play = table_bot(seed, think=0.01, ready=ready)

        async def run(session: TableSession) -> None:
            waiting.append(session)
            await play(session)
        return run

    async def runner(session: TableSession) -> None:
        found.append(session)
        await table_bot(7, think=0.01)(session)

    async def leave_after_my_turn(program: trio.CancelScope) -> None:
        while not found:
            await trio.sleep(0.05)
        session, = found
        while not (turn_done(session, session.seat.my_seat, 4) and held_by_another(session)):
            await session.wait_changed()
        program.cancel()

    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(partial(
                host_table, config, patient(1), bot_seats=1, bot=lambda k: patient(10 + k)))
            joiner = JoinConfig(key, invite_of(hosting), joiner_dir, QUICK)
            with trio.CancelScope() as program:
                nursery.start_soon(leave_after_my_turn, program)
                await join_table(joiner, runner)
            gone.set()
            for waiter in waiting:  # (a seat that waited for it acts now: nothing else may
                waiter.notify()     # change at the table until someone acts)
    session, = found
    me = session.seat.my_seat
    assert me is not None and not session.done  # (its program went mid-game)
    # The seats that held the table to its end, each alone and together, and all three
    # files together (the gone seat's own stops where its program did: exit 3 alone).
    held = sorted(config.save_dir.glob("*.gtr"))
    result = one_verdict(held, 2, 4)
    assert "wins" in result, result
    code, printed = verify(*held, *joiner_dir.glob("*.gtr"))
    assert code == 4 and result in printed.splitlines(), printed
    lines = printed.splitlines()
    assert any(line.startswith("left:") and line.endswith(f"(seat {me}) by abandonment")
               for line in lines), printed
    after = successor(session, me)
    assert any(line.startswith("claim:") and f"(seat {after}) claimed against" in line
               and f"(seat {me})" in line for line in lines), printed
