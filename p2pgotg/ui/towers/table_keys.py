"""The table screen's keys: the Towers play screen's (the input line takes what is typed;
the keys on the board act only while it is empty), y and n for the question, `?` for the
keys, q to leave the end screen, Ctrl-C to quit (asked first while the game is on)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from p2pgotg.ui.guarded_keys import GuardedKeys
from p2pgotg.ui.towers import table_play as play
from p2pgotg.ui.towers import table_view as view
from p2pgotg.ui.towers.keys import ARROWS
from p2pgotg.ui.towers.table_model import QUIT, TableScreen

if TYPE_CHECKING:
    from p2pgotg.ui.towers.table_app import TableApp


def create_table_keys(app: TableApp, buffer: Buffer) -> KeyBindings:
    kb = KeyBindings()
    k = GuardedKeys(kb, app.screen)
    _bind_board(k, app.screen, buffer)
    _bind_lines(k, app, buffer)
    return kb


def _bind_board(k: GuardedKeys[TableScreen], screen: TableScreen, buffer: Buffer) -> None:
    """The keys on the board, while the input line is empty and nothing is asked."""
    board = Condition(lambda: buffer.text == "" and screen.confirm is None
                      and not screen.help_visible)
    listed = Condition(lambda: bool(screen.choices))

    for name, (dx, dy) in ARROWS.items():
        @k.add(name, filter=board)
        def _cursor(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.move_cursor(screen, dx, dy)

        @k.add(f"s-{name}", filter=board)
        def _step(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play.step_pawn(screen, dx, dy)

    @k.add("space", filter=board)
    def _list(event: KeyPressEvent) -> None:
        play.list_actions(screen)

    for digit in "123456789":
        @k.add(digit, filter=board & listed)
        def _choose(event: KeyPressEvent, number: int = int(digit)) -> None:
            play.choose(screen, number)


def _bind_lines(k: GuardedKeys[TableScreen], app: TableApp, buffer: Buffer) -> None:
    """The input line, the questions, the help and quitting."""
    screen = app.screen
    asking = Condition(lambda: screen.confirm is not None)
    helping = Condition(lambda: screen.help_visible)
    empty = Condition(lambda: buffer.text == "")

    @k.add("enter", filter=~asking & ~helping)
    def _enter(event: KeyPressEvent) -> None:
        text = buffer.text
        if not text.strip():
            play.enter(screen)
            return
        buffer.reset(append_to_history=True)
        asked = play.submit(screen, text)
        if asked == "help":
            screen.help_visible = True
        elif asked == "quit":
            ask_quit(app)

    for key, yes in (("y", True), ("n", False)):
        @k.add(key, filter=asking)
        def _answer(event: KeyPressEvent, yes: bool = yes) -> None:
            if screen.confirm == QUIT:
                screen.confirm = None
                if yes:
                    app.quit()
                else:
                    screen.say("you stay at the table")
                return
            play.answer(screen, yes)

    @k.add("?", filter=empty & ~asking)
    @k.add("escape", filter=helping)
    def _help(event: KeyPressEvent) -> None:
        screen.help_visible = not screen.help_visible

    @k.add("q", filter=empty & ~asking & Condition(lambda: view.is_over(screen)))
    def _leave(event: KeyPressEvent) -> None:
        app.quit()

    @k.add("c-c")
    def _quit(event: KeyPressEvent) -> None:
        ask_quit(app)


def ask_quit(app: TableApp) -> None:
    """Quit at once when the game is over; while it is on, ask first."""
    screen: TableScreen = app.screen
    if view.is_over(screen) or screen.session is None:
        app.quit()
        return
    screen.confirm = QUIT
    comeback = ("run the same join command again to come back to your seat"
                if screen.role == "joiner" else
                "a host's table does not resume yet: the others claim it after a while")
    screen.say(f"quit? Your seat's file is kept; {comeback} (y or n)")
