"""`p2pgotg play` found an unfinished game against the bot (the program was closed, or
crashed): offer to resume it before starting a new one."""

from __future__ import annotations

from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState


def title(state: AppState) -> str:
    return "p2pgotg - an unfinished game against the bot"


def body(state: AppState) -> Fragments:
    return [
        ("", "\n"),
        ("class:heading", " You have an unfinished game against the bot.\n\n"),
        ("", f" {state.resume_offer}\n\n"),
        ("class:strong", "   r  "), ("", "Resume it where you left off\n\n"),
        ("class:strong", "   n  "),
        ("", "Start a new game (the unfinished one stays saved and is offered again)\n\n"),
        ("class:strong", "   q  "), ("", "Quit\n"),
    ]


def hints(state: AppState) -> str:
    return "r resume   n new game   q quit"
