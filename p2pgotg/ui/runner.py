"""Running the interface: prompt_toolkit on asyncio, the network on trio in guest mode on the
same loop (`trio.lowlevel.start_guest_run`, as GUIDE.md section 2 says).

Key handlers run in asyncio; sessions live in trio. Everything a key asks of a session goes
through the trio token (`run_sync_soon`), so it runs inside trio, and every session change
wakes a trio task that folds it into the state and redraws (`app.invalidate()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import outcome
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from prompt_toolkit.application import Application
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from p2pgotg.net.games import games_dir
from p2pgotg.net.hosting import HostConfig, Hosting, host_game
from p2pgotg.net.invite import Invite
from p2pgotg.net.joining import JoinConfig, join_game
from p2pgotg.net.paths import load_or_create_identity, load_or_create_tls_identity
from p2pgotg.net.session import GameSession, Limits, Link
from p2pgotg.net.tls import make_certificate
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.rules import RuleOptions
from p2pgotg.selfplay import bot_runner
from p2pgotg.ui.app import create_application
from p2pgotg.ui.errors import explain
from p2pgotg.ui.state import Action, AppState, Mode

BOT_GAMES = "bot"  # games against the bot are kept apart: `host` must never resume them


@dataclass
class Launch:
    """Everything a game needs from the command line."""

    options: RuleOptions = field(default_factory=RuleOptions)
    seed: int | None = None  # the bot's (and the random formations') seed
    think: float = 0.45  # seconds the bot waits before each move, so it can be seen
    port: int = 0
    bind: str | None = None
    invite: str | None = None
    limits: Limits = field(default_factory=Limits)
    save_dir: Path | None = None  # games_dir() when None
    identity: Callable[[], Ed25519PrivateKey] = load_or_create_identity
    tls_identity: Callable[[], tuple[bytes, bytes]] = load_or_create_tls_identity

    @property
    def games(self) -> Path:
        return self.save_dir if self.save_dir is not None else games_dir()


class Controller:
    """The trio side: starts games as the screens ask and performs their actions. It is
    the state's `Driver`; its public methods are called from prompt_toolkit's handlers."""

    def __init__(self, state: AppState, launch: Launch) -> None:
        self.state = state
        self.launch = launch
        self.app: Application | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._game: trio.CancelScope | None = None
        self._generation = 0
        self._stopping = False
        self._offset = 0.0
        self._seed = launch.seed if launch.seed is not None else random.randrange(2**31)
        state.rng = random.Random(self._seed * 7919 + 1)  # not the bot's formations
        state.driver = self

    # -- the Driver, called from asyncio -------------------------------------------------

    def perform(self, action: Action, done: str | None = None) -> None:
        self._soon(partial(self._perform, action, done))

    def start(self, mode: Mode, invite: str | None = None) -> None:
        self._soon(partial(self._start, mode, invite))

    def rematch(self) -> None:
        self._soon(partial(self._start, Mode.BOT, None))

    def now(self) -> float:
        return time.perf_counter() + self._offset

    def invalidate(self) -> None:
        if self.app is not None:
            self.app.invalidate()

    def stop(self) -> None:
        """End the trio side (the application is closing), however far it has got."""
        self._stopping = True
        if self._token is not None:
            self._soon(lambda: self._nursery.cancel_scope.cancel() if self._nursery else None)

    def _soon(self, fn: Callable[[], object]) -> None:
        token = self._token
        if token is None:
            self.state.warn("still starting: try again in a moment")
            return

        def guarded() -> None:
            try:
                fn()
            except Exception as exc:  # noqa: BLE001  (a bug must not take trio down)
                self.state.warn(explain(exc))
            self.invalidate()

        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(guarded)

    # -- inside trio -----------------------------------------------------------------------

    async def main(self, mode: Mode | None) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._offset = trio.current_time() - time.perf_counter()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self._stopping:  # the player quit before trio got going
                nursery.cancel_scope.cancel()
            nursery.start_soon(self._ticker)
            if mode is not None:
                self._start(mode, self.launch.invite)
            await trio.sleep_forever()

    def _start(self, mode: Mode, invite: str | None) -> None:
        """Start a game (a new one replaces the one before, e.g. a rematch)."""
        if self._game is not None:
            self._game.cancel()
        self._generation += 1
        self.state.session = None
        self.state.invites, self.state.net_note = [], ""
        assert self._nursery is not None
        self._nursery.start_soon(self._run, mode, invite, self._generation)

    def _current(self, generation: int) -> bool:
        """Whether a game's task still speaks for the screen (not a replaced game)."""
        return generation == self._generation

    def _perform(self, action: Action, done: str | None) -> None:
        session = self.state.session
        if session is None:
            self.state.warn("there is no game yet")
            return
        try:
            session.perform(action)
        except LocalProtocolError as exc:
            self.state.warn(str(exc))
            return
        if done:
            self.state.say(done)
        self.state.absorb()

    async def _run(self, mode: Mode, invite: str | None, generation: int) -> None:
        state = self.state
        with trio.CancelScope() as scope:
            self._game = scope
            state.mode, state.fatal, state.finished = mode, None, False
            self.invalidate()
            try:
                if mode is Mode.BOT:
                    await self._bot_game(generation)
                elif mode is Mode.HOST:
                    await self._host(generation)
                else:
                    assert invite is not None
                    await self._join(invite, generation)
            except Exception as exc:  # noqa: BLE001  (shown, and logged when a bug)
                if self._current(generation):
                    state.fatal = explain(exc)
            if self._current(generation):
                state.finished = True
                state.absorb()
                self.invalidate()

    async def _ticker(self) -> None:
        """Redraw the clocks while they run."""
        while True:
            await trio.sleep(0.5)
            session = self.state.session
            if session is not None and (session.clocks.limit or session.clocks.per_move):
                self.invalidate()

    def _note(self, generation: int, text: str) -> None:
        if self._current(generation):
            self.state.net_note = text
            self.invalidate()

    def _attach(self, generation: int, session: GameSession) -> None:
        if self._current(generation):
            self.state.attach(session)
            self.state.absorb()
            self.invalidate()

    async def _seat(self, generation: int, session: GameSession) -> None:
        """The person's seat: show every change; the keys do the acting."""
        while self._current(generation):
            self._attach(generation, session)
            await session.wait_changed()

    async def _hosted(self, config: HostConfig, generation: int,
                      task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED
                      ) -> None:
        session = await host_game(config, partial(self._seat, generation),
                                  on_status=partial(self._note, generation),
                                  task_status=task_status)
        self._attach(generation, session)

    async def _host(self, generation: int) -> None:
        launch = self.launch
        key = launch.identity()
        cert, tls_key = launch.tls_identity()
        config = HostConfig(key, cert, tls_key, launch.options, launch.games, port=launch.port,
                            bind=launch.bind, limits=launch.limits)
        self.state.host_options = launch.options
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(self._hosted, config, generation)
            self.state.invites = hosting.invites
            self.invalidate()

    async def _join(self, code: str, generation: int) -> None:
        launch = self.launch
        invite = Invite.decode(code)
        key = launch.identity()
        config = JoinConfig(key, invite, launch.games, launch.limits)
        self._note(generation, f"connecting to {invite.address} port {invite.port}")
        session = await join_game(config, partial(self._seat, generation),
                                  on_status=partial(self._note, generation),
                                  on_session=partial(self._attach, generation))
        self._attach(generation, session)

    async def _bot_game(self, generation: int) -> None:
        """`play`: host on loopback with the person's seat, and let the bot join the
        invite, over real TLS with the full protocol."""
        launch = self.launch
        key = launch.identity()
        cert, tls_key = make_certificate()
        config = HostConfig(key, cert, tls_key, launch.options, launch.games / BOT_GAMES,
                            port=0, bind="127.0.0.1", limits=launch.limits, resume=False)
        self.state.host_options = launch.options
        bot_seed = self._seed + self.state.games
        with tempfile.TemporaryDirectory(prefix="p2pgotg-bot-") as bot_dir:
            async with trio.open_nursery() as nursery:
                hosting = await nursery.start(self._hosted, config, generation)
                invite = Invite.decode(hosting.invites[0])
                bot = JoinConfig(Ed25519PrivateKey.generate(), invite, Path(bot_dir),
                                 launch.limits, resume=False)
                nursery.start_soon(partial(join_game, bot, bot_runner(bot_seed, launch.think)))


class UI:
    """The whole interface: state, application and controller, wired together."""

    def __init__(self, mode: Mode | None, launch: Launch | None = None, *, ascii: bool = False,
                 input: Input | None = None, output: Output | None = None) -> None:
        self.state = AppState(mode, ascii=ascii)
        self.controller = Controller(self.state, launch or Launch())
        self.app = create_application(self.state, input=input, output=output)
        self.controller.app = self.app
        self._initial = mode

    async def run(self) -> str:
        """Run until the player quits; returns what to print after the screen closes."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[outcome.Outcome] = loop.create_future()

        def done(result: outcome.Outcome) -> None:
            if not finished.done():
                finished.set_result(result)
            if isinstance(result, outcome.Error) and self.app.is_running:
                self.state.fatal = explain(result.error)
                self.app.exit()

        trio.lowlevel.start_guest_run(
            self.controller.main, self._initial,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )
        try:
            await self.app.run_async()
            await self._hand_over_the_end()
        finally:
            self.controller.stop()
            await finished
        return farewell(self.state)

    async def _hand_over_the_end(self) -> None:
        """Quitting right at the end of a game: the other player may still need our last
        messages and our goodbye to finish its own transcript. Give the connection up to
        the goodbye limit (a few seconds) to close by itself before trio is stopped."""
        session = self.state.session
        if session is None or not session.done or session.link is not Link.CONNECTED:
            return
        deadline = time.monotonic() + session.limits.bye
        while session.link is Link.CONNECTED and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # (trio, a guest on this loop, runs meanwhile)


def farewell(state: AppState) -> str:
    """The lines left on the terminal after the screen closes."""
    from p2pgotg.ui.end_screen import headline
    from p2pgotg.ui.words import verdict_words

    session = state.session
    lines = []
    if state.fatal and (session is None or not session.done):
        lines.append(state.fatal)
    if session is not None:
        peer = session.peer
        verdict = session.verdict
        if peer.flow.is_over or peer.failed is not None:
            lines.append("game over: " + "".join(t for _, t, *_ in headline(state)).strip())
        if verdict is not None:
            lines.append(verdict_words(verdict, peer.role, state.opponent))
        elif state.in_game and state.mode is Mode.BOT:
            lines.append("the game against the bot was left unfinished")
        elif state.in_game:
            lines.append("the game is not finished: run the same command again to resume it")
        if session.path is not None:
            lines.append(f"saved game: {session.path}")
            lines.append(f"check it any time with: p2pgotg verify {session.path}")
    return "\n".join(lines)


def run_terminal(mode: Mode | None, launch: Launch, ascii: bool = False) -> int:
    """The command line's entry: run the interface in this terminal; never a traceback."""
    ui = UI(mode, launch, ascii=ascii)
    try:
        message = asyncio.run(ui.run())
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001  (never a traceback: the log has it)
        print(f"p2pgotg stopped: {explain(exc)}")
        return 1
    if message:
        print(message)
    return 0
