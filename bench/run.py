"""Every performance figure of the README, in one run: `python bench/run.py [--quick]`.

Figures, never pass/fail: medians (and p90 where it matters) over repeated runs on this
machine, with ratios against a floor measured in the same run, so a noisy shared machine
still gives comparable numbers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import socket
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import trio

from p2pgotg.games import replay
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    client_context,
    make_certificate,
    server_context,
)
from p2pgotg.protocol import HOST, JOINER, Phase, parse
from p2pgotg.rules import ChallengeMode, Game, Rank, RuleOptions, Setup
from p2pgotg.selfplay import play_one
from p2pgotg.testing.pair import Pair
from p2pgotg.testing.towers import Table

ROOT = Path(__file__).resolve().parent.parent


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def p90(xs: list[float]) -> float:
    return sorted(xs)[int(len(xs) * 0.9)]


# -- 1. latency over TLS loopback, next to a bare TCP ping-pong ------------------------------

async def tcp_pingpong(rounds: int) -> list[float]:
    """The floor: one small message there and back over plain TCP on loopback."""
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    times: list[float] = []

    async def echo(stream: trio.SocketStream) -> None:
        for _ in range(rounds):
            data = await stream.receive_some(4096)
            await stream.send_all(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, echo, [listener])
        client = await trio.open_tcp_stream("127.0.0.1", port)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        payload = b"x" * 200
        for _ in range(rounds):
            t = time.perf_counter()
            await client.send_all(payload)
            got = b""
            while len(got) < len(payload):
                got += await client.receive_some(4096)
            times.append(time.perf_counter() - t)
        nursery.cancel_scope.cancel()
    return times


def latency_samples(options: RuleOptions, plain: int, challenges: int) -> dict[str, list[float]]:
    """As many games of `session_latency` as it takes for the wanted sample counts."""
    got: dict[str, list[float]] = {"plain_rtt": [], "challenge": []}
    for seed in range(1, 200):
        if len(got["plain_rtt"]) >= plain and len(got["challenge"]) >= challenges:
            break
        more = trio.run(session_latency, options, 1000, seed)
        for key in got:
            got[key] += more[key]
    return got


async def _tls_channels(nursery: trio.Nursery) -> dict[str, FramedChannel]:
    """One TLS connection on loopback, framed at both ends, with no keepalive and no
    silence limit: the host's end (the server side) and the joiner's. The listener stays in
    `nursery` until it is cancelled."""
    cert, key = make_certificate()
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    stream_ready = trio.Event()
    server_stream: list[trio.SSLStream] = []

    async def accept(tcp: trio.SocketStream) -> None:
        ssl_stream = trio.SSLStream(tcp, server_context(cert, key), server_side=True)
        await ssl_stream.do_handshake()
        server_stream.append(ssl_stream)
        stream_ready.set()
        await trio.sleep_forever()

    nursery.start_soon(trio.serve_listeners, accept, [listener])
    tcp = await trio.open_tcp_stream("127.0.0.1", port)
    tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client = trio.SSLStream(tcp, client_context())
    await client.do_handshake()
    await stream_ready.wait()
    return {JOINER: FramedChannel(client, keepalive_interval=None, silence_timeout=None),
            HOST: FramedChannel(server_stream[0], keepalive_interval=None,
                                silence_timeout=None)}


async def session_latency(options: RuleOptions, plies: int, seed: int) -> dict[str, list[float]]:
    """Two GameSessions over real TLS on loopback; each side answers at once. Measures, on
    the host's side: a plain move until the opponent's answering move arrives (one round
    trip through both state machines), and a challenge until its result is applied."""
    pair = Pair.new(options, seed=f"bench-{seed}")
    sessions: dict[str, GameSession] = {}
    limits = Timeouts(silence=120, keepalive=60)
    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"p2pgotg-bench-{os.getpid()}-{seed}"
    for role in (HOST, JOINER):
        sessions[role] = GameSession(pair.peer(role), base / role, b"\x00" * 16, limits)
    plain: list[float] = []
    challenge: list[float] = []
    async with trio.open_nursery() as nursery:
        channels = await _tls_channels(nursery)
        for role in (HOST, JOINER):
            nursery.start_soon(sessions[role].run_connection, channels[role], 0)
        rng = random.Random(seed)
        host, joiner = sessions[HOST], sessions[JOINER]
        host.perform(lambda p: p.start())
        await _until(joiner, lambda: pair.joiner.flow.hellos.get(HOST) is not None)
        joiner.perform(lambda p: p.accept())
        await _until(host, lambda: host.peer.phase is Phase.SETUP)
        for role in (HOST, JOINER):
            s = sessions[role]
            s.perform(lambda p: p.commit_setup(Setup.random(p.side, rng)))
        await _until(host, lambda: host.peer.phase is Phase.PLAY)
        await _until(joiner, lambda: joiner.peer.phase is Phase.PLAY)
        while host.peer.phase is Phase.PLAY and host.peer.view.ply < plies:
            mover = host if host.peer.my_turn else joiner
            other = joiner if mover is host else host
            view = mover.peer.view
            moves = view.legal_moves
            plain_moves = [m for m in moves if not view.is_challenge(m)]
            challenges = [m for m in moves if view.is_challenge(m)]
            if mover is host and challenges and rng.random() < 0.25:
                move = rng.choice(challenges)
                ply = view.ply
                t = time.perf_counter()
                host.perform(lambda p, move=move: p.move(move))
                await _until(host, lambda ply=ply: host.peer.view.ply > ply
                             or host.peer.flow.is_over)
                challenge.append(time.perf_counter() - t)
                await _until(joiner, lambda ply=ply: joiner.peer.view.ply > ply
                             or joiner.peer.flow.is_over)
            elif mover is host and plain_moves:
                move = rng.choice(plain_moves)
                ply = view.ply
                t = time.perf_counter()
                host.perform(lambda p, move=move: p.move(move))
                # the joiner answers at once with its own plain move (if it has one)
                await _until(joiner, lambda: joiner.peer.my_turn or joiner.peer.flow.is_over)
                jv = joiner.peer.view
                answer = [m for m in jv.legal_moves if not jv.is_challenge(m)]
                if not answer or joiner.peer.flow.is_over:
                    break
                reply = rng.choice(answer)
                joiner.perform(lambda p, reply=reply: p.move(reply))
                await _until(host, lambda ply=ply: host.peer.view.ply >= ply + 2
                             or host.peer.flow.is_over)
                plain.append(time.perf_counter() - t)
            else:
                m = rng.choice(plain_moves or moves)  # keep the game going
                ply0 = view.ply
                mover.perform(lambda p, m=m: p.move(m))
                await _until(other, lambda other=other, ply0=ply0: other.peer.view.ply > ply0
                             or other.peer.flow.is_over)
                await _until(mover, lambda mover=mover, ply0=ply0: mover.peer.view.ply > ply0
                             or mover.peer.flow.is_over)
        nursery.cancel_scope.cancel()
    for s in sessions.values():
        s.close()
    return {"plain_rtt": plain, "challenge": challenge}


async def _until(session: GameSession, condition) -> None:
    with trio.fail_after(30):
        while not condition():
            await session.wait_changed()


def towers_latency_samples(rounds: int, one_way: bool = False,
                           seeds: range = range(1, 200)) -> list[float]:
    """As many Towers games of `towers_session_latency` as it takes for `rounds` samples."""
    got: list[float] = []
    for seed in seeds:
        if len(got) >= rounds:
            break
        got += trio.run(towers_session_latency, seed, one_way)
    return got


async def towers_session_latency(seed: int, one_way: bool = False) -> list[float]:
    """Two Towers GameSessions over real TLS on loopback, as `session_latency` does for Game
    of the Generals: from the host's action that ends its turn until the joiner's answering
    action arrives (one round trip through both state machines, one signed action each way).
    With `one_way`: from every action (either side's) until the other side has taken it,
    the two-seat counterpart of a table's action reaching every seat (bench/bench_table.py)."""
    table = Table(seed=f"bench-towers-{seed}", start=False)
    peers = {HOST: table.host, JOINER: table.joiner}
    limits = Timeouts(silence=120, keepalive=60)
    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"p2pgotg-bench-t-{os.getpid()}-{seed}"
    sessions = {role: GameSession(peers[role], base / role, b"\x00" * 16, limits)
                for role in (HOST, JOINER)}
    times: list[float] = []
    rng = random.Random(seed)
    async with trio.open_nursery() as nursery:
        channels = await _tls_channels(nursery)
        for role in (HOST, JOINER):
            nursery.start_soon(sessions[role].run_connection, channels[role], 0)
        host, joiner = sessions[HOST], sessions[JOINER]
        host.perform(lambda p: p.start())
        await _until(joiner, lambda: HOST in peers[JOINER].flow.hellos)
        joiner.perform(lambda p: p.accept())
        await _until(host, lambda: peers[HOST].view is not None)
        await _until(joiner, lambda: peers[JOINER].view is not None)
        while not peers[HOST].flow.is_over:
            mover = host if peers[HOST].my_turn else joiner
            other = joiner if mover is host else host
            view = mover.peer.view
            ply = view.ply
            action = rng.choice(view.legal_actions)
            ends_turn = mover is host and view.actions_left == 1 and not peers[HOST].in_setup
            t = time.perf_counter()
            mover.perform(lambda p, a=action: p.act(a))
            await _until(other, lambda o=other, ply=ply: o.peer.view.ply > ply
                         or o.peer.flow.is_over)
            if one_way:
                times.append(time.perf_counter() - t)
            elif ends_turn and peers[JOINER].my_turn and not peers[JOINER].flow.is_over:
                jview = peers[JOINER].view
                answer = rng.choice(jview.legal_actions)
                joiner.perform(lambda p, a=answer: p.act(a))
                await _until(host, lambda ply=ply: peers[HOST].view.ply > ply + 1
                             or peers[HOST].flow.is_over)
                times.append(time.perf_counter() - t)
            await _until(mover, lambda m=mover, ply=ply: m.peer.view.ply > ply
                         or m.peer.flow.is_over)
        nursery.cancel_scope.cancel()
    for s in sessions.values():
        s.close()
    return times


# -- 2. CPU cost of one challenge, open and blind --------------------------------------------

def challenge_cpu(mode: ChallengeMode, runs: int) -> dict[str, float]:
    """Both peers in this process, back to back: CPU of the attacker's move (with its
    automatic duties) and of everything the defender does, until both have the result."""
    costs = {"attacker": [], "defender": [], "both": []}
    seed = 0
    while len(costs["both"]) < runs:
        seed += 1
        pair = Pair.new(RuleOptions(challenge_mode=mode), seed=f"cpu-{mode.value}-{seed}")
        pair.handshake(rng=random.Random(seed))
        rng = random.Random(seed)
        for _ in range(400):
            mover = pair.host if pair.host.my_turn else pair.joiner
            view = mover.view
            if view is None or pair.host.flow.is_over:
                break
            challenges = [m for m in view.legal_moves if view.is_challenge(m)]
            if challenges:
                other = pair.peer(mover.other_role)
                move = rng.choice(challenges)
                a = d = 0.0
                t = time.process_time()
                mover.move(move)
                out = mover.data_to_send()
                a += time.process_time() - t
                while out:
                    t = time.process_time()
                    for data in out:
                        other.receive(data)
                    back = other.data_to_send()
                    d += time.process_time() - t
                    t = time.process_time()
                    for data in back:
                        mover.receive(data)
                    out = mover.data_to_send()
                    a += time.process_time() - t
                costs["attacker"].append(a)
                costs["defender"].append(d)
                costs["both"].append(a + d)
                break
            mover.move(rng.choice(view.legal_moves))
            pair.deliver()
    return {k: median(v) for k, v in costs.items()}


# -- 3. the fair-play overhead: a recorded game, protocol against rules alone ----------------

def overhead(path: Path, runs: int) -> dict[str, float]:
    data = path.read_bytes()
    transcript = parse(data)
    report = replay(transcript)
    flow = report.flow
    assert flow.game is not None
    history = flow.game.history
    setups = {}
    for role in (HOST, JOINER):
        side = flow.side_of(role)
        ranks = flow.audits[role][0]
        setups[side] = Setup(side, {sq: Rank(ranks[pid])
                                    for pid, sq in enumerate(flow.reveals[role].squares)})
    full_times, rules_times = [], []
    for _ in range(runs):
        t = time.perf_counter()
        replay(parse(data))
        full_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        game = Game.from_setups(setups[min(setups)], setups[max(setups)], flow.options)
        for record in history:
            game.push(record.move)
        rules_times.append(time.perf_counter() - t)
    return {"messages": len(transcript.messages), "plies": len(history),
            "protocol": median(full_times), "rules": median(rules_times),
            "ratio": median(full_times) / median(rules_times)}


# -- 4. handshake, audit of a long game, memory of one peer ----------------------------------

def long_game(plies: int, seed: int) -> Pair:
    pair = Pair.new(RuleOptions(), seed=f"long-{seed}")
    pair.handshake(rng=random.Random(seed))
    rng = random.Random(seed)
    while not pair.host.flow.is_over and pair.host.view.ply < plies:
        mover = pair.host if pair.host.my_turn else pair.joiner
        view = mover.view
        quiet = [m for m in view.legal_moves if not view.is_challenge(m)]
        mover.move(rng.choice(quiet or view.legal_moves))
        pair.deliver()
    return pair


def audit_time(plies: int, runs: int) -> dict[str, float]:
    times = []
    moves = 0
    for run in range(runs):
        pair = long_game(plies, run)
        moves = pair.host.view.ply
        pair.host.resign()
        host_msgs = pair.host.data_to_send()  # resign + the host's audit
        for data in host_msgs:
            pair.joiner.receive(data)
        audit = pair.joiner.data_to_send()[-1]
        t = time.perf_counter()
        pair.host.receive(audit)  # the joiner's audit: the full replay runs now
        times.append(time.perf_counter() - t)
        assert pair.host.flow.verdict is not None and pair.host.flow.verdict.clean
    return {"plies": moves, "audit": median(times)}


def peer_memory(plies: int) -> dict[str, float]:
    gc.collect()
    tracemalloc.start()
    pair = long_game(plies, 99)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"plies": pair.host.view.ply, "both_peers_peak_mib": peak / 2**20,
            "one_peer_mib": peak / 2 / 2**20}


async def handshake_time(runs: int) -> float:
    """TCP connect + TLS + pin + admission + hellos + coin toss, to the setup phase."""
    times = []
    for n in range(runs):
        base = Path(os.environ.get("TMPDIR", "/tmp")) / f"p2pgotg-hs-{os.getpid()}-{n}"
        t = time.perf_counter()
        result = await _handshake_only(base)
        times.append(result - t)
    return median(times)


async def _handshake_only(base: Path) -> float:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from p2pgotg.net.play.hosting import HostConfig
    from p2pgotg.net.play.joining import JoinConfig, join_game
    from p2pgotg.net.reaching.invite import Invite

    cert, key = make_certificate()
    limits = Timeouts()
    reached = trio.Event()
    when: list[float] = []

    async def seat(session: GameSession) -> None:
        while session.peer.phase not in (Phase.SETUP, Phase.PLAY):
            if session.peer.role == JOINER and session.peer.flow.hellos.get(HOST) and \
                    not session.peer.flow.hellos.get(JOINER):
                session.perform(lambda p: p.accept())
            await session.wait_changed()
        if not when:
            when.append(time.perf_counter())
        reached.set()

    config = HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(), base / "h",
                        bind="127.0.0.1", limits=limits, resume=False)
    async with trio.open_nursery() as nursery:
        hosting = await nursery.start(_host_task, config, seat)
        invite = Invite.decode(hosting.invites[0])
        nursery.start_soon(join_game, JoinConfig(Ed25519PrivateKey.generate(), invite,
                                                 base / "j", limits, resume=False), seat)
        await reached.wait()
        nursery.cancel_scope.cancel()
    return when[0]


async def _host_task(config, seat, task_status=trio.TASK_STATUS_IGNORED) -> None:
    from p2pgotg.net.play.hosting import host_game

    await host_game(config, seat, task_status=task_status)


def verify_time(path: Path, runs: int) -> float:
    import contextlib
    import io

    from p2pgotg.cli import main as cli_main

    times = []
    for _ in range(runs):
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["verify", str(path)])
        times.append(time.perf_counter() - t)
        assert code == 0
    return median(times)


def selfplay_times(mode: ChallengeMode, games: int) -> dict[str, float]:
    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"p2pgotg-sp-{os.getpid()}-{mode.value}"
    walls, cpus, plies = [], [], []
    for n in range(games):
        t, c = time.perf_counter(), time.process_time()
        result = trio.run(play_one, RuleOptions(challenge_mode=mode), base / str(n), n)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        plies.append(result.host.peer.view.ply)
        assert result.verdict is not None and result.verdict.clean
    return {"games": games, "wall": median(walls), "cpu": median(cpus),
            "plies": median(plies),
            "cpu_per_ply": median([c / p for c, p in zip(cpus, plies, strict=True)])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    k = 1 if args.quick else 5
    figures: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}, {platform.system()} {platform.release()}",
    }
    print(f"machine: {figures['machine']}")

    tcp = trio.run(tcp_pingpong, 200 * k)
    lat = latency_samples(RuleOptions(), 100 * k, 20 * k)
    figures["latency"] = {
        "tcp_rtt_median_ms": median(tcp) * 1e3,
        "move_rtt_median_ms": median(lat["plain_rtt"]) * 1e3,
        "move_rtt_p90_ms": p90(lat["plain_rtt"]) * 1e3,
        "open_challenge_median_ms": median(lat["challenge"]) * 1e3,
        "ratio_move_to_tcp": median(lat["plain_rtt"]) / median(tcp),
        "ratio_challenge_to_tcp": median(lat["challenge"]) / median(tcp),
        "samples": [len(tcp), len(lat["plain_rtt"]), len(lat["challenge"])],
    }
    blat = latency_samples(RuleOptions(challenge_mode=ChallengeMode.BLIND), 0, 20 * k)
    figures["latency"]["blind_challenge_median_ms"] = median(blat["challenge"]) * 1e3
    figures["latency"]["blind_samples"] = len(blat["challenge"])
    towers = towers_latency_samples(100 * k)
    figures["latency"]["towers_action_rtt_median_ms"] = median(towers) * 1e3
    figures["latency"]["ratio_towers_action_to_generals_move"] = (
        median(towers) / median(lat["plain_rtt"]))
    figures["latency"]["towers_samples"] = len(towers)
    print("latency (TLS loopback, both state machines in this process):")
    for key, value in figures["latency"].items():
        print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")

    figures["challenge_cpu_ms"] = {
        mode.value: {k2: v * 1e3 for k2, v in challenge_cpu(mode, 30 * k).items()}
        for mode in ChallengeMode
    }
    print("CPU of one challenge, both peers' protocol work (ms):")
    for mode, values in figures["challenge_cpu_ms"].items():
        print(f"  {mode}: " + ", ".join(f"{a} {b:.3f}" for a, b in values.items()))

    honest = ROOT / "protocol" / "transcripts" / "honest-game.gtr"
    figures["overhead"] = overhead(honest, 5 * k)
    o = figures["overhead"]
    print(f"fair-play overhead: a {o['plies']}-move game ({o['messages']} messages) replayed "
          f"through the protocol {ms(o['protocol'])} vs the rules alone {ms(o['rules'])}: "
          f"ratio {o['ratio']:.0f}")

    figures["handshake_ms"] = trio.run(handshake_time, 5 * k) * 1e3
    print(f"handshake (TCP+TLS+pin+admission+hellos+coin): {figures['handshake_ms']:.1f} ms")

    figures["audit"] = audit_time(600, 2 * k)
    print(f"audit of a {figures['audit']['plies']}-move game: "
          f"{ms(figures['audit']['audit'])}")

    figures["verify_ms"] = verify_time(honest, 5 * k) * 1e3
    print(f"verify of {honest.name} ({honest.stat().st_size} bytes): "
          f"{figures['verify_ms']:.1f} ms")

    figures["memory"] = peer_memory(600)
    print(f"memory: a {figures['memory']['plies']}-move game, both peers "
          f"{figures['memory']['both_peers_peak_mib']:.2f} MiB traced peak "
          f"(~{figures['memory']['one_peer_mib']:.2f} MiB per peer)")

    figures["selfplay"] = {mode.value: selfplay_times(mode, 3 * k) for mode in ChallengeMode}
    for mode, values in figures["selfplay"].items():
        print(f"self-play over TLS, {mode}: median {values['plies']:.0f} moves, "
              f"{values['wall']:.2f} s wall, {values['cpu']:.2f} s CPU "
              f"({values['cpu_per_ply'] * 1e3:.2f} ms CPU per move, both sides and bots)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
