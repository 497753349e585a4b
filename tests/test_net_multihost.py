"""One host, many games at once (`host_many`), on real loopback sockets.

Several joiners with the one invite each get a game of their own, played to a clean audit
with a transcript of its own; a joiner beyond `max_games` is told the host is full; a joiner
whose connection drops comes back to its own game, not to a new one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hostkit import FAST, SAFETY, assert_clean, joiner

from p2pgotg.games import replay
from p2pgotg.net.play.bot_worker_client import open_bot_worker
from p2pgotg.net.play.hosting import HostConfig
from p2pgotg.net.play.hosting import Hosting as MultiHosting
from p2pgotg.net.play.hosting import HostStats as MultiHostStats
from p2pgotg.net.play.joining import join_game
from p2pgotg.net.play.multihost import FULL, host_many
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.players.bot import Bot
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import Finding, Phase, parse
from p2pgotg.rules import Rank, RuleOptions, Setup, Side
from p2pgotg.selfplay import bot_runner, seat_seed
from p2pgotg.testing.faultproxy import CUT, FaultProxy, Plan, fixed_plans


class ManyHost:
    """host_many in a nursery, with what it said and the sessions of the games that ended."""

    def __init__(self, save_dir: Path, max_games: int, games_total: int | None = None,
                 limits: Timeouts = FAST, runner=lambda n: bot_runner(1000 + n)) -> None:
        cert, key = make_certificate()
        self.config = HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(),
                                 save_dir, port=0, bind="127.0.0.1", limits=limits,
                                 resume=False)
        self.max_games = max_games
        self.runner = runner
        self.games_total = games_total
        self.statuses: list[str] = []
        self.ended: dict[int, GameSession] = {}
        self.stats: MultiHostStats | None = None
        self.stop = trio.Event()
        self.done = trio.Event()

    def on_game_end(self, number: int, session: GameSession) -> None:
        self.ended[number] = session

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            self.stats = await host_many(
                self.config, self.runner, self.max_games,
                games_total=self.games_total, on_status=self.statuses.append,
                on_game_end=self.on_game_end, stop=self.stop, task_status=task_status)
        finally:
            self.done.set()

    async def start(self, nursery: trio.Nursery) -> Invite:
        hosting: MultiHosting = await nursery.start(self.run)
        return Invite.decode(hosting.invites[0])


def short_game(seed: int, plies: int = 24):
    """The bot, resigning once the game is `plies` moves long: a short game that still ends
    with both audits."""
    seat = BotSeat(random.Random(seed))

    def step(peer):
        view = peer.view
        if peer.phase is Phase.PLAY and view is not None and view.ply >= plies \
                and not peer.flow.is_over:
            return lambda p: p.resign()
        return seat.step(peer)

    async def run(session: GameSession) -> None:
        await drive(session, step)

    return run


def host_files(root: Path) -> list[Path]:
    return sorted(root.glob("*.gtr"))


async def test_concurrent_games_each_end_clean_with_their_own_transcript(tmp_path):
    games = 5
    host = ManyHost(tmp_path / "host", max_games=games, games_total=games)
    joined: dict[int, GameSession] = {}
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)

        async def play(i: int) -> None:
            joined[i] = await join_game(joiner(invite, tmp_path / f"joiner-{i}"),
                                        short_game(i))

        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as players:
                for i in range(games):
                    players.start_soon(play, i)
            await host.done.wait()
    assert host.stats is not None
    assert (host.stats.started, host.stats.finished, host.stats.refused_full) == (games, games, 0)
    files = host_files(tmp_path / "host")
    assert len(files) == games  # one transcript per game, named by its own game id
    ids = {s.peer.flow.game_id for s in joined.values()}
    assert {f.stem for f in files} == {gid.hex() for gid in ids}
    for session in joined.values():
        assert_clean(session)
    by_id = {s.peer.flow.game_id: s for s in host.ended.values()}
    for session in joined.values():  # both sides of each game saw the same verdict
        assert by_id[session.peer.flow.game_id].verdict == session.verdict
    for path in files:
        assert replay(parse(path.read_bytes())).finding is Finding.CLEAN


@pytest.mark.parametrize("worker_dies", [False, True], ids=["worker", "worker-dies"])
async def test_with_the_bots_in_a_worker_process_every_game_ends_clean(tmp_path, worker_dies):
    # `host --bot --max-games N` lets its bots think in a worker process. Killed midway
    # (at the 12th decision of 5 games of about 12 each), the games go on without it.
    games = 5
    asked: list[object] = []
    async with open_bot_worker() as worker:
        ask = worker.ask

        async def counted_ask(request):
            asked.append(request)
            if worker_dies and len(asked) == 12:
                worker._process.kill()
                await worker._process.wait()
            return await ask(request)

        worker.ask = counted_ask  # type: ignore[method-assign]
        host = ManyHost(tmp_path / "host", max_games=games, games_total=games,
                        runner=lambda n: worker.runner(1000 + n))
        joined: list[GameSession] = []
        async with trio.open_nursery() as nursery:
            invite = await host.start(nursery)

            async def play(i: int) -> None:
                joined.append(await join_game(joiner(invite, tmp_path / f"joiner-{i}"),
                                              short_game(i)))

            with trio.fail_after(SAFETY):
                async with trio.open_nursery() as players:
                    for i in range(games):
                        players.start_soon(play, i)
                await host.done.wait()
        assert (worker.broken is not None) == worker_dies
    assert len(joined) == games
    for session in joined:
        assert_clean(session)
        assert session.peer.view is not None and session.peer.view.ply >= 24
    if worker_dies:
        # after that, each seat asked once more (told the worker is gone), then decided
        # in this process
        late = [r.key for r in asked[12:]]  # type: ignore[attr-defined]
        assert len(late) == len(set(late)) <= games
    else:
        assert len(asked) >= games * 12  # a setup and a dozen moves a game, all asked there


async def test_a_joiner_beyond_max_games_is_told_the_host_is_full(tmp_path):
    host = ManyHost(tmp_path / "host", max_games=2)
    hold = trio.Event()  # the first two games wait here, so both slots stay taken

    def gated(seed: int):
        async def run(session: GameSession) -> None:
            await hold.wait()
            await short_game(seed, plies=6)(session)
        return run

    in_game: list[GameSession] = []
    seated = trio.Event()

    def on_session(session: GameSession) -> None:
        in_game.append(session)
        if len(in_game) == 2:
            seated.set()

    results: list[GameSession] = []
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)

        async def play(i: int) -> None:
            results.append(await join_game(joiner(invite, tmp_path / f"joiner-{i}"),
                                           gated(i), on_session=on_session))

        for i in range(2):
            nursery.start_soon(play, i)
        with trio.fail_after(SAFETY):
            await seated.wait()
            with pytest.raises(SessionError, match=FULL) as caught:
                await join_game(joiner(invite, tmp_path / "third"), short_game(3))
        assert "2 games are in progress" in str(caught.value)
        assert host.stats is None and not host.ended
        assert not host_files(tmp_path / "third")  # nothing saved for the refused joiner
        hold.set()
        with trio.fail_after(SAFETY):
            while len(host.ended) < 1:  # a slot frees once a game is over...
                await trio.sleep(0.05)
            late = await join_game(joiner(invite, tmp_path / "late"), short_game(4, plies=4))
            while len(results) < 2:
                await trio.sleep(0.05)
        host.stop.set()
        with trio.fail_after(SAFETY):
            await host.done.wait()
    assert host.stats is not None
    assert host.stats.refused_full == 1 and host.stats.started == 3
    for session in (*results, late):  # ... and the next joiner gets it
        assert_clean(session)
    assert any("games in progress" in s for s in host.statuses)


async def test_a_joiner_that_drops_comes_back_to_its_own_game(tmp_path):
    """Two games at once; one joiner's connections are cut twice (through a proxy). It
    reattaches to its own game each time: the host started two games, not more, and both
    end clean."""
    host = ManyHost(tmp_path / "host", max_games=4, games_total=2)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        proxy = FaultProxy("127.0.0.1", invite.port, fixed_plans([
            Plan(fault=CUT, after=2500), Plan(fault=CUT, after=6000)]), seed=1)
        routed = dataclasses.replace(invite, port=await nursery.start(proxy.serve))
        joined: dict[str, GameSession] = {}

        async def play(name: str, inv: Invite, seed: int) -> None:
            joined[name] = await join_game(joiner(inv, tmp_path / name),
                                           short_game(seed, plies=40))

        with trio.fail_after(SAFETY):
            async with trio.open_nursery() as players:
                players.start_soon(play, "cut", routed, 7)
                players.start_soon(play, "direct", invite, 8)
            await host.done.wait()
        nursery.cancel_scope.cancel()
    assert proxy.faults(CUT) == 2 and len(proxy.connections) >= 3
    assert host.stats is not None
    assert (host.stats.started, host.stats.finished) == (2, 2)
    assert len(host_files(tmp_path / "host")) == 2
    for session in joined.values():
        assert_clean(session)
    assert sum("reconnected" in s or "connected" in s for s in host.statuses) >= 4


def open_transcripts(root: Path) -> list[str]:
    """The transcripts under `root` that this process holds open."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith(str(root)) and target.endswith(".gtr"):
            found.append(target)
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
async def test_games_cut_off_midway_leave_no_transcript_open(tmp_path):
    """Cancelling the host and a joiner in the middle of a game closes both transcript
    files; the game stays resumable (its transcripts verify as unfinished)."""
    host = ManyHost(tmp_path / "host", max_games=2)
    seated = trio.Event()

    def on_session(session: GameSession) -> None:
        seated.set()

    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        nursery.start_soon(lambda: join_game(joiner(invite, tmp_path / "joiner"),
                                             short_game(9, plies=10_000),
                                             on_session=on_session))
        with trio.fail_after(SAFETY):
            await seated.wait()
            while len(open_transcripts(tmp_path)) < 2:  # both sides have saved the game
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert open_transcripts(tmp_path) == []
    files = sorted(tmp_path.rglob("*.gtr"))
    assert len(files) == 2
    for path in files:
        assert replay(parse(path.read_bytes())).finding is Finding.UNFINISHED


async def test_a_resent_joiner_hello_finds_its_game_among_several_waiting(tmp_path):
    """SPEC 3.4: a joiner whose hello never reached the host comes back with the game id
    only it knows and `first`, the hash of the host's hello it holds. With several games
    awaiting a joiner's hello, `first` picks the right one; without it the host refuses, even
    when one game waits (issue 13: another holder of the invite must not take it over); a
    `first` of no game of ours finds nothing."""
    from p2pgotg.games.gotg.peer import GotgPeer as Peer
    from p2pgotg.net.play.host_policy import HostPolicy, Resume, TossBound, decide
    from p2pgotg.net.play.hosting import Host, _Game
    from p2pgotg.protocol import HOST
    from p2pgotg.protocol.control import Hi

    host = ManyHost(tmp_path, max_games=4)
    multi = Host(host.config, lambda n: bot_runner(n),
                 HostPolicy(max_games=4, games_total=None, toss_bound=TossBound.KEY),
                 on_status=host.statuses.append, on_game_end=host.on_game_end)
    for number in (1, 2, 3):
        peer = Peer(HOST, Ed25519PrivateKey.generate(), bytes(32), RuleOptions())
        session = GameSession(peer, tmp_path / str(number), multi.join_secret, FAST)
        session.perform(lambda p: p.start())  # our hello is out; the joiner's never came
        multi.games.append(_Game(number, session))
    hello_hash = {g.number: g.session.peer.flow.senders[HOST].hashes[0] for g in multi.games}
    unknown_id = bytes(range(32))

    def found(first: bytes | None) -> int | None:
        decision = decide(Hi(multi.join_secret, unknown_id, 0, first), multi.state(""),
                          multi.policy)
        return decision.number if isinstance(decision, Resume) else None

    for number in (1, 2, 3):
        assert found(hello_hash[number]) == number
    assert found(None) is None  # three wait: which one is it?
    assert found(bytes(32)) is None
    multi.games = multi.games[1:2]
    assert found(None) is None  # (only the joiner we admitted knows `first`)


def p2pgotg(home: Path, *args: str, out: Path) -> subprocess.Popen:
    """`p2pgotg ARGS` as a process of its own, at home in `home`, its output in `out`."""
    env = dict(os.environ, P2PGOTG_HOME=str(home), PYTHONUNBUFFERED="1")
    with open(out, "wb") as o:
        return subprocess.Popen([sys.executable, "-m", "p2pgotg", *args], stdout=o,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)


def invite_of(host: subprocess.Popen, out: Path) -> str:
    """The invite a many-game host process prints (its `invite:` line)."""
    deadline = time.monotonic() + SAFETY
    code = None
    while code is None and time.monotonic() < deadline and host.poll() is None:
        code = next((line.split()[1] for line in out.read_text().splitlines()
                     if line.startswith("invite: ")), None)
        time.sleep(0.05)
    assert code is not None, out.read_text()
    return code


@pytest.mark.slow
def test_the_many_game_host_command_plays_through_its_worker_and_leaves_none_behind(tmp_path):
    # `p2pgotg host --bot --max-games 2 --games-total 2` and two `p2pgotg join --bot`, as
    # separate processes: the host's bots think in its worker process, both games end
    # clean, the host exits 0 and its worker does not outlive it.
    out = tmp_path / "host.out"
    host = p2pgotg(tmp_path / "host", "host", "--bot", "--max-games", "2", "--games-total",
                   "2", "--bind", "127.0.0.1", "--port", "0", "--seed", "3", out=out)
    joiners: list[subprocess.Popen] = []
    try:
        code = invite_of(host, out)
        children: list[int] = []
        for task in Path(f"/proc/{host.pid}/task").glob("*"):  # (any thread may start it)
            with contextlib.suppress(OSError):  # (a thread that ended meanwhile)
                children += [int(c) for c in (task / "children").read_text().split()]
        workers = [c for c in children
                   if b"p2pgotg.net.play.bot_worker" in Path(f"/proc/{c}/cmdline").read_bytes()]
        assert len(workers) == 1
        joiners = [p2pgotg(tmp_path / f"joiner-{i}", "join", code, "--bot", "--seed", str(i),
                           out=tmp_path / f"joiner-{i}.out") for i in range(2)]
        for process in joiners:
            assert process.wait(SAFETY * 2) == 0
        assert host.wait(SAFETY) == 0, out.read_text()
    finally:
        for process in [host, *joiners]:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert "done: 2 games started, 0 resumed, 2 ended" in out.read_text()
    assert not Path(f"/proc/{workers[0]}").exists()  # reaped by the host before it exited
    files = sorted((tmp_path / "host").rglob("*.gtr"))
    assert len(files) == 2
    for path in files:
        assert replay(parse(path.read_bytes())).finding is Finding.CLEAN


# -- each game's bot is seeded on its own (issue 23, finding 13) ---------------------------

def test_each_games_bot_seed_is_drawn_afresh_and_not_from_a_small_base():
    """Without --seed, every game's bot gets 128 bits of the operating system's randomness:
    no two games' seeds are a small base plus their numbers, so one revealed setup tells
    nothing of another game's. With --seed, game N gets SEED + N, to repeat games."""
    draws = [seat_seed(None, n) for n in range(1, 9)] + [seat_seed(None, 1) for _ in range(8)]
    assert len(set(draws)) == len(draws)
    assert all(abs(a - b) > 2**64 for a, b in itertools.combinations(draws, 2))
    assert max(d.bit_length() for d in draws) > 100  # (31 bits: a search finds it)
    assert [seat_seed(7, n) for n in (1, 2, 3)] == [8, 9, 10]


def bot_setup(path: Path) -> Setup:
    """The host bot's own setup, from the secrets record of its transcript."""
    transcript = parse(path.read_bytes())
    secrets = next(r[1] for r in transcript.records if r[0] == "secrets" and "ranks" in r[1])
    side = Side.WHITE if min(secrets["squares"]) < 36 else Side.BLACK
    ranks = [Rank(r) for r in secrets["ranks"]]
    return Setup(side, dict(zip(secrets["squares"], ranks, strict=True)))


@pytest.mark.slow
def test_two_many_game_hosts_started_alike_give_their_bots_other_setups(tmp_path):
    """Three many-game host processes, one game each: two `host --bot --max-games 2` with
    the same arguments and no seed (their bots' setups differ), and one with --seed 5
    (game 1's bot is exactly the bot seeded 6: benchmarks can still repeat a game; it
    plays in the host's process, `--max-games 1`, where a decision is never asked again
    as one in the worker may be when the game changed while it was made)."""
    runs = {"a": ("--max-games", "2"), "b": ("--max-games", "2"),
            "seeded": ("--max-games", "1", "--seed", "5")}
    hosts: dict[str, subprocess.Popen] = {}
    joiners: list[subprocess.Popen] = []
    try:
        for name, extra in runs.items():
            hosts[name] = p2pgotg(tmp_path / name, "host", "--bot", *extra, "--games-total",
                                  "1", "--bind", "127.0.0.1", "--port", "0",
                                  out=tmp_path / f"{name}.out")
        for name, host in hosts.items():
            code = invite_of(host, tmp_path / f"{name}.out")
            joiners.append(p2pgotg(tmp_path / f"joiner-{name}", "join", code, "--bot",
                                   "--seed", "1", out=tmp_path / f"joiner-{name}.out"))
        for process in [*joiners, *hosts.values()]:
            assert process.wait(SAFETY * 2) == 0
    finally:
        for process in [*hosts.values(), *joiners]:
            if process.poll() is None:
                process.kill()
                process.wait()
    setups = {name: bot_setup(next((tmp_path / name).rglob("*.gtr"))) for name in runs}
    assert setups["a"] != setups["b"]
    seeded = setups["seeded"]
    assert seeded == Bot(seeded.side, random.Random(6), "normal").choose_setup()
