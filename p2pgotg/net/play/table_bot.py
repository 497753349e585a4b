"""The Towers bot at a seat of a table: chooses its colour's actions (the hard level is
paranoid with three or four seats) on a worker thread, so that a host whose bot thinks
goes on relaying meanwhile."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

import trio

from p2pgotg.games.towers.players import Budget, TowersBot
from p2pgotg.net.play.table_joiner import TableRunner
from p2pgotg.net.play.table_session import TableSession
from p2pgotg.protocol import LocalProtocolError

#: A small budget per decision for bots at tables, in nodes and without a deadline, so that
#: a seeded bot plays the same game whatever the machine's load.
TABLE_BUDGET = Budget(nodes=300, seconds=None, max_depth=4)


def table_bot(seed: int, level: str = "hard", think: float = 0.0,
              budget: Budget = TABLE_BUDGET,
              ready: Callable[[TableSession], bool] = lambda session: True) -> TableRunner:
    """A runner that plays the seat's colour with the Towers bot at `level`, waiting `think`
    seconds before each action, and acting only while `ready(session)` holds (a player
    that waits for something, such as every seat's `heads`)."""
    rng = random.Random(seed)

    async def run(session: TableSession) -> None:
        bots: dict[int, TowersBot] = {}
        while not session.done:
            position = session.seat.game  # (the kernel's TowersPosition: `.game` the rules')
            game = None if position is None else position.game
            status = session.status
            if game is None or game.is_over or status.seat_to_act != session.seat.my_seat \
                    or not ready(session):
                await session.wait_changed()
                continue
            colour = game.turn
            bot = bots.get(colour)
            if bot is None:
                bot = bots[colour] = TowersBot(colour, rng, level, budget)
            copy = game.copy()
            action = await trio.to_thread.run_sync(bot.choose_action, copy)
            if think > 0:
                await trio.sleep(think)
            if session.done or session.seat.game is None \
                    or session.seat.game.ply != copy.ply:
                continue  # (the table moved on meanwhile: a claim, a leave)
            try:
                session.perform(partial(_act, action=action))
            except LocalProtocolError as exc:
                session.problem = f"could not act: {exc}"
                await session.wait_changed()

    return run


def _act(seat: Any, action: Any) -> Any:
    return seat.act(action)
