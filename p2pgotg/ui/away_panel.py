"""The panel under the board while the other side is away (setup and play screens): what
happened, when the game is claimed, and the code that brings the other player back.

It spans the whole width, below the board and the move log, and each code stands alone
on its lines with nothing before or after it (SPEC 3.8): a mouse selection then copies
the code whole and nothing else, where a code in the board's narrow column picked up the
move log beside it (or was broken in pieces), and a code ending a sentence picked up its
punctuation. Both games' play screens show it (`container`), and the setup screen.
"""

from __future__ import annotations

import textwrap

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.layout import ConditionalContainer, Dimension, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from p2pgotg.net.play.session import Link
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.lobby_screen import takes_replies
from p2pgotg.ui.state import AppState, Mode, Screen
from p2pgotg.ui.window_size import needed_rows
from p2pgotg.ui.words import capital, clock_text


def shown(state: AppState) -> bool:
    """A game with an id whose connection is down (or still being made)."""
    session = state.session
    if session is None or session.peer.flow.game_id is None or session.done:
        return False
    if session.link is Link.CONNECTING and state.mode is not Mode.HOST:
        return False
    return session.link is not Link.CONNECTED


def away_words(state: AppState) -> str:
    """The other side is gone: why, and what happens next."""
    session = state.session
    if session is None:
        return ""
    if session.peer_left == "quit":
        why = f"{capital(state.opponent)} quit. The game is saved"
    elif session.peer_left == "declined":
        why = f"{capital(state.opponent)} declined the rules"
    else:
        why = "The connection dropped. The game is saved"
    text = f"{why}; it goes on when they come back."
    claim = claim_in(state)
    if claim is not None:
        text += (f" If they are not back in {clock_text(claim)}, the game is claimed for "
                 "you.")
    return text


def claim_in(state: AppState) -> float | None:
    """Seconds until the game is claimed for us if the other side stays as it is (its
    deadline, or its away time reaching the abandonment limit); None while it owes us
    nothing, so that no countdown is shown for a claim that would not come."""
    session = state.session
    if session is None:
        return None
    now = state.driver.now()
    due = session.claim_due(now)
    return None if due is None else max(0.0, due - now)


def away_lines(state: AppState, width: int) -> Fragments:
    """`away_words` wrapped to `width`, in the error's style."""
    return wrapped(away_words(state), width, "class:status.error")


def wrapped(text: str, width: int, style: str = "") -> Fragments:
    """Words broken between words at `width`: the panel's window does not wrap (a line
    past the edge would be cut), so that a code is broken only where `code_lines` breaks
    it."""
    return [(style, f"{line}\n") for line in textwrap.wrap(text, width)]


def code_lines(code: str, width: int) -> Fragments:
    """A code on lines of its own, broken at the width, never indented: copied as it is
    shown (and pasted at a prompt or after `join`, line breaks do not matter)."""
    return [("class:invite", code[i:i + width] + "\n") for i in range(0, len(code), width)]


def panel(state: AppState, width: int) -> Fragments:
    if not shown(state):
        return []
    width = max(20, width - 1)
    out = away_lines(state, width)
    if state.mode is Mode.JOIN and state.reply_code:
        out += wrapped("If the host does not see you back soon, send them this reply code "
                       "(they press r, or run p2pgotg host --reply CODE):", width)
        out += code_lines(state.reply_code, width)
    elif state.mode is Mode.HOST and state.invites:
        how = "press p" if state.screen is Screen.SETUP else "type r and Enter (or paste it)"
        reply = f" If they send you a reply code, {how} to take it." \
            if takes_replies(state) else ""  # (none where this host cannot punch)
        out += wrapped(f"They come back with the same command.{reply} Their invite code:",
                       width)
        out += code_lines(state.invites[0], width)
    return out


def rows(state: AppState, columns: int) -> int:
    """The rows the panel takes in a window `columns` wide (0 while it is not shown)."""
    return needed_rows(panel(state, columns), columns) if shown(state) else 0


def container(state: AppState) -> ConditionalContainer:
    """The panel's window across the whole width, shown while `shown(state)`, for a screen
    to put under its board. It is given all its rows whatever the board and the log beside
    it ask for: a code cut short at the bottom would be copied wrong."""

    def columns() -> int:
        return get_app().output.get_size().columns

    return ConditionalContainer(
        Window(FormattedTextControl(lambda: panel(state, columns())),
               height=lambda: Dimension.exact(rows(state, columns()))),
        Condition(lambda: shown(state)))
