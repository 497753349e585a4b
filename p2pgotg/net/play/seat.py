"""Running a seat (the bot, a person's screen) against a session: call its `step` after
every change and perform what it decides."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.session import GameSession
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.protocol.peer import Action

Step = Callable[[GotgPeer], Action[GotgPeer] | None]
Decide = Callable[[GotgPeer], Awaitable[Action[GotgPeer] | None]]
#: What plays one side of a game: runs until the session is done (`drive` with a seat).
SeatRunner = Callable[[GameSession], Awaitable[None]]


async def drive(session: GameSession, step: Step, think: float = 0.0) -> None:
    """Until the game is done: ask `step` what to do; when nothing, wait for a change.
    With `think` > 0, wait that many seconds before each action, then ask `step` again
    (the game may have changed meanwhile) and do what it says then."""

    async def decide(peer: GotgPeer) -> Action[GotgPeer] | None:
        return step(peer)

    await drive_async(session, decide, think)


async def drive_async(session: GameSession, decide: Decide, think: float = 0.0) -> None:
    """`drive`, for a seat whose decisions take a while (they are made in another
    process): a decision made while the game changed is not acted on; it is asked again."""
    while not session.done:
        action = await _decided(session, decide)
        if action is not None and think > 0:
            await trio.sleep(think)
            if session.done:
                break
            action = await _decided(session, decide)
        if session.done:
            break
        if action is not None:
            try:
                session.perform(action)
                continue
            except LocalProtocolError as exc:
                session.problem = f"could not act: {exc}"
        await session.wait_changed()


async def _decided(session: GameSession, decide: Decide) -> Action[GotgPeer] | None:
    """`decide`'s answer, asked again until the game did not change while it was made."""
    while True:
        before = (session.peer.received_count(), len(session.events))
        action = await decide(session.peer)
        if session.done or before == (session.peer.received_count(), len(session.events)):
            return action
