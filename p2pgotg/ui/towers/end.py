"""The Towers end screen: the result with its reason and the points (SPEC 4.8), the final
board and each colour's counts, the verdict (Towers hides nothing: every action was checked
as it came, SPEC 4.11), where the signed record is saved, and the review of the game."""

from __future__ import annotations

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.end_screen import verdict_and_file
from p2pgotg.ui.state import AppState, Mode, Screen
from p2pgotg.ui.towers import board, seat_labels, team_labels, towers_peer
from p2pgotg.ui.towers.panel import table
from p2pgotg.ui.towers.play import screen_state, sides_words
from p2pgotg.ui.towers.words import ended_seat, points_words, reason_words
from p2pgotg.ui.words import capital


def result_words(state: AppState, peer: TowersPeer) -> str | None:
    """`You win: Blue placed all its flags (points: Red 7, Blue (you) 18)`, from this
    player's side; None while the game goes on."""
    result = peer.flow.result
    if result is None:
        return None
    termination, winner = result
    won = None if winner is None else winner == peer.role
    head = "Draw" if winner is None else "You win" if won else \
        f"{capital(state.opponent)} wins"
    game = peer.view
    if game is None:
        return f"{head}: {reason_words(termination, None, won)}"
    seat = ended_seat(game, termination)
    points = points_words(game, team_labels(state, peer))
    return f"{head}: {reason_words(termination, seat, won)} (points: {points})"


def title(state: AppState) -> str:
    return f"Towers - game over - {sides_words(state)}"


def headline(state: AppState) -> Fragments:
    peer = towers_peer(state)
    if peer is None:
        return []
    if peer.failed is not None:
        return [("class:status.error", " The other side broke the protocol: the game stopped.\n"),
                ("", f" {peer.failed}\n")]
    words = result_words(state, peer)
    if words is None:
        return [("class:strong", " The game ended before it was finished.\n")]
    head, _, rest = words.partition(": ")
    return [("class:heading", f" {head}"), ("class:strong", f": {rest}.\n")]


def board_text(state: AppState) -> Fragments:
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if game is None:
        return [("", "\n (the game never started)\n")]
    return board.board_fragments(game, board.Marks(last=screen_state(state).marked))


def panel_text(state: AppState) -> Fragments:
    """The final counts, and how many actions the game took."""
    peer = towers_peer(state)
    game = peer.view if peer is not None else None
    if peer is None or game is None:
        return []
    out: Fragments = [("class:heading", "Final position"), ("", "\n")]
    out += table(game, seat_labels(state, peer), acting=False)
    plural = "s" if game.ply != 1 else ""
    out.append(("class:dim", f"\n {game.ply} action{plural}, the setup's included\n"))
    return out


def verdict_text(state: AppState) -> Fragments:
    peer = towers_peer(state)
    return [] if peer is None else verdict_and_file(state, peer.role)


def hints(state: AppState) -> str:
    if state.confirm is not None:
        return "y yes   n no"
    back = "back to the menu" if state.from_start else "quit"
    if state.mode is Mode.BOT:
        return f"n new game  v review the actions  q {back}"
    return f"v review the actions  q {back}"


def review(state: AppState) -> None:
    """Step through this game's actions (the review screen), from its saved file."""
    from p2pgotg.ui import review_screen

    session = state.session
    if session is None or session.path is None or not state.began:
        state.warn("there are no actions to review")
        return
    if session.file is not None:
        session.file.sync()  # (the review reads the file: all of it must be there)
    review_screen.open_review(state, session.path, Screen.END)
