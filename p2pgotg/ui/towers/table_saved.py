"""A seat's file of a table of three or four (SPEC 5.9) for the games list (`p2pgotg
games`, the start screen's saved games): which colour and seat we played, how the table's
game ended for us, and the command that resumes or shows it. Reading only."""

from __future__ import annotations

import datetime
from pathlib import Path

from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol import Finding, TranscriptError
from p2pgotg.protocol.table.transcript import TableRecordReader
from p2pgotg.protocol.table.verify import COLOURS, TableFile, judge_table
from p2pgotg.ui.saved_games import TABLE as TITLE
from p2pgotg.ui.saved_games import SavedGameInfo
from p2pgotg.ui.words import plural


def describe_table(path: Path, when: datetime.datetime) -> SavedGameInfo:
    """One seat's file of a table, told from that seat's side."""
    reader = TableRecordReader()
    try:
        records = reader.feed_table(path.read_bytes())
        torn = reader.finish()
    except (OSError, TranscriptError):
        records, torn = [], True
    if reader.role is None or reader.key is None or torn:
        return SavedGameInfo(path, when, "?", "cannot be read (damaged, or not a saved "
                             "game)", False, f"check: p2pgotg verify {path}", game=TITLE)
    role = reader.role
    report = judge_table(TOWERS_TABLE, [TableFile(path.name, role, reader.key, records)])
    flow = report.flow
    state = None if flow is None else flow.state
    me = None if flow is None else flow.seat_of_key(reader.key)
    seats = 0 if flow is None else flow.n
    title = f"{TITLE} of {seats}" if seats else TITLE
    others = "the other seats" if seats == 0 else f"{plural(seats - 1, 'other seat')}"
    colour = None
    if state is not None and state.order is not None and me is not None:
        colour = COLOURS[state.order.index(me)]
    if colour is not None:
        others += f" (you: {colour}, seat {me})"

    def info(result: str, unfinished: bool, command: str) -> SavedGameInfo:
        return SavedGameInfo(path, when, others, result, unfinished, command, role,
                             False, state is not None and state.ply > 0, None, title)

    if report.finding is Finding.UNFINISHED:
        actions = 0 if state is None else max(state.ply, 0)
        command = (f"resume: p2pgotg host --game towers --seats {seats}" if role == "host"
                   else "resume: p2pgotg join CODE (the invite code of that table)")
        return info(f"unfinished ({plural(actions, 'action')} made)", True, command)
    if report.finding is Finding.UNREADABLE or state is None:
        return info("damaged: p2pgotg verify says more", False, f"check: p2pgotg verify {path}")
    if report.finding is Finding.VIOLATION:
        return info("stopped: a broken rule was proven", False, f"review: p2pgotg show {path}")
    assert flow is not None  # (a state comes from a flow)
    termination, winners = flow.ending(state)
    how = (termination or "?").replace("_", " ")
    if me in winners:
        head = "you won"
    elif not winners:
        head = "no winner"
    else:
        left = state.left.get(me) if me is not None else None
        head = "you lost" if left is None else f"you left ({left.replace('_', ' ')})"
    claimed = " (on a claim)" if report.finding is Finding.CLAIMED else ""
    return info(f"{head}: {how}{claimed}, {plural(max(state.ply, 0), 'action')}", False,
                f"review: p2pgotg show {path}")
