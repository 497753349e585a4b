"""The Towers play screen's input line: an action in notation (SPEC 4.9), a word
command, or a host's reply code (`r`, `reply CODE` or the code pasted, as on Game of the
Generals' move line: SPEC 3.8). Pure.

A lone `+`, `*` or `@` is that action on the square under the cursor, so a player who
steers with the arrows builds with `+` and Enter.

>>> parse_command("c3-c4").action.text(), parse_command("+ c3").action.text()
('c3-c4', '+c3')
>>> parse_command("*", cursor=12).action.text()
'*c3'
>>> parse_command("chat good luck").text
'good luck'
>>> parse_command("reply gr1-abc").kind
'reply'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from p2pgotg.games.towers.rules import (
    Action,
    InvalidNotationError,
    Kind,
    parse_square,
    square_name,
)
from p2pgotg.ui.commands import CommandError, reply_text, word_command

USAGE = ("type an action like c3-c4 (move), +c3 (build or place a layer), *c3 (spawn), "
         "@a1 (claim), or: resign, draw, decline, chat TEXT, help, quit")
_ALONE = {"+": Kind.LAYER, "*": Kind.SPAWN, "@": Kind.CLAIM}


@dataclass(frozen=True)
class Command:
    kind: str  # "action", "reply" (`text`: the code, if typed) or one of WORDS
    action: Action | None = None
    text: str = ""


def parse_command(line: str, cursor: int | None = None) -> Command:
    """Read a typed line; `cursor` is the square a lone `+`, `*` or `@` acts on."""
    stripped = line.strip()
    words = stripped.split(None, 1)
    if not words:
        raise CommandError(USAGE)
    reply = reply_text(stripped)
    if reply is not None:
        return Command("reply", text=reply)
    word = word_command(words)
    if word is not None:
        return Command(word[0], text=word[1])
    if stripped == "?":
        return Command("help")
    if stripped in _ALONE:
        if cursor is None:
            raise CommandError(f"{stripped} alone acts on the cursor's square: there is none")
        return Command("action", action=Action(_ALONE[stripped], cursor))
    try:
        return Command("action", action=Action.from_text(stripped))
    except InvalidNotationError as exc:
        apart = _two_squares_apart(stripped)
        if apart:
            raise CommandError(apart) from None
        head = words[0].lower()
        if stripped[:1] in _ALONE or (head[:1].isalpha() and head[1:2].isdigit()):
            raise CommandError(str(exc)) from None
        raise CommandError(f"unknown command {head!r}: {USAGE}") from None


_MOVE = re.compile(r"^\s*([a-zA-Z][0-9])\s*[-\s]?\s*([a-zA-Z][0-9])\s*$")


def _two_squares_apart(text: str) -> str | None:
    """What is wrong with a move between two squares of the board that are not side by
    side (None when the text is not such a move)."""
    m = _MOVE.match(text)
    if m is None:
        return None
    try:
        a, b = parse_square(m.group(1)), parse_square(m.group(2))
    except InvalidNotationError:
        return None
    return (f"{square_name(a)} to {square_name(b)} is not one step: a pawn moves one square "
            "up, down, left or right (never diagonal)")
