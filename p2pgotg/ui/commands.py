"""The play screen's input line: a move (`c3 c4`, `c3-c4`) or a word command. Pure.

>>> parse_command("c3-c4").move.text()
'c3-c4'
>>> parse_command("chat good luck").text
'good luck'
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.rules import InvalidNotationError, Move

WORDS = ("resign", "draw", "decline", "chat", "help", "quit")
USAGE = "type a move like c3 c4, or: resign, draw, decline, chat TEXT, help, quit"
#: How a host asks for the reply prompt in a game: `r` alone, or `reply`; a reply code
#: pasted on the line (with or without its `reply:` label) is taken as it is (SPEC 3.8).
REPLY_WORDS = ("r", "reply", "reply:")


class CommandError(Exception):
    """The line is not a move or a command; `str()` says why, in one line."""


@dataclass(frozen=True)
class Command:
    kind: str  # "move", "reply" or one of WORDS
    move: Move | None = None
    text: str = ""


def parse_command(line: str) -> Command:
    words = line.strip().split(None, 1)
    if not words:
        raise CommandError(USAGE)
    head = words[0].lower()
    reply = reply_text(line)
    if reply is not None:
        return Command("reply", text=reply)
    word = word_command(words)
    if word is not None:
        return Command(word[0], text=word[1])
    if head == "?":
        return Command("help")
    try:
        return Command("move", move=Move.parse(line))
    except InvalidNotationError:
        if head[:1].isalpha() and head[1:2].isdigit():
            raise CommandError(
                f"{line.strip()!r} is not a move: write two squares, files a-i and ranks "
                "1-8, e.g. c3 c4"
            ) from None
        raise CommandError(f"unknown command {head!r}: {USAGE}") from None


def reply_text(line: str) -> str | None:
    """Either game's reply command: the code typed with it (empty: `r` or `reply` alone,
    which asks for it), or None when the line is not one (REPLY_WORDS, or a code pasted).

    >>> reply_text("r"), reply_text("reply gr1-abc"), reply_text("reply: gr1-abc")
    ('', 'gr1-abc', 'reply: gr1-abc')
    >>> reply_text("c3 c4") is None
    True
    """
    words = line.strip().split(None, 1)
    head = words[0].lower() if words else ""
    if head not in REPLY_WORDS and not head.startswith("gr1-"):
        return None
    asked = head in ("r", "reply")  # (the code after it, if any; else a prompt)
    rest = words[1].strip() if asked and len(words) > 1 else ""
    return rest if asked else line.strip()


def word_command(words: list[str]) -> tuple[str, str] | None:
    """Either game's word commands: (the word, the text of `chat TEXT`), or None when the
    line does not start with one of WORDS."""
    head = words[0].lower()
    if head not in WORDS:
        return None
    rest = words[1].strip() if len(words) > 1 else ""
    if head == "chat":
        if not rest:
            raise CommandError("chat needs a message: chat TEXT")
        return "chat", rest
    if rest:
        raise CommandError(f"{head} takes nothing after it")
    return head, ""
