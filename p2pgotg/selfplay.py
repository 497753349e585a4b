"""Bot against bot over real TLS sockets on loopback: the whole product, end to end."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games import module_of_peer
from p2pgotg.net.play.hosting import HostConfig, host_game
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.seat import drive
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.players.levels import SEAT_DEFAULT
from p2pgotg.protocol import Verdict


@dataclass
class SelfplayResult:
    host: GameSession
    joiner: GameSession

    @property
    def verdict(self) -> Verdict | None:
        return self.host.verdict

    @property
    def agreed(self) -> bool:
        return self.host.verdict == self.joiner.verdict


def seat_seed(fixed: int | None, number: int = 0) -> int:
    """The seed of one game's bot: `fixed + number` when a seed was given (benchmarks and
    tests repeat their games with `--seed`), else 128 bits from the operating system's
    randomness, drawn afresh for every game. A game's bot setup is secret until the audit,
    so no game's seed may tell another's: games seeded from one small base (a 31-bit one,
    `base + number`) give the base away to a search over one revealed setup, and with it
    every other game's setup, past and future."""
    return fixed + number if fixed is not None else secrets.randbits(128)


def bot_runner(seed: int, delay: float = 0.0, level: str = SEAT_DEFAULT):
    """A seat runner for the bot of the session's game at `level`; it waits `delay` seconds
    before each action."""
    rng = random.Random(seed)

    async def run(session: GameSession) -> None:
        seat = module_of_peer(session.peer).bot_seat(rng, level)
        await drive(session, seat.step, think=delay)

    return run


async def play_one(options: Any, save_dir: Path, seed: int,
                   limits: Timeouts | None = None, level: str = SEAT_DEFAULT) -> SelfplayResult:
    """One bot-versus-bot game between a host and a joiner in this process, both bots
    at `level`."""
    limits = limits or Timeouts()
    cert, key = make_certificate()
    host_cfg = HostConfig(Ed25519PrivateKey.generate(), cert, key, options,
                          save_dir / "host", port=0, bind="127.0.0.1", limits=limits,
                          resume=False)
    result: dict[str, GameSession] = {}
    async with trio.open_nursery() as nursery:
        async def run_host(task_status=trio.TASK_STATUS_IGNORED) -> None:
            result["host"] = await host_game(host_cfg, bot_runner(seed * 2 + 1, level=level),
                                             task_status=task_status)

        hosting = await nursery.start(run_host)
        invite = Invite.decode(hosting.invites[0])
        join_cfg = JoinConfig(Ed25519PrivateKey.generate(), invite, save_dir / "joiner",
                              limits, resume=False)
        result["joiner"] = await join_game(join_cfg, bot_runner(seed * 2 + 2, level=level))
    return SelfplayResult(result["host"], result["joiner"])
