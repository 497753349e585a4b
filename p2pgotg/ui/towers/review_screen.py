"""The review of a Towers game (`p2pgotg show FILE`, `v` on the end screen, the saved games
list): the board after the action shown, the counts, and the list of actions around it.
Stepping, titles and leaving are the interface's review screen's (`ui.review_screen`)."""

from __future__ import annotations

import textwrap

from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState
from p2pgotg.ui.towers import board
from p2pgotg.ui.towers.panel import table
from p2pgotg.ui.towers.review import TowersReview

PANEL = 38  # the list's width beside the board at 80 columns
HISTORY_LINES = 5  # actions listed around the current one at least


def _rows() -> int:
    from prompt_toolkit.application.current import get_app_or_none

    app = get_app_or_none()
    return app.output.get_size().rows if app is not None else 24


def _review(state: AppState) -> TowersReview | None:
    review = state.review
    return review if isinstance(review, TowersReview) else None


def title(state: AppState) -> str:
    review = _review(state)
    if review is None:
        return ""
    return (f"Towers review - action {review.ply} of {review.total} - "
            f"{review.path.name[:16]}...")


def board_text(state: AppState) -> Fragments:
    review = _review(state)
    if review is None:
        return []
    game = review.game()
    current = review.current
    last = board.action_squares(current.action) if current is not None else frozenset()
    out = board.board_fragments(game, board.Marks(last=last))
    out.append(("", "\n"))
    out += table(game, {}, acting=False)
    return out


def panel_text(state: AppState) -> Fragments:
    review = _review(state)
    if review is None:
        return []
    current = review.current
    explained = textwrap.wrap(current.explained if current else
                              "The empty board, before the first choice.", PANEL)
    # the rows the window has: less the chrome, the heading, the two `...` lines, the
    # explanation with its blank, and the players and the result under it
    tail = [*textwrap.wrap(review.players_line, PANEL),
            *textwrap.wrap(f"{review.result}; {review.audit}", PANEL)]
    room = max(HISTORY_LINES, _rows() - 5 - 1 - 2 - len(explained) - 1 - len(tail) - 1)
    out: Fragments = [("class:heading", "Actions"), ("", "\n")]
    first = max(0, min(review.ply - room // 2 - 1, review.total - room))
    if first > 0:
        out.append(("class:dim", "  ...\n"))
    for step in review.steps[first:first + room]:
        chosen = step.number == review.ply
        out.append(("class:strong" if chosen else board.colour_style(step.seat),
                    f"{'>' if chosen else ' '}{step.text}\n"[:PANEL + 1]))
    if first + room < review.total:
        out.append(("class:dim", "  ...\n"))
    out.append(("", "\n"))
    out += [("class:log.info", line + "\n") for line in explained]
    out.append(("", "\n"))
    out += [("class:strong", line + "\n") for line in tail]
    return out
