"""Key bindings, built from the state (pyvim's `create_key_bindings`).

One input line is always focused, so typing a move just works on the play screen. Where no
text is wanted (start, lobby, setup, end), letters are single-key commands instead; the
filters below say which keys mean what on which screen.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from p2pgotg.ui import (
    end_screen,
    games_screen,
    lobby_screen,
    play_screen,
    resume_screen,
    review_screen,
    setup_screen,
    start_screen,
)
from p2pgotg.ui.errors import explain
from p2pgotg.ui.help import scroll as scroll_help
from p2pgotg.ui.state import AppState, Confirm, Prompt, Screen

Handler = Callable[[KeyPressEvent], None]
ARROWS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def create_key_bindings(state: AppState, buffer: Buffer) -> KeyBindings:
    kb = KeyBindings()

    def add(*keys: str, **options: Any) -> Callable[[Handler], Handler]:
        """`kb.add`, but a bug in a handler becomes a status message, not a traceback."""

        def register(handler: Handler) -> Handler:
            @functools.wraps(handler)
            def guarded(event: KeyPressEvent) -> None:
                try:
                    handler(event)
                except Exception as exc:  # noqa: BLE001  (logged by explain)
                    state.warn(explain(exc))

            kb.add(*keys, **options)(guarded)
            return handler

        return register

    def on(*screens: Screen) -> Filter:
        return Condition(lambda: state.screen in screens)

    confirming = Condition(lambda: state.confirm is not None)
    helping = Condition(lambda: state.help_visible)  # the `?` overlay is up: keys scroll it
    keys = ~Condition(lambda: state.takes_text) & ~confirming & ~helping  # letters: commands
    empty = Condition(lambda: buffer.text == "")
    no_prompt = Condition(lambda: state.prompt is None)

    def quit_or_ask(event: KeyPressEvent) -> None:
        if state.screen is Screen.REVIEW and state.review_back is not None:
            review_screen.close(state)
        elif state.screen is Screen.REVIEW:  # `p2pgotg show`: the review was all of it
            event.app.exit()
        elif state.screen is Screen.GAMES:
            games_screen.close(state)
        elif state.in_game and state.confirm is None:
            state.ask_quit()
        else:
            leave_or_exit(event)

    def leave_or_exit(event: KeyPressEvent) -> None:
        """Quit: a game opened from the start screen goes back to it, else the program
        ends (telling the other side, either way: `UI.run` and `Controller.leave`)."""
        if state.from_start and state.mode is not None:
            state.confirm = None
            state.say("")
            state.driver.leave()
        else:
            event.app.exit()

    @add("c-c")
    @add("c-q")
    def _quit(event: KeyPressEvent) -> None:
        if state.from_start and state.mode is not None and state.confirm is None \
                and not state.in_game:
            leave_or_exit(event)  # (no game to lose: straight back to the start screen)
            return
        if state.confirm is Confirm.QUIT or not state.in_game:
            event.app.exit()
        else:
            state.ask_quit()

    @add("q", filter=keys & on(Screen.START, Screen.LOBBY, Screen.SETUP, Screen.END,
                                  Screen.ERROR, Screen.REVIEW, Screen.GAMES, Screen.RESUME))
    def _q(event: KeyPressEvent) -> None:
        quit_or_ask(event)

    @add("y", filter=confirming)
    def _yes(event: KeyPressEvent) -> None:
        question, state.confirm = state.confirm, None
        state.say("")
        if question is Confirm.QUIT:
            leave_or_exit(event)
        elif question is Confirm.RESIGN:
            play_screen.resign(state)
        elif question is Confirm.RANDOM:
            setup_screen.randomize(state, confirmed=True)

    @add("<any>", filter=confirming)
    @add("n", filter=confirming)
    def _no(event: KeyPressEvent) -> None:
        state.confirm = None
        state.say("")

    @add("<any>", filter=keys)
    def _not_text(event: KeyPressEvent) -> None:
        """Where no text is wanted, a key without a meaning does nothing."""

    @add("escape", filter=~confirming, eager=True)
    def _escape(event: KeyPressEvent) -> None:
        if state.help_visible:
            state.toggle_help()
        elif state.screen is Screen.REVIEW and state.review_back is not None:
            review_screen.close(state)
        elif state.screen is Screen.GAMES and state.prompt is None:
            games_screen.close(state)
        elif state.prompt is not None:
            state.prompt = None
            buffer.reset()
            state.say("")
        elif buffer.text:
            buffer.reset()
        elif state.selected is not None:
            state.selected = None
            state.say("put down")
        elif state.editor is not None and state.editor.picked is not None:
            state.editor.picked = None
            state.say("put back")

    @add("?", filter=(keys | empty | helping) & no_prompt & ~confirming)
    def _help(event: KeyPressEvent) -> None:
        state.toggle_help()

    # -- the `?` overlay: it scrolls, and no key acts on the screen beneath it -------------
    reading = helping & ~confirming
    for name, step in (("up", -1), ("down", 1), ("pageup", -10), ("pagedown", 10),
                       ("space", 10), ("home", -10**6), ("end", 10**6)):
        @add(name, filter=reading & (~Condition(lambda: state.takes_text) | empty))
        def _help_scroll(event: KeyPressEvent, step: int = step) -> None:
            scroll_help(state, step)

    @add("q", filter=reading & ~Condition(lambda: state.takes_text))
    def _help_close(event: KeyPressEvent) -> None:
        state.toggle_help()

    @add("<any>", filter=reading & ~Condition(lambda: state.takes_text))
    def _help_ignores(event: KeyPressEvent) -> None:
        """Under the overlay, a letter does nothing (it never acts on the screen)."""

    for name, (dx, dy) in ARROWS.items():
        @add(name, filter=on(Screen.SETUP) & no_prompt & ~confirming & ~helping)
        def _setup_arrow(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            setup_screen.move_cursor(state, dx, dy)

        @add(name, filter=on(Screen.PLAY) & empty & ~confirming & ~helping)
        def _play_arrow(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play_screen.move_cursor(state, dx, dy)

    @add("enter", filter=~confirming)
    def _enter(event: KeyPressEvent) -> None:
        text = buffer.text
        prompt = state.prompt
        if prompt is not None:
            # a refused answer keeps the prompt and its text, so that the next keys go on
            # editing it and never reach the board
            if prompt is Prompt.JOIN_CODE:
                start_screen.submit_code(state, text)
            elif prompt is Prompt.LOAD:
                setup_screen.load(state, text)
            elif prompt is Prompt.SAVE:
                setup_screen.save(state, text)
            elif prompt is Prompt.REPLY_CODE:
                lobby_screen.submit_reply(state, text)
            if state.prompt is None:
                buffer.reset()
            return
        screen = state.screen
        if screen is Screen.PLAY:
            if text.strip():
                buffer.reset(append_to_history=True)
                play_screen.submit(state, text)
            else:
                play_screen.enter(state)
        elif screen is Screen.SETUP:
            setup_screen.enter(state)
        elif screen is Screen.GAMES:
            games_screen.open_selected(state)

    @add(Keys.BracketedPaste, filter=Condition(lambda: state.takes_text))
    def _paste(event: KeyPressEvent) -> None:
        """Pasted text goes on the one input line: a code that came broken over lines (an
        invite copied from a narrow screen) is read whole (its line breaks are spaces,
        which a code ignores), never as its last line alone."""
        text = event.data.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
        buffer.insert_text(text)

    @add(Keys.BracketedPaste, filter=~Condition(lambda: state.takes_text))
    def _no_paste(event: KeyPressEvent) -> None:
        """Where no text is wanted, a paste does nothing (its letters are not commands)."""

    # -- the start screen ----------------------------------------------------------------
    for key in start_screen.CHOICES:
        @add(key, filter=keys & on(Screen.START) & no_prompt)
        def _choose(event: KeyPressEvent, key: str = key) -> None:
            start_screen.choose(state, key)

    # -- the saved games and the review ----------------------------------------------------
    games_keys = keys & on(Screen.GAMES)
    for name, step in (("up", -1), ("down", 1), ("k", -1), ("j", 1)):
        @add(name, filter=games_keys)
        def _games_step(event: KeyPressEvent, step: int = step) -> None:
            games_screen.move(state, step)

    review = keys & on(Screen.REVIEW)
    for name, step in (("right", 1), ("left", -1), ("n", 1), ("p", -1), ("pagedown", 10),
                       ("pageup", -10), ("down", 10), ("up", -10), ("space", 1)):
        @add(name, filter=review)
        def _review_step(event: KeyPressEvent, step: int = step) -> None:
            review_screen.step(state, step)

    @add("home", filter=review)
    def _review_first(event: KeyPressEvent) -> None:
        review_screen.step(state, -10**6)

    @add("end", filter=review)
    def _review_last(event: KeyPressEvent) -> None:
        review_screen.step(state, 10**6)

    # -- the offer of unfinished games ---------------------------------------------------
    @add("r", filter=keys & on(Screen.RESUME))
    @add("enter", filter=keys & on(Screen.RESUME))
    def _resume(event: KeyPressEvent) -> None:
        resume_screen.resume(state)

    @add("n", filter=keys & on(Screen.RESUME))
    def _fresh(event: KeyPressEvent) -> None:
        state.driver.resume_answer(None)

    for name, step in (("up", -1), ("down", 1), ("k", -1), ("j", 1)):
        @add(name, filter=keys & on(Screen.RESUME))
        def _resume_step(event: KeyPressEvent, step: int = step) -> None:
            resume_screen.move(state, step)

    @add(start_screen.LEVEL_KEY, filter=keys & on(Screen.START) & no_prompt)
    def _level(event: KeyPressEvent) -> None:
        start_screen.next_level(state)

    # -- the lobby -------------------------------------------------------------------------
    @add("a", filter=keys & on(Screen.LOBBY))
    def _accept(event: KeyPressEvent) -> None:
        lobby_screen.accept(state)

    @add(lobby_screen.REPLY_KEY, filter=keys & on(Screen.LOBBY) & no_prompt)
    def _reply(event: KeyPressEvent) -> None:
        lobby_screen.ask_reply(state)

    # -- the setup screen --------------------------------------------------------------
    setup = keys & on(Screen.SETUP)
    simple = {
        "r": setup_screen.randomize, "c": setup_screen.clear, "x": setup_screen.remove,
        "u": setup_screen.undo,
        "delete": setup_screen.remove, "backspace": setup_screen.remove,
        "l": setup_screen.ask_load, "w": setup_screen.ask_save, "d": setup_screen.ready,
    }
    for key, action in simple.items():
        @add(key, filter=setup)
        def _setup_key(event: KeyPressEvent, action=action) -> None:
            action(state)

    @add("tab", filter=setup)
    @add("]", filter=setup)
    def _next(event: KeyPressEvent) -> None:
        setup_screen.next_rank(state, 1)

    @add("s-tab", filter=setup)
    @add("[", filter=setup)
    def _previous(event: KeyPressEvent) -> None:
        setup_screen.next_rank(state, -1)

    # -- the end screen ------------------------------------------------------------------
    @add("n", filter=keys & on(Screen.END))
    def _again(event: KeyPressEvent) -> None:
        end_screen.rematch(state)

    @add("s", filter=keys & on(Screen.END))
    def _setups(event: KeyPressEvent) -> None:
        end_screen.toggle_view(state)

    @add("c", filter=keys & on(Screen.END))
    def _challenges(event: KeyPressEvent) -> None:
        end_screen.toggle_challenges(state)

    for name, step in (("pagedown", 1), ("pageup", -1), ("down", 1), ("up", -1)):
        @add(name, filter=keys & on(Screen.END))
        def _challenge_page(event: KeyPressEvent, step: int = step) -> None:
            end_screen.page(state, step)

    @add("v", filter=keys & on(Screen.END))
    def _review_this(event: KeyPressEvent) -> None:
        end_screen.review(state)

    return kb

