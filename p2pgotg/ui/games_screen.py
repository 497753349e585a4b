"""The saved games screen (from the start screen; `p2pgotg games` prints the same list):
pick one to review it, or to resume it when it is unfinished."""

from __future__ import annotations

from p2pgotg.protocol.flow import HOST
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.saved_games import SavedGameInfo, list_saved_games
from p2pgotg.ui.state import AppState, Mode, Screen

SHOWN = 8  # games on screen at once (two lines each)


def open_list(state: AppState) -> None:
    state.saved_games = list_saved_games(state.driver.games_folder())
    state.games_cursor = 0
    state.say("" if state.saved_games else "no saved games yet: play one first")


def close(state: AppState) -> None:
    state.saved_games = None
    state.say("")


def move(state: AppState, step: int) -> None:
    games = state.saved_games or []
    if games:
        state.games_cursor = max(0, min(len(games) - 1, state.games_cursor + step))


def title(state: AppState) -> str:
    return "p2pgotg - your saved games"


def body(state: AppState) -> Fragments:
    games = state.saved_games or []
    out: Fragments = [("", "\n")]
    if not games:
        out.append(("", " No saved games yet.\n"))
        return out
    plural = "s" if len(games) != 1 else ""
    out.append(("class:heading", f" {len(games)} saved game{plural}, unfinished first\n\n"))
    first = max(0, min(state.games_cursor - SHOWN // 2, len(games) - SHOWN))
    for i, game in enumerate(games[first:first + SHOWN], first):
        what, _ = game.lines()
        chosen = i == state.games_cursor
        out.append(("class:strong" if chosen else "", f"{'>' if chosen else ' '}{what}\n"))
        out.append(("class:dim", f"    {_action(game)}\n"))
    return out


def _action(game: SavedGameInfo) -> str:
    """What Enter does with this game (the screen is too narrow for paths)."""
    if not game.unfinished:
        return "Enter: review it move by move" if game.command.startswith("review") \
            else game.command
    if game.against_bot or game.role == HOST:
        return f"Enter: resume it ({game.command.removeprefix('resume: ')})"
    return game.command


def hints(state: AppState) -> str:
    return "Up/Down choose   Enter review or resume   q back"


def open_selected(state: AppState) -> None:
    from p2pgotg.ui import review_screen, start_screen

    games = state.saved_games or []
    if not games:
        return
    game = games[state.games_cursor]
    if not game.unfinished:
        review_screen.open_review(state, game.path, Screen.GAMES)
        return
    if game.against_bot:
        state.saved_games = None
        start_screen.begin(state, Mode.BOT)
    elif game.role == HOST:
        state.saved_games = None
        start_screen.begin(state, Mode.HOST)
    else:
        state.warn("to resume a game you joined, join it again with its invite code: "
                   "press q, then 3")
