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
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
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
    towers,
)
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.help import help_text
from p2pgotg.ui.keys import create_key_bindings
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.style import COLOUR, MONO
from p2pgotg.ui.towers import layout as towers_layout
from p2pgotg.ui.window_size import CHROME_ROWS, MIN_COLUMNS, needed_rows, too_small

TITLES = {
    Screen.START: start_screen.title, Screen.GAMES: games_screen.title,
    Screen.REVIEW: review_screen.title, Screen.RESUME: resume_screen.title,
    Screen.LOBBY: lobby_screen.title,
    Screen.ERROR: lobby_screen.title, Screen.SETUP: setup_screen.title,
    Screen.PLAY: play_screen.title, Screen.END: end_screen.title,
}
#: Screens drawn around the board: the board, its side panel and their rows, whole, need
#: this window (columns, rows); smaller, they say so instead of showing a cut board.
BOARD_SCREEN_SIZE = (80, 24)
#: What stands side by side above the away panel on the screens that show it.
BOARD_COLUMNS = {Screen.PLAY: (play_screen.board_text,),
                 Screen.SETUP: (setup_screen.board_text, setup_screen.tray_text)}
#: Screens of text, wrapped to the window: they need their lines' rows.
TEXT_BODIES: dict[Screen, Callable[[AppState], Fragments]] = {
    Screen.START: start_screen.body, Screen.GAMES: games_screen.body,
    Screen.RESUME: resume_screen.body, Screen.LOBBY: lobby_screen.body,
    Screen.ERROR: lobby_screen.error_body,
}
HINTS = {
    Screen.START: start_screen.hints, Screen.GAMES: games_screen.hints,
    Screen.REVIEW: review_screen.hints, Screen.RESUME: resume_screen.hints,
    Screen.LOBBY: lobby_screen.hints,
    Screen.ERROR: lambda state: "q quit", Screen.SETUP: setup_screen.hints,
    Screen.PLAY: play_screen.hints, Screen.END: end_screen.hints,
}


def board_screen_need(state: AppState, columns: int, chrome: int) -> tuple[int, int]:
    """The window (columns, rows) a board screen needs: BOARD_SCREEN_SIZE, and more rows
    when the away panel goes under the board and its side column (``chrome``: the rows of
    the title, status, input and hints)."""
    need = BOARD_SCREEN_SIZE
    if not away_panel.shown(state):
        return need
    if towers.owns(state):
        tallest = towers_layout.rows_above_panel(state, columns)
    else:
        columns_of = BOARD_COLUMNS.get(state.screen, ())
        tallest = max((needed_rows(column(state), columns) for column in columns_of),
                      default=None)
    if tallest is None:
        return need
    panel = away_panel.rows(state, columns)
    return (need[0], max(need[1], chrome + tallest + panel))


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
    view = _View(state)
    input_window = Window(  # (long text wraps, up to three lines: the label stays in view)
        BufferControl(buffer, input_processors=[BeforeInput(view.prompt)]),
        height=Dimension(min=1, max=3), dont_extend_height=True, wrap_lines=True,
        always_hide_cursor=Condition(lambda: not state.takes_text),
    )
    root = FloatContainer(
        HSplit([
            Window(FormattedTextControl(view.title), height=1, style="class:title"),
            HSplit(_bodies(view)),
            Window(FormattedTextControl(view.status), wrap_lines=True,
                   dont_extend_height=True),
            input_window,
            Window(FormattedTextControl(view.hints), dont_extend_height=True),
        ]),
        floats=[
            Float(ConditionalContainer(
                Window(FormattedTextControl(lambda: help_text(state, view.rows() - 4)),
                       style="class:help"),
                Condition(lambda: state.help_visible),
            ), top=1, bottom=3, left=0, right=0),
            Float(ConditionalContainer(  # over everything: the window is too small
                Window(FormattedTextControl(view.small_text), style="class:help"),
                Condition(lambda: view.small_words() is not None),
            ), top=0, bottom=0, left=0, right=0),
        ],
    )
    return Layout(root, focused_element=input_window)


#: The board's column, and the columns right of it.
LEFT = board.WIDTH + 1


def _bodies(view: _View) -> list[ConditionalContainer]:
    """Each screen's body, shown while it is the current screen."""
    text, show = view.text, view.show
    # The whole width under the board while the other side is away: its codes are
    # copied whole from there (away_panel.py). One window, shown on both screens.
    away = away_panel.container(view.state)
    return [
        ConditionalContainer(text(start_screen.body, wrap_lines=True), show(Screen.START)),
        ConditionalContainer(text(games_screen.body, wrap_lines=True), show(Screen.GAMES)),
        ConditionalContainer(text(resume_screen.body, wrap_lines=True), show(Screen.RESUME)),
        ConditionalContainer(VSplit([
            text(review_screen.board_text, width=LEFT),
            Window(width=1, char="|", style="class:dim"),
            text(review_screen.panel_text),
        ]), show(Screen.REVIEW)),
        ConditionalContainer(text(lobby_screen.body, wrap_lines=True), show(Screen.LOBBY)),
        ConditionalContainer(text(lobby_screen.error_body, wrap_lines=True),
                             show(Screen.ERROR)),
        ConditionalContainer(HSplit([
            VSplit([
                text(setup_screen.board_text, width=LEFT, wrap_lines=True),
                text(setup_screen.tray_text),
            ]),
            away,
        ]), show(Screen.SETUP)),
        ConditionalContainer(HSplit([
            VSplit([
                text(play_screen.board_text, width=LEFT),
                Window(width=1, char="|", style="class:dim"),
                Window(FormattedTextControl(view.log, show_cursor=False)),
            ]),
            away,
        ]), show(Screen.PLAY)),
        ConditionalContainer(HSplit([
            text(end_screen.headline, wrap_lines=True, dont_extend_height=True),
            VSplit([
                text(end_screen.board_text, width=LEFT, height=9),
                text(end_screen.panel_text),
            ], height=end_screen.PANEL_ROWS),
            text(end_screen.audit_text, wrap_lines=True),
        ]), show(Screen.END)),
        ConditionalContainer(towers_layout.body(view.state),  # (Towers' play, end, review)
                             Condition(lambda: towers.owns(view.state))),
    ]


class _View:
    """The texts around the screens' bodies, drawn from the state at the window's size."""

    def __init__(self, state: AppState) -> None:
        self.state = state

    def show(self, *screens: Screen) -> Condition:
        return Condition(lambda: self.state.screen in screens and not towers.owns(self.state))

    def text(self, fn: Callable[[AppState], Fragments], **window: Any) -> Window:
        return Window(FormattedTextControl(lambda: fn(self.state)), **window)

    def columns(self) -> int:
        return get_app().output.get_size().columns

    def rows(self) -> int:
        return get_app().output.get_size().rows

    def title(self) -> Fragments:
        titles = towers_layout.TITLES if towers.owns(self.state) else TITLES
        words = titles[self.state.screen](self.state)
        return [("class:title", f" {words}")]

    def status(self) -> Fragments:
        """The status line, wrapped between words; a clock about to run out comes first."""
        state = self.state
        out: Fragments = []
        width = max(20, self.columns() - 2)
        warning = play_screen.clock_warning(state) if state.screen is Screen.PLAY else ""
        if warning:
            out += [("class:status.error", f" {line}\n")
                    for line in textwrap.wrap(warning, width)]
        style = "class:status.error" if state.status_error else "class:status"
        lines = textwrap.wrap(state.status, width) or [""]
        out += [(style, f" {line}\n") for line in lines]
        out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
        return out

    def hint_lines(self) -> list[str]:
        """The key hints, wrapped between words (two lines at most: the rest is `?`)."""
        hints = (towers_layout.HINTS if towers.owns(self.state) else HINTS)[
            self.state.screen](self.state)
        return textwrap.wrap(hints, max(20, self.columns() - 2))[:2] or [""]

    def hints(self) -> Fragments:
        return [("class:hint", "\n".join(f" {line}" for line in self.hint_lines()))]

    def small_words(self) -> str | None:
        """What to say instead of the screen when the window cannot show all of it."""
        size = (self.columns(), self.rows())
        body = TEXT_BODIES.get(self.state.screen)
        chrome = CHROME_ROWS + len(self.hint_lines()) - 1
        if body is None:  # (a board screen, either game's: a status of two lines is a row
            # the board or the away panel would lose)
            chrome += needed_rows(self.status(), self.columns()) - 1
            return too_small(size, board_screen_need(self.state, self.columns(), chrome))
        return too_small(size, (MIN_COLUMNS,
                                needed_rows(body(self.state), self.columns()) + chrome))

    def small_text(self) -> Fragments:
        words = self.small_words() or ""
        width = max(10, self.columns() - 2)
        out: Fragments = [("", "\n")]
        out += [("class:status.error", f" {line}\n") for line in textwrap.wrap(words, width)]
        if self.state.status:
            out.append(("", "\n"))
            out += [("class:status", f" {line}\n")
                    for line in textwrap.wrap(self.state.status, width)]
        return out

    def prompt(self) -> str:
        if self.state.prompt is not None:
            return f" {self.state.prompt.value}"
        if towers.owns(self.state) and self.state.screen is Screen.PLAY:
            return towers_layout.PROMPT
        if self.state.screen is Screen.PLAY:
            return " move> "
        return " "

    def log(self) -> Fragments:
        """The move log, the cursor at its end so that the window scrolls there (a mark
        inside the text: a position counted apart could miss it when the window is
        resized between the two)."""
        return [*play_screen.log_text(self.state, self.columns() - LEFT - 1),
                ("[SetCursorPosition]", "")]
