"""Tables of four through one relaying host (SPEC 5.4). Figures, never pass/fail.

`python bench/bench_table.py latency --games 6`: a table's action reaching every seat,
against a two-seat Towers game's action reaching the other seat, in the same run. Each
table is `host_table` on 127.0.0.1 with three joiners over real TLS (every seat's file
fsynced before it sends, as always), all four seats in this process on one trio loop, as
bench/run.py runs its two seats. Every seat plays a random legal action at once, but only
after the previous timed action has reached every seat, so each sample is one action
alone: from just before the acting seat's `act` until the last of the other seats has
taken it (the host relays a joiner's action to the two other joiners once it has taken it
itself). The two-seat games (bench/run.py's `towers_session_latency`, one way) alternate
with the tables.

`python bench/bench_table.py many --tables 50`: one host process (`serve`) holding that
many 4-seat tables at once: that many `TableHost`s, each with its own listener on
127.0.0.1, on one trio loop, the host's own seat at each table played by the Towers bot
with a small budget (thinking on a worker thread). The 3 x N joiner seats stand in for
other people's computers: three other processes (`seats`), one seat of every table each,
the same bot and budget. Reported: wall time from the invites to the last table over,
actions and signed messages the host took and relayed per second, the host's CPU time and
peak RSS; then `p2pgotg verify` of each table's four files together.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from run import towers_latency_samples

from p2pgotg.games.towers.players import Budget
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.net.play.hosting import HostConfig
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_bot import table_bot
from p2pgotg.net.play.table_host import host_table
from p2pgotg.net.play.table_joiner import TableRunner, join_table
from p2pgotg.net.play.table_session import TableSession
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate

SEATS = 4
#: The bots' budget when many tables share the machine: a few hundred positions, 2 deep.
SMALL = Budget(nodes=120, seconds=None, max_depth=2)
#: Limits long enough that a loaded machine never looks like an absent player.
LIMITS = Timeouts(handshake=60.0, silence=120.0, keepalive=20.0, abandon=900.0, duty=600.0)
SAFETY = 1800.0  # seconds: the whole run's bound (a hang, not a speed)
ENDING = 60.0  # seconds the joiner processes get, once every game is over, to say goodbye


def percentile(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def scratch(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"p2pgotg-bench-table-{name}-"))


def host_config(folder: Path) -> HostConfig:
    cert, tls_key = make_certificate()
    return HostConfig(Ed25519PrivateKey.generate(), cert, tls_key, RuleOptions(seats=SEATS),
                      folder, bind="127.0.0.1", limits=LIMITS)


# -- 1. one action to every seat -------------------------------------------------------------

@dataclass
class Probe:
    """When each timed action was performed (by its author's message count) and when each
    other seat took it."""

    sent: dict[tuple[int, int], float] = field(default_factory=dict)
    taken: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    over: int = 0  # seats that saw the game end
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._changed = trio.Event()

    def pending(self) -> bool:
        return any(len(self.taken.get(key, ())) < SEATS - 1 for key in self.sent)

    def note(self, author: int, count: int, when: float) -> None:
        self.taken.setdefault((author, count), []).append(when)
        self.wake()

    def wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def latencies(self, by: Callable[[int], bool] = lambda seat: True) -> list[float]:
        return [max(self.taken[key]) - at for key, at in self.sent.items()
                if by(key[0]) and len(self.taken.get(key, ())) == SEATS - 1]


def timed_runner(probe: Probe, rng: random.Random) -> TableRunner:
    """Plays random legal actions at once, one timed action at a table at a time, and notes
    when this seat takes every other seat's messages."""
    async def run(session: TableSession) -> None:
        held = [0] * SEATS
        while not session.done:
            now = time.perf_counter()
            me = session.seat.my_seat
            for author, count in enumerate(session.have()):
                for k in range(held[author] + 1, count + 1):
                    if author != me:
                        probe.note(author, k, now)
                held[author] = count
            position = session.seat.game
            game = None if position is None else position.game
            if game is None or game.is_over or session.status.seat_to_act != me:
                await session.wait_changed()
                continue
            if probe.pending():
                await probe.wait_changed()
                continue
            action = rng.choice(game.legal_actions)
            started = time.perf_counter()
            session.perform(lambda seat, a=action: seat.act(a))
            assert me is not None
            probe.sent[(me, session.have()[me])] = started
        probe.over += 1
        if session.failure is not None:
            probe.failures.append(session.failure)
        probe.wake()

    return run


async def table_latency(seed: int) -> Probe:
    """One table of four on loopback TLS played to its end by `timed_runner`s (then
    stopped: the host's wait for the joiners' last goodbyes is not what is measured)."""
    probe = Probe()
    rng = random.Random(seed)
    folder = scratch(f"lat{seed}")
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(
                host_table, host_config(folder), timed_runner(probe, rng), bot_seats=SEATS - 1,
                bot=lambda k: timed_runner(probe, random.Random(seed * 10 + k))))
            while probe.over < SEATS:
                await probe.wait_changed()
            nursery.cancel_scope.cancel()
    shutil.rmtree(folder, ignore_errors=True)
    assert not probe.failures, probe.failures
    return probe


def latency(games: int) -> dict[str, float]:
    table: list[float] = []
    from_host: list[float] = []
    from_joiners: list[float] = []
    two: list[float] = []
    for game in range(1, games + 1):
        probe = trio.run(table_latency, game)
        table += probe.latencies()
        from_host += probe.latencies(lambda seat: seat == 0)
        from_joiners += probe.latencies(lambda seat: seat != 0)
        two += towers_latency_samples(1, one_way=True, seeds=range(game, game + 1))
    figures = {
        "table_p50_ms": statistics.median(table) * 1e3,
        "table_p99_ms": percentile(table, 0.99) * 1e3,
        "table_host_acts_p50_ms": statistics.median(from_host) * 1e3,
        "table_joiner_acts_p50_ms": statistics.median(from_joiners) * 1e3,
        "two_seat_p50_ms": statistics.median(two) * 1e3,
        "two_seat_p99_ms": percentile(two, 0.99) * 1e3,
        "table_samples": len(table), "two_seat_samples": len(two),
    }
    figures["ratio_p50"] = figures["table_p50_ms"] / figures["two_seat_p50_ms"]
    figures["ratio_p99"] = figures["table_p99_ms"] / figures["two_seat_p99_ms"]
    return figures


# -- 2. one host, many tables ------------------------------------------------------------------

async def serve(tables: int, base: Path) -> None:
    """The host process: `tables` TableHosts on this trio loop, their invites on stdout (one
    JSON line), then, once every table is over, the figures; it stops at a line on stdin
    (sent once every joiner process has ended: the host's own wait for goodbyes that never
    come is not measured)."""
    sessions: list[TableSession] = []
    over: list[float] = []

    def seat(t: int) -> TableRunner:
        bot = table_bot(t, budget=SMALL)

        async def run(session: TableSession) -> None:
            sessions.append(session)
            await bot(session)
            over.append(time.perf_counter())
        return run

    async def stop(scope: trio.CancelScope) -> None:
        await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        scope.cancel()

    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            invites = []
            for t in range(tables):
                config = host_config(base / f"t{t:03}" / "host")
                hosting = await nursery.start(partial(host_table, config, seat(t)))
                invites.append(hosting.invites[0])
            print(json.dumps(invites), flush=True)
            started = time.perf_counter()
            while len(over) < tables:
                await trio.sleep(0.1)
            wall = max(over) - started
            usage = resource.getrusage(resource.RUSAGE_SELF)
            done = [s for s in sessions if s.done and s.failure is None]
            actions = sum(s.seat.game.game.ply for s in sessions if s.seat.game is not None)
            messages = sum(len(s.seat.accepted) for s in sessions)
            print(json.dumps({
                "tables": tables, "over_clean": len(done), "wall_s": wall,
                "actions": actions, "messages": messages, "actions_per_s": actions / wall,
                "messages_per_s": messages / wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                "peak_rss_mib": usage.ru_maxrss / 1024}), flush=True)
            nursery.start_soon(stop, nursery.cancel_scope)


async def seats(invites: list[str], base: Path, k: int) -> None:
    """A joiner process: seat `k`'s joiner of every table (another person's computer). On
    SIGTERM (the bench's stop, when it waited too long) it prints, on stderr, each seat
    still here and what it holds against the host's last goodbye."""
    here: dict[int, TableSession] = {}
    left: set[int] = set()

    def seat(t: int) -> TableRunner:
        bot = table_bot(1000 * k + t, budget=SMALL)

        async def run(session: TableSession) -> None:
            here[t] = session
            await bot(session)
        return run

    async def play(t: int, config: JoinConfig) -> None:
        await join_table(config, seat(t))
        left.add(t)

    async def tell_on_stop(scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                waiting = {t: {"done": s.done, "have": s.have(), "host_bye": s.host_bye,
                               "away_since": s.away_since, "failure": str(s.failure)}
                           for t, s in sorted(here.items()) if t not in left}
                print(json.dumps({"seat": k, "waiting": waiting}), file=sys.stderr,
                      flush=True)
                scope.cancel()

    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as outer:
            outer.start_soon(tell_on_stop, outer.cancel_scope)
            async with trio.open_nursery() as nursery:
                for t, code in enumerate(invites):
                    config = JoinConfig(Ed25519PrivateKey.generate(), Invite.decode(code),
                                        base / f"t{t:03}" / f"joiner{k}", LIMITS)
                    nursery.start_soon(play, t, config)
            outer.cancel_scope.cancel()  # (every seat left)


def many(tables: int) -> dict[str, object]:
    base = scratch("many")
    me = [sys.executable, str(Path(__file__).resolve())]
    host = subprocess.Popen([*me, "serve", "--tables", str(tables), "--dir", str(base)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert host.stdout is not None
    invites = host.stdout.readline()
    (base / "invites.json").write_text(invites)
    joiners = [subprocess.Popen([*me, "seats", "--invites", str(base / "invites.json"),
                                 "--dir", str(base), "--seat", str(k)])
               for k in range(1, SEATS)]
    figures: dict[str, object] = json.loads(host.stdout.readline())
    waiting = 0
    for proc in joiners:  # (a joiner seat leaves once the host's goodbye matches its file)
        try:
            proc.wait(ENDING)
        except subprocess.TimeoutExpired:
            waiting += 1
            proc.terminate()
            proc.wait(SAFETY)
    figures["joiner_processes_still_waiting_for_goodbye"] = waiting
    host.communicate("stop\n", timeout=SAFETY)
    verdicts: Counter = Counter()
    for t in range(tables):
        files = sorted((base / f"t{t:03}").glob("*/*.gtr"))
        done = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", *map(str, files)],
                              capture_output=True, text=True, timeout=SAFETY)
        results = [line for line in done.stdout.splitlines() if line.startswith("result:")]
        clean = done.returncode == 0 and len(files) == SEATS and len(results) == 1
        verdicts["clean" if clean else f"exit {done.returncode}, {len(files)} files"] += 1
    figures["verified"] = dict(verdicts)
    figures["folder"] = str(base)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency", help="one action to every seat, against two seats")
    lat.add_argument("--games", type=int, default=6)
    lot = sub.add_parser("many", help="one host process serving many tables at once")
    lot.add_argument("--tables", type=int, default=50)
    srv = sub.add_parser("serve", help="(the host process of `many`)")
    srv.add_argument("--tables", type=int, required=True)
    srv.add_argument("--dir", type=Path, required=True)
    sts = sub.add_parser("seats", help="(a joiner process of `many`)")
    sts.add_argument("--invites", type=Path, required=True)
    sts.add_argument("--dir", type=Path, required=True)
    sts.add_argument("--seat", type=int, required=True)
    args = parser.parse_args(argv)
    if args.what == "serve":
        trio.run(serve, args.tables, args.dir)
        return 0
    if args.what == "seats":
        trio.run(seats, json.loads(args.invites.read_text()), args.dir, args.seat)
        return 0
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    figures = latency(args.games) if args.what == "latency" else many(args.tables)
    for key, value in figures.items():
        print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
