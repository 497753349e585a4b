"""How big the window must be for a screen to show all it has to (nothing essential cut),
and what to say instead when it is smaller. Knows no game: the board screens give their
size, a text screen needs its lines wrapped to the window's width, and any game's screens
follow the same rule.

>>> needed_rows([("", "one\\n"), ("", "x" * 30 + "\\n")], width=20)
3
"""

from __future__ import annotations

import math

from prompt_toolkit.formatted_text import StyleAndTextTuples

#: The chrome around every screen's body: title, status line, input line, key hints.
CHROME_ROWS = 4
#: The narrowest window a text screen is laid out for.
MIN_COLUMNS = 50


def needed_rows(fragments: StyleAndTextTuples, width: int) -> int:
    """How many rows the text takes once every line is wrapped to `width`."""
    text = "".join(fragment[1] for fragment in fragments)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # (a last newline ends the last line: no row of its own)
    return sum(max(1, math.ceil(len(line) / max(1, width))) for line in lines)


def too_small(size: tuple[int, int], need: tuple[int, int]) -> str | None:
    """What to tell the player when the window (columns, rows) is smaller than `need`."""
    (columns, rows), (want_columns, want_rows) = size, need
    if columns >= want_columns and rows >= want_rows:
        return None
    return (f"This window is {columns}x{rows}: this screen needs at least "
            f"{max(columns, want_columns)}x{max(rows, want_rows)} (columns x rows) to show "
            "everything. Make the window larger, or the font smaller, and it comes back by "
            "itself. Whatever is going on goes on meanwhile; Ctrl-C quits (a game is saved).")
