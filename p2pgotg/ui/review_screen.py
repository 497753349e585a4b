"""The review screen (`p2pgotg show FILE`, `v` on the end screen, the saved games list):
a finished game stepped through move by move with both armies revealed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from p2pgotg.ui import board
from p2pgotg.ui.board import Fragments, Marks
from p2pgotg.ui.review import Review, ReviewError
from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.words import plural

PANEL = 29  # the side panel's width at 80 columns
HISTORY_LINES = 5  # moves listed around the current one at least (more when there is room)


def open_review(state: AppState, path: Path, back: Screen | None) -> bool:
    """Show `path`; False (and the reason in the status line) when it cannot be shown."""
    try:
        review = Review.from_file(path)
    except ReviewError as exc:
        state.warn(str(exc))
        return False
    state.review, state.review_back = review, back
    state.say(f"{plural(review.total, 'move')}: Right/Left step, PgDn/PgUp ten, Home/End, "
              "q back")
    return True


def close(state: AppState) -> None:
    state.review = None
    state.say("")


def step(state: AppState, n: int) -> None:
    review = state.review
    if review is not None:
        review.go(review.ply + n)
        current = review.current
        state.say(current.explained or current.text if current else "the starting position")


def title(state: AppState) -> str:
    review = state.review
    if review is None:
        return ""
    return f"Review - move {review.ply} of {review.total} - {review.path.name[:16]}..."


def board_text(state: AppState) -> Fragments:
    review = state.review
    if review is None:
        return []
    game = review.game()
    marks = Marks()
    current = review.current
    if current is not None:
        move = current.record.move
        marks = Marks(last=frozenset((move.from_square, move.to_square)))
        if current.record.defender is not None:
            marks = Marks(last=frozenset((move.from_square,)),
                          challenge=frozenset((move.to_square,)))
    out = board.board_fragments(board.game_content(game), review.owner, marks, state.ascii)
    for line in textwrap.wrap(review.players_line, board.WIDTH - 2):
        out.append(("", f" {line}\n"))
    for line in textwrap.wrap(review.result + "; " + review.audit, board.WIDTH - 2):
        out.append(("class:strong", f" {line}\n"))
    return out


def _rows() -> int:
    from prompt_toolkit.application.current import get_app_or_none

    app = get_app_or_none()
    return app.output.get_size().rows if app is not None else 24


def panel_text(state: AppState) -> Fragments:
    review = state.review
    if review is None:
        return []
    current = review.current
    if current is None:
        explained = ["The starting position: every", "rank revealed."]
    else:
        explained = textwrap.wrap(current.explained, PANEL) if current.explained else []
    # every row the window has: less the chrome (title, a status of up to two lines,
    # input, hints), the heading, the two `...` lines and the explanation with its blank
    room = max(HISTORY_LINES, _rows() - 5 - 1 - 2 - (len(explained) + 1 if explained else 0))
    out: Fragments = [("class:heading", "Moves"), ("", "\n")]
    first = max(0, min(review.ply - room // 2 - 1, review.total - room))
    shown = review.steps[first:first + room]
    if first > 0:
        out.append(("class:dim", "  ...\n"))
    for s in shown:
        mark = ">" if s.number == review.ply else " "
        style = "class:strong" if s.number == review.ply else ""
        x = "  x" if s.record.defender is not None else ""
        out.append((style, f"{mark}{s.text}{x}\n"[:PANEL + 1]))
    if first + room < review.total:
        out.append(("class:dim", "  ...\n"))
    if explained:
        out.append(("", "\n"))
        style = "class:dim" if current is None else "class:log.challenge"
        out += [(style, line + "\n") for line in explained]
    return out


def hints(state: AppState) -> str:
    return "Right/Left step  PgDn/PgUp 10  Home/End  q back"
