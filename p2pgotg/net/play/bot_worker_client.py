"""The host's side of the bot worker (`p2pgotg.net.play.bot_worker`): one process thinks for
every game's bot seat, and the host's event loop only sends it what changed and awaits the
answer (the pattern of python-chess's `chess.engine`: an engine process behind pipes).

If the worker cannot answer (it died, or a request failed there), the seat goes on with
the same bot in the host's own process, so no game is lost to it.
"""

from __future__ import annotations

import math
import pickle
import random
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.bot_worker import (
    HEADER,
    Forget,
    SetupRequest,
    TurnRequest,
    ViewDelta,
    encode,
    ply_of,
)
from p2pgotg.net.play.seat import SeatRunner, drive_async
from p2pgotg.net.play.session import GameSession
from p2pgotg.players.bot_seat import (
    BotSeat,
    Decision,
    action_for,
    needs_decision,
    rules_to_accept,
)
from p2pgotg.players.levels import SEAT_DEFAULT
from p2pgotg.protocol.peer import Action
from p2pgotg.rules import Piece, Rank


@dataclass(eq=False)
class _Pending:
    done: trio.Event = field(default_factory=trio.Event)
    answer: Decision = ("error", "no answer")


class BotWorker:
    """A running worker process; `runner(seed)` makes a game's seat that thinks there."""

    def __init__(self, process: trio.Process) -> None:
        self._process = process
        self._outbox_send, self._outbox = trio.open_memory_channel[bytes](math.inf)
        self._sending = trio.Lock()  # one frame at a time on the worker's input
        self._pending: deque[_Pending] = deque()
        self._keys = 0
        self.broken: str | None = None  # why the worker cannot answer any more

    def runner(self, seed: int, level: str = SEAT_DEFAULT, delay: float = 0.0) -> SeatRunner:
        """A seat runner like `selfplay.bot_runner`: the same bot, thinking in the worker.
        Should the worker fail, the game goes on with the bot in this process."""
        self._keys += 1
        seat = RemoteBotSeat(self._keys, seed, level)
        local: list[BotSeat] = []  # the bot in this process, once the worker failed

        async def decide(peer: GotgPeer) -> Action[GotgPeer] | None:
            if local:
                return local[0].step(peer)
            request = seat.request(peer)
            if request is None:
                return rules_to_accept(peer)
            decision = await self.ask(request)
            if decision[0] != "error":
                return action_for(decision)
            local.append(BotSeat(random.Random(seed), level))
            return local[0].step(peer)

        async def run(session: GameSession) -> None:
            try:
                await drive_async(session, decide, think=delay)
            finally:
                self._post(Forget(seat.key))

        return run

    async def ask(self, request: SetupRequest | TurnRequest) -> Decision:
        """The worker's answer, or ("error", why) when it cannot give one."""
        if self.broken is not None:
            return ("error", self.broken)
        pending = _Pending()
        frame = encode(request)  # (the view as it is now, whatever happens while we wait)
        async with self._sending:
            if self.broken is not None:
                return ("error", self.broken)
            self._pending.append(pending)  # (answers come in the order of the requests)
            await self._send(frame)
        await pending.done.wait()
        return pending.answer

    def _post(self, message: object) -> None:
        """Send `message`, which has no answer, without waiting."""
        if self.broken is None:
            self._outbox_send.send_nowait(encode(message))

    async def _send(self, frame: bytes) -> None:
        """Write one whole frame: not cut off by a game's cancellation (half a frame would
        garble every later one), but given up on if the worker stops reading."""
        assert self._process.stdin is not None
        with trio.CancelScope(shield=True, deadline=trio.current_time() + 10) as scope:
            try:
                await self._process.stdin.send_all(frame)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._break("the bot worker stopped reading")
        if scope.cancelled_caught:
            self._break("the bot worker stopped reading for 10 s")

    def _break(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
        while self._pending:
            pending = self._pending.popleft()
            pending.answer = ("error", self.broken)
            pending.done.set()

    async def _write(self) -> None:
        """Send what `_post` queued."""
        async for frame in self._outbox:
            async with self._sending:
                if self.broken is not None:
                    return
                await self._send(frame)

    async def _read(self) -> None:
        assert self._process.stdout is not None
        buffer = bytearray()
        while True:
            try:
                data = await self._process.stdout.receive_some(1 << 16)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self._break("the bot worker exited")
                return
            buffer += data
            while len(buffer) >= HEADER.size:
                size = HEADER.unpack_from(buffer)[0]
                if len(buffer) < HEADER.size + size:
                    break
                body = bytes(buffer[HEADER.size:HEADER.size + size])
                del buffer[:HEADER.size + size]
                if self._pending:
                    pending = self._pending.popleft()
                    pending.answer = _decision(body)
                    pending.done.set()


#: Each kind of answer and its length (see `bot_seat.Decision`).
_ANSWERS = {"setup": 2, "draw": 2, "claim": 2, "resign": 1, "move": 4, "error": 2}


def _decision(body: bytes) -> Decision:
    answer = pickle.loads(body)  # (our own child's answer; see the worker's docstring)
    if not isinstance(answer, tuple) or not answer or _ANSWERS.get(answer[0]) != len(answer):
        return ("error", f"the bot worker answered {answer!r:.80}")
    return answer


@asynccontextmanager
async def open_bot_worker() -> AsyncIterator[BotWorker]:
    """Start the worker process; on leaving, close its input (it exits) and reap it."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "p2pgotg.net.play.bot_worker"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    worker = BotWorker(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(worker._write)
            nursery.start_soon(worker._read)
            try:
                yield worker
            finally:
                nursery.cancel_scope.cancel()
    finally:
        worker._break("the bot worker was closed")
        with trio.CancelScope(shield=True):
            assert process.stdin is not None
            await process.stdin.aclose()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            if process.stdout is not None:
                await process.stdout.aclose()


class RemoteBotSeat:
    """One game's bot seat whose bot lives in the worker: it says what to ask, sending
    only what its view gained since the last request."""

    def __init__(self, key: int, seed: int, level: str = SEAT_DEFAULT) -> None:
        self.key, self.seed, self.level = key, seed, level
        self._mirrored = -1  # plies the worker's mirror holds (-1: it holds no view)
        self._ranks: Mapping[Piece, Rank] = {}

    def request(self, peer: GotgPeer) -> SetupRequest | TurnRequest | None:
        """What to ask the worker now (None: nothing for the bot to decide). Counts what
        it sends as held by the worker from then on."""
        kind = needs_decision(peer)
        side = peer.side
        if kind is None or side is None:
            return None
        if kind == "setup":
            return SetupRequest(self.key, self.seed, self.level, int(side))
        return TurnRequest(self.key, self.seed, self.level, int(side), self._delta(peer),
                           peer.draw_offered_to_me)

    def _delta(self, peer: GotgPeer) -> ViewDelta:
        view = peer.view
        assert view is not None
        history = view.history
        known = view.known_ranks()
        if self._mirrored < 0 or len(history) < self._mirrored:
            self._mirrored, self._ranks = len(history), known
            return ViewDelta(game=view)
        new_ranks = tuple((int(p.side), p.pid, int(r)) for p, r in known.items()
                          if self._ranks.get(p) is not r)
        plies = tuple(map(ply_of, history[self._mirrored:]))
        self._mirrored, self._ranks = len(history), known
        return ViewDelta(plies=plies, ranks=new_ranks)
