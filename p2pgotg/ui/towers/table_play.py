"""What the keys and the typed lines do at a table (SPEC 5.6 to 5.8): the same ways to act
as the Towers play screen (the cursor, Space and a digit, Enter to pick up and drop,
Shift+arrow, notation typed at the line), and the table's talk: chat to the table, a
whisper to one seat, a dispute of a claim against us, resigning (asked first).

Every action is checked against the rules before anything is sent; an illegal one, or one
out of turn, is refused in the status line with the rule's words.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from p2pgotg.games.towers.rules import (
    Action,
    Game,
    InvalidNotationError,
    Kind,
    Phase,
    neighbours,
    square_name,
)
from p2pgotg.ui.commands import CommandError
from p2pgotg.ui.towers import board
from p2pgotg.ui.towers.play import choice_words, why_nothing
from p2pgotg.ui.towers.table_commands import read_line, whisper_seat
from p2pgotg.ui.towers.table_model import RESIGN, TableScreen


def move_cursor(screen: TableScreen, dx: int, dy: int) -> None:
    screen.cursor = board.step(screen.cursor, dx, dy)


def may_act(screen: TableScreen) -> Game | None:
    """The game, when we may act now; else None, the reason said."""
    game, status = screen.game, screen.status_value
    if screen.session is None or status is None:
        screen.warn("the table is not full yet: wait for the seats")
        return None
    if status.over or screen.session.done:
        screen.warn("the game is over")
        return None
    if game is None:
        screen.warn("the turn order is not decided yet: wait for every seat's coin")
        return None
    if screen.my_seat in status.left:
        screen.warn("you have left this table")
        return None
    if not screen.my_turn:
        screen.warn(f"not your turn: {screen.who_to_act()} is to act")
        return None
    return game


def targets(screen: TableScreen) -> frozenset[int]:
    """Where the picked-up pawn may move now."""
    game, sq = screen.game, screen.selected
    if game is None or sq is None or not screen.my_turn:
        return frozenset()
    return frozenset(a.to for a in game.legal_actions
                     if a.kind is Kind.MOVE and a.square == sq and a.to is not None)


def try_action(screen: TableScreen, action: Action) -> None:
    """Check the action first: an illegal one is refused with the rule it breaks."""
    game = may_act(screen)
    if game is None:
        return
    problem = game.problem(action)
    if problem is not None:
        screen.warn(f"{action.text()}: {problem}")
        return
    screen.selected = None
    screen.choices, screen.choices_for = (), None
    if action.kind is Kind.MOVE and action.to is not None:
        screen.cursor = action.to
    screen.perform(partial(_act, action=action), f"you played {action.text()}")


def _act(seat: Any, action: Action) -> Any:
    return seat.act(action)


def list_actions(screen: TableScreen, quiet: bool = False) -> str:
    """Number the legal actions on the cursor's square (a digit makes one)."""
    screen.choices, screen.choices_for = (), None
    game = may_act(screen)
    if game is None:
        return ""
    sq = screen.cursor
    here = tuple(a for a in game.legal_actions if a.square == sq)
    if not here:
        screen.warn(f"nothing to do on {square_name(sq)}: {why_nothing(game, sq)}")
        return ""
    screen.choices, screen.choices_for = here[:9], (game.ply, sq)
    listed = "  ".join(f"{n} {choice_words(game, a)}" for n, a in enumerate(here[:9], 1))
    if not quiet:
        screen.say(f"{square_name(sq)}: {listed}  (a number does it)")
    return listed


def choose(screen: TableScreen, number: int) -> None:
    game = screen.game
    if game is None or screen.choices_for != (game.ply, screen.cursor) or not screen.choices:
        screen.warn("press Space first: it lists the actions on the cursor's square")
        return
    if not 1 <= number <= len(screen.choices):
        screen.warn(f"the list has {len(screen.choices)}: choose 1 to {len(screen.choices)}")
        return
    try_action(screen, screen.choices[number - 1])


def step_pawn(screen: TableScreen, dx: int, dy: int) -> None:
    """Shift+arrow: move the pawn under the cursor one square that way."""
    sq = screen.cursor
    to = board.step(sq, dx, dy)
    if to == sq:
        screen.warn(f"no square beyond {square_name(sq)} that way")
        return
    try_action(screen, Action.move(sq, to))


def enter(screen: TableScreen) -> None:
    """Pick up our pawn under the cursor, or move the picked-up pawn there; elsewhere list
    the actions there."""
    game = screen.game
    if game is None:
        may_act(screen)
        return
    sq, picked = screen.cursor, screen.selected
    if picked is not None and sq == picked:
        screen.selected = None
        screen.say("put down")
        return
    mine = game.pawn_at(sq) is not None and game.pawn_at(sq) == screen.my_colour
    if mine and game.phase is Phase.PLAY and not game.is_over:
        screen.selected = sq
        if not screen.my_turn:
            screen.say(f"the pawn on {square_name(sq)} picked up; wait for your turn")
            return
        listed = list_actions(screen, quiet=True)
        moves = "Enter on a + moves it there" if targets(screen) else "it cannot move now"
        screen.say(f"pawn on {square_name(sq)} picked up: {moves}; or {listed}")
        return
    if picked is not None:
        if sq not in neighbours(picked):
            screen.warn(f"{square_name(picked)} to {square_name(sq)} is not one step: a "
                        "pawn moves one square up, down, left or right")
            return
        try_action(screen, Action.move(picked, sq))
        return
    list_actions(screen)


def submit(screen: TableScreen, line: str) -> str | None:
    """A line typed at the input; returns "quit" or "help" when the application must
    act on it, else None."""
    try:
        command = read_line(line, screen.cursor)
    except (CommandError, InvalidNotationError) as exc:
        screen.warn(str(exc))
        return None
    if command.kind in ("quit", "help"):
        return command.kind
    if command.kind == "action":
        assert command.action is not None
        try_action(screen, command.action)
    elif screen.session is None or screen.status_value is None:
        screen.warn("not seated yet: wait for the host")
    elif command.kind == "chat":
        screen.perform(partial(_chat, text=command.text))
    elif command.kind == "whisper":
        whisper(screen, command.target, command.text)
    elif command.kind == "dispute":
        dispute(screen)
    elif command.kind == "resign":
        ask_resign(screen)
    return None


def _chat(seat: Any, text: str) -> Any:
    return seat.chat(text)


def whisper(screen: TableScreen, target: str, text: str) -> None:
    status = screen.status_value
    try:
        to = whisper_seat(target, status.order, status.seats)
    except CommandError as exc:
        screen.warn(str(exc))
        return
    if to == screen.my_seat:
        screen.warn("that is your own seat: whisper to another")
        return
    screen.add(f"  you to {screen.who(to)} (private): {text}", "class:log.whisper")
    screen.perform(partial(_whisper, to=to, text=text), f"whispered to {screen.who(to)}")


def _whisper(seat: Any, to: int, text: str) -> Any:
    return seat.whisper(to, text)


def dispute(screen: TableScreen) -> None:
    """Dispute the last claim against us not disputed yet (SPEC 5.7)."""
    open_claims = [c for c in screen.claims_on_me if c not in screen.disputed]
    if not open_claims:
        screen.warn("the claim against you is disputed already (every file keeps it)"
                    if screen.claims_on_me else "no claim against you to dispute")
        return
    claim = open_claims[-1]
    screen.disputed.add(claim)
    screen.perform(partial(_dispute, claim=claim),
                   f"you disputed the claim of {screen.who(claim[0])}: every file keeps it")


def _dispute(seat: Any, claim: tuple[int, int]) -> Any:
    return seat.dispute(claim)


def ask_resign(screen: TableScreen) -> None:
    status = screen.status_value
    if status is None or status.over:
        screen.warn("the game is over")
        return
    if screen.my_seat in status.left:
        screen.warn("you have left this table already")
        return
    screen.confirm = RESIGN
    screen.say("resign? You leave the table and the others play on without you (y or n)")


def answer(screen: TableScreen, yes: bool) -> None:
    """y or n to the question in the status line."""
    asked, screen.confirm = screen.confirm, None
    if asked == RESIGN and yes:
        screen.perform(_resign, "you resigned")
    elif asked == RESIGN:
        screen.say("you play on")


def _resign(seat: Any) -> Any:
    return seat.resign()
