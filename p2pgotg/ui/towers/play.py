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
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules import (
    Action,
    Game,
    InvalidNotationError,
    Kind,
    Phase,
    neighbours,
    square_name,
)
from p2pgotg.net.play.session import Link
from p2pgotg.protocol.events import Event
from p2pgotg.ui import away_panel, play_screen
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Confirm, Mode
from p2pgotg.ui.towers import board, seat_labels, towers_peer
from p2pgotg.ui.towers.commands import CommandError, parse_command
from p2pgotg.ui.towers.model import TowersScreen
from p2pgotg.ui.towers.panel import table, turn_words, what_to_do
from p2pgotg.ui.towers.words import colour, colours
from p2pgotg.ui.words import capital

LEFT = board.WIDTH + 1  # the board's column, with a space
KIND_WORDS = {Kind.SPAWN: "spawn", Kind.CLAIM: "claim"}


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


def board_text(state: AppState) -> Fragments:
    """The board, then the pool and each colour's counts."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return []
    marks = board.Marks(cursor=state.cursor, selected=state.selected, targets=targets(state),
                        last=screen_state(state).marked)
    return [*board.board_fragments(game, marks), ("", "\n"),
            *table(game, seat_labels(state, peer))]


def targets(state: AppState) -> frozenset[int]:
    """Where the picked-up pawn may move now."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    sq = state.selected
    if peer is None or game is None or sq is None or not peer.my_turn:
        return frozenset()
    return frozenset(a.to for a in game.legal_actions
                     if a.kind is Kind.MOVE and a.square == sq and a.to is not None)


def turn_text(state: AppState, width: int) -> Fragments:
    """Above the log: whose colour acts and what it may do, the clocks, a draw offer,
    and the other side's absence."""
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
    out += away_text(state, width)
    return out


def away_text(state: AppState, width: int) -> Fragments:
    """When the connection is down: what happened, and when the game is claimed for us
    if the other side stays away (the session claims it; SPEC 3.6)."""
    session = state.session
    if session is None or session.done or session.link is Link.CONNECTED:
        return []
    if session.link is Link.CONNECTING and state.mode is not Mode.HOST:
        return []
    out: Fragments = []
    for part in textwrap.wrap(away_panel.away_words(state), max(10, width - 1)):
        out.append(("class:status.error", f"{part}\n"))
    if state.mode is Mode.HOST and state.invites:  # a resumed game listens on a new port
        out.append(("", "They can come back with:\n"))
        code = state.invites[0]
        out += [("class:invite", code[i:i + width - 1] + "\n")
                for i in range(0, len(code), width - 1)]
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
    return ("arrows cursor | Space actions here, 1-9 do one | Enter pick up/drop | "
            "Shift+arrow step | + * @ Enter build spawn claim | type c3-c4 | ? keys")


# -- what the keys do -------------------------------------------------------------------

def move_cursor(state: AppState, dx: int, dy: int) -> None:
    state.cursor = board.step(state.cursor, dx, dy)


def _mine(peer: TowersPeer, game: Game, sq: int) -> bool:
    return game.pawn_at(sq) in peer.my_seats


def step_pawn(state: AppState, dx: int, dy: int) -> None:
    """Shift+arrow: move the pawn under the cursor one square that way."""
    sq = state.cursor
    to = board.step(sq, dx, dy)
    if to == sq:
        state.warn(f"no square beyond {square_name(sq)} that way")
        return
    try_action(state, Action.move(sq, to))


def enter(state: AppState) -> None:
    """Pick up our pawn under the cursor, or move the picked-up pawn there; on any other
    square, list what can be done there."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return
    sq, picked = state.cursor, state.selected
    if picked is not None and sq == picked:
        state.selected = None
        state.say("put down")
        return
    if _mine(peer, game, sq) and game.phase is Phase.PLAY and not game.is_over:
        state.selected = sq
        if not peer.my_turn:
            state.say(f"the pawn on {square_name(sq)} picked up; wait for your turn")
            return
        listed = list_actions(state, quiet=True)
        moves = "Enter on a + moves it there" if targets(state) else "it cannot move now"
        state.say(f"pawn on {square_name(sq)} picked up: {moves}; or {listed}")
        return
    if picked is not None:
        if sq not in neighbours(picked):
            state.warn(f"{square_name(picked)} to {square_name(sq)} is not one step: a pawn "
                       "moves one square up, down, left or right")
            return
        try_action(state, Action.move(picked, sq))
        return
    list_actions(state)


def choice_words(game: Game, action: Action) -> str:
    """An action for the numbered list: its notation, and the kind when it has a prefix."""
    if action.kind is Kind.MOVE:
        return action.text()
    if action.kind is Kind.LAYER:
        return f"{action.text()} ({'layer' if game.phase is Phase.SETUP else 'build'})"
    return f"{action.text()} ({KIND_WORDS[action.kind]})"


def list_actions(state: AppState, quiet: bool = False) -> str:
    """Number the legal actions on the cursor's square (a digit then makes one) and say
    them; when there is none, say why. Returns the list's words."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return ""
    towers = screen_state(state)
    towers.choices, towers.choices_for = (), None
    sq = state.cursor
    name = square_name(sq)
    if not _may_act(state, peer, game):
        return ""
    here = tuple(a for a in game.legal_actions if a.square == sq)
    if not here:
        state.warn(f"nothing to do on {name}: {why_nothing(game, sq)}")
        return ""
    towers.choices, towers.choices_for = here[:9], (game.ply, sq)
    listed = "  ".join(f"{n} {choice_words(game, a)}" for n, a in enumerate(here[:9], 1))
    if not quiet:
        state.say(f"{name}: {listed}  (a number does it)")
    return listed


def why_nothing(game: Game, sq: int) -> str:
    """Why no action can be made on a square: the rules' words for the likeliest ones."""
    kinds = (Kind.LAYER, Kind.CLAIM) if game.phase is Phase.SETUP else (Kind.LAYER,
                                                                          Kind.SPAWN)
    reasons = [game.problem(Action(kind, sq)) for kind in kinds]
    return "; ".join(dict.fromkeys(r for r in reasons if r)) or "no legal action"


def choose(state: AppState, number: int) -> None:
    """A digit: make that action of the list shown for the cursor's square."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    towers = screen_state(state)
    if peer is None or game is None:
        return
    if towers.choices_for != (game.ply, state.cursor) or not towers.choices:
        state.warn("press Space first: it lists the actions on the cursor's square, "
                   "numbered")
        return
    if not 1 <= number <= len(towers.choices):
        state.warn(f"the list has {len(towers.choices)} action"
                   f"{'s' if len(towers.choices) != 1 else ''}: choose 1 to "
                   f"{len(towers.choices)}")
        return
    try_action(state, towers.choices[number - 1])


def _may_act(state: AppState, peer: TowersPeer, game: Game) -> bool:
    """Whether we may act now; if not, say why."""
    if peer.flow.is_over or game.is_over:
        state.warn("the game is over")
        return False
    if not peer.my_turn:
        state.warn(f"it is {colour(game.turn)}'s turn ({state.opponent}): wait for it")
        return False
    return True


def try_action(state: AppState, action: Action) -> None:
    """Check the action against the rules first: an illegal one is refused with the rule
    it breaks and nothing is sent."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None or not _may_act(state, peer, game):
        return
    problem = game.problem(action)
    if problem is not None:
        state.warn(f"{action.text()}: {problem}")
        return
    offer = state.offer_draw and game.phase is Phase.PLAY
    state.offer_draw = state.offer_draw and not offer
    state.selected = None
    towers = screen_state(state)
    towers.choices, towers.choices_for = (), None
    if action.kind is Kind.MOVE and action.to is not None:
        state.cursor = action.to
    done = f"you played {action.text()}" + (", offering a draw" if offer else "")
    perform(state, lambda p: p.act(action, offer_draw=offer), done)


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
    if command.kind == "action":
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
