"""The start screen (`p2pgotg` alone, or `p2pgotg start`): play the bot, host or join."""

from __future__ import annotations

from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Mode, Prompt

CHOICES = {"1": Mode.BOT, "b": Mode.BOT, "2": Mode.HOST, "h": Mode.HOST,
           "3": Mode.JOIN, "j": Mode.JOIN}


def title(state: AppState) -> str:
    return "p2pgotg - Game of the Generals, peer to peer, with no arbiter"


def body(state: AppState) -> Fragments:
    return [
        ("", "\n"),
        ("class:heading", "  What would you like to do?\n\n"),
        ("class:strong", "   1  "), ("", "Play against the bot\n\n"),
        ("class:strong", "   2  "),
        ("", "Host a game: you get an invite code to give a friend\n\n"),
        ("class:strong", "   3  "), ("", "Join a game: type the invite code a friend gave you\n\n"),
        ("class:strong", "   q  "), ("", "Quit\n\n\n"),
        ("class:dim", ("  Hosting here uses the standard rules; for others (clocks, the\n"
                       "  two-squares rule...) see: p2pgotg host --help\n")),
    ]


def hints(state: AppState) -> str:
    if state.prompt is Prompt.JOIN_CODE:
        return "paste or type the invite code, then Enter; Esc goes back"
    return "1 play the bot   2 host   3 join   q quit"


def choose(state: AppState, key: str) -> None:
    mode = CHOICES[key]
    if mode is Mode.JOIN:
        state.prompt = Prompt.JOIN_CODE
        state.say("type or paste the invite code and press Enter")
        return
    begin(state, mode)


def begin(state: AppState, mode: Mode, invite: str | None = None) -> None:
    state.mode = mode
    state.prompt = None
    state.say("")
    state.driver.start(mode, invite)


def submit_code(state: AppState, text: str) -> None:
    from p2pgotg.net.errors import NetError
    from p2pgotg.net.invite import Invite

    try:
        Invite.decode(text)
    except NetError as exc:
        state.warn(f"{exc.summary()}")
        return
    begin(state, Mode.JOIN, text)
