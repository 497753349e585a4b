"""The Towers screens' keys, added after the application's own (`ui.keys`): on a Towers
screen they take the keys that Game of the Generals' screens would (prompt_toolkit runs
the last binding added among those whose filter holds), and leave the rest shared (`?`,
Escape, quitting, y and n, the review's stepping, `n` for a new game).

On the play screen the input line takes what is typed; the keys below act only while it
is empty, and a digit only while a numbered list of actions stands.
"""

from __future__ import annotations

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from p2pgotg.ui.guarded_keys import GuardedKeys
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.towers import end, owns, play

ARROWS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def add_bindings(kb: KeyBindings, state: AppState, buffer: Buffer) -> None:
    """Bind the Towers screens' keys (after the application's own)."""
    _bind_play(_Keys(kb, state, buffer))
    _bind_end(_Keys(kb, state, buffer))


class _Keys(GuardedKeys[AppState]):
    """The bindings, the state, the input line, and the filters that say where a key
    acts."""

    def __init__(self, kb: KeyBindings, state: AppState, buffer: Buffer) -> None:
        super().__init__(kb, state)
        self.buffer = buffer
        #: no question, no help overlay, no prompt: the screen's own keys
        self.free = ~Condition(lambda: state.confirm is not None) \
            & ~Condition(lambda: state.help_visible) & Condition(lambda: state.prompt is None)
        self.empty = Condition(lambda: buffer.text == "")

    def on(self, screen: Screen) -> Filter:
        return Condition(lambda: self.state.screen is screen and owns(self.state))


def _bind_play(k: _Keys) -> None:
    state, buffer = k.state, k.buffer
    board = k.on(Screen.PLAY) & k.free & k.empty  # keys on the board: the line is empty
    listed = Condition(lambda: bool(play.screen_state(state).choices))
    # (the arrows as Game of the Generals' play screen takes them: prompt or not)
    arrows = k.on(Screen.PLAY) & k.empty & ~Condition(lambda: state.confirm is not None) \
        & ~Condition(lambda: state.help_visible)

    for name, (dx, dy) in ARROWS.items():
        @k.add(name, filter=arrows)
        def _cursor(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.move_cursor(state, dx, dy)

        @k.add(f"s-{name}", filter=board)
        def _step(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.step_pawn(state, dx, dy)

    @k.add("space", filter=board)
    def _list(event: KeyPressEvent) -> None:
        play.list_actions(state)

    for digit in "123456789":
        @k.add(digit, filter=board & listed)
        def _choose(event: KeyPressEvent, number: int = int(digit)) -> None:
            play.choose(state, number)

    @k.add("enter", filter=k.on(Screen.PLAY) & k.free)
    def _enter(event: KeyPressEvent) -> None:
        text = buffer.text
        if text.strip():
            buffer.reset(append_to_history=True)
            play.submit(state, text)
        else:
            play.enter(state)


def _bind_end(k: _Keys) -> None:
    """The end screen: Game of the Generals' setups and challenges are not Towers'."""
    state = k.state
    ended = k.on(Screen.END) & k.free & ~Condition(lambda: state.takes_text)

    @k.add("v", filter=ended)
    def _review(event: KeyPressEvent) -> None:
        end.review(state)

    for name in ("s", "c", "pageup", "pagedown", "up", "down"):
        @k.add(name, filter=ended)
        def _nothing(event: KeyPressEvent) -> None:
            """(a key of Game of the Generals' end screen: nothing to show in Towers)"""
