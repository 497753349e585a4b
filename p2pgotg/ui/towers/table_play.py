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

from p2pgotg.games.towers.rules import InvalidNotationError
from p2pgotg.ui.commands import CommandError
from p2pgotg.ui.towers.acting import choose, enter, list_actions, move_cursor, step_pawn, try_action
from p2pgotg.ui.towers.table_commands import read_line, whisper_seat
from p2pgotg.ui.towers.table_model import RESIGN, TableScreen

# the keys on the board are the Towers play screen's, the table screen being an
# `acting.ActingScreen`; the rest is the table's own
__all__ = ["answer", "ask_resign", "choose", "dispute", "enter", "list_actions", "move_cursor",
           "step_pawn", "submit", "try_action", "whisper"]


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
