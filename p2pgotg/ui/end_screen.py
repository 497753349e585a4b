"""The end screen: the result and how it came, then the audit: every rank revealed (the
final position, or the starting setups), the pieces each side lost, the verdict, and where
the signed record of the game is saved."""

from __future__ import annotations

import textwrap

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.rules import Game, IllegalMoveError, Piece, Setup, Side
from p2pgotg.ui import board
from p2pgotg.ui.board import Fragments, Marks
from p2pgotg.ui.review import setups_from_flow
from p2pgotg.ui.state import AppState, Mode, Screen
from p2pgotg.ui.words import how_it_ended, result_headline, verdict_words


def revealed_setups(peer: GotgPeer) -> dict[Side, Setup]:
    """Every setup this peer can show in full: its own, and the opponent's once the
    opponent's audit has opened every commitment."""
    out: dict[Side, Setup] = {}
    own = peer.own_setup
    if own is not None:
        out[own.side] = own
    flow = peer.flow
    if flow.white is not None:
        them = flow.side_of(peer.other_role)
        opened = setups_from_flow(flow)
        if them in opened:
            out[them] = opened[them]
    return out


def audit_game(peer: GotgPeer, at_start: bool = False) -> Game | None:
    """The game with every rank known (replayed from both setups), or the player's own
    view when the opponent's setup was never opened."""
    view = peer.view
    setups = revealed_setups(peer)
    if len(setups) == 2:
        full = Game.from_setups(setups[Side.WHITE], setups[Side.BLACK], peer.options)
        if at_start or view is None:
            return full
        try:
            for record in view.history:
                full.push(record.move, record.result, record.lost_flag)
        except IllegalMoveError:
            return view
        return full
    return view


def _code(game: Game, piece: Piece) -> str:
    rank = game.rank_of(piece)
    return "?" if rank is None else rank.code


def title(state: AppState) -> str:
    side = state.side
    if side is None:
        return f"Game over - you against {state.opponent_label}"
    return (f"Game over - you, {side.display_name}; {state.opponent_label}, "
            f"{side.other.display_name}")


def headline(state: AppState) -> Fragments:
    if isinstance(state.session and state.session.peer, TowersPeer):
        from p2pgotg.ui.towers.end import headline as towers_headline

        return towers_headline(state)
    peer = state.peer
    if peer is None:
        return []
    if peer.failed is not None:
        return [("class:status.error", " The other side broke the protocol: the game stopped.\n"),
                ("", f" {peer.failed}\n")]
    result = peer.flow.result
    if result is None:
        return [("class:strong", " The game ended before it was finished.\n")]
    termination, winner = result
    side = peer.side
    winner_side = peer.flow.side_of(winner) if winner is not None and peer.flow.white else None
    won = None if winner is None else winner == peer.role
    head = result_headline(winner_side, side, state.opponent)
    return [("class:heading", f" {head}"),
            ("class:strong", f": {how_it_ended(termination, won)}.\n")]


def board_text(state: AppState) -> Fragments:
    peer = state.peer
    if peer is None:
        return []
    game = audit_game(peer, at_start=state.end_view_setups)
    if game is None:
        return [("", "\n (the game never started)\n")]
    marks = Marks()
    if not state.end_view_setups and game.history:
        last = game.history[-1]
        marks = Marks(last=frozenset((last.move.from_square, last.move.to_square)))
    return board.board_fragments(board.game_content(game), state.viewer, marks, state.ascii)


def challenges_explained(peer: GotgPeer) -> list[str]:
    """Every challenge of the game with both ranks, once the audit has opened them all: in
    the blind mode this is the first time either player sees what an arbiter saw."""
    setups = revealed_setups(peer)
    view = peer.view
    if len(setups) != 2 or view is None or peer.side is None:
        return []
    full = Game.from_setups(setups[Side.WHITE], setups[Side.BLACK], peer.options)
    lines = []
    for number, record in enumerate(view.history, 1):
        if record.defender is not None and record.result is not None:
            mine = record.side is peer.side
            a, d = full.rank_of(record.piece), full.rank_of(record.defender)
            who = "you" if mine else "they"
            code_a = a.code if a is not None else "?"
            code_d = d.code if d is not None else "?"
            if record.result.value == "attacker_wins":
                gone = f"{'their' if mine else 'your'} {code_d} out"
            elif record.result.value == "defender_wins":
                gone = f"{'your' if mine else 'their'} {code_a} out"
            else:
                gone = "both out"
            lines.append(f"{number:3d} {who:<4} {record.move.text()} {code_a} vs {code_d}: "
                         f"{gone}")
        try:
            full.push(record.move, record.result, record.lost_flag)
        except IllegalMoveError:
            break
    return lines


PANEL_WIDTH = 30  # the side panel at 80 columns
PAGE = 8  # challenge lines on one page of the panel


def challenge_pages(peer: GotgPeer) -> list[list[str]]:
    """The challenge list wrapped between words to the panel and cut into pages."""
    pages: list[list[str]] = [[]]
    for line in challenges_explained(peer):
        wrapped = textwrap.wrap(line, PANEL_WIDTH - 1, subsequent_indent="      ")
        if len(pages[-1]) + len(wrapped) > PAGE:  # (a challenge is never split over pages)
            pages.append([])
        pages[-1] += wrapped
    return pages


def panel_text(state: AppState) -> Fragments:
    peer = state.peer
    if peer is None:
        return []
    if state.end_view_challenges:
        pages = challenge_pages(peer)
        page = max(0, min(state.challenge_page, len(pages) - 1))
        out: Fragments = [("class:heading", "Challenges"),
                          ("class:dim", f" {page + 1}/{len(pages)}" if len(pages) > 1 else ""),
                          ("", "\n"), ("class:dim", "attacker vs defender: who left\n")]
        for line in pages[page] or ["(none, or ranks not opened)"]:
            out.append(("", line + "\n"))
        if len(pages) > 1:
            out.append(("class:dim", "PgDn/PgUp: more; c: back\n"))
        return out
    complete = len(revealed_setups(peer)) == 2
    what = "Starting setups" if state.end_view_setups else "Final position"
    out = [("class:heading", what), ("", "\n")]
    out.append(("class:dim", "every rank revealed\n" if complete
                else "their ranks were never opened\n"))
    out.append(("class:dim", "(s: show the " +
                ("final position)\n" if state.end_view_setups else "starting setups)\n")))
    game = audit_game(peer)
    side = state.side
    if game is not None and side is not None:
        for label, owner in (("You lost", side), ("They lost", side.other)):
            pieces = [p for p in game.eliminated if p.side is owner]
            codes = " ".join(_code(game, p) for p in pieces) or "-"
            out.append(("class:strong", f"{label} ({len(pieces)}):\n"))
            for line in textwrap.wrap(codes, PANEL_WIDTH - 1):
                out.append(("", f" {line}\n"))
    return out


#: The panel's rows: its heading and two notes, then each side's losses, a label and at
#: most three lines of codes (21 pieces, 7 codes a line), so both lists always show whole.
PANEL_ROWS = 3 + 2 * (1 + 3)


def audit_text(state: AppState) -> Fragments:
    session, peer = state.session, state.peer
    if session is None or peer is None:
        return []
    checking = "Checking the audit: both sides open every commitment..."
    return verdict_and_file(state, peer.role, checking if peer.failed is None else None)


def verdict_and_file(state: AppState, role: str, checking: str | None = None) -> Fragments:
    """Either game's end: the verdict in our words (`checking` while there is none), then
    where the game is saved."""
    session = state.session
    if session is None:
        return []
    verdict = session.verdict
    out: Fragments = []
    if verdict is not None:
        words = verdict_words(verdict, role, state.opponent)
        style = "class:strong" if verdict.clean else "class:status.error"
        for line in textwrap.wrap(words, 78):
            out.append((style, f" {line}\n"))
    elif checking is not None:
        out.append(("", f" {checking}\n"))
    if session.path is not None and state.began:
        # the path alone on its line, from the left edge: it copies as it is
        out.append(("class:dim", " Saved game (check it any time: p2pgotg verify FILE):\n"))
        out.append(("class:dim", f"{session.path}\n"))
    return out


def hints(state: AppState) -> str:
    if state.confirm is not None:
        return "y yes   n no"
    back = "back to the menu" if state.from_start else "quit"
    if state.mode is Mode.BOT:
        return f"n new game  s setups  c challenges  v review  q {back}"
    return f"s setups/final  c challenges  v review the moves  q {back}"


def toggle_view(state: AppState) -> None:
    state.end_view_setups = not state.end_view_setups


def toggle_challenges(state: AppState) -> None:
    state.end_view_challenges = not state.end_view_challenges
    state.challenge_page = 0


def page(state: AppState, step: int) -> None:
    """Turn the challenge list's page (showing the list if it was not shown)."""
    peer = state.peer
    if peer is None:
        return
    if not state.end_view_challenges:
        state.end_view_challenges, state.challenge_page = True, 0
        return
    pages = len(challenge_pages(peer))
    state.challenge_page = max(0, min(pages - 1, state.challenge_page + step))


def review(state: AppState) -> None:
    """Step through this game's moves (the review screen), once the audit is in."""
    from p2pgotg.ui import review_screen

    session = state.session
    if session is None or session.path is None or not state.began:
        state.warn("there are no moves to review")
        return
    if session.verdict is None:
        state.warn("wait for the audit to finish: it opens the ranks the review shows")
        return
    if session.file is not None:
        session.file.sync()  # (the review reads the file: all of it must be there)
    review_screen.open_review(state, session.path, Screen.END)


def rematch(state: AppState) -> None:
    if state.mode is not Mode.BOT:
        where = "the start screen (q)" if state.from_start else "the command line"
        state.warn(f"to play again, host or join a new game from {where}")
        return
    if state.session is not None and not state.session.done:
        state.warn("wait for the audit to finish")
        return
    state.say("starting a new game against the bot...")
    state.driver.rematch()
