"""A host that plays many games at once: one listener, one invite, one join secret.

The one host engine (`hosting.Host`) with the many-game policy (`host_policy`): a `hi`
without a game id starts a new game of its own instead of being told the host is busy,
as long as fewer than `max_games` games are in progress (beyond that the joiner gets an
`error` frame saying the host is full), and within the per-source limits and cool-down of
SPEC 3.4; a made coin toss is bound to the joiner's key, not to the invite. A finished game
lingers for a short while before its transcript file is closed, so that a joiner whose
connection broke just before our last goodbye reached it can come back and complete its
own transcript. The host's limit per owed action (SPEC 3.6) ends a game by our abandonment
claim when the joiner has owed the same thing that long: a slot is held only by a joiner
that makes progress.

    stats = await host_many(config, lambda n: bot_runner(seat_seed(None, n)), max_games=200,
                            task_status=task_status)    # runs until cancelled
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import trio

from p2pgotg.net.play.host_policy import FULL, HostPolicy, TossBound
from p2pgotg.net.play.hosting import Host, HostConfig, Hosting, HostStats, SeatFactory
from p2pgotg.net.play.session import GameSession

__all__ = ["ACTION_LIMIT", "FULL", "host_many", "tune_collector_for_many_games"]

#: The host's limit per owed action (SPEC 3.6), seconds: a joiner that has owed one thing
#: this long loses the game by our claim. The longest the setup may take, for anything.
ACTION_LIMIT = 300.0


def tune_collector_for_many_games() -> None:
    """Call once at the start of a process that holds many games, for shorter pauses.

    Every game's history and signed messages make a large long-lived heap, and each full
    garbage collection pauses every game at once: 150-250 ms at 200 games, several times a
    minute with Python's defaults. The middle generation is mostly trio's waiting tasks
    (coroutines, cancel scopes), some 10 ms a collection with the defaults. So: startup's
    objects are frozen (never garbage, never scanned again); the middle generation is
    collected after 3 young collections instead of 10 (pauses of about 5 ms); a full
    collection waits for 700 of those instead of 10, minutes apart under load. Cyclic
    garbage is still reclaimed, only later; the games free almost everything by reference
    counting. (Raising the youngest threshold instead made each pause slower out of
    proportion.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 3, 700)


async def host_many(
    config: HostConfig,
    run_seat_factory: SeatFactory,
    max_games: int,
    *,
    games_total: int | None = None,
    action_limit: float = ACTION_LIMIT,
    on_status: Callable[[str], None] = lambda s: None,
    on_game_end: Callable[[int, GameSession], None] = lambda n, s: None,
    stop: trio.Event | None = None,
    task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED,
) -> HostStats:
    """Host up to `max_games` games at once, each played by `run_seat_factory(number)`,
    until cancelled, until `stop` is set, or, with `games_total`, until that many games
    have ended; then the joiners of games that just ended get a moment to take our
    goodbye, games in progress are left resumable, and the counts are returned. With
    `config.resume`, unfinished hosted games saved under the newest one's join secret are
    picked up first (they count against `max_games`). `on_game_end(number, session)` is
    called as each game ends; the session's transcript file is still open then. A joiner
    that has owed the same thing for `action_limit` seconds loses its game by our claim
    (SPEC 3.6)."""
    policy = HostPolicy(max_games=max_games, games_total=games_total,
                        toss_bound=TossBound.KEY, action_limit=action_limit)
    host = Host(config, run_seat_factory, policy, on_status=on_status,
                on_game_end=on_game_end)
    return await host.run(stop, task_status)
