"""Load: one host process holding many games at once. `python bench/load.py --games 50 100 200`

For each N: starts `p2pgotg host --bot --max-games N+10 --level L` (`--host-level`,
default normal) as a subprocess on 127.0.0.1 (any free port, P2PGOTG_HOME in a temporary
folder), reads its invite, and opens N concurrent joiner games. The host's bots think in
its bot worker process and answer at once. Each joiner is the bot (`--joiner-level`),
thinking a random 1.0-2.0 s before each move, several times faster than people play. The
joiners stand in for people on their own machines, so they are spread over `--procs`
processes (default 2, forked; one process would queue every joiner's work behind the
others'). Every process tunes its garbage collector for many games. A joiner whose game
ends during the run starts another, so N games are in flight throughout. After
`--duration` seconds of play every joiner resigns, the audits complete,
the host is stopped with SIGINT, and every transcript on both sides is replayed (`verify`).

Move latency: from just before a joiner performs its move until the host's answering move
has been received and applied by that joiner (the joiner's seat sees its turn again). The
host's bot answers at once, so this is the network, both state machines, both transcripts'
write-ahead fsyncs, the host bot's decision and both event loops' queueing.

Figures, never pass/fail. Every loop is bounded in count and time; a hard deadline kills
the host and ends the run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import multiprocessing
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from processes import (
    HostProcess,
    children_cpu_seconds,
    cpu_seconds,
    fd_count,
    rss_mib,
    start_host,
    verify_all,
)

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.multihost import tune_collector_for_many_games
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import NetError
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.players.levels import PLAYABLE, SEAT_DEFAULT, Level
from p2pgotg.protocol import LocalProtocolError, Phase


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, round(q / 100 * len(s) + 0.5) - 1))
    return s[k]


def launch_host(base: Path, max_games: int, level: str = SEAT_DEFAULT) -> HostProcess:
    """`p2pgotg host --bot --max-games N --level L` (it tunes its own garbage collector).
    Every joiner here connects from 127.0.0.1, standing in for players at as many
    addresses: the cap on games from one address is lifted to N."""
    return start_host(base, [sys.executable, "-m", "p2pgotg", "host", "--bot", "--max-games",
                             str(max_games), "--games-per-address", str(max_games), "--bind",
                             "127.0.0.1", "--port", "0", "--seed", "1", "--level", level])


# -- the joiners ------------------------------------------------------------------------------

@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    started: int = 0
    clean: int = 0
    unclean: int = 0
    failures: Counter = field(default_factory=Counter)
    joiner_files: list[Path] = field(default_factory=list)
    in_play: int = 0  # games in the play phase right now
    peak_in_play: int = 0
    lags: list[float] = field(default_factory=list)  # this event loop's lateness, sampled

    def merge(self, other: Tally) -> None:
        """Add another process's tally (peaks add up: an upper bound of the joint peak)."""
        self.latencies += other.latencies
        self.started += other.started
        self.clean += other.clean
        self.unclean += other.unclean
        self.failures += other.failures
        self.joiner_files += other.joiner_files
        self.peak_in_play += other.peak_in_play
        self.lags += other.lags


def load_seat(rng: random.Random, think: tuple[float, float], stop: trio.Event, tally: Tally,
              level: str):
    """The bot, thinking `think` seconds before each of its moves, timing the host's answer;
    once `stop` is set it resigns (in the play phase) and lets the audit run."""
    bot = BotSeat(rng, level)

    async def wait(session: GameSession, at_most: float = 1.0) -> None:
        with trio.move_on_after(at_most):
            await session.wait_changed()

    async def run(session: GameSession) -> None:
        peer = session.peer
        resigned = counted = False
        try:
            while not session.done:
                flow = peer.flow
                if flow.phase is Phase.PLAY and not counted:
                    counted = True
                    tally.in_play += 1
                    tally.peak_in_play = max(tally.peak_in_play, tally.in_play)
                if stop.is_set() and not resigned and flow.phase is Phase.PLAY \
                        and not flow.is_over:
                    resigned = True
                    with contextlib.suppress(LocalProtocolError):
                        session.perform(lambda p: p.resign())
                    continue
                if flow.is_over or (stop.is_set() and flow.phase is Phase.PLAY):
                    await wait(session)
                    continue
                if peer.my_turn and not stop.is_set():
                    with trio.move_on_after(rng.uniform(*think)):
                        await stop.wait()
                    if stop.is_set() or not peer.my_turn:
                        continue
                    action = bot.step(peer)
                    if action is None:
                        await wait(session)
                        continue
                    t0 = time.perf_counter()
                    try:
                        session.perform(action)
                    except LocalProtocolError as exc:
                        session.problem = f"could not act: {exc}"
                        await wait(session)
                        continue
                    if peer.my_turn or peer.flow.is_over:
                        continue  # (a declined draw: still our move) nothing to time
                    while not (peer.my_turn or peer.flow.is_over or session.done
                               or stop.is_set()):
                        await wait(session)
                    if peer.my_turn:
                        tally.latencies.append(time.perf_counter() - t0)
                    continue
                action = bot.step(peer)  # accepting the rules, committing a setup
                if action is not None:
                    try:
                        session.perform(action)
                        continue
                    except LocalProtocolError as exc:
                        session.problem = f"could not act: {exc}"
                await wait(session)
        finally:
            if counted:
                tally.in_play -= 1

    return run


async def joiners(invite: Invite, n: int, slots: range, base: Path, think: tuple[float, float],
                  ramp: float, duration: float, drain: float, tally: Tally,
                  joiner_level: str, profile: tuple[Path, int] | None = None) -> None:
    """The joiners numbered `slots` (of `n` in all), in this process's trio loop."""
    stop = trio.Event()
    limits = Timeouts()
    start = trio.current_time()
    play_end = start + ramp + duration

    async def slot(i: int) -> None:
        await trio.sleep(ramp * i / n)
        rng = random.Random(i)
        games = 0
        while trio.current_time() < play_end and not stop.is_set():
            games += 1
            tally.started += 1
            config = JoinConfig(Ed25519PrivateKey.generate(), invite,
                                base / "joiners" / f"{i}-{games}", limits, resume=False)
            try:
                session = await join_game(config, load_seat(rng, think, stop, tally,
                                                               joiner_level))
            except (SessionError, NetError) as exc:
                tally.failures[str(exc)[:100]] += 1
                await trio.sleep(1.0)  # (a refusal: do not hammer the host)
                continue
            if session.path is not None:
                tally.joiner_files.append(session.path)
            verdict = session.verdict
            if verdict is not None and verdict.clean and verdict.audit_complete:
                tally.clean += 1
            else:
                tally.unclean += 1
                what = str(session.peer.failed) if session.peer.failed else (
                    verdict.describe() if verdict else "no verdict")
                tally.failures[f"unclean: {what[:100]}"] += 1

    async def stopper() -> None:
        await trio.sleep_until(play_end)
        stop.set()

    async def lag_monitor() -> None:
        """How late this process's event loop wakes a 10 ms sleep, over the play."""
        while not stop.is_set():
            t = time.perf_counter()
            await trio.sleep(0.01)
            if trio.current_time() > start + ramp:
                tally.lags.append(time.perf_counter() - t - 0.01)

    with trio.move_on_at(play_end + drain) as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stopper)
            nursery.start_soon(lag_monitor)
            if profile is not None:
                nursery.start_soon(profiler, profile[0], profile[1],
                                   start + ramp + min(10.0, duration / 4),
                                   min(30.0, duration / 2))
            for i in slots:
                nursery.start_soon(slot, i)
    if scope.cancelled_caught:
        tally.failures["still running at the drain deadline"] += 1


# -- profiling ------------------------------------------------------------------------------

async def profiler(folder: Path, host_pid: int, at: float, seconds: float) -> None:
    """py-spy on both processes for `seconds`, from `at` (trio time): collapsed stacks."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        print("  (py-spy is not installed: no profile)", flush=True)
        return
    await trio.sleep_until(at)
    procs = []
    for name, pid in (("host", host_pid), ("joiners", os.getpid())):
        cmd = [str(spy), "record", "--format", "raw", "--rate", "200", "--duration",
               str(int(seconds)), "--nonblocking", "--pid", str(pid), "--output",
               str(folder / f"{name}.txt")]
        # (Popen returns at once; the loop below waits without blocking the event loop)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    with trio.move_on_after(seconds + 30):
        while any(p.poll() is None for p in procs):
            await trio.sleep(0.5)
    for p in procs:
        if p.poll() is None:
            p.kill()


def summarize_profile(path: Path, top: int = 15) -> list[str]:
    """From py-spy's collapsed stacks: the share of samples in each function (inclusive)
    and where the samples end (self), p2pgotg's functions and the leaves."""
    if not path.exists():
        return [f"(no profile at {path})"]
    inclusive: Counter = Counter()
    leaf: Counter = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[_short(frame)] += n
        leaf[_short(frames[-1])] += n
    lines = [f"{total} samples"]
    lines += ["  self  " + ", ".join(f"{name} {100 * c / total:.0f}%"
                                     for name, c in leaf.most_common(top))]
    ours = [(name, c) for name, c in inclusive.most_common()
            if "p2pgotg" in name or "bench" in name][:top]
    lines += ["  incl. " + ", ".join(f"{name} {100 * c / total:.0f}%" for name, c in ours)]
    return lines


def _short(frame: str) -> str:
    """`function (path/to/file.py:12)` -> `file.function`."""
    name, _, where = frame.partition(" (")
    module = where.split(":")[0].rsplit("/", 1)[-1].removesuffix(".py")
    if "p2pgotg" in where:
        module = "p2pgotg." + module
    return f"{module}.{name}"


# -- one run --------------------------------------------------------------------------------

def joiner_share(invite: Invite, n: int, slots: range, base: Path, think: tuple[float, float],
                 ramp: float, duration: float, drain: float, joiner_level: str,
                 spy: tuple[Path, int] | None, default_gc: bool, deadline: float
                 ) -> tuple[Tally, list[tuple[int, float]], list[float], float]:
    """Run the joiners `slots` in this process until the play and drain are over (or the
    hard `deadline`, monotonic): their tally, this process's garbage-collection pauses
    (generation, seconds), its transcript flushes (seconds) and its CPU seconds."""
    if not default_gc:  # this process holds many games too, like the host
        tune_collector_for_many_games()
    gc_pauses: list[tuple[int, float]] = []
    gc_clock = [0.0]

    def gc_timer(phase: str, info: dict) -> None:
        if phase == "start":
            gc_clock[0] = time.perf_counter()
        else:
            gc_pauses.append((info["generation"], time.perf_counter() - gc_clock[0]))

    gc.callbacks.append(gc_timer)
    writes: list[float] = []  # the transcript flushes (each an fsync, on a worker thread)
    fsync = TranscriptFile._fsync

    def timed_fsync(self: TranscriptFile) -> None:
        t = time.perf_counter()
        fsync(self)
        writes.append(time.perf_counter() - t)

    TranscriptFile._fsync = timed_fsync  # type: ignore[method-assign]
    tally = Tally()
    cpu0 = cpu_seconds()
    try:
        trio.run(_bounded, lambda: joiners(invite, n, slots, base, think, ramp, duration,
                                           drain, tally, joiner_level, spy), deadline)
    finally:
        gc.callbacks.remove(gc_timer)
        TranscriptFile._fsync = fsync  # type: ignore[method-assign]
    return tally, gc_pauses, writes, cpu_seconds() - cpu0


def run_load(n: int, duration: float, think: tuple[float, float], ramp: float, drain: float,
             hard: float, keep: bool, profile: Path | None = None, tmp: str | None = None,
             default_gc: bool = False, joiner_level: str = SEAT_DEFAULT, procs: int = 1,
             host_level: str = SEAT_DEFAULT) -> dict:
    base = Path(tempfile.mkdtemp(prefix=f"p2pgotg-load-{n}-", dir=tmp))
    host = launch_host(base, n + 10, host_level)
    killer_deadline = time.monotonic() + hard
    t0, cpu_host0 = time.perf_counter(), cpu_seconds(host.proc.pid)
    cpu_worker0 = children_cpu_seconds(host.proc.pid)
    spy = None
    if profile is not None:
        spy = (profile / f"n{n}", host.proc.pid)
        spy[0].mkdir(parents=True, exist_ok=True)
    shares = [(host.invite, n, range(k, n, procs), base, think, ramp, duration, drain,
               joiner_level, spy if k == 0 else None, default_gc, killer_deadline)
              for k in range(procs)]
    try:
        if procs == 1:
            parts = [joiner_share(*shares[0])]
        else:
            with multiprocessing.get_context("fork").Pool(procs) as pool:
                parts = pool.starmap(joiner_share, shares)
    finally:
        t1 = time.perf_counter()
        cpu_host1 = cpu_seconds(host.proc.pid) if host.proc.poll() is None else cpu_host0
        cpu_worker1 = children_cpu_seconds(host.proc.pid)
        host_rss = rss_mib(host.proc.pid) if host.proc.poll() is None else 0.0
        host_fds = fd_count(host.proc.pid) if host.proc.poll() is None else 0
        code = host.stop()
    tally, gc_pauses, writes, cpu_joiners = Tally(), [], [], 0.0
    for part, pauses, flushes, cpu in parts:
        tally.merge(part)
        gc_pauses += pauses
        writes += flushes
        cpu_joiners += cpu
    wall = t1 - t0
    host_files = sorted((host.home / "data" / "games").glob("*.gtr"))
    tv = time.perf_counter()
    host_found = verify_all(host_files)
    joiner_found = verify_all(tally.joiner_files)
    verify_s = time.perf_counter() - tv
    lat = tally.latencies
    done_line = next((line for line in host.out.read_text().splitlines()
                      if line.startswith("done:")), "(no summary: the host was killed)")
    result = {
        "tmp": str(base.parent),
        "n": n, "duration_s": duration, "think_s": list(think), "ramp_s": ramp,
        "joiner_level": joiner_level, "host_level": host_level,
        "wall_s": wall,
        "games_started": tally.started, "games_clean": tally.clean,
        "games_unclean": tally.unclean, "failures": dict(tally.failures),
        "peak_in_play": tally.peak_in_play,
        "moves_timed": len(lat),
        "latency_ms": {q: percentile(lat, p) * 1e3 for q, p in
                       (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))} if lat else {},
        "joiner_processes": procs,
        "cpu_s": {"host": cpu_host1 - cpu_host0, "host_bot_worker": cpu_worker1 - cpu_worker0,
                  "joiners": cpu_joiners},
        "cpu_pct_of_one_core": {"host": 100 * (cpu_host1 - cpu_host0) / wall,
                                "host_bot_worker": 100 * (cpu_worker1 - cpu_worker0) / wall,
                                "joiners": 100 * cpu_joiners / wall},
        "host_rss_mib_at_end": host_rss, "host_fds_at_end": host_fds,
        "host_exit": code, "host_summary": done_line,
        "verify_host": dict(host_found), "verify_joiners": dict(joiner_found),
        "verify_s": verify_s,
        "joiner_gc_tuned": not default_gc,
        "joiner_gc": {f"gen{g}": {"count": sum(1 for x, _ in gc_pauses if x == g),
                                  "max_ms": max((d for x, d in gc_pauses if x == g),
                                                default=0.0) * 1e3}
                      for g in (0, 1, 2)},
        "joiner_fsync_ms": {q: percentile(writes, p) * 1e3 for q, p in
                            (("p50", 50), ("p99", 99), ("max", 100))} if writes else {},
        "joiner_fsyncs": len(writes),
        "joiner_loop_lag_ms": {q: percentile(tally.lags, p) * 1e3 for q, p in
                               (("p50", 50), ("p99", 99), ("max", 100))} if tally.lags else {},
    }
    if profile is not None:
        result["profile"] = {name: summarize_profile(profile / f"n{n}" / f"{name}.txt")
                             for name in ("host", "joiners")}
    if not keep:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    else:
        result["dir"] = str(base)
    return result


async def _bounded(run, deadline: float) -> None:
    """Run `run()` until it ends or the hard deadline (monotonic) passes."""
    with trio.move_on_after(max(0.0, deadline - time.monotonic())) as scope:
        await run()
    if scope.cancelled_caught:
        print("  hard deadline reached: the joiners were cut off", flush=True)


def report(r: dict) -> None:
    lat = r["latency_ms"]
    print(f"N={r['n']} (host level {r['host_level']}, joiners {r['joiner_level']}): "
          f"{r['games_started']} games started, {r['games_clean']} audited clean, "
          f"{r['games_unclean']} unclean, peak {r['peak_in_play']} in play at once, "
          f"{sum(r['failures'].values())} failures {r['failures'] or ''}")
    if lat:
        print(f"  move latency over {r['moves_timed']} moves: p50 {lat['p50']:.1f} ms, "
              f"p90 {lat['p90']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms")
    print(f"  CPU over {r['wall_s']:.0f} s: host {r['cpu_s']['host']:.1f} s "
          f"({r['cpu_pct_of_one_core']['host']:.0f}% of a core) and its bot worker "
          f"{r['cpu_s']['host_bot_worker']:.1f} s "
          f"({r['cpu_pct_of_one_core']['host_bot_worker']:.0f}%), joiners "
          f"{r['cpu_s']['joiners']:.1f} s ({r['cpu_pct_of_one_core']['joiners']:.0f}%); "
          f"host RSS {r['host_rss_mib_at_end']:.0f} MiB, {r['host_fds_at_end']} fds at the end")
    print(f"  verify: host transcripts {r['verify_host']}, joiner transcripts "
          f"{r['verify_joiners']} ({r['verify_s']:.1f} s); host exit {r['host_exit']}: "
          f"{r['host_summary']}")
    if r["joiner_loop_lag_ms"]:
        g = r["joiner_loop_lag_ms"]
        c = r["joiner_gc"]
        print(f"  joiners' event-loop lag: p50 {g['p50']:.1f} ms, p99 {g['p99']:.1f} ms, "
              f"max {g['max']:.1f} ms; its garbage collections: " + ", ".join(
                  f"{k} x{v['count']} (longest {v['max_ms']:.0f} ms)" for k, v in c.items())
              + ("" if r["joiner_gc_tuned"] else " (Python's default thresholds)"))
    if r["joiner_fsync_ms"]:
        w = r["joiner_fsync_ms"]
        print(f"  joiner transcript fsyncs (on worker threads, {r['joiner_fsyncs']} of them): "
              f"p50 {w['p50']:.2f} ms, p99 {w['p99']:.2f} ms, max {w['max']:.1f} ms")
    for name, lines in r.get("profile", {}).items():
        print(f"  profile of the {name} process (py-spy): " + "\n    ".join(lines))
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="+", default=[50, 100, 200],
                        help="concurrent games, one run per value (default: 50 100 200)")
    parser.add_argument("--duration", type=float, default=90.0,
                        help="seconds of play after the ramp (default: 90)")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 2.0),
                        metavar=("MIN", "MAX"), help="joiner think time (default: 1.0 2.0)")
    parser.add_argument("--ramp", type=float, default=10.0,
                        help="the joiners start spread over this many seconds (default: 10)")
    parser.add_argument("--drain", type=float, default=60.0,
                        help="after the play, seconds allowed for resignations and audits")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--tmp", metavar="DIR", default=None,
                        help="make the temporary folders (transcripts) under DIR, e.g. "
                        "/dev/shm to take the disk's fsync out of the figures")
    parser.add_argument("--joiner-level", choices=[level.value for level in Level],
                        default=SEAT_DEFAULT,
                        help=f"the joiners' bot (default {SEAT_DEFAULT}; random: a lighter load "
                        "generator, shorter games)")
    parser.add_argument("--host-level", choices=PLAYABLE, default=SEAT_DEFAULT,
                        help=f"the host's bots (`host --level`, default {SEAT_DEFAULT})")
    parser.add_argument("--procs", type=int, default=2, metavar="P",
                        help="spread the joiners over P processes (default 2): they stand in "
                        "for people on their own machines, and one process queues every "
                        "joiner's work behind the others'")
    parser.add_argument("--default-gc", action="store_true",
                        help="leave this process's garbage collector at Python's defaults "
                        "(by default it is tuned as the many-game host tunes its own)")
    parser.add_argument("--profile", metavar="DIR",
                        help="run py-spy on both processes during the play; stacks in DIR")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; think {args.think[0]}-{args.think[1]} s, "
          f"{args.duration:.0f} s of play after a {args.ramp:.0f} s ramp", flush=True)
    results = []
    for n in args.games:
        hard_deadline = args.ramp + args.duration + args.drain + 60
        results.append(run_load(n, args.duration, tuple(args.think), args.ramp, args.drain,
                                hard_deadline, args.keep,
                                Path(args.profile) if args.profile else None, args.tmp,
                                args.default_gc, args.joiner_level, args.procs,
                                args.host_level))
        report(results[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
