"""Key bindings, built from the state (pyvim's `create_key_bindings`).

One input line is always focused, so typing a move just works on the play screen. Where no
text is wanted (start, lobby, setup, end), letters are single-key commands instead; the
filters of `_Keys` say which keys mean what on which screen. Each group of keys is bound by
a function of its own, in a fixed order: where two bindings of one key both apply, the one
bound later wins (prompt_toolkit), and `<any>` yields to every named key.
"""

from __future__ import annotations

from collections.abc import Callable

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
from p2pgotg.ui.guarded_keys import GuardedKeys
from p2pgotg.ui.help import scroll as scroll_help
from p2pgotg.ui.state import AppState, Confirm, Prompt, Screen
from p2pgotg.ui.towers.keys import add_bindings as add_towers_keys

ARROWS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def create_key_bindings(state: AppState, buffer: Buffer) -> KeyBindings:
    keys = _Keys(state, buffer, KeyBindings())
    for bind in (_bind_quitting, _bind_escape, _bind_help, _bind_cursor, _bind_enter_and_paste,
                 _bind_start, _bind_saved_games, _bind_resume_offer, _bind_lobby, _bind_setup,
                 _bind_end):
        bind(keys)
    add_towers_keys(keys.kb, state, buffer)  # (last: on Towers' screens, theirs decide)
    return keys.kb


class _Keys(GuardedKeys[AppState]):
    """What every group of bindings needs: the state, the input line, and the filters that
    say where a key means what."""

    def __init__(self, state: AppState, buffer: Buffer, kb: KeyBindings) -> None:
        super().__init__(kb, state)
        self.buffer = buffer
        self.confirming = Condition(lambda: state.confirm is not None)
        self.helping = Condition(lambda: state.help_visible)  # the `?` overlay is up
        self.takes_text = Condition(lambda: state.takes_text)
        #: letters are commands: no text wanted, no question asked, no help shown
        self.commands = ~self.takes_text & ~self.confirming & ~self.helping
        self.empty = Condition(lambda: buffer.text == "")
        self.no_prompt = Condition(lambda: state.prompt is None)

    def on(self, *screens: Screen) -> Filter:
        return Condition(lambda: self.state.screen in screens)


# -- leaving, and the answers to a question ----------------------------------------------

def _bind_quitting(k: _Keys) -> None:
    state = k.state

    @k.add("c-c")
    @k.add("c-q")
    def _quit(event: KeyPressEvent) -> None:
        if state.from_start and state.mode is not None and state.confirm is None \
                and not state.in_game:
            _leave_or_exit(state, event)  # (no game to lose: straight back to the start)
            return
        if state.confirm is Confirm.QUIT or not state.in_game:
            event.app.exit()
        else:
            state.ask_quit()

    @k.add("q", filter=k.commands & k.on(Screen.START, Screen.LOBBY, Screen.SETUP, Screen.END,
                                         Screen.ERROR, Screen.REVIEW, Screen.GAMES,
                                         Screen.RESUME))
    def _q(event: KeyPressEvent) -> None:
        _quit_or_ask(state, event)

    @k.add("y", filter=k.confirming)
    def _yes(event: KeyPressEvent) -> None:
        question, state.confirm = state.confirm, None
        state.say("")
        if question is Confirm.QUIT:
            _leave_or_exit(state, event)
        elif question is Confirm.RESIGN:
            play_screen.resign(state)
        elif question is Confirm.RANDOM:
            setup_screen.randomize(state, confirmed=True)

    @k.add("<any>", filter=k.confirming)
    @k.add("n", filter=k.confirming)
    def _no(event: KeyPressEvent) -> None:
        state.confirm = None
        state.say("")


def _quit_or_ask(state: AppState, event: KeyPressEvent) -> None:
    """`q`: close what was opened over a screen, ask before a game is left, else quit."""
    if state.screen is Screen.REVIEW and state.review_back is not None:
        review_screen.close(state)
    elif state.screen is Screen.REVIEW:  # `p2pgotg show`: the review was all of it
        event.app.exit()
    elif state.screen is Screen.GAMES:
        games_screen.close(state)
    elif state.in_game and state.confirm is None:
        state.ask_quit()
    else:
        _leave_or_exit(state, event)


def _leave_or_exit(state: AppState, event: KeyPressEvent) -> None:
    """Quit: a game opened from the start screen goes back to it, else the program ends
    (telling the other side, either way: `UI.run` and `Controller.leave`)."""
    if state.from_start and state.mode is not None:
        state.confirm = None
        state.say("")
        state.driver.leave()
    else:
        event.app.exit()


# -- keys without a meaning, and escape ---------------------------------------------------

def _bind_escape(k: _Keys) -> None:
    state, buffer = k.state, k.buffer

    @k.add("<any>", filter=k.commands)
    def _not_text(event: KeyPressEvent) -> None:
        """Where no text is wanted, a key without a meaning does nothing."""

    @k.add("escape", filter=~k.confirming, eager=True)
    def _escape(event: KeyPressEvent) -> None:
        """Put down, in turn, whatever is open: the help, a review or list, a prompt, the
        text typed, a piece picked up."""
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


# -- the `?` overlay: it scrolls, and no key acts on the screen beneath it ------------------

def _bind_help(k: _Keys) -> None:
    state = k.state

    @k.add("?", filter=(k.commands | k.empty | k.helping) & k.no_prompt & ~k.confirming)
    def _help(event: KeyPressEvent) -> None:
        state.toggle_help()

    reading = k.helping & ~k.confirming
    for name, step in (("up", -1), ("down", 1), ("pageup", -10), ("pagedown", 10),
                       ("space", 10), ("home", -10**6), ("end", 10**6)):
        @k.add(name, filter=reading & (~k.takes_text | k.empty))
        def _help_scroll(event: KeyPressEvent, step: int = step) -> None:
            scroll_help(state, step)

    @k.add("q", filter=reading & ~k.takes_text)
    def _help_close(event: KeyPressEvent) -> None:
        state.toggle_help()

    @k.add("<any>", filter=reading & ~k.takes_text)
    def _help_ignores(event: KeyPressEvent) -> None:
        """Under the overlay, a letter does nothing (it never acts on the screen)."""


# -- the cursor on the boards --------------------------------------------------------------

def _bind_cursor(k: _Keys) -> None:
    state = k.state
    for name, (dx, dy) in ARROWS.items():
        @k.add(name, filter=k.on(Screen.SETUP) & k.no_prompt & ~k.confirming & ~k.helping)
        def _setup_arrow(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            setup_screen.move_cursor(state, dx, dy)

        @k.add(name, filter=k.on(Screen.PLAY) & k.empty & ~k.confirming & ~k.helping)
        def _play_arrow(event: KeyPressEvent, dx: int = dx, dy: int = dy) -> None:
            play_screen.move_cursor(state, dx, dy)


# -- the input line: enter and paste -------------------------------------------------------

def _bind_enter_and_paste(k: _Keys) -> None:
    state, buffer = k.state, k.buffer

    @k.add("enter", filter=~k.confirming)
    def _enter(event: KeyPressEvent) -> None:
        if state.prompt is not None:
            _answer_prompt(state, buffer, state.prompt)
        else:
            _enter_on_screen(state, buffer)

    @k.add(Keys.BracketedPaste, filter=k.takes_text)
    def _paste(event: KeyPressEvent) -> None:
        """Pasted text goes on the one input line: a code that came broken over lines (an
        invite copied from a narrow screen) is read whole (its line breaks are spaces,
        which a code ignores), never as its last line alone."""
        text = event.data.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
        buffer.insert_text(text)

    @k.add(Keys.BracketedPaste, filter=~k.takes_text)
    def _no_paste(event: KeyPressEvent) -> None:
        """Where no text is wanted, a paste does nothing (its letters are not commands)."""


#: What the answer to each prompt is given to.
_PROMPT_ANSWERS: dict[Prompt, Callable[[AppState, str], None]] = {
    Prompt.JOIN_CODE: start_screen.submit_code,
    Prompt.LOAD: setup_screen.load,
    Prompt.SAVE: setup_screen.save,
    Prompt.REPLY_CODE: lobby_screen.submit_reply,
}


def _answer_prompt(state: AppState, buffer: Buffer, prompt: Prompt) -> None:
    """A refused answer keeps the prompt and its text, so that the next keys go on editing
    it and never reach the board."""
    _PROMPT_ANSWERS[prompt](state, buffer.text)
    if state.prompt is None:
        buffer.reset()


def _enter_on_screen(state: AppState, buffer: Buffer) -> None:
    """Enter with no prompt: the play screen's command (or the piece under the cursor),
    the setup's pick or place, the saved game chosen."""
    screen = state.screen
    if screen is Screen.PLAY:
        if buffer.text.strip():
            text = buffer.text
            buffer.reset(append_to_history=True)
            play_screen.submit(state, text)
        else:
            play_screen.enter(state)
    elif screen is Screen.SETUP:
        setup_screen.enter(state)
    elif screen is Screen.GAMES:
        games_screen.open_selected(state)


# -- the start screen ----------------------------------------------------------------------

def _bind_start(k: _Keys) -> None:
    state = k.state
    for key in start_screen.CHOICES:
        @k.add(key, filter=k.commands & k.on(Screen.START) & k.no_prompt)
        def _choose(event: KeyPressEvent, key: str = key) -> None:
            start_screen.choose(state, key)

    @k.add(start_screen.LEVEL_KEY, filter=k.commands & k.on(Screen.START) & k.no_prompt)
    def _level(event: KeyPressEvent) -> None:
        start_screen.next_level(state)

    @k.add(start_screen.GAME_KEY, filter=k.commands & k.on(Screen.START) & k.no_prompt)
    def _game(event: KeyPressEvent) -> None:
        start_screen.next_game(state)


# -- the saved games and the review --------------------------------------------------------

def _bind_saved_games(k: _Keys) -> None:
    state = k.state
    games_keys = k.commands & k.on(Screen.GAMES)
    for name, step in (("up", -1), ("down", 1), ("k", -1), ("j", 1)):
        @k.add(name, filter=games_keys)
        def _games_step(event: KeyPressEvent, step: int = step) -> None:
            games_screen.move(state, step)

    review = k.commands & k.on(Screen.REVIEW)
    for name, step in (("right", 1), ("left", -1), ("n", 1), ("p", -1), ("pagedown", 10),
                       ("pageup", -10), ("down", 10), ("up", -10), ("space", 1),
                       ("home", -10**6), ("end", 10**6)):
        @k.add(name, filter=review)
        def _review_step(event: KeyPressEvent, step: int = step) -> None:
            review_screen.step(state, step)


# -- the offer of unfinished games ---------------------------------------------------------

def _bind_resume_offer(k: _Keys) -> None:
    state = k.state
    offer = k.commands & k.on(Screen.RESUME)

    @k.add("r", filter=offer)
    @k.add("enter", filter=offer)
    def _resume(event: KeyPressEvent) -> None:
        resume_screen.resume(state)

    @k.add("n", filter=offer)
    def _fresh(event: KeyPressEvent) -> None:
        state.driver.resume_answer(None)

    for name, step in (("up", -1), ("down", 1), ("k", -1), ("j", 1)):
        @k.add(name, filter=offer)
        def _resume_step(event: KeyPressEvent, step: int = step) -> None:
            resume_screen.move(state, step)


# -- the lobby -----------------------------------------------------------------------------

def _bind_lobby(k: _Keys) -> None:
    state = k.state

    @k.add("a", filter=k.commands & k.on(Screen.LOBBY))
    def _accept(event: KeyPressEvent) -> None:
        lobby_screen.accept(state)

    @k.add(lobby_screen.REPLY_KEY, filter=k.commands & k.on(Screen.LOBBY) & k.no_prompt)
    @k.add(setup_screen.REPLY_KEY, filter=k.commands & k.on(Screen.SETUP) & k.no_prompt
           & Condition(lambda: lobby_screen.takes_replies(state)))
    def _reply(event: KeyPressEvent) -> None:
        lobby_screen.ask_reply(state)


# -- the setup screen ----------------------------------------------------------------------

#: The setup screen's one-key commands.
_SETUP_KEYS: dict[str, Callable[[AppState], None]] = {
    "r": setup_screen.randomize, "c": setup_screen.clear, "x": setup_screen.remove,
    "u": setup_screen.undo,
    "delete": setup_screen.remove, "backspace": setup_screen.remove,
    "l": setup_screen.ask_load, "w": setup_screen.ask_save, "d": setup_screen.ready,
}


def _bind_setup(k: _Keys) -> None:
    state = k.state
    setup = k.commands & k.on(Screen.SETUP)
    for key, command in _SETUP_KEYS.items():
        @k.add(key, filter=setup)
        def _setup_key(event: KeyPressEvent,
                       command: Callable[[AppState], None] = command) -> None:
            command(state)

    @k.add("tab", filter=setup)
    @k.add("]", filter=setup)
    def _next(event: KeyPressEvent) -> None:
        setup_screen.next_rank(state, 1)

    @k.add("s-tab", filter=setup)
    @k.add("[", filter=setup)
    def _previous(event: KeyPressEvent) -> None:
        setup_screen.next_rank(state, -1)


# -- the end screen ------------------------------------------------------------------------

def _bind_end(k: _Keys) -> None:
    state = k.state
    end = k.commands & k.on(Screen.END)

    @k.add("n", filter=end)
    def _again(event: KeyPressEvent) -> None:
        end_screen.rematch(state)

    @k.add("s", filter=end)
    def _setups(event: KeyPressEvent) -> None:
        end_screen.toggle_view(state)

    @k.add("c", filter=end)
    def _challenges(event: KeyPressEvent) -> None:
        end_screen.toggle_challenges(state)

    for name, step in (("pagedown", 1), ("pageup", -1), ("down", 1), ("up", -1)):
        @k.add(name, filter=end)
        def _challenge_page(event: KeyPressEvent, step: int = step) -> None:
            end_screen.page(state, step)

    @k.add("v", filter=end)
    def _review_this(event: KeyPressEvent) -> None:
        end_screen.review(state)
