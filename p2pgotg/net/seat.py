"""Running a seat (the bot, a person's screen) against a session: call its `step` after
every change and perform what it decides."""

from __future__ import annotations

from collections.abc import Callable

import trio

from p2pgotg.net.session import Action, GameSession
from p2pgotg.protocol import LocalProtocolError, Peer

Step = Callable[[Peer], Action | None]


async def drive(session: GameSession, step: Step, think: float = 0.0) -> None:
    """Until the game is done: ask `step` what to do; when nothing, wait for a change.
    With `think` > 0, wait that many seconds before each action, then ask `step` again
    (the game may have changed meanwhile) and do what it says then."""
    while not session.done:
        action = step(session.peer)
        if action is not None and think > 0:
            await trio.sleep(think)
            if session.done:
                break
            action = step(session.peer)
        if action is not None:
            try:
                session.perform(action)
                continue
            except LocalProtocolError as exc:
                session.problem = f"could not act: {exc}"
        await session.wait_changed()
