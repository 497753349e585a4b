"""Colours, and the monochrome fallback: every mark also exists as text (see `board`), so
the monochrome style only needs bold and reverse video, which any terminal has."""

from __future__ import annotations

from prompt_toolkit.styles import Style

COLOUR = Style.from_dict({
    "title": "reverse bold",
    "status": "#e0e0e0",
    "status.error": "bold #ff6060",
    "hint": "#8a8a8a",
    "heading": "bold underline",
    "strong": "bold",
    "dim": "#707070",
    "invite": "bold #ffd75f",
    "board.label": "#8a8a8a",
    "board.empty": "#6c6c6c",
    "board.own": "bold #ffffff bg:#1f4f8f",
    "board.their": "bold #ffffff bg:#8f2f2f",
    "board.dim": "#3a3a3a",
    "board.last": "bg:#6f6f1f",
    "board.challenge": "bg:#af5f00",
    # on a piece, a mark keeps the owner's colour and adds to it
    "board.last-piece": "underline #ffff87",
    "board.challenge-piece": "underline #ffaf5f",
    "board.target": "bg:#2f6f2f",
    "board.selected": "bg:#d7af00 #000000",
    "board.cursor": "reverse",
    "log.info": "#8a8a8a",
    "log.mine": "#87afff",
    "log.theirs": "#ff8787",
    "log.challenge": "#ffaf5f",
    "log.chat": "italic #87d787",
    "log.whisper": "italic #d7afff",
    "log.end": "bold",
    "help": "bg:#1c1c1c #e0e0e0",
    "help.frame": "bg:#1c1c1c #8a8a8a",
    # Towers (ui/towers): a colour's letters, and taller towers on lighter ground
    "towers.red": "#ff5f5f",
    "towers.blue": "#5fafff",
    "towers.green": "#5fd75f",
    "towers.yellow": "#ffd75f",
    "towers.pawn": "bold",
    "towers.none": "#585858",
    "towers.h1": "bg:#262626",
    "towers.h2": "bg:#3a3a3a",
    "towers.h3": "bg:#4e4e4e",
    "towers.h4": "bg:#626262",
})

MONO = Style.from_dict({
    "title": "reverse bold",
    "status.error": "bold",
    "heading": "bold underline",
    "strong": "bold",
    "invite": "bold",
    "board.own": "bold",
    "board.last-piece": "underline",
    "board.challenge-piece": "underline",
    "board.cursor": "reverse",
    "board.selected": "reverse",
    "log.end": "bold",
    "towers.pawn": "bold",
})
