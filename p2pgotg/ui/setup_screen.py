"""The setup screen: the home squares with a cursor, the tray of pieces left, formations,
and the ready key that commits the setup behind the privacy screen."""

from __future__ import annotations

from p2pgotg.rules import InvalidNotationError, Side
from p2pgotg.ui import board, formation_files
from p2pgotg.ui.board import Fragments, Marks
from p2pgotg.ui.setup_editor import TRAY
from p2pgotg.ui.state import AppState, Confirm, Prompt
from p2pgotg.ui.words import capital, plural, rank_name

HOME_LINES = range(5, 8)  # the bottom three lines of the board on screen


def title(state: AppState) -> str:
    side = state.side
    name = side.display_name if side is not None else "?"
    return f"Setup - you play {name}; your home rows are at the bottom"


def _committed(state: AppState) -> bool:
    return state.peer is not None and state.peer.own_setup is not None


def _opponent_ready(state: AppState) -> bool:
    peer = state.peer
    return peer is not None and peer.peer_role in peer.flow.setup_commits


def board_text(state: AppState) -> Fragments:
    editor = state.editor
    if editor is None:
        return [("", "\n deciding colours...\n")]
    placement = editor.placement
    side = editor.side

    def content(sq: int) -> tuple[Side, str] | None:
        rank = placement.get(sq)
        return None if rank is None else (side, rank.code)

    home = set(editor.home)
    marks = Marks(
        cursor=None if _committed(state) else state.cursor,
        selected=editor.picked,
        dim=frozenset(sq for sq in range(72) if sq not in home),
    )
    out = board.board_fragments(content, side, marks, state.ascii)
    out.append(("", "\n"))
    if _committed(state):
        out.append(("class:strong", " Your setup is committed.\n"))
    else:
        problems = editor.problems()
        if problems:
            out.append(("class:dim", f" {problems[0]}\n"))
        else:
            out.append(("class:strong", " All 21 placed: press d when you are ready.\n"))
    return out


def tray_text(state: AppState) -> Fragments:
    editor = state.editor
    out: Fragments = [("class:heading", "Pieces to place"), ("", "          left\n")]
    if editor is None:
        return out
    left = editor.remaining()
    current = editor.tray_rank
    for rank in TRAY:
        mark = ">" if rank is current and not _committed(state) else " "
        style = "class:strong" if rank is current else ("class:dim" if left[rank] <= 0 else "")
        out.append((style, f"{mark}{rank.code:<4}{rank_name(rank):<20}{left[rank]:>3}\n"))
    out.append(("", "\n"))
    ready = _opponent_ready(state)
    out.append(("", f"{capital(state.opponent)}: "))
    out.append(("class:strong" if ready else "class:dim",
                "ready\n" if ready else "still placing\n"))
    return out


def hints(state: AppState) -> str:
    if state.prompt is Prompt.LOAD:
        return "formations: " + ", ".join(formation_files.names()) + "   (Esc: cancel)"
    if state.prompt is Prompt.SAVE:
        return "a name of letters, digits, - or _, then Enter   (Esc: cancel)"
    if _committed(state):
        return "waiting for the other setup   q quit   ? keys"
    return "Enter place Tab rank x remove r random u undo c clear l/w load/save d READY"


# -- what the keys do -----------------------------------------------------------------

def _editable(state: AppState) -> bool:
    if state.editor is None:
        return False
    if _committed(state):
        state.warn("your setup is already committed: it cannot change now")
        return False
    return True


def move_cursor(state: AppState, dx: int, dy: int) -> None:
    state.cursor = board.step(state.viewer, state.cursor, dx, dy, HOME_LINES)


def enter(state: AppState) -> None:
    if _editable(state):
        assert state.editor is not None
        state.say(state.editor.enter(state.cursor))


def remove(state: AppState) -> None:
    if _editable(state):
        assert state.editor is not None
        state.say(state.editor.remove(state.cursor))


def next_rank(state: AppState, step: int) -> None:
    if _editable(state):
        assert state.editor is not None
        state.say(state.editor.next_rank(step))


def randomize(state: AppState, confirmed: bool = False) -> None:
    """A random formation; over pieces placed by hand only after a y (and u undoes it)."""
    if _editable(state):
        assert state.editor is not None
        if not confirmed and state.editor.placed_by_hand:
            n = state.editor.placed_by_hand
            state.ask(Confirm.RANDOM, f"replace the {plural(n, 'piece')} you placed with a random "
                      "formation?")
            return
        state.say(state.editor.randomize(state.rng))


def clear(state: AppState) -> None:
    if _editable(state):
        assert state.editor is not None
        state.say(state.editor.clear() + ("; u undoes it" if state.editor.can_undo else ""))


def undo(state: AppState) -> None:
    if _editable(state):
        assert state.editor is not None
        state.say(state.editor.undo())


def ask_load(state: AppState) -> None:
    if _editable(state):
        state.prompt = Prompt.LOAD
        state.say("which formation? (the names are listed below)")


def ask_save(state: AppState) -> None:
    if state.editor is not None:
        state.prompt = Prompt.SAVE
        state.say("save this formation under which name?")


def load(state: AppState, name: str) -> None:
    """Load a formation by name; a refused name keeps the prompt open to be corrected."""
    assert state.editor is not None
    try:
        state.editor.load(formation_files.read(name))
    except (formation_files.FormationFileError, InvalidNotationError) as exc:
        state.warn(f"{exc} (correct it and press Enter, or Esc)")
        return
    state.prompt = None
    problems = state.editor.problems()
    state.say(f"loaded {name.strip()}" + (f"; {problems[0]}" if problems else ""))


def save(state: AppState, name: str) -> None:
    """Save under a name; a refused name keeps the prompt open to be corrected."""
    assert state.editor is not None
    try:
        path = formation_files.write(name, state.editor.formation())
    except formation_files.FormationFileError as exc:
        state.warn(f"{exc} (correct it and press Enter, or Esc)")
        return
    state.prompt = None
    state.say(f"saved as {name.strip()} ({path})")


def ready(state: AppState) -> None:
    if not _editable(state):
        return
    assert state.editor is not None
    problems = state.editor.problems()
    if problems:
        state.warn(f"not ready: {problems[0]}")
        return
    setup = state.editor.setup()
    state.editor.picked = None
    state.driver.perform(lambda p: p.commit_setup(setup),
                         f"setup committed: waiting for {state.opponent}")

