"""The panel under the board while the other side is away (setup and play screens): what
happened, when the game is claimed, and the code that brings the other player back.

It spans the whole width, below the board and the move log, and each code stands alone
on its lines with nothing before or after it (SPEC 3.8): a mouse selection then copies
the code whole and nothing else, where a code in the board's narrow column picked up the
move log beside it, and a code ending a sentence picked up its punctuation. The Towers play
screen says the same (`shown`, `away_lines`, `code_lines`) in the column beside its board.
"""

from __future__ import annotations

import textwrap

from p2pgotg.net.play.session import Link
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Mode, Screen
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
    return [("class:status.error", f"{line}\n")
            for line in textwrap.wrap(away_words(state), width)]


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
        out.append(("", "If the host does not see you back soon, send them this reply code "
                    "(they press r, or run p2pgotg host --reply CODE):\n"))
        out += code_lines(state.reply_code, width)
    elif state.mode is Mode.HOST and state.invites:
        how = "press p" if state.screen is Screen.SETUP else "type r and Enter (or paste it)"
        out.append(("", "They come back with the same command. If they send you a reply "
                    f"code, {how} to take it. Their invite code:\n"))
        out += code_lines(state.invites[0], width)
    return out
