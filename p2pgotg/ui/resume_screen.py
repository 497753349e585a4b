"""Unfinished games found when a game starts (`play`: against the bot; `host` and the start
screen's Host: games this player hosted): resume one of them, or start a new game. Every
unfinished game is listed, so a newer one (a game quit during its setup, say) never hides
an older one."""

from __future__ import annotations

import textwrap

from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState

SHOWN = 5  # games listed at once


def title(state: AppState) -> str:
    return "p2pgotg - unfinished games"


def _wrapped(style: str, head: str, text: str, width: int) -> Fragments:
    """`head` then `text`, wrapped between words, the lines after the first indented
    under the text."""
    lines = textwrap.wrap(text, max(20, width - len(head) - 1)) or [""]
    indent = " " * len(head)
    return [("class:strong", head), (style, lines[0] + "\n"),
            *((style, f"{indent}{line}\n") for line in lines[1:])]


def body(state: AppState) -> Fragments:
    from p2pgotg.ui.lobby_screen import columns

    offer = state.resume_offer
    if offer is None:
        return []
    width = columns()
    out: Fragments = [("", "\n")]
    out += [*_wrapped("class:heading", " ", offer.heading, width), ("", "\n")]
    first = max(0, min(offer.cursor - SHOWN // 2, len(offer.games) - SHOWN))
    if first > 0:
        out.append(("class:dim", "   ...\n"))
    for i, line in enumerate(offer.games[first:first + SHOWN], first):
        chosen = i == offer.cursor
        out += _wrapped("class:strong" if chosen else "", " > " if chosen else "   ", line,
                        width)
    if first + SHOWN < len(offer.games):
        out.append(("class:dim", f"   ... and {len(offer.games) - first - SHOWN} more\n"))
    which = "the game marked >" if len(offer.games) > 1 else "it"
    out.append(("", "\n"))
    out += _wrapped("", "   r  ", f"Resume {which} where you left off", width)
    out += _wrapped("", "   n  ", offer.new_game, width)
    out += _wrapped("", "   q  ", "Quit", width)
    return out


def hints(state: AppState) -> str:
    offer = state.resume_offer
    choose = "Up/Down choose   " if offer is not None and len(offer.games) > 1 else ""
    return f"{choose}r resume   n new game   q quit"


def move(state: AppState, step: int) -> None:
    if state.resume_offer is not None:
        state.resume_offer.move(step)


def resume(state: AppState) -> None:
    offer = state.resume_offer
    if offer is not None:
        state.driver.resume_answer(offer.cursor)
