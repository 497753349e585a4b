"""The bot's decisions in a process of their own: `python -m p2pgotg.net.play.bot_worker`.

A host holding many games runs every game's bot here, so its event loop does only the
protocol's work (the bot is the largest share of it) and a second core does the thinking.
The worker keeps, per game, the bot and a mirror of that seat's view, which the host keeps
in step by sending only what is new since the last request (plies played, ranks learned).
The decisions are those the same bot would make in the host's process (same seed, same
view, same code: `bot_seat.decide_turn`).

Requests and answers are frames on stdin and stdout: 4-byte big-endian length, then a
pickle. Pickle is safe here: both ends are this program, parent and child, over private
pipes. The worker answers requests in order, ignores SIGINT (the host decides when to stop)
and exits when its stdin closes.
"""

from __future__ import annotations

import pickle
import random
import signal
import struct
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO

from p2pgotg.players.bot import Bot
from p2pgotg.players.bot_seat import Decision, decide_turn
from p2pgotg.rules import ChallengeResult, Game, Move, Piece, Rank, Side
from p2pgotg.rules.game import PlyRecord

HEADER = struct.Struct(">I")


def encode(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


#: A ply as the worker needs it: (from square, to square, the challenge result's value or
#: None, the side whose flag was lost or None). Plain ints and strings pickle in C, the
#: rules' frozen dataclasses and enums in Python, at a cost the host pays every turn.
Ply = tuple[int, int, str | None, int | None]


def ply_of(record: PlyRecord) -> Ply:
    result, lost = record.result, record.lost_flag
    return (record.move.from_square, record.move.to_square,
            None if result is None else result.value, None if lost is None else int(lost))


@dataclass(frozen=True)
class ViewDelta:
    """What a seat's view gained since the worker last saw it: the whole view the first
    time (`game`), then the plies played and the ranks learned (side, piece id, rank)."""

    game: Game | None = None
    plies: tuple[Ply, ...] = ()
    ranks: tuple[tuple[int, int, int], ...] = ()

    def apply(self, mirror: Game | None) -> Game:
        """The mirror brought up to date (the ranks first: a ply's result is then checked
        against every rank known, as in the view itself)."""
        if self.game is not None:
            mirror = self.game
        if mirror is None:
            raise ValueError("the first request of a game must carry its whole view")
        for side, pid, rank in self.ranks:
            mirror.reveal(Piece(Side(side), pid), Rank(rank))
        for src, dst, result, lost in self.plies:
            mirror.push(Move(src, dst), None if result is None else ChallengeResult(result),
                        None if lost is None else Side(lost))
        return mirror


@dataclass(frozen=True)
class SetupRequest:
    key: int
    seed: int
    level: str  # the bot's level by name ("easy", "normal", "hard", ...)
    side: int  # (a Side's value: ints pickle faster than enums)


@dataclass(frozen=True)
class TurnRequest:
    key: int
    seed: int
    level: str
    side: int
    delta: ViewDelta
    draw_offered: bool


@dataclass(frozen=True)
class Forget:
    """The game is over: drop its bot and mirror (no answer)."""

    key: int


class _Games:
    """Every game's bot and mirror in this worker."""

    def __init__(self) -> None:
        self.bots: dict[int, Bot] = {}
        self.views: dict[int, Game] = {}

    def bot(self, key: int, seed: int, level: str, side: int) -> Bot:
        bot = self.bots.get(key)
        if bot is None:
            bot = self.bots[key] = Bot(Side(side), random.Random(seed), level)
        return bot

    def answer(self, request: SetupRequest | TurnRequest) -> Decision:
        bot = self.bot(request.key, request.seed, request.level, request.side)
        if isinstance(request, SetupRequest):
            return ("setup", bot.choose_setup())
        view = self.views[request.key] = request.delta.apply(self.views.get(request.key))
        return decide_turn(bot, view, request.draw_offered)

    def forget(self, key: int) -> None:
        self.bots.pop(key, None)
        self.views.pop(key, None)


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    data = stream.read(n)
    if len(data) < n:
        return None  # end of input: the host is gone
    return data


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    """Answer requests from `inp` on `out` until `inp` ends. A request that cannot be
    answered gets ("error", why); the worker goes on with the next."""
    games = _Games()
    while True:
        head = _read_exactly(inp, HEADER.size)
        if head is None:
            return
        body = _read_exactly(inp, HEADER.unpack(head)[0])
        if body is None:
            return
        request = pickle.loads(body)
        if isinstance(request, Forget):
            games.forget(request.key)
            continue
        try:
            answer: Any = games.answer(request)
        except Exception as exc:  # noqa: BLE001  (a failed request falls back to the host's bot)
            games.forget(request.key)
            answer = ("error", f"{type(exc).__name__}: {exc}")
        out.write(encode(answer))
        out.flush()


def main() -> None:
    from p2pgotg.net.play.multihost import tune_collector_for_many_games

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tune_collector_for_many_games()  # (every game's bot and view: a large long-lived heap)
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    # Run as the module proper, not as __main__: the requests are pickles of its classes.
    from p2pgotg.net.play.bot_worker import main as module_main

    module_main()
