"""The Towers play screen: the board with the counts under it, whose colour acts and the
log of actions beside it, and the two ways to act: keys on the square under the cursor,
or an action typed in notation (SPEC 4.9) at the input line.

Keys, while the input line is empty (a letter typed goes to the line):

    arrows          move the cursor
    Space           list the legal actions on the cursor's square, numbered
    1..9            make the action of that number from the list
    Enter           pick up your pawn under the cursor (its moves are marked +); on a +,
                    move it there; elsewhere, list the actions as Space does
    Shift+arrow     move the pawn under the cursor one square that way
    + * @ Enter     build (in the setup: place a layer), spawn, claim on the cursor's square

Every action is checked against the rules before anything is sent: an illegal one is
refused with the rule it breaks (`Game.problem`), in the status line.

While the other side is away, the panel under the board and the log says so across the
whole width, with the code that brings them back (`away_panel`); a host takes a reply code
at the input line as on Game of the Generals' move line (SPEC 3.8).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules import Action, Game, InvalidNotationError, Phase
from p2pgotg.protocol.events import Event
from p2pgotg.ui import away_panel, lobby_screen, play_screen
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Confirm, Prompt
from p2pgotg.ui.towers import acting, board, seat_labels, towers_peer
from p2pgotg.ui.towers.commands import CommandError, parse_command
from p2pgotg.ui.towers.model import TowersScreen
from p2pgotg.ui.towers.panel import table, turn_words, what_to_do
from p2pgotg.ui.towers.words import colour, colours
from p2pgotg.ui.words import capital

LEFT = board.WIDTH + 1  # the board's column, with a space


def screen_state(state: AppState) -> TowersScreen:
    """The Towers screen's own state, made on first use (one per application state)."""
    towers = state.towers
    if towers is None:
        towers = state.towers = TowersScreen()
    return towers


def perform(state: AppState, fn: Callable[[TowersPeer], list[Event]],
            done: str | None = None) -> None:
    """Ask the driver to run `fn` on our Towers peer, inside trio."""

    def on_peer(peer: Any) -> list[Event]:  # (the session's peer: a TowersPeer here)
        return fn(peer)

    state.driver.perform(on_peer, done)


# -- what it shows ----------------------------------------------------------------------

def sides_words(state: AppState) -> str:
    """`You, Red vs the bot, Blue`: who plays which colours."""
    peer = towers_peer(state)
    if peer is None or peer.view is None:
        return f"You vs {state.opponent}"
    mine = peer.my_seats
    theirs = tuple(s for s in range(peer.view.seats) if s not in mine)
    them = state.opponent if len(state.opponent) <= 20 else state.opponent[:19] + "…"
    return f"You, {colours(mine)} vs {them}, {colours(theirs)}"


def title(state: AppState) -> str:
    peer = towers_peer(state)
    turn = ""
    if peer is not None and peer.view is not None:
        turn = "game over" if peer.flow.is_over else "YOUR TURN" if peer.my_turn else \
            f"{colour(peer.view.turn)} to act"
    parts = ["Towers", sides_words(state), turn, play_screen.link_words(state)]
    return " | ".join(p for p in parts if p)


def counts_beside(state: AppState) -> bool:
    """The counts stand beside the board, above the log, while the away panel is under
    the board: left under it, they would make an 80x24 window too small for a host's
    invite as soon as the status took two lines."""
    return away_panel.shown(state)


def board_text(state: AppState) -> Fragments:
    """The board, then the pool and each colour's counts (`counts_beside`: the board)."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return []
    marks = board.Marks(cursor=state.cursor, selected=state.selected, targets=targets(state),
                        last=screen_state(state).marked)
    if counts_beside(state):
        return board.board_fragments(game, marks)
    return [*board.board_fragments(game, marks), ("", "\n"),
            *table(game, seat_labels(state, peer))]


def turn_text(state: AppState, width: int) -> Fragments:
    """Above the log: whose colour acts and what it may do, the clocks, a draw offer, and
    the counts when they stand here (`counts_beside`; the other side's absence is the
    panel's, across the whole width)."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return []
    out: Fragments = []

    def line(style: str, text: str) -> None:
        for part in textwrap.wrap(text, max(10, width - 1)) or [""]:
            out.append((style, f"{part}\n"))

    line("class:strong", turn_words(game, seat_labels(state, peer)))
    line("class:dim", what_to_do(game))
    clocks = play_screen.clocks_words(state)
    if clocks:
        line("", f"clocks: {clocks}")
    if peer.draw_offered_to_me:
        line("class:log.info", f"{capital(state.opponent)} offers a draw: on your turn, draw "
             "accepts it, decline or an action declines it")
    elif state.offer_draw:
        line("class:log.info", "your draw offer goes with your next action")
    if counts_beside(state):
        out += [("", "\n"), *table(game, seat_labels(state, peer))]
    return out


def log_text(state: AppState, width: int) -> Fragments:
    """The log of actions and talk, each line wrapped to the column."""
    out: Fragments = [("class:heading", "Actions"), ("", "\n")]
    for entry in state.log:
        indent = len(entry.text) - len(entry.text.lstrip(" "))
        hanging = "      " if entry.style in ("class:log.mine", "class:log.theirs") else "  "
        for part in textwrap.wrap(entry.text.strip(" "), max(10, width - 1 - indent),
                                  subsequent_indent=hanging) or [""]:
            out.append((entry.style, " " * indent + part + "\n"))
    return out


def hints(state: AppState) -> str:
    if state.confirm is not None:
        return "y yes   n no"
    if state.prompt is Prompt.REPLY_CODE:
        return lobby_screen.REPLY_HINT
    if lobby_screen.takes_replies(state):
        return "r Enter: take a reply code | Space actions here | type c3-c4 | ? keys"
    return ("arrows cursor | Space actions here, 1-9 do one | Enter pick up/drop | "
            "Shift+arrow step | + * @ Enter build spawn claim | type c3-c4 | ? keys")


# -- what the keys do -------------------------------------------------------------------

class _Board:
    """The play screen as the keys on the board see it (`acting.ActingScreen`): the
    cursor and picked-up square are the application state's, the numbered actions the
    Towers screen's, the pawns ours by seat, and an action goes with our draw offer."""

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.towers = screen_state(state)
        self.peer = towers_peer(state)

    @property
    def cursor(self) -> int:
        return self.state.cursor

    @cursor.setter
    def cursor(self, square: int) -> None:
        self.state.cursor = square

    @property
    def selected(self) -> int | None:
        return self.state.selected

    @selected.setter
    def selected(self, square: int | None) -> None:
        self.state.selected = square

    @property
    def choices(self) -> tuple[Action, ...]:
        return self.towers.choices

    @choices.setter
    def choices(self, choices: tuple[Action, ...]) -> None:
        self.towers.choices = choices

    @property
    def choices_for(self) -> tuple[int, int] | None:
        return self.towers.choices_for

    @choices_for.setter
    def choices_for(self, ply_square: tuple[int, int] | None) -> None:
        self.towers.choices_for = ply_square

    @property
    def game(self) -> Game | None:
        return None if self.peer is None else self.peer.view

    @property
    def my_turn(self) -> bool:
        return self.peer is not None and self.peer.my_turn

    def say(self, text: str) -> None:
        self.state.say(text)

    def warn(self, text: str) -> None:
        self.state.warn(text)

    def holds(self, square: int) -> bool:
        game = self.game
        return self.peer is not None and game is not None \
            and game.pawn_at(square) in self.peer.my_seats

    def why_not_now(self) -> str | None:
        peer, game = self.peer, self.game
        if peer is None or game is None:
            return "no game yet"
        if peer.flow.is_over or game.is_over:
            return "the game is over"
        if not peer.my_turn:
            return f"it is {colour(game.turn)}'s turn ({self.state.opponent}): wait for it"
        return None

    def send(self, action: Action) -> None:
        """The action, with our draw offer once the setup is over (SPEC 4.11)."""
        state, game = self.state, self.game
        offer = state.offer_draw and game is not None and game.phase is Phase.PLAY
        state.offer_draw = state.offer_draw and not offer
        done = f"you played {action.text()}" + (", offering a draw" if offer else "")
        perform(state, lambda p: p.act(action, offer_draw=offer), done)


def move_cursor(state: AppState, dx: int, dy: int) -> None:
    acting.move_cursor(_Board(state), dx, dy)


def targets(state: AppState) -> frozenset[int]:
    """Where the picked-up pawn may move now."""
    return acting.targets(_Board(state))


def step_pawn(state: AppState, dx: int, dy: int) -> None:
    acting.step_pawn(_Board(state), dx, dy)


def enter(state: AppState) -> None:
    acting.enter(_Board(state))


def list_actions(state: AppState, quiet: bool = False) -> str:
    return acting.list_actions(_Board(state), quiet)


def choose(state: AppState, number: int) -> None:
    acting.choose(_Board(state), number)


def try_action(state: AppState, action: Action) -> None:
    acting.try_action(_Board(state), action)


def submit(state: AppState, line: str) -> None:
    """A line typed at the play screen's input."""
    try:
        command = parse_command(line, state.cursor)
    except CommandError as exc:
        state.warn(str(exc))
        return
    except InvalidNotationError as exc:  # (a square off the board in a lone prefix)
        state.warn(str(exc))
        return
    peer = towers_peer(state)
    if command.kind == "reply":
        lobby_screen.reply_typed(state, command.text)
    elif command.kind == "action":
        assert command.action is not None
        try_action(state, command.action)
    elif command.kind == "help":
        state.toggle_help()
    elif command.kind == "quit":
        state.ask_quit()
    elif peer is None or peer.view is None:
        state.warn("no game yet")
    elif command.kind == "resign":
        state.ask(Confirm.RESIGN, "resign this game? You lose it.")
    elif command.kind == "draw":
        draw(state, peer)
    elif command.kind == "decline":
        if peer.draw_offered_to_me and not peer.my_turn:
            state.warn(f"{state.opponent} offers a draw: answer it on your turn")
        elif peer.draw_offered_to_me:
            perform(state, lambda p: p.decline_draw(), "draw declined")
        else:
            state.warn(f"{state.opponent} has not offered a draw")
    elif command.kind == "chat":
        perform(state, lambda p: p.chat(command.text))


def draw(state: AppState, peer: TowersPeer) -> None:
    """Accept a standing offer, else offer one with our next action (SPEC 4.11)."""
    game = peer.view
    assert game is not None
    if peer.draw_offered_to_me and not peer.my_turn:
        state.warn(f"{state.opponent} offers a draw: accept it on your turn (draw)")
    elif peer.draw_offered_to_me:
        perform(state, lambda p: p.accept_draw(), "draw accepted")
    elif game.phase is Phase.SETUP:
        state.warn("a draw can be offered once every colour has claimed its start")
    elif state.offer_draw:
        state.say("your draw offer already goes with your next action")
    else:
        state.offer_draw = True
        state.say("your draw offer goes with your next action")
