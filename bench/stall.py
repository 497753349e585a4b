"""The worst stall a reconnecting staller gets from each timer, against its stated limit.

`python bench/stall.py`

A host session (p2pgotg's own driver, `GameSession`) plays a joiner that owes something and
never gives it, reconnecting again and again: connected for `stay` seconds out of every
`period`. For each timer of SPEC 3.6 (the duty, the setup, the move time, the clock, the
audit, and the abandonment limit), and for several reconnect patterns, it measures how long
after the joiner began to owe (by the host's reading) the host's claim came, and prints it
next to the bound SPEC 3.6 promises: the limit plus one grace period, plus, when no
connection is up at that moment, the wait for the next one (`period - stay`). For the
abandonment limit only time away counts, so its bound is the limit divided by the share of
time away, plus one period.

The sessions run over memory streams under trio's mock clock, so the figures are exact
virtual seconds of the driver's own logic, the same on any machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

import trio
import trio.testing

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, Phase, RemoteProtocolError, control
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import RuleOptions, Setup
from p2pgotg.testing.pair import DetRand, det_key

TLS_FP = hashlib.sha256(b"bench/stall certificate").digest()
SECRET = bytes(range(16))
LIMITS = Timeouts(duty=30.0, setup=120.0, audit=60.0, abandon=180.0, grace=5.0)


@dataclass(frozen=True)
class Timer:
    name: str
    limit: float
    options: RuleOptions
    withholds: str  # the message type the staller never sends ("" for a move: it never moves)
    owes: str  # what the host sees the joiner owe (GameSession's obligation kind)


TIMERS = (
    Timer("duty (coin opening)", LIMITS.duty, RuleOptions(), "coin_open", "coin_open"),
    Timer("setup", LIMITS.setup, RuleOptions(), "setup_commit", "setup"),
    Timer("move time (--move-time 60)", 60.0, RuleOptions(move_seconds=60), "move", "move"),
    Timer("clock (--clock 90)", 90.0, RuleOptions(clock_seconds=90), "move", "move"),
    Timer("audit", LIMITS.audit, RuleOptions(), "audit", "audit"),
    Timer("abandonment (a move, no clock)", LIMITS.abandon, RuleOptions(), "move", "move"),
)
PATTERNS = ((2.9, 3.0), (0.4, 3.0), (9.0, 10.0), (1.0, 10.0))  # (stay, period)




class Staller:
    """A joiner that plays along (accepts, commits, resigns on its first turn when the
    audit is the timer) but never sends what `timer` covers."""

    def __init__(self, timer: Timer) -> None:
        self.timer = timer
        self.peer = GotgPeer(JOINER, det_key("bench/stall/staller"), TLS_FP,
                             None, DetRand("stall-joiner"))
        self.held: list[bytes] = []

    def act(self) -> None:
        peer = self.peer
        if self.held:
            return  # (it stalls: nothing after what it withholds)
        if peer.phase is Phase.HELLO and JOINER not in peer.flow.hellos:
            peer.accept()
        elif peer.phase is Phase.SETUP and peer.own_setup is None and peer.side is not None \
                and self.timer.withholds != "setup_commit":
            peer.commit_setup(Setup.random(peer.side, random.Random(5)))
        elif peer.my_turn and self.timer.withholds == "audit":
            peer.resign()

    def withheld(self, data: bytes) -> bool:
        return Envelope.decode(data).body().type == self.timer.withholds

    async def connect(self, host: GameSession, nursery: trio.Nursery, stay: float) -> None:
        a, b = trio.testing.memory_stream_pair()
        ours = FramedChannel(b, keepalive_interval=LIMITS.keepalive,
                             silence_timeout=LIMITS.silence)
        done = trio.Event()

        async def host_side() -> None:
            with contextlib.suppress(Exception):  # (the connection's end, whatever it is)
                await host.run_connection(FramedChannel(
                    a, keepalive_interval=LIMITS.keepalive, silence_timeout=LIMITS.silence),
                    self.peer.received_count())
            done.set()

        nursery.start_soon(host_side)
        with trio.move_on_after(stay):
            async with trio.open_nursery() as inner:
                inner.start_soon(_quietly, ours.keep_alive)
                for data in self.peer.messages_since(host.peer.received_count()):
                    if data not in self.held:
                        await ours.send(data)
                while True:
                    try:
                        frame = await ours.receive()
                    except NetError:
                        inner.cancel_scope.cancel()
                        break
                    if control.is_control(frame):
                        continue
                    with contextlib.suppress(RemoteProtocolError):
                        self.peer.receive(frame)
                    self.act()
                    for data in self.peer.data_to_send():
                        if self.held or self.withheld(data):
                            self.held.append(data)
                        else:
                            await ours.send(data)
        await ours.aclose()
        await done.wait()


async def _quietly(run) -> None:
    with contextlib.suppress(NetError):
        await run()


async def one(timer: Timer, stay: float, period: float, folder: Path) -> tuple[float, int]:
    """(seconds from the joiner's obligation to the host's claim, connections made)."""
    peer = GotgPeer(HOST, det_key("bench/stall/host"), TLS_FP, timer.options, DetRand("stall-host"))
    host = GameSession(peer, folder, SECRET, LIMITS)
    host.perform(lambda p: p.start())
    staller = Staller(timer)
    owed_at: list[float] = []
    claimed_at: list[float] = []

    def owes_it(session: GameSession) -> bool:
        owed = session._owed
        return owed is not None and owed[0] == timer.owes

    async def watch() -> None:
        while not owes_it(host):
            await host.wait_changed()
        owed_at.append(trio.current_time())
        while not host.peer.flow.claims[HOST]:
            await host.wait_changed()
        claimed_at.append(trio.current_time())

    connections = 0
    with trio.fail_after(100_000):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(1)).step)
            nursery.start_soon(watch)
            while not claimed_at:
                connections += 1
                await staller.connect(host, nursery, stay)
                if timer.limit == LIMITS.abandon and not claimed_at \
                        and host.away_too_long(trio.current_time()):
                    host.claim_overdue(trio.current_time())
                await _wait_away(host, timer, period - stay, claimed_at)
            nursery.cancel_scope.cancel()
    return claimed_at[0] - owed_at[0], connections


async def _wait_away(host: GameSession, timer: Timer, gap: float, claimed: list[float]
                     ) -> None:
    """The time between connections; the host's abandonment check runs as its own loop
    does (every second while no connection is up)."""
    end = trio.current_time() + gap
    while trio.current_time() < end and not claimed:
        await trio.sleep(min(1.0, end - trio.current_time()))
        if timer.limit == LIMITS.abandon and host.away_too_long(trio.current_time()):
            host.claim_overdue(trio.current_time())


def bound(timer: Timer, stay: float, period: float) -> float:
    if timer.limit == LIMITS.abandon and timer.owes == "move":
        return timer.limit / ((period - stay) / period) + period
    return timer.limit + LIMITS.grace + (period - stay)


def main() -> int:
    print(f"{'timer':32} {'limit':>6} {'stay/period':>12} {'claimed after':>14} "
          f"{'bound':>8} {'connections':>12}")
    worst_ok = True
    for timer in TIMERS:
        for stay, period in PATTERNS:
            if timer.limit == LIMITS.abandon and timer.owes == "move" and stay > period / 2:
                continue  # (mostly connected is not away: no abandonment claim is due)
            with TemporaryDirectory() as folder:
                took, connections = trio.run(one, timer, stay, period, Path(folder),
                                             clock=trio.testing.MockClock(autojump_threshold=0.02))
            limit = bound(timer, stay, period)
            worst_ok &= took <= limit + 0.01
            print(f"{timer.name:32} {timer.limit:>5.0f}s {stay:>5.1f}/{period:<4.0f}s "
                  f"{took:>13.1f}s {limit:>7.1f}s {connections:>12}")
    print("every claim within its bound" if worst_ok else "A CLAIM CAME AFTER ITS BOUND")
    return 0 if worst_ok else 1


if __name__ == "__main__":
    sys.exit(main())
