"""The table screen in the terminal: a prompt_toolkit application with the network on trio
in guest mode on its asyncio loop, as the interface of two runs (`ui.runner`).

`table_screen(screen)` is the runner that plays a seat (the `TableRunner` of
`net.play.table_joiner`): it seats the session on the screen and folds in what the session
does. What a key asks of the session is run inside trio (`perform`), so nothing the keys
do races the network. `run_table_terminal(main)` runs `main(app)` (hosting or joining,
which starts the runner) under the screen until the person quits.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import outcome
import trio
from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import ColorDepth, Output

from p2pgotg.net.play.session import StorageError
from p2pgotg.net.play.table_joiner import TableRunner
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.protocol.events import Event
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.errors import explain
from p2pgotg.ui.style import COLOUR, MONO
from p2pgotg.ui.towers import table_view as view
from p2pgotg.ui.towers.help import table_help_lines
from p2pgotg.ui.towers.play import LEFT
from p2pgotg.ui.towers.table_keys import create_table_keys
from p2pgotg.ui.towers.table_log import absorb
from p2pgotg.ui.towers.table_model import TableScreen

PROMPT = " action> "


def own_verdict(path: Path | None) -> list[str]:
    """What `p2pgotg verify` says of our own file alone (SPEC 5.9), as its lines."""
    from p2pgotg.games.towers.table import TOWERS_TABLE
    from p2pgotg.protocol.table.transcript import TableRecordReader
    from p2pgotg.protocol.table.verify import TableFile, judge_table

    if path is None:
        return []
    reader = TableRecordReader()
    try:
        records = reader.feed_table(path.read_bytes())
        torn = reader.finish()
    except (OSError, ValueError) as exc:  # (TranscriptError is a ValueError)
        return [f"cannot read this seat's file back: {exc}"]
    if reader.role is None or reader.key is None:
        return [f"cannot read this seat's file back: {path.name} has no header"]
    report = judge_table(TOWERS_TABLE, [TableFile(path.name, reader.role, reader.key,
                                                  records, torn)])
    return [line for line in report.lines if not line.startswith(("game id:", "order:"))]


def table_screen(screen: TableScreen, wake: Callable[[], None] = lambda: None,
                 on_seat: Callable[[Any], None] = lambda session: None) -> TableRunner:
    """The runner that plays a seat on `screen`: it folds the session's events into the
    screen until the game is over, then reads the verdict of the seat's file. `on_seat`
    sees the session first (the host labels its bots' keys)."""

    async def run(session: Any) -> None:
        screen.session = session
        on_seat(session)
        while True:
            absorb(screen)
            view.note_owed(screen)
            wake()
            if session.done:
                break
            await session.wait_changed()
        try:
            await session.durable()
        except StorageError as exc:
            screen.warn(str(exc))
        screen.verdict = own_verdict(session.path)
        wake()

    return run


class TableApp:
    """The application, its screen state, and the trio side's token."""

    def __init__(self, screen: TableScreen, *, input: Input | None = None,
                 output: Output | None = None) -> None:
        self.screen = screen
        self.buffer = Buffer(multiline=False, name="input")
        self.app: Application[None] = Application(
            layout=self._layout(), key_bindings=create_table_keys(self, self.buffer),
            style=MONO if screen.ascii else COLOUR,
            color_depth=ColorDepth.DEPTH_1_BIT if screen.ascii else None,
            full_screen=True, input=input, output=output)
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._offset = 0.0
        self.result: object = None
        self.failure: str | None = None
        screen.perform_fn = self.perform
        screen.now = self.now

    # -- the runner and the trio side ---------------------------------------------------

    def runner(self, on_seat: Callable[[Any], None] = lambda session: None) -> TableRunner:
        return table_screen(self.screen, self.wake, on_seat)

    def wake(self) -> None:
        self.app.invalidate()

    def note(self, text: str) -> None:
        """A line from the network (connections, claims): the status line."""
        self.screen.tell(text)
        self.wake()

    def now(self) -> float:
        """trio's clock, read from either side (the sessions' deadlines are in it)."""
        return time.perf_counter() + self._offset

    def perform(self, fn: Callable[[Any], list[Event]], done: str | None) -> None:
        """Run `fn` on the seat inside trio; a refusal is said in the status line."""
        if self._token is None:
            self.screen.warn("still starting: try again in a moment")
            return
        self._token.run_sync_soon(partial(self._perform, fn, done))

    def _perform(self, fn: Callable[[Any], list[Event]], done: str | None) -> None:
        screen, session = self.screen, self.screen.session
        try:
            session.perform(fn)
        except LocalProtocolError as exc:
            screen.warn(str(exc))
        except Exception as exc:  # noqa: BLE001  (a bug must not take the table down)
            screen.warn(explain(exc))
        else:
            if done:
                screen.tell(done)
            absorb(screen)
        self.wake()

    async def _trio_main(self, main: Callable[[TableApp], Awaitable[object]]) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._offset = trio.current_time() - time.perf_counter()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._ticker)
                try:
                    self.result = await main(self)
                finally:
                    self.screen.network_done = True
                    nursery.cancel_scope.cancel()
                    self.wake()

    async def _ticker(self) -> None:
        """Redraw each second: the clocks and the waits run."""
        while True:
            await trio.sleep(1)
            view.note_owed(self.screen)
            self.wake()

    def stop(self) -> None:
        if self._token is not None and self._scope is not None:
            with contextlib.suppress(trio.RunFinishedError):  # (it has ended already)
                self._token.run_sync_soon(self._scope.cancel)

    async def run(self, main: Callable[[TableApp], Awaitable[object]]) -> object:
        """Run `main(self)` on trio under the screen until the person quits."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[outcome.Outcome[Any]] = loop.create_future()

        def done(result: outcome.Outcome[Any]) -> None:
            if not finished.done():
                finished.set_result(result)
            if isinstance(result, outcome.Error):
                self.failure = explain(result.error)
                self.screen.network_done = True
                self.screen.warn(self.failure)
                self.wake()

        trio.lowlevel.start_guest_run(
            self._trio_main, main, run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done, host_uses_signal_set_wakeup_fd=True)
        try:
            await self.app.run_async()
            await self._hand_over_the_end()
        finally:
            self.stop()
            await finished
        return self.result

    async def _hand_over_the_end(self) -> None:
        """Quitting at the end: the others may still need our last messages; give the
        connections a few seconds to finish by themselves."""
        session = self.screen.session
        if session is None or not session.done:
            return
        deadline = time.monotonic() + float(getattr(session.limits, "bye", 5.0))
        while not self.screen.network_done and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # (trio, a guest on this loop, runs meanwhile)

    def quit(self) -> None:
        self.app.exit()

    # -- the layout ---------------------------------------------------------------------

    def _layout(self) -> Layout:
        screen = self.screen

        def text(fn: Callable[[], Fragments | str], **window: Any) -> Window:
            return Window(FormattedTextControl(fn), **window)

        def right() -> int:
            return max(20, get_app().output.get_size().columns - LEFT - 1)

        def full() -> int:
            return max(20, get_app().output.get_size().columns)

        def log() -> Fragments:
            return [*view.log_text(screen, right()), ("[SetCursorPosition]", "")]

        def rule() -> Window:
            return Window(width=1, char="|", style="class:dim")

        lobby = Condition(lambda: not screen.help_visible and view.in_lobby(screen))
        over = Condition(lambda: not screen.help_visible and view.is_over(screen))
        playing = Condition(lambda: not screen.help_visible and not view.in_lobby(screen)
                            and not view.is_over(screen))
        helping = Condition(lambda: screen.help_visible)
        input_window = Window(
            BufferControl(self.buffer, input_processors=[BeforeInput(PROMPT)]),
            height=1, dont_extend_height=True)
        body = HSplit([
            ConditionalContainer(HSplit([  # (the whole width: the code is copied whole)
                text(lambda: view.lobby_text(screen, full()), dont_extend_height=True),
                Window(FormattedTextControl(lambda: [*view.log_text(screen, full()),
                                                     ("[SetCursorPosition]", "")],
                                            show_cursor=False)),
            ]), lobby),
            ConditionalContainer(VSplit([
                text(lambda: view.board_text(screen), width=LEFT),
                rule(),
                HSplit([
                    text(lambda: view.seats_text(screen, right()), dont_extend_height=True),
                    text(lambda: view.turn_text(screen, right()), dont_extend_height=True),
                    Window(FormattedTextControl(log, show_cursor=False)),
                ]),
            ]), playing),
            ConditionalContainer(VSplit([
                text(lambda: view.board_text(screen), width=LEFT),
                rule(),
                text(lambda: view.end_text(screen, right())),  # (the log: on `verify`)
            ]), over),
            ConditionalContainer(
                text(lambda: [(style, f"{line}\n") for style, line
                              in table_help_lines(screen.ascii)], style="class:help"),
                helping),
        ])
        root = HSplit([
            text(lambda: view.title(screen), height=1, style="class:title"),
            body,
            text(lambda: [("class:status.error" if screen.status_error else "class:status",
                           screen.status)], wrap_lines=True, dont_extend_height=True),
            input_window,
            text(lambda: view.hints(screen), dont_extend_height=True, style="class:hint"),
        ])
        return Layout(root, focused_element=input_window)


def run_table_terminal(screen: TableScreen,
                       main: Callable[[TableApp], Awaitable[object]]) -> tuple[int, object]:
    """Run the table screen in this terminal; (exit status, what `main` returned). Never
    a traceback: a failure is said."""
    app = TableApp(screen)
    try:
        result = asyncio.run(app.run(main))
    except KeyboardInterrupt:
        return 130, None
    except Exception as exc:  # noqa: BLE001  (never a traceback)
        print(f"p2pgotg stopped: {explain(exc)}")
        return 1, None
    if app.failure:
        print(app.failure)
    return (1 if app.failure else 0), result
