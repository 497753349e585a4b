"""Peer text made safe to show on a terminal.

Anything a peer sent (a reason, a chat line, a name, a frame it got wrong) reaches the
operator's terminal before or after any secret is checked. Control characters in it could
retitle the window, erase lines, forge lines or write the clipboard, and bidirectional
overrides could make it read differently from what it is. `printable` shows each such
character as a visible escape instead, so what is printed is exactly what was sent.
"""

from __future__ import annotations

import unicodedata

# Unicode categories that draw nothing and can steer a terminal or the reading order:
# controls (C0, DEL, C1), format characters (bidi overrides, zero-width joiners),
# unassigned, private use and surrogates, and the line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})

ELLIPSIS = "…"


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object, limit: int | None = None) -> str:
    """`text` with every non-printing character escaped, cut to `limit` characters.

    A backslash is doubled so that an escape in the output always means an escaped
    character, never one the peer typed to look like one. Non-strings are shown by `repr`,
    which is escaped the same way.
    """
    if not isinstance(text, str):
        text = repr(text)
    pieces: list[str] = []
    length = 0
    for char in text:
        if char == "\\":
            piece = "\\\\"
        elif unicodedata.category(char) in _HIDDEN_CATEGORIES:
            piece = _escaped(char)
        else:
            piece = char
        if limit is not None and length + len(piece) > limit:
            pieces.append(ELLIPSIS)
            break
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces)


def controls_escaped(text: str) -> str:
    """`text` with every non-printing character escaped, backslashes left as they are.

    For lines we composed ourselves that may carry peer text (a reason inside our sentence,
    already passed through `printable` or not): whatever reaches the screen can no longer
    steer the terminal, and a line that went through `printable` comes out unchanged, so
    nothing is escaped twice.
    """
    if all(unicodedata.category(c) not in _HIDDEN_CATEGORIES for c in text):
        return text
    return "".join(_escaped(c) if unicodedata.category(c) in _HIDDEN_CATEGORIES else c
                   for c in text)
