"""The Towers screens in the application's layout: their bodies, titles, key hints and the
input line's label, which the application takes instead of Game of the Generals' whenever
`owns(state)` (the chrome around them, the `?` overlay, the small-window check and the
away panel under the play screen's board stay the application's)."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.layout import ConditionalContainer, Dimension, HSplit, VSplit, Window
from prompt_toolkit.layout.containers import Container
from prompt_toolkit.layout.controls import FormattedTextControl

from p2pgotg.ui import away_panel, review_screen
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.towers import board, end, owns, play
from p2pgotg.ui.towers import review_screen as towers_review
from p2pgotg.ui.window_size import needed_rows

TITLES: dict[Screen, Callable[[AppState], str]] = {
    Screen.PLAY: play.title, Screen.END: end.title, Screen.REVIEW: towers_review.title,
}
HINTS: dict[Screen, Callable[[AppState], str]] = {
    Screen.PLAY: play.hints, Screen.END: end.hints, Screen.REVIEW: review_screen.hints,
}
PROMPT = " action> "


def rows_above_panel(state: AppState, columns: int) -> int | None:
    """The rows the play screen needs above the away panel in a window `columns` wide:
    the board's, or the column beside it down to its log (the log scrolls); None on the
    screens that have no panel."""
    if state.screen is not Screen.PLAY:
        return None
    right = columns - play.LEFT - 1
    return max(needed_rows(play.board_text(state), play.LEFT),
               needed_rows(play.turn_text(state, right), right))


def body(state: AppState) -> Container:
    """Every Towers screen's body, each shown while it is the screen."""

    def show(screen: Screen) -> Condition:
        return Condition(lambda: owns(state) and state.screen is screen)

    def text(fn: Callable[[AppState], Fragments], **window: object) -> Window:
        return Window(FormattedTextControl(lambda: fn(state)), **window)  # type: ignore[arg-type]

    def right() -> int:  # (the width of the column beside the board)
        return get_app().output.get_size().columns - play.LEFT - 1

    def log() -> Fragments:
        """The log, the cursor at its end so that the window scrolls there."""
        return [*play.log_text(state, right()), ("[SetCursorPosition]", "")]

    def turn_rows() -> Dimension:
        """All the rows of the turn's lines, whatever the log under them asks for (they
        would share what is left row by row: the counts there were cut)."""
        return Dimension.exact(needed_rows(play.turn_text(state, right()), right()))

    def rule() -> Window:
        return Window(width=1, char="|", style="class:dim")

    return HSplit([
        ConditionalContainer(HSplit([
            VSplit([
                text(play.board_text, width=play.LEFT),
                rule(),
                HSplit([
                    Window(FormattedTextControl(lambda: play.turn_text(state, right())),
                           height=turn_rows, wrap_lines=True),
                    Window(FormattedTextControl(log, show_cursor=False)),
                ]),
            ]),
            # (the whole width, as on Game of the Generals' screens: a code on lines of
            # its own, copied whole; SPEC 3.8)
            away_panel.container(state),
        ]), show(Screen.PLAY)),
        ConditionalContainer(HSplit([
            text(end.headline, wrap_lines=True, dont_extend_height=True),
            VSplit([text(end.board_text, width=play.LEFT), text(end.panel_text)],
                   height=board.ROWS),
            text(end.verdict_text, wrap_lines=True),
        ]), show(Screen.END)),
        ConditionalContainer(VSplit([
            text(towers_review.board_text, width=play.LEFT),
            rule(),
            text(towers_review.panel_text),
        ]), show(Screen.REVIEW)),
    ])
