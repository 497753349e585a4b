"""Names over a real TLS connection on loopback (SPEC 3.4): each side's name rides in its
`hi` or `ok`, arrives escaped (a hostile name cannot steer a terminal), is saved in the
transcript (SPEC 2.8), and `verify` reads it back; the signed game messages do not change
(their bytes are the same with or without names: the vectors and recorded transcripts in
protocol/ are checked unchanged by test_conformance and test_protocol_vectors)."""

from __future__ import annotations

import random
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.cli import main
from p2pgotg.net.play.hosting import HostConfig, host_game
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.seat import drive
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import parse
from p2pgotg.rules import RuleOptions

HOSTILE = "\x1b]0;owned\x07Eve\u202e"  # a window title, a bell and a bidi override


def seat(seed: int):
    bot = BotSeat(random.Random(seed), "easy")

    async def run(session) -> None:
        await drive(session, bot.step)

    return run


async def test_names_cross_in_hi_and_ok_escaped_and_saved(tmp_path: Path, capsys) -> None:
    cert, key = make_certificate()
    host_config = HostConfig(Ed25519PrivateKey.generate(), cert, key, RuleOptions(),
                             tmp_path / "host", bind="127.0.0.1", resume=False, name="Ana")
    sessions = {}
    async with trio.open_nursery() as nursery:
        async def run_host(task_status=trio.TASK_STATUS_IGNORED) -> None:
            sessions["host"] = await host_game(host_config, seat(1), task_status=task_status)

        hosting = await nursery.start(run_host)
        join_config = JoinConfig(Ed25519PrivateKey.generate(),
                                 Invite.decode(hosting.invites[0]), tmp_path / "joiner",
                                 resume=False, name=HOSTILE)
        sessions["joiner"] = await join_game(join_config, seat(2))
    host, joiner = sessions["host"], sessions["joiner"]
    assert joiner.peer_name == "Ana"
    shown = host.peer_name
    assert shown == "\\x1b]0;owned\\x07Eve\\u202e" and "\x1b" not in shown
    saved = parse(host.path.read_bytes()).secrets
    assert saved["name"] == b"Ana" and saved["peer_name"] == shown.encode()
    assert parse(joiner.path.read_bytes()).secrets["peer_name"] == b"Ana"
    capsys.readouterr()
    assert main(["verify", str(host.path)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]0;owned\\x07Eve\\u202e (key " in out and "\x1b" not in out
