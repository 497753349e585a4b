"""The play screen: the board from our seat, the captured pieces, the move log, and the two
ways to move (the cursor, or a typed `c3 c4`) plus the typed commands."""

from __future__ import annotations

import textwrap

from p2pgotg.net.play.session import Link
from p2pgotg.rules import Move, Piece, Rank, square_name
from p2pgotg.ui import board
from p2pgotg.ui.board import Fragments, Marks
from p2pgotg.ui.commands import CommandError, parse_command
from p2pgotg.ui.state import AppState, Confirm
from p2pgotg.ui.words import clock_text

LEFT_WIDTH = board.WIDTH


# -- what it shows ----------------------------------------------------------------------

def turn_words(state: AppState) -> str:
    peer, view = state.peer, state.view
    if peer is None or view is None:
        return ""
    if peer.flow.is_over:
        return "game over"
    if peer.flow.pending is not None:
        return "challenge: waiting for the reply"
    if peer.my_turn:
        return "YOUR MOVE"
    return f"{state.opponent} to move"


def link_words(state: AppState) -> str:
    session = state.session
    if session is None:
        return ""
    if session.link is Link.RECONNECTING:
        return "reconnecting..."
    return session.link.value


#: Warn this many seconds before the move time (or the whole clock) runs out.
WARN_MOVE = 10.0
WARN_TOTAL = 30.0


def clocks_words(state: AppState) -> str:
    """Both total clocks when the game has them, then the move clock of whoever is to
    move when moves are timed: `you 14:05 bot 15:00 | move 0:49`."""
    session, peer = state.session, state.peer
    if session is None or peer is None:
        return ""
    clocks = session.clocks
    if not (clocks.limit or clocks.per_move):
        return ""
    now = state.driver.now()
    parts = []
    mine = clocks.remaining(peer.role, now)
    if mine is not None:
        theirs = clocks.remaining(peer.other_role, now)
        parts.append(f"you {clock_text(mine)} {state.opponent_short} {clock_text(theirs)}")
    if clocks.per_move and clocks.running is not None:
        left = clocks.move_remaining(clocks.running, now)
        who = "your move" if clocks.running == peer.role else "their move"
        parts.append(f"{who} {clock_text(left)}{'!' if clock_warning(state) else ''}")
    return " | ".join(parts)


def clock_warning(state: AppState) -> str:
    """A warning when our own time is nearly gone (empty otherwise)."""
    session, peer = state.session, state.peer
    if session is None or peer is None or peer.flow.is_over or not peer.my_turn:
        return ""
    clocks, now = session.clocks, state.driver.now()
    if clocks.running != peer.role:
        return ""
    move = clocks.move_remaining(peer.role, now)
    if move is not None and move <= WARN_MOVE:
        return (f"{clock_text(max(0.0, move))} left for this move: move now, or you lose "
                "on time")
    total = clocks.remaining(peer.role, now)
    if total is not None and total <= WARN_TOTAL:
        return f"{clock_text(max(0.0, total))} left on your clock: move now"
    return ""


def sides_words(state: AppState) -> str:
    """`You, White vs Ana, Black`: who plays which colour, the other side by the name it
    gave (its key's fingerprint is in the log's first line and on the lobby)."""
    side = state.side
    if side is None:
        return f"You vs {state.opponent}"
    them = state.opponent if len(state.opponent) <= 20 else state.opponent[:19] + "…"
    return f"You, {side.display_name} vs {them}, {side.other.display_name}"


def title(state: AppState) -> str:
    parts = [sides_words(state), turn_words(state)]
    clocks = clocks_words(state)
    if clocks:
        parts.append(clocks)
    parts.append(link_words(state))
    return " | ".join(p for p in parts if p)


def board_text(state: AppState) -> Fragments:
    view = state.view
    if view is None:
        return []
    last, challenge = state.last_marks()
    marks = Marks(cursor=state.cursor, selected=state.selected, targets=state.targets(),
                  last=last, challenge=challenge)
    out = board.board_fragments(board.game_content(view), state.viewer, marks, state.ascii)
    out += captured_text(state)
    return out


def captured_text(state: AppState) -> Fragments:
    view, side = state.view, state.side
    if view is None or side is None:
        return []
    mine = [p for p in view.eliminated if p.side is side]
    theirs = [p for p in view.eliminated if p.side is not side]

    def codes(pieces: list) -> str:
        names = []
        for piece in pieces:
            rank = view.rank_of(piece)
            names.append(rank.code if rank is not None else "?")
        return " ".join(names) or "-"

    out: Fragments = [("", "\n")]
    for label, pieces in ((f"You lost ({len(mine)}): ", mine),
                          (f"You took ({len(theirs)}): ", theirs)):
        lines = textwrap.wrap(codes(pieces), LEFT_WIDTH - len(label) - 1) or ["-"]
        out.append(("class:strong", f" {label}"))
        out.append(("", lines[0] + "\n"))
        for more in lines[1:]:
            out.append(("", " " * (len(label) + 1) + more + "\n"))
    return out


def log_text(state: AppState, width: int = 30) -> Fragments:
    """The move log, each line wrapped between words to the log's `width`."""
    out: Fragments = [("class:heading", "Moves"), ("", "\n")]
    for line in state.log:
        indent = len(line.text) - len(line.text.lstrip(" "))
        wrapped = textwrap.wrap(line.text.strip(" "), max(10, width - 1 - indent),
                                subsequent_indent="  ") or [""]
        for part in wrapped:
            out.append((line.style, " " * indent + part + "\n"))
    return out


def hints(state: AppState) -> str:
    from p2pgotg.ui.lobby_screen import REPLY_HINT, takes_replies
    from p2pgotg.ui.state import Prompt

    if state.confirm is not None:
        return "y yes   n no"
    if state.prompt is Prompt.REPLY_CODE:
        return REPLY_HINT
    if takes_replies(state):
        return "r Enter: take a reply code | type c3 c4 | resign draw chat | ? keys"
    return "arrows+Enter pick up/drop | type c3 c4 | resign draw chat | ? keys"


# -- what the keys do -------------------------------------------------------------------

def move_cursor(state: AppState, dx: int, dy: int) -> None:
    state.cursor = board.step(state.viewer, state.cursor, dx, dy)


def enter(state: AppState) -> None:
    """Pick up the piece under the cursor, or drop the picked-up piece there."""
    view, side = state.view, state.side
    if view is None or side is None:
        return
    sq = state.cursor
    piece = view.piece_at(sq)
    if piece is not None and piece.side is side:
        if state.selected == sq:
            state.selected = None
            state.say("put down")
            return
        state.selected = sq
        rank = view.rank_of(piece)
        what = rank.code if rank is not None else "piece"
        if state.peer is not None and state.peer.my_turn:
            state.say(f"{what} on {square_name(sq)} picked up: move to a + and press Enter")
        else:
            state.say(f"{what} on {square_name(sq)} picked up; wait for your turn to move it")
        return
    if state.selected is None:
        state.warn("pick up one of your pieces first: put the cursor on it and press Enter")
        return
    try_move(state, Move(state.selected, sq))


def try_move(state: AppState, move: Move) -> None:
    """Check the move against our view first, so a bad one changes nothing and says why."""
    peer, view, side = state.peer, state.view, state.side
    if peer is None or view is None or side is None:
        return
    if peer.flow.is_over:
        state.warn("the game is over")
        return
    if peer.flow.pending is not None:
        state.warn("wait: the challenge is being settled")
        return
    if not peer.my_turn:
        state.warn(f"it is {state.opponent}'s turn: wait for their move")
        return
    problem = view.move_problem(move, side)
    if problem:
        state.warn(f"{move.text()}: {problem}")
        return
    claim = None
    if not view.is_challenge(move):
        claim = _flag_claim_after(state, move)
    offer, state.offer_draw = state.offer_draw, False
    state.selected = None
    state.cursor = move.to_square
    done = f"you played {move.text()}"
    if claim is not None:
        done += ": your flag is on the far back rank with no enemy beside it, win claimed"
    if offer:
        done += ", offering a draw"
    state.driver.perform(lambda p: p.move(move, offer_draw=offer, claim=claim), done)


def _flag_claim_after(state: AppState, move: Move) -> Piece | None:
    """Our flag piece when this move takes it to a square that wins at once."""
    view, side = state.view, state.side
    assert view is not None and side is not None
    piece = view.piece_at(move.from_square)
    if piece is None or view.rank_of(piece) is not Rank.FLAG:
        return None
    view.push(move)
    try:
        ok = not view.is_over and view.flag_claim_problem(side, piece) is None
    finally:
        view.pop()
    return piece if ok else None


def submit(state: AppState, line: str) -> None:
    """A line typed at the play screen's input."""
    try:
        command = parse_command(line)
    except CommandError as exc:
        state.warn(str(exc))
        return
    peer = state.peer
    if command.kind == "reply":
        from p2pgotg.ui.lobby_screen import reply_typed

        reply_typed(state, command.text)
        return
    if command.kind == "move":
        assert command.move is not None
        try_move(state, command.move)
    elif command.kind == "help":
        state.toggle_help()
    elif command.kind == "quit":
        state.ask_quit()
    elif peer is None:
        state.warn("no game yet")
    elif command.kind == "resign":
        state.ask(Confirm.RESIGN, "resign this game? You lose it.")
    elif command.kind == "draw":
        if peer.draw_offered_to_me:
            state.driver.perform(lambda p: p.accept_draw(), "draw accepted")
        elif state.offer_draw:
            state.say("your draw offer already goes with your next move")
        else:
            state.offer_draw = True
            state.say("your draw offer goes with your next move")
    elif command.kind == "decline":
        if peer.draw_offered_to_me:
            state.driver.perform(lambda p: p.decline_draw(), "draw declined")
        else:
            state.warn(f"{state.opponent} has not offered a draw")
    elif command.kind == "chat":
        state.driver.perform(lambda p: p.chat(command.text))



def resign(state: AppState) -> None:
    """Resign, once the player has said yes."""
    if state.peer is None or state.peer.flow.is_over:
        state.warn("the game is already over")
        return
    state.driver.perform(lambda p: p.resign(), "you resigned")
