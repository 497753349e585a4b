"""The Towers screens' keys, added after the application's own (`ui.keys`): on a Towers
screen they take the keys that Game of the Generals' screens would (prompt_toolkit runs
the last binding added among those whose filter holds), and leave the rest shared (`?`,
Escape, quitting, y and n, the review's stepping, `n` for a new game).

On the play screen the input line takes what is typed; the keys below act only while it
is empty, and a digit only while a numbered list of actions stands.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from p2pgotg.ui.errors import explain
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.towers import end, owns, play

Handler = Callable[[KeyPressEvent], None]
ARROWS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def add_bindings(kb: KeyBindings, state: AppState, buffer: Buffer) -> None:
    def add(*keys: str, filter: Filter) -> Callable[[Handler], Handler]:
        """`kb.add`, but a bug in a handler becomes a status message, not a traceback."""

        def register(handler: Handler) -> Handler:
            @functools.wraps(handler)
            def guarded(event: KeyPressEvent) -> None:
                try:
                    handler(event)
                except Exception as exc:  # noqa: BLE001  (logged by explain)
                    state.warn(explain(exc))

            kb.add(*keys, filter=filter)(guarded)
            return handler

        return register

    def on(screen: Screen) -> Filter:
        return Condition(lambda: state.screen is screen and owns(state))

    free = ~Condition(lambda: state.confirm is not None) \
        & ~Condition(lambda: state.help_visible) & Condition(lambda: state.prompt is None)
    empty = Condition(lambda: buffer.text == "")
    board = on(Screen.PLAY) & free & empty  # keys on the board: the input line is empty
    listed = Condition(lambda: bool(play.screen_state(state).choices))
    # (the arrows as Game of the Generals' play screen takes them: prompt or not)
    arrows = on(Screen.PLAY) & empty & ~Condition(lambda: state.confirm is not None) \
        & ~Condition(lambda: state.help_visible)

    for name, (dx, dy) in ARROWS.items():
        @add(name, filter=arrows)
        def _cursor(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.move_cursor(state, dx, dy)

        @add(f"s-{name}", filter=board)
        def _step(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.step_pawn(state, dx, dy)

    @add("space", filter=board)
    def _list(event: KeyPressEvent) -> None:
        play.list_actions(state)

    for digit in "123456789":
        @add(digit, filter=board & listed)
        def _choose(event: KeyPressEvent, number: int = int(digit)) -> None:
            play.choose(state, number)

    @add("enter", filter=on(Screen.PLAY) & free)
    def _enter(event: KeyPressEvent) -> None:
        text = buffer.text
        if text.strip():
            buffer.reset(append_to_history=True)
            play.submit(state, text)
        else:
            play.enter(state)

    # -- the end screen: Game of the Generals' setups and challenges are not Towers' ------
    ended = on(Screen.END) & free & ~Condition(lambda: state.takes_text)

    @add("v", filter=ended)
    def _review(event: KeyPressEvent) -> None:
        end.review(state)

    for name in ("s", "c", "pageup", "pagedown", "up", "down"):
        @add(name, filter=ended)
        def _nothing(event: KeyPressEvent) -> None:
            """(a key of Game of the Generals' end screen: nothing to show in Towers)"""
