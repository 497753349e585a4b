"""Faults soak: many games through a fault-injecting proxy. `python bench/soak.py --games 30`

A many-game host (`host_many`, in a subprocess of its own, with short timeouts) and bot
joiners in this process, each joiner's connections routed through one `FaultProxy` whose
random plans cut, stall, half-close, drip and delay them at random byte counts, inside TLS
records and frames alike. Games run `--parallel` at a time until `--games` have started
or `--time` is up.

Checked and reported, never asserted:
- every game either finishes audited clean on both sides, or is left resumable: every
  transcript on both sides verifies as CLEAN or UNFINISHED, never damaged or as a cheat;
- nothing hangs: a hard deadline ends the run (and kills the host) whatever happens;
- file descriptors do not leak: /proc/self/fd before and after, and the host's
  /proc/PID/fd once its games have ended and their lingering files are closed;
- memory does not grow without bound: both processes' RSS sampled over the run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from processes import HostProcess, fd_count, rss_mib, start_host, verify_all

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.multihost import FULL
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import NetError
from p2pgotg.selfplay import bot_runner
from p2pgotg.testing.faultproxy import CUT, DOWN, HALF_CLOSE, KINDS, STALL, UP, FaultProxy, Plan

# Short timeouts, so that a stall costs seconds; the same on both sides.
SOAK_LIMITS = Timeouts(handshake=3.0, keepalive=0.5, silence=3.0, audit=30.0, duty=30.0,
                     abandon=90.0, bye=2.0, grace=1.0, retry=(0.05, 0.5))


# -- the host process ---------------------------------------------------------------------

def serve(home: Path, max_games: int) -> int:
    """The host process: host_many with SOAK_LIMITS until SIGINT/SIGTERM; prints its
    invite first and its counts last (one JSON line)."""
    os.environ["P2PGOTG_HOME"] = str(home)
    from p2pgotg.net.play.hosting import HostConfig
    from p2pgotg.net.play.multihost import host_many
    from p2pgotg.net.play.saved_games import games_dir
    from p2pgotg.net.transport.admission import AdmissionLimits
    from p2pgotg.net.transport.paths import load_or_create_identity, load_or_create_tls_identity
    from p2pgotg.rules import RuleOptions

    cert, key = load_or_create_tls_identity()
    # (every joiner connects from 127.0.0.1, standing in for players at as many addresses)
    config = HostConfig(load_or_create_identity(), cert, key, RuleOptions(), games_dir(),
                        bind="127.0.0.1", limits=SOAK_LIMITS, resume=False,
                        admission=AdmissionLimits(games_per_source=max_games))
    out: list = []

    async def main() -> None:
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            async def run(task_status=trio.TASK_STATUS_IGNORED) -> None:
                out.append(await host_many(config, lambda n: bot_runner(n), max_games,
                                           stop=stop, task_status=task_status))
                nursery.cancel_scope.cancel()

            async def signals() -> None:
                with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as got:
                    async for _ in got:
                        stop.set()
                        return

            nursery.start_soon(signals)
            hosting = await nursery.start(run)
            print(f"invite: {hosting.invites[0]}", flush=True)

    trio.run(main)
    print("stats: " + json.dumps(out[0].__dict__ if out else {}), flush=True)
    return 0


def launch_host(base: Path, max_games: int) -> HostProcess:
    return start_host(base, [sys.executable, __file__, "--serve", str(base / "host"),
                             "--parallel", str(max_games)])


# -- faults ------------------------------------------------------------------------------

def soak_plans(p_fault: float, after: tuple[int, int] = (200, 30000)):
    """Each connection: a fault with probability `p_fault` (a cut, a stall or a
    half-close, in either direction, after a random byte count), and independently some
    delay and, now and then, dripping. A game always gets through eventually: every
    connection has a 1 - p_fault chance of being fault-free."""

    def plan(index: int, rng: random.Random) -> Plan:
        delay = rng.choice((0.0, 0.0, 0.002, 0.01))
        drip = rng.choice((0, 0, 0, 0, 64, 7))
        common: dict[str, Any] = {"delay": delay, "drip": drip, "stall_for": 6.0,
                                  "drip_interval": 0.0005 if drip else 0.0}
        if rng.random() >= p_fault:
            return Plan(**common)
        return Plan(fault=rng.choice(KINDS), after=rng.randint(*after),
                    direction=rng.choice((UP, DOWN)), **common)

    return plan


# -- the run ------------------------------------------------------------------------------

@dataclass
class Tally:
    started: int = 0
    clean: int = 0
    refused_full: int = 0  # joiners turned away at the door (the host was full)
    gave_up: Counter = field(default_factory=Counter)
    joiner_files: list[Path] = field(default_factory=list)
    rss: list[tuple[float, float, float]] = field(default_factory=list)  # (t, self, host)


async def joiners(invite: Invite, base: Path, games: int, parallel: int, seconds: float,
                  p_fault: float, seed: int, host_pid: int, tally: Tally
                  ) -> FaultProxy:
    proxy = FaultProxy("127.0.0.1", invite.port, soak_plans(p_fault), seed=seed)
    start = trio.current_time()
    end = start + seconds

    async def slot(i: int) -> None:
        while tally.started < games and trio.current_time() < end:
            tally.started += 1
            number = tally.started
            save = base / "joiners" / str(number)
            config = JoinConfig(Ed25519PrivateKey.generate(), routed, save, SOAK_LIMITS,
                                resume=False)
            try:
                with trio.move_on_at(end):
                    session: GameSession = await join_game(config, bot_runner(10_000 + number))
                    verdict = session.verdict
                    if verdict is not None and verdict.clean and verdict.audit_complete:
                        tally.clean += 1
                    else:
                        tally.gave_up["ended without a clean audit"] += 1
                    continue
                tally.gave_up["still playing when the time was up"] += 1
            except (SessionError, NetError) as exc:
                if FULL in str(exc):  # refused at the door: not a game; try again soon
                    tally.started -= 1
                    tally.refused_full += 1
                    await trio.sleep(0.5)
                else:
                    tally.gave_up[str(exc)[:80]] += 1
            finally:
                tally.joiner_files += sorted(save.rglob("*.gtr"))

    async def sample() -> None:
        while True:
            try:
                host_rss = rss_mib(host_pid)
            except OSError:
                host_rss = 0.0
            tally.rss.append((trio.current_time() - start, rss_mib(), host_rss))
            await trio.sleep(5)

    async with trio.open_nursery() as nursery:
        port = await nursery.start(proxy.serve)
        routed = Invite(invite.address, port, invite.pin, invite.secret)
        nursery.start_soon(sample)
        async with trio.open_nursery() as slots:
            for i in range(parallel):
                slots.start_soon(slot, i)
        nursery.cancel_scope.cancel()
    return proxy


async def _bounded(run, seconds: float, out: list) -> None:
    with trio.move_on_after(seconds) as scope:
        out.append(await run())
    if scope.cancelled_caught:
        print("hard deadline reached: the run was cut off", flush=True)


def soak(games: int, parallel: int, seconds: float, p_fault: float, seed: int, keep: bool
         ) -> dict:
    base = Path(tempfile.mkdtemp(prefix="p2pgotg-soak-"))
    gc.collect()
    fds_before = fd_count()
    rss_before = rss_mib()
    host = launch_host(base, parallel)
    time.sleep(0.5)
    host_fds_before = fd_count(host.proc.pid)
    tally = Tally()
    t0 = time.perf_counter()
    out: list = []
    try:
        trio.run(_bounded, lambda: joiners(host.invite, base, games, parallel, seconds,
                                           p_fault, seed, host.proc.pid, tally),
                 seconds + 90, out)
        wall = time.perf_counter() - t0
        # the host closes a finished game's file after it lingered (silence + handshake +
        # retry): wait for its descriptors to come back down, a bounded while
        linger = SOAK_LIMITS.silence + SOAK_LIMITS.handshake + SOAK_LIMITS.retry[1]
        waited = time.monotonic() + 2 * linger + 5
        host_fds_after = fd_count(host.proc.pid)
        while host_fds_after > host_fds_before and time.monotonic() < waited:
            time.sleep(0.5)
            host_fds_after = fd_count(host.proc.pid)
        host_rss_end = rss_mib(host.proc.pid)
    finally:
        code = host.stop()
    gc.collect()
    fds_after = fd_count()
    rss_after = rss_mib()
    proxy: FaultProxy | None = out[0] if out else None
    host_files = sorted((host.home / "data" / "games").glob("*.gtr"))
    stats_line = next((line for line in host.out.read_text().splitlines()
                       if line.startswith("stats: ")), "stats: {}")
    faults = Counter(c.faulted for c in proxy.connections if c.faulted) if proxy else {}
    rss = tally.rss
    result = {
        "games_started": tally.started, "games_clean": tally.clean,
        "games_left": dict(tally.gave_up), "wall_s": wall, "parallel": parallel,
        "refused_full": tally.refused_full,
        "connections": len(proxy.connections) if proxy else 0,
        "faults": {k: faults.get(k, 0) for k in (CUT, STALL, HALF_CLOSE)},
        "dripped": sum(1 for c in proxy.connections if c.plan.drip) if proxy else 0,
        "delayed": sum(1 for c in proxy.connections if c.plan.delay) if proxy else 0,
        "verify_host": dict(verify_all(host_files)),
        "verify_joiners": dict(verify_all(tally.joiner_files)),
        "fds": {"self_before": fds_before, "self_after": fds_after,
                "host_before": host_fds_before, "host_after": host_fds_after},
        "rss_mib": {"self_before": rss_before, "self_after": rss_after,
                    "self_max": max((r[1] for r in rss), default=0.0),
                    "host_first": rss[0][2] if rss else 0.0,
                    "host_max": max((r[2] for r in rss), default=0.0),
                    "host_end": host_rss_end,
                    "samples": [(round(t), round(a, 1), round(h, 1)) for t, a, h in rss]},
        "host_exit": code, "host_stats": json.loads(stats_line[len("stats: "):]),
    }
    if keep:
        result["dir"] = str(base)
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return result


def report(r: dict) -> None:
    bad = {k: v for d in (r["verify_host"], r["verify_joiners"]) for k, v in d.items()
           if k not in ("CLEAN", "UNFINISHED")}
    print(f"{r['games_started']} games ({r['parallel']} at a time) in {r['wall_s']:.0f} s: "
          f"{r['games_clean']} audited clean, left unfinished: {r['games_left'] or 'none'}; "
          f"{r['refused_full']} joiners told the host was full (and retried)")
    print(f"  {r['connections']} connections through the proxy: faults {r['faults']}, "
          f"{r['dripped']} dripped, {r['delayed']} delayed")
    print(f"  verify: host transcripts {r['verify_host']}, joiner transcripts "
          f"{r['verify_joiners']}; damaged or cheating: {bad or 'none'}")
    f, hs = r["fds"], r["host_stats"]
    open_games = hs.get("started", 0) + hs.get("resumed", 0) - hs.get("finished", 0) \
        - hs.get("dropped", 0)
    print(f"  file descriptors: this process {f['self_before']} -> {f['self_after']}, "
          f"host {f['host_before']} -> {f['host_after']} ({open_games} games still in "
          "progress there, each holding its transcript open until its joiner is back or "
          "abandons it)")
    m = r["rss_mib"]
    print(f"  RSS: this process {m['self_before']:.0f} -> {m['self_after']:.0f} MiB "
          f"(max {m['self_max']:.0f}), host {m['host_first']:.0f} -> {m['host_end']:.0f} MiB "
          f"(max {m['host_max']:.0f}); host exit {r['host_exit']}, host counts "
          f"{r['host_stats']}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games to start (default 30)")
    parser.add_argument("--parallel", type=int, default=6,
                        help="games at a time (default 6)")
    parser.add_argument("--time", type=float, default=240.0,
                        help="no new game after this many seconds; games still running "
                        "then are left unfinished (default 240)")
    parser.add_argument("--fault-rate", type=float, default=0.5,
                        help="share of connections that get a fault (default 0.5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--serve", metavar="HOME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(Path(args.serve), args.parallel)
    result = soak(args.games, args.parallel, args.time, args.fault_rate, args.seed, args.keep)
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
