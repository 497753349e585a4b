"""Whole games through the network layer: bot against bot over real TLS sockets on
loopback, and the same stack over memory streams that deliver one byte at a time.

What a user would check after a game: both sides reach the same clean, fully audited
verdict; the two saved transcripts hold the same signed messages from each sender, in the
same order, each once; and `p2pgotg verify` accepts both files.
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import frames
import pytest
import trio
import trio.testing

from p2pgotg.cli import main as cli_main
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, parse
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.rules import FlagRule, RuleOptions
from p2pgotg.selfplay import play_one
from p2pgotg.testing.pair import DetRand, det_key

SAFETY = 60  # seconds: a net against hangs, never a measure of speed


def messages_by_sender(path: Path) -> dict[str, list[bytes]]:
    """The signed messages of a transcript file, per sender, in file order."""
    transcript = parse(path.read_bytes())
    assert not transcript.torn_tail
    return {role: [data for sender, data in transcript.messages if sender == role]
            for role in (HOST, JOINER)}


def assert_each_message_once(messages: dict[str, list[bytes]]) -> None:
    """Sequence numbers 0, 1, 2... per sender: nothing missing, nothing twice."""
    for role, envelopes in messages.items():
        seqs = [Envelope.decode(data).body().seq for data in envelopes]
        assert seqs == list(range(len(seqs))), f"{role}: {seqs}"


def verify_exit(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_main(["verify", str(path)])
    return code, capsys.readouterr().out


def assert_same_clean_game(host: GameSession, joiner: GameSession,
                           capsys: pytest.CaptureFixture[str]) -> None:
    for session in (host, joiner):
        verdict = session.verdict
        assert verdict is not None, f"{session.peer.role}: no verdict"
        assert verdict.clean and verdict.audit_complete, verdict.describe()
        assert session.peer.failed is None
    assert host.verdict == joiner.verdict
    assert host.path is not None and joiner.path is not None
    assert host.path.name == joiner.path.name  # both name the file by the same game id
    host_file, joiner_file = messages_by_sender(host.path), messages_by_sender(joiner.path)
    assert host_file == joiner_file
    assert_each_message_once(host_file)
    for path in (host.path, joiner.path):
        code, out = verify_exit(path, capsys)
        assert code == 0, out
        assert "audit complete" in out


@pytest.mark.parametrize("seed, options", [
    (11, RuleOptions()),
    (12, RuleOptions(flag_rule=FlagRule.IMMEDIATE, two_squares=True, chasing=True)),
])
async def test_whole_game_over_loopback_tls(tmp_path, capsys, seed, options):
    with trio.fail_after(SAFETY):
        result = await play_one(options, tmp_path, seed)
    assert result.agreed
    assert_same_clean_game(result.host, result.joiner, capsys)
    assert result.host.path.parent == tmp_path / "host"
    assert result.joiner.path.parent == tmp_path / "joiner"
    assert [p.name for p in (tmp_path / "host").iterdir()] == [result.host.path.name]
    assert [p.name for p in (tmp_path / "joiner").iterdir()] == [result.joiner.path.name]


# -- the same stack over memory streams, one byte at a time -------------------------------


class Trickle(trio.abc.Stream):
    """A stream that hands its reader one byte per receive_some, whatever was sent."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.reads = 0
        self.largest = 0

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.inner.receive_some(1)
        self.reads += 1
        self.largest = max(self.largest, len(data))
        return bytes(data)

    async def aclose(self) -> None:
        await self.inner.aclose()




TLS_FP = hashlib.sha256(b"test_net_games certificate").digest()
SECRET = bytes(range(16))


async def test_whole_game_over_a_byte_at_a_time_trickle(tmp_path, capsys, autojump_clock):
    """Every frame arrives in as many pieces as it has bytes, on both sides, for a whole
    game: the framing holds, and the game ends clean and identical on both sides."""
    limits = Timeouts()
    host = GameSession(GotgPeer(HOST, det_key("test_net_games/host"), TLS_FP,
                                RuleOptions(), DetRand("th")),
                       tmp_path / "host", SECRET, limits)
    joiner = GameSession(GotgPeer(JOINER, det_key("test_net_games/joiner"), TLS_FP,
                                  None, DetRand("tj")),
                         tmp_path / "joiner", SECRET, limits)
    a, b = trio.testing.memory_stream_pair()
    host_stream, joiner_stream = Trickle(a), Trickle(b)
    host.perform(lambda p: p.start())
    with trio.fail_after(SAFETY * 10):  # virtual seconds (the clock jumps when idle)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(3)).step)
            nursery.start_soon(drive, joiner, BotSeat(random.Random(4)).step)
            nursery.start_soon(joiner.run_connection, FramedChannel(
                joiner_stream, keepalive_interval=limits.keepalive,
                silence_timeout=limits.silence), 0)
            await host.run_connection(FramedChannel(
                host_stream, keepalive_interval=limits.keepalive,
                silence_timeout=limits.silence), 0)
    host.close()
    joiner.close()
    assert_same_clean_game(host, joiner, capsys)
    frames = sum(len(v) for v in messages_by_sender(host.path).values())
    for stream in (host_stream, joiner_stream):
        assert stream.largest == 1
    # every byte of every frame was its own read (4-byte header included)
    assert host_stream.reads + joiner_stream.reads > 4 * frames


@pytest.mark.parametrize("arbiter", ["open", "blind"])
def test_selfplay_command_audits_clean_in_each_mode(arbiter: str, tmp_path: Path, capsys) -> None:
    """`p2pgotg selfplay --arbiter MODE`: bot against bot over TLS on loopback, exit 0."""
    code = cli_main(["selfplay", "--games", "1", "--seed", "3", "--arbiter", arbiter,
                     "--save-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"challenges {arbiter}" in out and "1 of 1 game audited clean" in out


# -- write-ahead: nothing leaves before it is on disk -----------------------------------------


class WatchedChannel(FramedChannel):
    """A channel that, at every send, checks the sender's transcript against what the
    completed fsyncs covered (`synced`: path -> bytes of the file an fsync has finished)."""

    def __init__(self, stream: trio.abc.Stream, session: GameSession, synced: dict[Path, int],
                 limits: Timeouts) -> None:
        super().__init__(stream, keepalive_interval=limits.keepalive,
                         silence_timeout=limits.silence)
        self.session = session
        self.synced = synced
        self.checked = {"msg": 0, "bye": 0}

    async def send(self, frame: bytes) -> None:
        path = self.session.path
        if path is not None:  # (before the game has an id there is no file yet)
            data = path.read_bytes()
            durable = self.synced.get(path, 0)
            ctl = frames.fields(frame)
            if ctl is None:  # a game message: its record must be inside the fsynced part
                end = data.find(frame) + len(frame)
                assert len(frame) <= end <= durable, "a message was sent before its fsync"
                self.checked["msg"] += 1
            elif ctl["ctl"] == "bye":  # "I hold N of yours": those N must be durable
                on_disk = parse(data[:durable]).messages
                held = sum(1 for sender, _ in on_disk if sender == self.session.peer.other_role)
                assert held >= ctl["have"], "bye counted messages that were not yet durable"
                self.checked["bye"] += 1
        await super().send(frame)


async def test_nothing_is_sent_before_its_transcript_record_is_fsynced(tmp_path, monkeypatch,
                                                                       capsys):
    """SPEC 2.8 (write-ahead), with the fsync on a worker thread: every game message is
    sent only after an fsync that covered its record has returned, and every goodbye
    counts only messages an fsync has covered."""
    assert TranscriptFile.THREADED
    synced: dict[Path, int] = {}
    fsync = TranscriptFile._fsync

    def watched_fsync(self: TranscriptFile) -> None:
        size = os.fstat(self._fd).st_size  # what this flush will cover, at least
        fsync(self)
        synced[self.path] = max(synced.get(self.path, 0), size)

    monkeypatch.setattr(TranscriptFile, "_fsync", watched_fsync)
    limits = Timeouts()
    host = GameSession(GotgPeer(HOST, det_key("test_net_games/host"), TLS_FP,
                                RuleOptions(), DetRand("wh")),
                       tmp_path / "host", SECRET, limits)
    joiner = GameSession(GotgPeer(JOINER, det_key("test_net_games/joiner"), TLS_FP,
                                  None, DetRand("wj")),
                         tmp_path / "joiner", SECRET, limits)
    a, b = trio.testing.memory_stream_pair()
    channels = WatchedChannel(a, host, synced, limits), WatchedChannel(b, joiner, synced, limits)
    host.perform(lambda p: p.start())
    with trio.fail_after(SAFETY):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive, host, BotSeat(random.Random(5)).step)
            nursery.start_soon(drive, joiner, BotSeat(random.Random(6)).step)
            nursery.start_soon(joiner.run_connection, channels[1], 0)
            await host.run_connection(channels[0], 0)
    host.close()
    joiner.close()
    assert_same_clean_game(host, joiner, capsys)
    for channel in channels:  # the checks ran on (nearly) every message and the goodbye
        sent = len(messages_by_sender(channel.session.path)[channel.session.peer.role])
        assert channel.checked["msg"] >= sent - 2  # (the hello goes out before the file)
        assert channel.checked["bye"] >= 1
