"""Abuse: real games on a many-game host while a bounded flood hits it.
`python bench/abuse.py --games 100 --connections 10000 --seconds 60`

A host is reachable by anyone who can reach its port, before any secret is checked
(SPEC 3.4, issue 13). This runs `p2pgotg host --bot --max-games G+EXTRA` as a
subprocess on 127.0.0.1 with the open-files limit an operator's shell would give it
(`--host-nofile`, default 1024), plays G real games against it with bot joiners exactly as
bench/load.py does (thinking 1-2 s a move, a joiner whose game ends starts another, spread
over `--joiner-procs` processes), and after a `--ramp` floods it for `--seconds` with
`--connections` connections, started at an even rate from `--procs` processes and from
`--sources` loopback addresses (127.0.2.x: many sources, so that a per-address bound does
not make the flood look easier than it is). The flood's kinds (`--mix`, weights):

- half_open: a TCP connect that sends nothing;
- tls_no_hi: the TLS handshake, then nothing;
- wrong_secret: TLS and a `hi` with a random join secret;
- keepalive: TLS and a `hi` with the right secret (a new game), then only keepalives;
- oversized: TLS and a frame announcing 2 GiB, then junk; before `hi` for half of them,
  after a valid `hi` for the others;
- chat: an admitted joiner (a real game, the invite's secret) that sends `--chats` signed
  280-character chat messages as fast as its session takes them, then resigns. Its
  program ignores SPEC 2.10's chat limit (p2pgotg's own never signs a chat over it; an
  attacker's does), so the host is what has to stop it.
- stall: an admitted joiner that accepts the rules, commits its setup and never moves,
  staying connected (issue 23, finding 5), from the flood's addresses: the host's limit
  per owed action (`--action-limit`, passed to the host) is what frees its slot, by the
  host's claim.

Each flood connection is held at most `--hold` seconds (longer than every limit the host
should enforce: its TLS handshake, its `hi` deadline, its silence limit), a keepalive one
`--keepalive-hold` (longer than a pre-game limit of two minutes), and ends
`refused` (an `error` frame, or the connect refused), `cut` (closed with no reason), `timed
out` (still open at our cap: the host never let go) or `connect failed`. The play goes
on `--hold` seconds after the last flood connection starts, so that the host is measured
once every flood connection is gone; then every joiner resigns, the audits complete, the
host gets SIGINT, and every transcript on both sides is replayed (`verify`).

Each round runs the same thing twice, with and without the flood (alternating which goes
first), and compares them. Measured and checked against issue 13's requirements:

- every real game finishes audited clean, on both sides (and, beyond the issue's four, no
  real joiner is turned away: the flood's invite holders may fill the spare slots);
- the real games' p99 move latency (bench/load.py's measure: a joiner's move until the
  host's answer is applied on its side, moves started while the flood runs) is at most
  2x the same window of the run without the flood;
- the host's RSS (sampled from /proc every half second) grows less than 30 MiB from the
  start of the flood to its highest point before the joiners resign, beyond what it grows
  over the same stretch of the calm run (the real games grow it too, flood or not; with
  `--no-calm`, the whole growth is checked);
- no crash: the host is alive until it is stopped, exits 0 and wrote no traceback.

Host file descriptors are sampled too. Figures and checks are printed (and `--json`
writes them); the exit status is 0 whatever they are: a bench reports, CI does not gate on
it. Every loop is bounded in count and time; a hard deadline kills the host.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import multiprocessing
import os
import platform
import random
import resource
import secrets
import ssl
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from load import Tally, joiners, percentile
from processes import (
    HostProcess,
    cpu_seconds,
    fd_count,
    rss_mib,
    start_host,
    tracebacks,
    verify_all,
)

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.multihost import tune_collector_for_many_games
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import ConnectFailedError, NetError
from p2pgotg.net.transport.framing import HEADER, KEEPALIVE, FrameDecoder, encode_frame
from p2pgotg.net.transport.tls import client_context
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.players.levels import SEAT_DEFAULT
from p2pgotg.protocol import HOST, LocalProtocolError, Phase, control

KINDS = ("half_open", "tls_no_hi", "wrong_secret", "keepalive", "oversized", "chat", "stall")
DEFAULT_MIX = ("half_open=25,tls_no_hi=20,wrong_secret=25,keepalive=15,oversized=14.5,chat=0.5,"
               "stall=0.2")
CLAIMED = "claimed by the host"  # a stalling joiner's game ended by the host's claim
REFUSED, CUT, TIMED_OUT, CONNECT_FAILED = "refused", "cut", "timed out", "connect failed"
CHAT_TEXT = ("abuse " * 50)[:280]  # the longest chat SPEC 2.4 allows
KEEPALIVE_EVERY = 4.0  # the flood's keepalive connections, under the 5 s SPEC 3.2 asks for

# bench/load.py's failures that are not a refused join but games still running at the end
UNFINISHED = ("still running at the drain deadline", "cut off at the hard deadline")

# The requirements of issue 13, as the summary checks them.
MAX_P99_RATIO = 2.0
MAX_RSS_GROWTH_MIB = 30.0


# -- the flood -----------------------------------------------------------------------------

def flood_plan(connections: int, mix: dict[str, float], seed: int) -> list[str]:
    """The kinds of the flood's connections in the order they start: counts in proportion
    to `mix` (largest remainders; every kind with a weight gets at least one when there
    are enough connections), shuffled so that every kind is spread over the whole flood."""
    kinds = [k for k in KINDS if mix.get(k, 0) > 0]
    total = sum(mix[k] for k in kinds)
    exact = {k: connections * mix[k] / total for k in kinds}
    counts = {k: int(exact[k]) for k in kinds}
    if connections >= len(kinds):
        for k in kinds:
            counts[k] = max(1, counts[k])
    for k in sorted(kinds, key=lambda k: exact[k] - int(exact[k]), reverse=True):
        if sum(counts.values()) >= connections:
            break
        counts[k] += 1
    while sum(counts.values()) > connections:  # (the minimum of one pushed it over)
        counts[max(counts, key=lambda k: counts[k])] -= 1
    plan = [k for k in kinds for _ in range(counts[k])]
    random.Random(seed).shuffle(plan)
    return plan


@dataclass
class FloodTally:
    """What one flood process saw, by kind."""

    outcomes: dict[str, Counter] = field(default_factory=dict)
    held: dict[str, list[float]] = field(default_factory=dict)  # "kind/outcome": seconds
    reasons: dict[str, Counter] = field(default_factory=dict)  # the host's error reasons
    admitted: Counter = field(default_factory=Counter)  # got `ok` (the host took a game)
    chats_sent: int = 0
    late: list[float] = field(default_factory=list)  # how late each connection started
    open_now: int = 0
    peak_open: int = 0
    chat_files: list[Path] = field(default_factory=list)
    stall_files: list[Path] = field(default_factory=list)
    cpu_s: float = 0.0  # the flood process's own CPU

    def record(self, kind: str, outcome: str, held: float, reason: str | None = None) -> None:
        self.outcomes.setdefault(kind, Counter())[outcome] += 1
        self.held.setdefault(f"{kind}/{outcome}", []).append(held)
        if reason is not None:
            self.reasons.setdefault(kind, Counter())[reason[:110]] += 1

    def merge(self, other: FloodTally) -> None:
        for kind, c in other.outcomes.items():
            self.outcomes.setdefault(kind, Counter()).update(c)
        for key, xs in other.held.items():
            self.held.setdefault(key, []).extend(xs)
        for kind, c in other.reasons.items():
            self.reasons.setdefault(kind, Counter()).update(c)
        self.admitted += other.admitted
        self.chats_sent += other.chats_sent
        self.late += other.late
        self.peak_open += other.peak_open  # (an upper bound of the joint peak)
        self.chat_files += other.chat_files
        self.stall_files += other.stall_files
        self.cpu_s += other.cpu_s


class Refused(Exception):
    """The host sent an `error` frame: it refused, and said why."""


async def _tcp(address: str, port: int, source: str) -> trio.SocketStream:
    """A TCP connection from `source` (a loopback address of its own), cheaply: no
    happy eyeballs, no name lookup."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    try:
        await sock.bind((source, 0))
        await sock.connect((address, port))
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


_CONTEXT: list[ssl.SSLContext] = []


def _client_context() -> ssl.SSLContext:
    """One client TLS context for the whole process (making one per connection costs)."""
    if not _CONTEXT:
        _CONTEXT.append(client_context())
    return _CONTEXT[0]


def _hi(secret: bytes) -> bytes:
    """A joiner's `hi` for a new game (SPEC 3.4), framed."""
    return encode_frame(control.encode(control.Hi(secret, None, 0, None)))


@dataclass
class _Conn:
    """How far one flood connection got."""

    stage: str = "connect"  # connect, TLS, open
    admitted: bool = False  # the host answered `ok`: it took a game for us


async def _read_until_closed(stream: trio.abc.Stream, conn: _Conn) -> None:
    """Read frames until the host closes the connection (returns) or refuses it
    (raises Refused)."""
    decoder = FrameDecoder()
    while True:
        data = await stream.receive_some(65536)
        if not data:
            return
        for frame in decoder.feed(data):
            try:
                ctl = control.decode(frame) if frame else None
            except control.ControlError:
                continue
            if isinstance(ctl, control.Refusal):
                raise Refused(ctl.reason)
            if isinstance(ctl, control.Ok):
                conn.admitted = True


async def _keep_alive(stream: trio.abc.Stream) -> None:
    while True:
        await stream.send_all(KEEPALIVE)
        await trio.sleep(KEEPALIVE_EVERY)


async def _abuse(kind: str, index: int, invite: Invite, source: str, conn: _Conn) -> None:
    """One flood connection of `kind`; returns when the host closed it."""
    tcp = await _tcp(invite.address, invite.port, source)
    if kind == "half_open":
        conn.stage = "open"
        async with tcp:
            await _read_until_closed(tcp, conn)
        return
    conn.stage = "TLS"
    stream = trio.SSLStream(tcp, _client_context(), https_compatible=False)
    async with stream:
        await stream.do_handshake()
        conn.stage = "open"
        if kind == "wrong_secret":
            await stream.send_all(_hi(secrets.token_bytes(16)))
        elif kind == "keepalive":
            await stream.send_all(_hi(invite.secret))
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_keep_alive, stream)
                    await _read_until_closed(stream, conn)
                    nursery.cancel_scope.cancel()
            except BaseExceptionGroup as group:  # (how it ended: the first one)
                raise _leaf(group) from None
            return
        elif kind == "oversized":
            if index % 2:
                await stream.send_all(_hi(invite.secret))
            await stream.send_all(HEADER.pack(0x7FFFFFFF) + bytes(16384))
        await _read_until_closed(stream, conn)


def _leaf(error: BaseException) -> BaseException:
    """The first exception inside nested exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _one(kind: str, index: int, invite: Invite, source: str, hold: float,
               tally: FloodTally) -> None:
    """Run one flood connection, at most `hold` seconds, and record how it ended."""
    t0 = trio.current_time()
    conn = _Conn()
    outcome, reason = CUT, None
    tally.open_now += 1
    tally.peak_open = max(tally.peak_open, tally.open_now)
    try:
        with trio.move_on_after(hold) as scope:
            await _abuse(kind, index, invite, source, conn)
        if scope.cancelled_caught:
            outcome = TIMED_OUT
    except Refused as exc:
        outcome, reason = REFUSED, ascii(str(exc))
    except ConnectionRefusedError:
        outcome, reason = REFUSED, "the TCP connect was refused"
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
        outcome = CUT
    except OSError as exc:
        outcome = f"{CONNECT_FAILED}: {errno.errorcode.get(exc.errno or 0, str(exc))}"
    except Exception as exc:  # noqa: BLE001  (a surprise is a figure, not the bench's end)
        outcome, reason = "client error", ascii(f"{type(exc).__name__}: {exc}")
    finally:
        tally.open_now -= 1
    if outcome in (CUT, TIMED_OUT) and conn.stage != "open":
        outcome += f" in {conn.stage}"
    if conn.admitted:
        tally.admitted[kind] += 1
    tally.record(kind, outcome, trio.current_time() - t0, reason)


def chat_seat(rng: random.Random, chats: int, tally: FloodTally, level: str,
              sent_here: list[int]):
    """A joiner that floods chat: once both hellos are out it sends `chats` chat messages
    as fast as its session takes them (yielding every 20), plays its setup as the bot, and
    resigns as soon as the play begins. `sent_here[0]` counts its chats."""
    bot = BotSeat(rng, level)

    async def run(session: GameSession) -> None:
        peer = session.peer
        sent = 0
        resigned = False
        while not session.done:
            flow = peer.flow
            if flow.game_id is not None and sent < chats:
                for _ in range(min(20, chats - sent)):
                    try:
                        session.perform(lambda p: p.chat(CHAT_TEXT))
                    except LocalProtocolError:
                        sent = chats  # (the game is over: nothing more to say)
                        break
                    sent += 1
                    sent_here[0] += 1
                    tally.chats_sent += 1
                await trio.sleep(0)
                continue
            if flow.phase is Phase.PLAY and not flow.is_over and not resigned:
                resigned = True
                with contextlib.suppress(LocalProtocolError):
                    session.perform(lambda p: p.resign())
                continue
            action = None if flow.phase is Phase.PLAY else bot.step(peer)
            if action is not None:
                with contextlib.suppress(LocalProtocolError):
                    session.perform(action)
                    continue
            with trio.move_on_after(1.0):
                await session.wait_changed()

    return run


def ignore_own_chat_limit() -> None:
    """Make this process's joiners hostile: p2pgotg's Peer refuses to sign an 11th chat line
    in a row (SPEC 2.10), an attacker's program does not. Only the flood's own processes do
    this (the real joiners run in others); a p2pgotg without the limit has nothing to
    undo."""
    import p2pgotg.protocol.flow as flow_module
    import p2pgotg.protocol.peer as peer_module

    if hasattr(peer_module, "CHATS_IN_A_ROW"):
        peer_module.CHATS_IN_A_ROW = sys.maxsize  # type: ignore[attr-defined]
    judge = getattr(flow_module, "over_limit", None)
    if judge is not None:
        def lenient(type_: str, seq: int, chats_in_a_row: int, *rest: Any) -> Any:
            return judge(type_, seq, 0 if type_ == "chat" else chats_in_a_row, *rest)

        flow_module.over_limit = lenient  # type: ignore[attr-defined]


async def _chat_flood(index: int, invite: Invite, base: Path, chats: int, hold: float,
                      level: str, tally: FloodTally) -> None:
    """One chat-flooding joiner: a whole game, at most `hold` + 60 s. Until it has begun
    its flood it tries again as any joiner does; after that it stops at the first
    connection it loses (it has no game worth coming back to): `cut`, with the words it
    was given."""
    t0 = trio.current_time()
    folder = base / "chat" / str(index)
    config = JoinConfig(Ed25519PrivateKey.generate(), invite, folder, Timeouts(), resume=False,
                        give_up=hold)
    outcome, reason = TIMED_OUT, None
    said: list[str] = []
    sent = [0]

    async def play(cancel_scope: trio.CancelScope) -> None:
        nonlocal outcome, reason
        try:
            session = await join_game(config, chat_seat(random.Random(index), chats, tally,
                                                        level, sent), on_status=said.append)
        except (SessionError, NetError) as exc:
            outcome, reason = REFUSED, ascii(str(exc))
        except Exception as exc:  # noqa: BLE001  (a surprise is a figure, not the bench's end)
            outcome, reason = "client error", ascii(f"{type(exc).__name__}: {exc}")
        else:
            verdict = session.verdict
            outcome = "finished clean" if verdict is not None and verdict.clean else "ended"
            if outcome == "ended":
                reason = ascii(verdict.describe() if verdict else str(session.peer.failed))
        cancel_scope.cancel()

    async def watch(cancel_scope: trio.CancelScope) -> None:
        nonlocal outcome, reason
        seen = 0
        while True:
            if not sent[0]:
                seen = len(said)  # (not flooding yet: a lost connection is tried again)
            lost = [line for line in said[seen:] if line != "connected to the host"]
            if lost:
                outcome, reason = CUT, ascii(lost[0])
                cancel_scope.cancel()
                return
            await trio.sleep(0.1)

    with trio.move_on_after(hold + 60.0):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, nursery.cancel_scope)
            nursery.start_soon(watch, nursery.cancel_scope)
    tally.chat_files += sorted(folder.glob("*.gtr"))
    tally.record("chat", outcome, trio.current_time() - t0, reason)


def stall_seat(rng: random.Random, level: str):
    """A joiner that plays its setup as the bot, then never moves (its automatic answers
    still go out, as its program sends them without asking)."""
    bot = BotSeat(rng, level)

    async def run(session: GameSession) -> None:
        await drive(session, lambda peer: None if peer.phase is Phase.PLAY else bot.step(peer))

    return run


async def _stall_flood(index: int, invite: Invite, source: str, base: Path, hold: float,
                       level: str, tally: FloodTally) -> None:
    """One stalling joiner, from the flood's `source` (the host cools a source down after
    such a game: the real joiners' address must not be it): a game it never moves in,
    connected all along, until the host ends it (`claimed by the host`: the claim its limit
    per owed action makes) or `hold` seconds pass (`timed out`: it kept the slot)."""
    t0 = trio.current_time()
    folder = base / "stall" / str(index)

    async def from_source() -> trio.SSLStream:
        try:
            stream = trio.SSLStream(await _tcp(invite.address, invite.port, source),
                                    _client_context(), https_compatible=False)
            await stream.do_handshake()
        except (trio.BrokenResourceError, OSError) as exc:  # (the host cut it: try again)
            raise ConnectFailedError(f"from {source}: {exc}") from exc
        return stream

    config = JoinConfig(Ed25519PrivateKey.generate(), invite, folder, Timeouts(), resume=False,
                        give_up=hold, opener=from_source)
    outcome, reason = TIMED_OUT, None
    with trio.move_on_after(hold):
        try:
            session = await join_game(config, stall_seat(random.Random(index), level))
        except (SessionError, NetError) as exc:
            outcome, reason = REFUSED, ascii(str(exc))
        else:
            verdict = session.verdict
            claimed = verdict is not None and verdict.claimants == (HOST,)
            outcome = CLAIMED if claimed else "ended"
            reason = ascii(verdict.describe() if verdict else str(session.peer.failed))
    tally.stall_files += sorted(folder.glob("*.gtr"))
    tally.record("stall", outcome, trio.current_time() - t0, reason)


async def flood(plan: list[tuple[int, str]], invite: Invite, start: float, seconds: float,
                total: int, sources: list[str], holds: dict[str, float], chats: int, base: Path,
                level: str, tally: FloodTally) -> None:
    """Start this process's share of the flood, connection i at `start` (wall clock) +
    i * `seconds` / `total`, and wait for every one to end."""
    offset = trio.current_time() - time.time()
    async with trio.open_nursery() as nursery:
        for i, kind in plan:
            due = offset + start + i * seconds / total
            await trio.sleep_until(due)
            tally.late.append(trio.current_time() - due)
            if kind == "chat":
                nursery.start_soon(_chat_flood, i, invite, base, chats, holds[kind], level,
                                   tally)
            elif kind == "stall":
                nursery.start_soon(_stall_flood, i, invite, sources[i % len(sources)], base,
                                   holds[kind], level, tally)
            else:
                nursery.start_soon(_one, kind, i, invite, sources[i % len(sources)],
                                   holds[kind], tally)


def flood_share(plan: list[tuple[int, str]], invite: Invite, start: float, seconds: float,
                total: int, sources: list[str], holds: dict[str, float], chats: int,
                base: Path, level: str, deadline: float) -> FloodTally:
    """A flood process: its share of the connections, until they end or the hard
    `deadline` (wall clock)."""
    ignore_own_chat_limit()
    tally = FloodTally()
    cpu0 = cpu_seconds()

    async def bounded() -> None:
        with trio.move_on_after(max(0.0, deadline - time.time())):
            await flood(plan, invite, start, seconds, total, sources, holds, chats, base,
                        level, tally)

    trio.run(bounded)
    tally.cpu_s = cpu_seconds() - cpu0
    return tally


# -- the real games -------------------------------------------------------------------------

class WindowedLatencies(list):
    """bench/load.py's latency list, keeping only the moves that started inside a window
    (wall clock): the moves made while the flood ran, in both runs of a round."""

    def __init__(self, start: float, end: float) -> None:
        super().__init__()
        self.start, self.end = start, end
        self.timed: list[tuple[float, float]] = []  # (when the move started, latency)

    def append(self, latency: float) -> None:
        began = time.time() - latency
        if self.start <= began <= self.end:
            super().append(latency)
            self.timed.append((began, latency))


def joiner_share(invite: Invite, n: int, slots: range, base: Path, epoch: float, ramp: float,
                 duration: float, drain: float, think: tuple[float, float], level: str,
                 window: tuple[float, float], deadline: float
                 ) -> tuple[Tally, list[tuple[float, float]]]:
    """A joiner process: the real games `slots` (bench/load.py's joiners), from `epoch`;
    its tally and its timed moves (when each started, its latency)."""
    tune_collector_for_many_games()  # (it holds many games, like the host)
    tally = Tally()
    timed = WindowedLatencies(*window)
    tally.latencies = timed
    time.sleep(max(0.0, epoch - time.time()))

    async def bounded() -> None:
        with trio.move_on_after(max(0.0, deadline - time.time())) as scope:
            await joiners(invite, n, slots, base, think, ramp, duration, drain, tally, level)
        if scope.cancelled_caught:
            tally.failures["cut off at the hard deadline"] += 1

    trio.run(bounded)
    tally.latencies = list(timed)
    return tally, timed.timed


# -- the host ---------------------------------------------------------------------------------

class Sampler:
    """The host's RSS, descriptors and CPU every `every` seconds, on a thread of its own
    (the parent only waits meanwhile)."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        self.pid = pid
        self.every = every
        self.samples: list[tuple[float, float, int, float]] = []  # wall, MiB, fds, CPU s
        self.died_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop sampling (before the host is stopped: its end is no death)."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set() and self.died_at is None:
            try:
                with open(f"/proc/{self.pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                if state in ("Z", "X"):  # (exited, not yet reaped: no memory, no files)
                    raise ProcessLookupError
                self.samples.append((time.time(), rss_mib(self.pid), fd_count(self.pid),
                                     cpu_seconds(self.pid)))
            except (OSError, IndexError, ValueError):
                self.died_at = time.time()
            self._stop.wait(self.every)

    def between(self, start: float, end: float) -> list[tuple[float, float, int, float]]:
        return [s for s in self.samples if start <= s[0] <= end]

    def at(self, moment: float) -> tuple[float, float, int, float] | None:
        """The last sample taken at or before `moment`."""
        before = [s for s in self.samples if s[0] <= moment]
        return before[-1] if before else None


def launch_host(base: Path, max_games: int, nofile: int | None,
                action_limit: float) -> HostProcess:
    """`p2pgotg host --bot --max-games N` on loopback, nothing asked of the internet. The
    real joiners all connect from 127.0.0.1 (standing in for players at as many
    addresses), so the cap on games from one address is lifted to N for it; the flood
    comes from addresses of its own and meets the usual caps."""
    return start_host(base, [sys.executable, "-m", "p2pgotg", "host", "--bot", "--max-games",
                             str(max_games), "--games-per-address", str(max_games), "--bind",
                             "127.0.0.1", "--port", "0", "--seed", "1", "--stun", "off",
                             "--no-port-map", "--action-limit", f"{action_limit:g}s"],
                      nofile=nofile)


# -- one run ------------------------------------------------------------------------------------

def run_once(args: argparse.Namespace, flooding: bool, seed: int) -> dict[str, Any]:
    """One run: the real games, with the flood or without it; its figures."""
    base = Path(tempfile.mkdtemp(prefix=f"p2pgotg-abuse-{'flood' if flooding else 'calm'}-",
                                 dir=args.tmp))
    host = launch_host(base, args.games + args.extra, args.host_nofile or None,
                       args.action_limit)
    load_before = os.getloadavg()[0]
    n, seconds, hold, ramp = args.games, args.seconds, args.hold, args.ramp
    duration = seconds + hold  # the play goes on until every flood connection is gone
    holds = {kind: args.keepalive_hold if kind == "keepalive" else hold for kind in KINDS}
    holds["stall"] = args.action_limit + hold  # (beyond the host's limit per owed action)
    last = ramp + seconds + max(holds.values()) + 60  # (the chat flooders' cap is hold + 60)
    hard = max(ramp + duration + args.drain, last) + 60
    jp = max(1, args.joiner_procs)
    fp = max(1, args.procs) if flooding else 0
    plan = list(enumerate(flood_plan(args.connections, args.mix, seed))) if flooding else []
    sources = [f"127.0.2.{k}" for k in range(1, args.sources + 1)]
    parts: list[tuple[Tally, list[tuple[float, float]]]] = []
    floods: list[FloodTally] = []
    # (one task a worker: a flood worker's hostile joiners never lend it to a real one)
    with multiprocessing.get_context("fork").Pool(jp + fp, maxtasksperchild=1) as pool, \
            Sampler(host.proc.pid) as sampler:
        epoch = time.time() + 1.0
        flood_start, flood_end = epoch + ramp, epoch + ramp + seconds
        play_end = epoch + ramp + duration
        deadline = epoch + hard
        window = (flood_start, flood_end)
        j_jobs = [pool.apply_async(joiner_share, (host.invite, n, range(k, n, jp), base, epoch,
                                                  ramp, duration, args.drain,
                                                  tuple(args.think), args.joiner_level,
                                                  window, deadline))
                  for k in range(jp)]
        f_jobs = [pool.apply_async(flood_share, (plan[k::fp], host.invite, flood_start,
                                                 seconds, len(plan), sources, holds, args.chats,
                                                 base, args.joiner_level, deadline))
                  for k in range(fp)]
        try:
            for job in j_jobs:
                parts.append(job.get(max(1.0, deadline + 30 - time.time())))
            for fjob in f_jobs:
                floods.append(fjob.get(max(1.0, deadline + 30 - time.time())))
        finally:
            alive_at_end = host.proc.poll() is None
            sampler.stop()
            code = host.stop()
    tally = Tally()
    timed: list[tuple[float, float]] = []
    for part, moves in parts:
        tally.merge(part)
        timed += moves
    flood_tally = FloodTally()
    for f in floods:
        flood_tally.merge(f)
    # The host's files: real games (named as the joiners' files are), chat floods, others.
    real_names = {p.name for p in tally.joiner_files}
    chat_names = {p.name for p in flood_tally.chat_files}
    host_files = sorted((host.home / "data" / "games").glob("*.gtr"))
    host_real = [p for p in host_files if p.name in real_names]
    host_chat = [p for p in host_files if p.name in chat_names]
    host_other = [p for p in host_files if p.name not in real_names | chat_names]
    found = {"joiners": verify_all(tally.joiner_files), "host_real": verify_all(host_real),
             "chat_joiners": verify_all(flood_tally.chat_files),
             "host_chat": verify_all(host_chat), "host_other": verify_all(host_other)}
    lat = tally.latencies
    during = sampler.between(flood_start, play_end)
    first = sampler.at(flood_start)
    after = sampler.at(play_end)
    cpu_window = sampler.between(flood_start, flood_end)
    refused_real = sum(c for why, c in tally.failures.items()
                       if not why.startswith("unclean") and why not in UNFINISHED)
    # (load.py counts a process cut off at its deadline once, not each game it cut off)
    unfinished = tally.started - tally.clean - tally.unclean - refused_real
    result: dict[str, Any] = {
        "flood": flooding,
        "games": n, "max_games": n + args.extra, "seconds": seconds, "hold_s": holds,
        "host_nofile": args.host_nofile,
        "machine_load": [load_before, os.getloadavg()[0]],  # 1-minute load, start and end
        "real": {"started": tally.started, "clean": tally.clean, "unclean": tally.unclean,
                 "turned_away": refused_real, "unfinished": unfinished,
                 "failures": dict(tally.failures), "peak_in_play": tally.peak_in_play},
        "verify": {k: dict(v) for k, v in found.items()},
        "moves_timed": len(lat),
        "latency_ms": {q: percentile(lat, p) * 1e3 for q, p in
                       (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))} if lat else {},
        "host": {
            "rss_mib_at_flood_start": first[1] if first else None,
            "rss_mib_peak": max((s[1] for s in during), default=None),
            "rss_mib_after": after[1] if after else None,
            "fds_at_flood_start": first[2] if first else None,
            "fds_peak": max((s[2] for s in during), default=None),
            "fds_after": after[2] if after else None,
            "cpu_pct_during_flood": 100 * (cpu_window[-1][3] - cpu_window[0][3])
            / max(1e-9, cpu_window[-1][0] - cpu_window[0][0]) if len(cpu_window) > 1 else None,
            "alive_until_stopped": alive_at_end and sampler.died_at is None,
            "died_after_s": None if sampler.died_at is None else sampler.died_at - epoch,
            "exit": code, "tracebacks": dict(tracebacks(host.err)),
            "stderr_tail": host.err.read_text(errors="replace")[-600:],
            "output_lines": len(host.out.read_text(errors="replace").splitlines()),
        },
    }
    h = result["host"]
    if h["rss_mib_peak"] is not None and h["rss_mib_at_flood_start"] is not None:
        h["rss_growth_mib"] = h["rss_mib_peak"] - h["rss_mib_at_flood_start"]
    else:
        h["rss_growth_mib"] = None
    result["joiner_loop_lag_ms"] = {q: percentile(tally.lags, p) * 1e3 for q, p in
                                    (("p50", 50), ("p99", 99), ("max", 100))
                                    } if tally.lags else {}
    result["timeline"] = timeline(timed, sampler, flood_start, play_end, args.step)
    if flooding:
        result["flood_figures"] = flood_figures(flood_tally, plan)
    if args.keep:
        result["dir"] = str(base)
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return result


def timeline(timed: list[tuple[float, float]], sampler: Sampler, start: float, end: float,
             step: float) -> list[dict[str, Any]]:
    """Every `step` seconds from the flood's start: the moves' p99 and the host's highest
    RSS and descriptors (to see when a slow stretch or a peak came)."""
    rows = []
    t = start
    while t < end:
        lat = [x for began, x in timed if t <= began < t + step]
        samples = sampler.between(t, t + step)
        rows.append({"from_s": t - start, "moves": len(lat),
                     "p99_ms": percentile(lat, 99) * 1e3 if lat else None,
                     "rss_mib": max((x[1] for x in samples), default=None),
                     "fds": max((x[2] for x in samples), default=None)})
        t += step
    return rows


def flood_figures(t: FloodTally, plan: list[tuple[int, str]]) -> dict[str, Any]:
    """Per kind: how many, how each ended, for how long they were held, why refused."""
    planned = Counter(kind for _, kind in plan)
    kinds: dict[str, Any] = {}
    for kind in KINDS:
        if not planned[kind]:
            continue
        outcomes = t.outcomes.get(kind, Counter())
        kinds[kind] = {
            "planned": planned[kind], "ended": sum(outcomes.values()),
            "outcomes": dict(outcomes), "admitted": t.admitted[kind],
            "held_s": {o: {"median": statistics.median(t.held[f"{kind}/{o}"]),
                           "max": max(t.held[f"{kind}/{o}"])} for o in outcomes},
            "reasons": dict(t.reasons.get(kind, Counter()).most_common(3)),
        }
    return {"connections": len(plan), "kinds": kinds, "chats_sent": t.chats_sent,
            "start_late_ms": {"p50": percentile(t.late, 50) * 1e3,
                              "max": max(t.late) * 1e3} if t.late else {},
            "peak_open_connections": t.peak_open, "cpu_s": t.cpu_s}


# -- reporting ----------------------------------------------------------------------------------

def report(r: dict[str, Any]) -> None:
    """One run's figures, in lines a person reads (and the test parses the JSON instead)."""
    real, h = r["real"], r["host"]
    print(f"{'FLOOD' if r['flood'] else 'CALM '} run: {real['started']} real joins, "
          f"{real['clean']} games audited clean, {real['unclean']} unclean, "
          f"{real['unfinished']} unfinished at the deadline, {real['turned_away']} joins "
          f"turned away (a joiner tries again a second later), peak {real['peak_in_play']} "
          "in play"
          + (f"; failures {real['failures']}" if real["failures"] else ""))
    print(f"  verify: {r['verify']}; the machine's load average {r['machine_load'][0]:.1f} "
          f"at the start, {r['machine_load'][1]:.1f} at the end ({os.cpu_count()} cores)")
    lat = r["latency_ms"]
    if lat:
        print(f"  move latency over {r['moves_timed']} moves in the flood window: "
              f"p50 {lat['p50']:.1f} ms, p90 {lat['p90']:.1f} ms, p99 {lat['p99']:.1f} ms, "
              f"max {lat['max']:.1f} ms")
    print(f"  host: RSS {_f(h['rss_mib_at_flood_start'])} -> peak {_f(h['rss_mib_peak'])} "
          f"-> {_f(h['rss_mib_after'])} MiB after (growth {_f(h['rss_growth_mib'])} MiB); "
          f"fds {h['fds_at_flood_start']} -> peak {h['fds_peak']} -> {h['fds_after']} after "
          f"(soft limit {r['host_nofile'] or 'inherited'}); CPU "
          f"{_f(h['cpu_pct_during_flood'])}% of a core during the flood window")
    print(f"  host alive until stopped: {h['alive_until_stopped']}"
          + (f" (died {h['died_after_s']:.0f} s in)" if h["died_after_s"] is not None else "")
          + f", exit {h['exit']}, {sum(h['tracebacks'].values())} tracebacks on stderr"
          + (f" {h['tracebacks']}" if h["tracebacks"] else "")
          + f", {h['output_lines']} lines of output")
    if h["exit"] != 0 or not h["alive_until_stopped"]:
        print("  host stderr ends: " + h["stderr_tail"].strip().replace("\n", "\n    "))
    g = r["joiner_loop_lag_ms"]
    if g:
        print(f"  the joiners' event-loop lag (their own machine's share): p50 {g['p50']:.1f} "
              f"ms, p99 {g['p99']:.1f} ms, max {g['max']:.1f} ms")
    print("  every step from the flood's start (s: moves' p99 ms / host MiB / fds): " + ", ".join(
        f"{row['from_s']:.0f}: {_f(row['p99_ms'])}/{_f(row['rss_mib'])}/{row['fds']}"
        for row in r["timeline"]))
    f = r.get("flood_figures")
    if f:
        late = f["start_late_ms"]
        print(f"  flood: {f['connections']} connections, {f['chats_sent']} chats sent, "
              f"{f['cpu_s']:.1f} s of the flood processes' CPU, peak "
              f"{f['peak_open_connections']} raw connections open at once, starts late by "
              f"p50 {late.get('p50', 0):.0f} ms, max {late.get('max', 0):.0f} ms")
        for kind, k in f["kinds"].items():
            held = ", ".join(f"{o} {k['outcomes'][o]} (held {v['median']:.1f} s median, "
                             f"{v['max']:.1f} max)" for o, v in k["held_s"].items())
            admitted = f"; admitted {k['admitted']}" if k["admitted"] else ""
            print(f"    {kind:12} {k['planned']:6} planned, {k['ended']:6} ended: {held}"
                  f"{admitted}")
            if k["reasons"]:
                print(f"    {'':12} reasons: " + "; ".join(f"{c}x {why}"
                                                          for why, c in k["reasons"].items()))
    sys.stdout.flush()


def _f(x: float | None) -> str:
    return "?" if x is None else f"{x:.1f}"


def summarize(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Medians over rounds and the requirements, checked."""
    flood = [r["flood"] for r in rounds if "flood" in r]
    calm = [r["calm"] for r in rounds if "calm" in r]

    def med(runs: list[dict[str, Any]], get) -> float | None:
        xs = [x for x in (get(r) for r in runs) if x is not None]
        return statistics.median(xs) if xs else None

    excess = [r["flood"]["host"]["rss_growth_mib"] - r["calm"]["host"]["rss_growth_mib"]
              for r in rounds if "flood" in r and "calm" in r
              and r["flood"]["host"]["rss_growth_mib"] is not None
              and r["calm"]["host"]["rss_growth_mib"] is not None]
    ratios = [r["flood"]["latency_ms"]["p99"] / r["calm"]["latency_ms"]["p99"]
              for r in rounds if "flood" in r and "calm" in r
              and r["flood"]["latency_ms"] and r["calm"]["latency_ms"]]
    runs = flood + calm
    s: dict[str, Any] = {
        "rounds": len(rounds),
        "p50_ms": {"flood": med(flood, lambda r: r["latency_ms"].get("p50")),
                   "calm": med(calm, lambda r: r["latency_ms"].get("p50"))},
        "p99_ms": {"flood": med(flood, lambda r: r["latency_ms"].get("p99")),
                   "calm": med(calm, lambda r: r["latency_ms"].get("p99"))},
        "p99_ratio": statistics.median(ratios) if ratios else None,
        "rss_growth_mib": {"flood": med(flood, lambda r: r["host"]["rss_growth_mib"]),
                           "calm": med(calm, lambda r: r["host"]["rss_growth_mib"])},
        # the flood's share: its run's growth beyond the calm run's of the same round (the
        # real games grow the heap too, flood or not)
        "rss_growth_beyond_calm_mib": statistics.median(excess) if excess else None,
        "fds_peak": {"flood": med(flood, lambda r: r["host"]["fds_peak"]),
                     "calm": med(calm, lambda r: r["host"]["fds_peak"])},
    }
    checks = {
        "every real game audited clean": all(_all_clean(r) for r in runs),
        "no real join turned away (beyond issue 13's four)": all(
            r["real"]["turned_away"] == 0 for r in runs),
        f"p99 with the flood within {MAX_P99_RATIO:g}x": (
            s["p99_ratio"] is not None and s["p99_ratio"] <= MAX_P99_RATIO) if ratios else None,
        f"host RSS growth under {MAX_RSS_GROWTH_MIB:g} MiB"
        + (" beyond the calm run's" if excess else ""): (
            all(x < MAX_RSS_GROWTH_MIB for x in excess) if excess else all(
                r["host"]["rss_growth_mib"] is not None
                and r["host"]["rss_growth_mib"] < MAX_RSS_GROWTH_MIB for r in flood)
        ) if flood else None,
        "no crash (the host alive until stopped, exit 0)": all(
            r["host"]["alive_until_stopped"] and r["host"]["exit"] == 0 for r in runs),
        "no traceback on the host's stderr": all(not r["host"]["tracebacks"] for r in runs),
    }
    s["checks"] = checks
    return s


def _all_clean(r: dict[str, Any]) -> bool:
    """Every real game this run started ended audited clean, and every transcript of a
    real game, on both sides, verifies clean."""
    real, v = r["real"], r["verify"]
    files_clean = all(set(v[side]) <= {"CLEAN"} for side in ("joiners", "host_real"))
    return (real["started"] > 0 and real["unclean"] == 0 and real["unfinished"] == 0
            and real["clean"] + real["turned_away"] == real["started"]
            and sum(v["joiners"].values()) == real["clean"] and files_clean)


def print_summary(s: dict[str, Any]) -> None:
    print(f"summary over {s['rounds']} round(s), medians: "
          f"p50 {_f(s['p50_ms']['flood'])} ms with the flood, {_f(s['p50_ms']['calm'])} "
          f"without; p99 {_f(s['p99_ms']['flood'])} ms with, {_f(s['p99_ms']['calm'])} "
          f"without (ratio {_f(s['p99_ratio'])}x); host RSS growth "
          f"{_f(s['rss_growth_mib']['flood'])} MiB with, {_f(s['rss_growth_mib']['calm'])} "
          f"without ({_f(s['rss_growth_beyond_calm_mib'])} beyond the calm run's); "
          f"host fds peak {s['fds_peak']['flood']} with, {s['fds_peak']['calm']} "
          "without")
    for what, ok in s["checks"].items():
        print(f"  {'n/a ' if ok is None else 'PASS' if ok else 'FAIL'}  {what}")
    sys.stdout.flush()


# -- the command ------------------------------------------------------------------------------

def parse_mix(text: str) -> dict[str, float]:
    """`kind=weight,...` (the kinds not named get no connections)."""
    mix: dict[str, float] = {}
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        kind = kind.strip()
        if kind not in KINDS:
            raise argparse.ArgumentTypeError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
        mix[kind] = float(weight)
    return mix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="real games in play (100)")
    parser.add_argument("--connections", type=int, default=10000,
                        help="flood connections in all (10000)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="the flood's connections start over this many seconds (60)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs with and without the flood, this many times each (1)")
    parser.add_argument("--no-flood", action="store_true",
                        help="only the runs without the flood (a baseline)")
    parser.add_argument("--no-calm", action="store_true",
                        help="only the runs with the flood (no ratio)")
    parser.add_argument("--procs", type=int, default=2, metavar="P",
                        help="flood processes (2)")
    parser.add_argument("--joiner-procs", type=int, default=2, metavar="P",
                        help="processes for the real joiners, as bench/load.py --procs (2)")
    parser.add_argument("--mix", type=parse_mix, default=parse_mix(DEFAULT_MIX),
                        help=f"the flood's kinds and weights (default {DEFAULT_MIX})")
    parser.add_argument("--hold", type=float, default=40.0,
                        help="a flood connection gives up after this many seconds (40: "
                        "beyond the host's handshake and silence limits)")
    parser.add_argument("--keepalive-hold", type=float, default=150.0,
                        help="a keepalive-only connection gives up after this many seconds "
                        "(150: beyond a two-minute pre-game limit)")
    parser.add_argument("--action-limit", type=float, default=30.0,
                        help="the host's limit per owed action, seconds, which frees the "
                        "slot a stalling joiner holds (30: short, so that the run shows it; "
                        "the real joiners move every 1-2 s)")
    parser.add_argument("--chats", type=int, default=500,
                        help="chat messages each chat-flooding joiner sends (500)")
    parser.add_argument("--sources", type=int, default=64,
                        help="loopback source addresses of the flood, 127.0.2.1.. (64)")
    parser.add_argument("--extra", type=int, default=20,
                        help="the host's --max-games is --games plus this (20)")
    parser.add_argument("--host-nofile", type=int, default=1024,
                        help="the host's soft limit of open files (1024, as a shell gives "
                        "it; 0: this process's)")
    parser.add_argument("--ramp", type=float, default=10.0,
                        help="the real games start over this many seconds, then the flood")
    parser.add_argument("--drain", type=float, default=60.0,
                        help="after the play, seconds allowed for resignations and audits")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 2.0),
                        metavar=("MIN", "MAX"), help="joiner think time (1.0 2.0)")
    parser.add_argument("--joiner-level", default=SEAT_DEFAULT,
                        help=f"the joiners' bot level ({SEAT_DEFAULT})")
    parser.add_argument("--step", type=float, default=10.0,
                        help="the timeline's step, seconds (10)")
    parser.add_argument("--tmp", metavar="DIR", default=None,
                        help="make the temporary folders (transcripts) under DIR")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.no_flood and args.no_calm:
        parser.error("--no-flood and --no-calm leave nothing to run")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # (the flood holds thousands)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {args.games} real games (max-games "
          f"{args.games + args.extra}), flood {args.connections} connections over "
          f"{args.seconds:g} s from {args.procs} processes and {args.sources} addresses, "
          f"held at most {args.hold:g} s ({args.keepalive_hold:g} s keepalive-only); host "
          f"soft limit {args.host_nofile or hard} files",
          flush=True)
    rounds: list[dict[str, dict[str, Any]]] = []
    for k in range(args.rounds):
        order = [True, False] if k % 2 == 0 else [False, True]  # (the machine drifts)
        got: dict[str, dict[str, Any]] = {}
        for flooding in order:
            if (flooding and args.no_flood) or (not flooding and args.no_calm):
                continue
            r = run_once(args, flooding, seed=k)
            report(r)
            got["flood" if flooding else "calm"] = r
        rounds.append(got)
    summary = summarize(rounds)
    print_summary(summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": {k: v for k, v in vars(args).items()},
                                               "rounds": rounds, "summary": summary},
                                              indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
