"""A table's game of Towers told from one seat's file (SPEC 5.9), as `p2pgotg show --text`
tells a two-player Towers game (`ui.towers.review`): every action by its colour and seat
with the board after it, every leave and claim, the void actions and the disputes, then
the verdict. Pure: it reads a judged table (`judge_table`'s report), never a file.

The game is told in its own order (SPEC 5.7: the canonical order of its events), which is
the order in which every seat and `verify` apply them, whatever order the file took them.
"""

from __future__ import annotations

from p2pgotg.games.towers.rules import Action, Game
from p2pgotg.games.towers.table import TowersPosition
from p2pgotg.protocol.referee import Finding
from p2pgotg.protocol.table.flow import TableFlow
from p2pgotg.protocol.table.replay import ACTION, LEAVE, GameEvent, Replay
from p2pgotg.protocol.table.verify import TableFile, TableReport, who
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.review import ReviewError
from p2pgotg.ui.towers.board import board_fragments
from p2pgotg.ui.towers.words import action_sentence

#: How a leave is told, by its termination.
_LEFT = {"resignation": "resigns", "time_forfeit": "ran out of time",
         "abandonment": "went away"}


def table_lines(file: TableFile, report: TableReport) -> list[str]:
    """What `p2pgotg show` prints for a table's file; ReviewError when there is nothing to
    show (a damaged file, or a table whose roster was never made)."""
    flow = report.flow
    if report.finding is Finding.UNREADABLE:
        raise ReviewError(f"{file.name} is damaged or forged, so it cannot be shown: "
                          "p2pgotg verify says more")
    if flow is None or flow.state is None or flow.game_id is None:
        raise ReviewError(f"{file.name}: the table never sat down (its roster was not "
                          "made), so there is nothing to show")
    owner = flow.seat_of_key(file.key)
    lines = [f"{file.name}: Towers at a table of {flow.n}, {flow.options.describe()}",
             f"the file of: {'nobody seated' if owner is None else who(flow, owner)}"]
    state = flow.state
    lines.append("order:      " + (", ".join(who(flow, s) for s in state.order)
                                   if state.order is not None
                                   else "none: not every seat opened its coin"))
    lines += _events(flow)
    for seat, (claimant, seq) in flow.disputes:
        lines.append(f"   {who(flow, seat)} disputes the claim of {who(flow, claimant)} "
                     f"(its message {seq})")
    lines += [line for line in report.lines if not line.startswith(("game id:", "order:"))]
    return lines


def _events(flow: TableFlow) -> list[str]:
    """Each game event in the game's order: actions with the board after them, leaves."""
    state = flow.state
    assert state is not None and flow.game_id is not None
    replay = Replay(flow.rules, flow.options, flow.n, flow.game_id)
    lines: list[str] = []
    for event in flow.events:
        if event.kind == ACTION:
            lines += _action(flow, replay, event)
        elif event.kind == LEAVE:
            lines.append(_leave(flow, replay, event))
        else:
            replay.apply(event)
    return lines


def _action(flow: TableFlow, replay: Replay, event: GameEvent) -> list[str]:
    action = Action.from_code(event.value[1])
    game = replay.game
    sentence = action_sentence(_rules_game(game), action) if game is not None else ""
    made = len(replay.applied)
    replay.apply(event)
    if len(replay.applied) == made:
        return [f"   {who(flow, event.seat)} {action.text()}: void (made after it had left "
                "or the game had ended, SPEC 5.7)"]
    assert replay.game is not None
    board = fragments_text(board_fragments(_rules_game(replay.game), spaced=False))
    return [f"{len(replay.applied)}. {who(flow, event.seat)} {action.text():<8}{sentence}",
            *(f"   {row}".rstrip() for row in board.splitlines())]


def _rules_game(position: object) -> Game:
    """The rules engine's game inside the table's position (Towers')."""
    assert isinstance(position, TowersPosition)
    return position.game


def _leave(flow: TableFlow, replay: Replay, event: GameEvent) -> str:
    target, termination = event.value
    gone = replay.over or target in replay.left
    replay.apply(event)
    if termination == "resignation":
        told = f"   {who(flow, target)} resigns"
    else:
        reason = "time" if termination == "time_forfeit" else "abandoned"
        told = (f"   {who(flow, event.seat)} claims against {who(flow, target)} "
                f"({reason}): {who(flow, target)} {_LEFT[termination]}, on the claimant's "
                "word")
    return told + (" (changes nothing: gone already, or the game was over)" if gone else "")
