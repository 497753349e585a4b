"""The table screen's input line: the Towers screen's actions and words (`commands`), and
the table's own: a whisper to one seat, a dispute of a claim against us (SPEC 5.7, 5.8).
Pure.

>>> read_line("/w 2 meet me at c3").target, read_line("w Blue hi").text
('2', 'hi')
>>> read_line("dispute").kind, read_line("+c3").action.text()
('dispute', '+c3')
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.games.towers.rules import Action, Colour
from p2pgotg.ui.commands import CommandError
from p2pgotg.ui.towers.commands import parse_command

WHISPER_WORDS = ("w", "/w", "whisper", "/whisper")
USAGE = ("type an action like c3-c4, +c3, *c3, @a1, or: chat TEXT (to the table), w SEAT "
         "TEXT (a whisper: SEAT a number or a colour), resign, dispute, help, quit")


@dataclass(frozen=True)
class TableCommand:
    kind: str  # "action", "whisper", "dispute", or a word of `commands`
    action: Action | None = None
    target: str = ""  # a whisper's seat or colour, as typed
    text: str = ""


def read_line(line: str, cursor: int | None = None) -> TableCommand:
    """Read a typed line; CommandError (in words) when it is none of the above."""
    words = line.strip().split(None, 2)
    head = words[0].lower() if words else ""
    if head in WHISPER_WORDS:
        if len(words) < 3:
            raise CommandError("a whisper needs a seat and a message: w 2 TEXT, or w Blue "
                               "TEXT")
        return TableCommand("whisper", target=words[1], text=words[2])
    if head == "dispute":
        if len(words) > 1:
            raise CommandError("dispute takes nothing after it (it disputes the last claim "
                               "against you)")
        return TableCommand("dispute")
    if head in ("draw", "decline"):
        raise CommandError("a table has no draw offers (SPEC 5.6): play on, or resign")
    try:
        command = parse_command(line, cursor)
    except CommandError as exc:
        if str(exc).startswith("unknown command") or not words:
            raise CommandError(f"unknown command {head!r}: {USAGE}" if words else USAGE) \
                from None
        raise
    return TableCommand(command.kind, action=command.action, text=command.text)


def whisper_seat(target: str, order: tuple[int, ...] | None, seats: int) -> int:
    """The seat a whisper's target names: a seat number, or a colour (once the turn order
    says who plays it). CommandError when it names none."""
    if target.isdigit():
        seat = int(target)
        if seat >= seats:
            raise CommandError(f"there is no seat {seat}: the seats are 0 to {seats - 1}")
        return seat
    names = {c.display_name.lower(): c for c in Colour}
    found = names.get(target.lower())
    if found is None:
        raise CommandError(f"{target!r} is no seat: name one by its number (0 to "
                           f"{seats - 1}) or its colour (Red, Blue, Green, Yellow)")
    if order is None:
        raise CommandError("the colours are not dealt yet: name the seat by its number")
    if found >= len(order):
        raise CommandError(f"no one plays {found.display_name} at this table")
    return order[found]
