"""The prompt_toolkit `Application`: layout and style built from the state, with input and
output injectable so tests feed keys through `create_pipe_input()`.

The layout is fixed: a title bar, the current screen's body, a status line, the input line
and a line of key hints. Screens are switched by `Condition`s on `state.screen`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import ColorDepth, Output

from p2pgotg.ui import (
    away_panel,
    board,
    end_screen,
    games_screen,
    lobby_screen,
    play_screen,
    resume_screen,
    review_screen,
    setup_screen,
    start_screen,
)
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.help import help_text
from p2pgotg.ui.keys import create_key_bindings
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.style import COLOUR, MONO

TITLES = {
    Screen.START: start_screen.title, Screen.GAMES: games_screen.title,
    Screen.REVIEW: review_screen.title, Screen.RESUME: resume_screen.title,
    Screen.LOBBY: lobby_screen.title,
    Screen.ERROR: lobby_screen.title, Screen.SETUP: setup_screen.title,
    Screen.PLAY: play_screen.title, Screen.END: end_screen.title,
}
HINTS = {
    Screen.START: start_screen.hints, Screen.GAMES: games_screen.hints,
    Screen.REVIEW: review_screen.hints, Screen.RESUME: resume_screen.hints,
    Screen.LOBBY: lobby_screen.hints,
    Screen.ERROR: lambda state: "q quit", Screen.SETUP: setup_screen.hints,
    Screen.PLAY: play_screen.hints, Screen.END: end_screen.hints,
}


def create_application(state: AppState, *, input: Input | None = None,
                       output: Output | None = None) -> Application:
    buffer = Buffer(multiline=False, name="input")
    layout = create_layout(state, buffer)
    return Application(
        layout=layout,
        key_bindings=create_key_bindings(state, buffer),
        style=MONO if state.ascii else COLOUR,
        color_depth=ColorDepth.DEPTH_1_BIT if state.ascii else None,
        full_screen=True,
        input=input,
        output=output,
    )


def create_layout(state: AppState, buffer: Buffer) -> Layout:
    def show(*screens: Screen) -> Condition:
        return Condition(lambda: state.screen in screens)

    def text(fn: Callable[[AppState], Fragments], **window: Any) -> Window:
        return Window(FormattedTextControl(lambda: fn(state)), **window)

    def columns() -> int:
        return get_app().output.get_size().columns

    def title() -> Fragments:
        words = TITLES[state.screen](state)
        return [("class:title", f" {words}")]

    def status() -> Fragments:
        """The status line, wrapped between words; a clock about to run out comes first."""
        out: Fragments = []
        width = max(20, columns() - 2)
        warning = play_screen.clock_warning(state) if state.screen is Screen.PLAY else ""
        if warning:
            out += [("class:status.error", f" {line}\n")
                    for line in textwrap.wrap(warning, width)]
        style = "class:status.error" if state.status_error else "class:status"
        lines = textwrap.wrap(state.status, width) or [""]
        out += [(style, f" {line}\n") for line in lines]
        out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
        return out

    def hints() -> Fragments:
        return [("class:hint", f" {HINTS[state.screen](state)}"[: columns() - 1])]

    def prompt() -> str:
        if state.prompt is not None:
            return f" {state.prompt.value}"
        if state.screen is Screen.PLAY:
            return " move> "
        return " "

    def log_cursor() -> Point:
        return Point(0, sum(text.count("\n") for _, text, *_ in log()))

    def log() -> Fragments:
        return play_screen.log_text(state, columns() - left - 1)

    left = board.WIDTH + 1
    # The whole width under the board while the other side is away: its codes are
    # copied whole from there (away_panel.py). One window, shown on both screens.
    away = ConditionalContainer(
        Window(FormattedTextControl(lambda: away_panel.panel(state, columns())),
               dont_extend_height=True),
        Condition(lambda: away_panel.shown(state)))
    bodies = [
        ConditionalContainer(text(start_screen.body), show(Screen.START)),
        ConditionalContainer(text(games_screen.body), show(Screen.GAMES)),
        ConditionalContainer(text(resume_screen.body, wrap_lines=True), show(Screen.RESUME)),
        ConditionalContainer(VSplit([
            text(review_screen.board_text, width=left),
            Window(width=1, char="|", style="class:dim"),
            text(review_screen.panel_text),
        ]), show(Screen.REVIEW)),
        ConditionalContainer(text(lobby_screen.body, wrap_lines=True), show(Screen.LOBBY)),
        ConditionalContainer(text(lobby_screen.error_body, wrap_lines=True),
                             show(Screen.ERROR)),
        ConditionalContainer(HSplit([
            VSplit([
                text(setup_screen.board_text, width=left, wrap_lines=True),
                text(setup_screen.tray_text),
            ]),
            away,
        ]), show(Screen.SETUP)),
        ConditionalContainer(HSplit([
            VSplit([
                text(play_screen.board_text, width=left),
                Window(width=1, char="|", style="class:dim"),
                Window(FormattedTextControl(log, get_cursor_position=log_cursor,
                                            show_cursor=False)),
            ]),
            away,
        ]), show(Screen.PLAY)),
        ConditionalContainer(HSplit([
            text(end_screen.headline, wrap_lines=True, dont_extend_height=True),
            VSplit([
                text(end_screen.board_text, width=left, height=9),
                text(end_screen.panel_text),
            ], height=11),
            text(end_screen.audit_text, wrap_lines=True),
        ]), show(Screen.END)),
    ]
    input_window = Window(
        BufferControl(buffer, input_processors=[BeforeInput(prompt)]),
        height=1,
        always_hide_cursor=Condition(lambda: not state.takes_text),
    )
    root = FloatContainer(
        HSplit([
            Window(FormattedTextControl(title), height=1, style="class:title"),
            HSplit(bodies),
            Window(FormattedTextControl(status), wrap_lines=True, dont_extend_height=True),
            input_window,
            Window(FormattedTextControl(hints), height=1),
        ]),
        floats=[Float(ConditionalContainer(
            Window(FormattedTextControl(lambda: help_text(state)), style="class:help"),
            Condition(lambda: state.help_visible),
        ), top=1, bottom=3, left=0, right=0)],
    )
    return Layout(root, focused_element=input_window)
