"""The host's side of hole punching (SPEC 3.8): punching to the joiner a reply code names,
and, once a joiner came in that way, punching back to it whenever it is away, so that a
game resumes after a drop, a crash or a restart of either program with no code relayed.

While the joiner is away the host also asks STUN again whether its own public mapping is
still the one its invite names: a router that restarted may have changed it, and then
only a new invite code (the same game's: the same secret and pin) can bring the joiner
back; the host says so and shows it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from p2pgotg.net.reaching import rendezvous, stun_client
from p2pgotg.net.reaching.invite import NAT_EASY, NAT_NONE
from p2pgotg.net.reaching.punch import PunchFailed, PunchPort
from p2pgotg.protocol import HOST
from p2pgotg.reach.candidates import PUNCH, Candidate

PUNCH_TIME = 10.0  # seconds the host punches after taking a reply code
BACK_WINDOW = 20.0  # seconds of one try at punching back to an away joiner
AWAY_POLL = 0.5  # how often the host looks whether its joiner is away
RECHECK = 30.0  # while the joiner is away, ask STUN again this often

Accept = Callable[[trio.SocketStream], Awaitable[None]]


def _peer(stream: trio.SocketStream) -> Candidate | None:
    with contextlib.suppress(OSError, ValueError):
        address, port = stream.socket.getpeername()[:2]
        return Candidate(PUNCH, str(address).removeprefix("::ffff:"), int(port))
    return None


@dataclass
class HostPuncher:
    """Punches from the host's one punching port; hands what connects to ``accept``."""

    port: PunchPort
    data_dir: Path
    secret: bytes
    servers: list[tuple[str, int]]
    accept: Accept
    serving: trio.Nursery
    on_status: Callable[[str], None]
    public: Candidate | None  # our punch candidate, as the invite names it

    def _connected(self, stream: trio.SocketStream) -> None:
        peer = _peer(stream)
        if peer is not None:  # (whom to punch back to after a drop, this run or the next)
            rendezvous.remember(self.data_dir, self.secret, HOST, peer)
        self.serving.start_soon(self.accept, stream)

    async def to_reply(self, candidates: list[Candidate]) -> None:
        """Punch to the joiner a checked reply code names; PunchFailed after PUNCH_TIME."""
        stream = await self.port.punch(candidates, trio.current_time() + PUNCH_TIME)
        self._connected(stream)

    async def punch_back(self, away: Callable[[], bool],
                         on_moved: Callable[[Candidate], None]) -> None:
        """Run for the whole game: while ``away()`` (a joiner that came in once is gone),
        punch back to where it was last, and ask STUN whether our own mapping moved
        (``on_moved`` with the new one)."""
        checked = -RECHECK
        while True:
            if not away():
                checked = -RECHECK  # (the next absence asks STUN at once)
                await trio.sleep(AWAY_POLL)
                continue
            if trio.current_time() - checked >= RECHECK:
                checked = trio.current_time()
                await self._check_mapping(on_moved)
            target = rendezvous.recall(self.data_dir, self.secret, HOST)
            if target is None:
                await trio.sleep(AWAY_POLL)
                continue
            try:
                stream = await self.port.punch([target], trio.current_time() + BACK_WINDOW)
            except PunchFailed:
                continue
            self._connected(stream)
            with trio.move_on_after(BACK_WINDOW):  # (the handler takes it in, or drops it)
                while away():
                    await trio.sleep(AWAY_POLL)

    async def _check_mapping(self, on_moved: Callable[[Candidate], None]) -> None:
        if not self.servers:
            return
        probe = await stun_client.probe(self.servers, self.port.port, [])
        if probe.mapped is None or probe.nat not in (NAT_EASY, NAT_NONE):
            return
        now = Candidate(PUNCH, probe.mapped[0], probe.mapped[1])
        if now != self.public:
            self.public = now
            on_moved(now)
