"""The player's saved games, for `p2pgotg games` and the start screen's list: who the
opponent was, when, how it ended, unfinished games first, each with the command that
resumes it (or shows it). Reading only: a file that cannot be read is listed as such and
never touched."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from p2pgotg.protocol import Finding, TranscriptError, parse, replay
from p2pgotg.protocol.flow import HOST, other
from p2pgotg.ui.words import how_it_ended, plural

BOT_FOLDER = "bot"  # games against the bot, kept apart from games against people


@dataclass(frozen=True)
class SavedGameInfo:
    path: Path
    when: datetime.datetime
    opponent: str  # `the bot`, or the opponent's key, shortened
    result: str  # from the file owner's side: `you won: they resigned`, `unfinished`...
    unfinished: bool
    command: str  # what to run to resume it (unfinished) or show it (finished)
    role: str | None = None  # the file owner's seat: host or joiner
    against_bot: bool = False
    begun: bool = False  # past the setup: there are moves (or an end) to speak of

    def lines(self) -> list[str]:
        """Two lines for a list: what it was, then the command."""
        when = self.when.strftime("%Y-%m-%d %H:%M")
        return [f"{when}  against {self.opponent}: {self.result}", f"    {self.command}"]


def list_saved_games(games: Path) -> list[SavedGameInfo]:
    """Every game in `games` (and its bot folder): unfinished first, then newest first."""
    found = []
    for folder, against_bot in ((games, False), (games / BOT_FOLDER, True)):
        if not folder.is_dir():
            continue
        for path in folder.glob("*.gtr"):
            found.append(describe_game(path, against_bot))
    return sorted(found, key=lambda g: (not g.unfinished, -g.when.timestamp()))


def describe_game(path: Path, against_bot: bool) -> SavedGameInfo:
    """One saved game, told from its owner's side (a file that cannot be read says so)."""
    try:
        when = datetime.datetime.fromtimestamp(path.stat().st_mtime)
        transcript = parse(path.read_bytes())
    except (OSError, TranscriptError):
        return SavedGameInfo(path, datetime.datetime.fromtimestamp(0), "?",
                             "cannot be read (damaged, or not a saved game)", False,
                             f"p2pgotg verify {path}")
    report = replay(transcript)
    flow = report.flow
    me = transcript.role
    them_key = flow.key_of(other(me))
    opponent = "the bot" if against_bot else (
        f"key {them_key.hex()[:12]}" if them_key else "a player who never answered")
    moves = flow.game.ply if flow.game is not None else 0
    if report.unfinished:  # (a torn last record too: resuming cuts it off)
        stage = "not begun: in the setup" if flow.game is None else plural(moves, "move") \
            + " played"
        if flow.result is not None:
            stage += "; over, the audit waits for the other side"
        if against_bot:
            command = "resume: p2pgotg play"
        elif me == HOST:
            command = "resume: p2pgotg host"
        else:
            command = "resume: p2pgotg join CODE (the invite code of that game)"
        return SavedGameInfo(path, when, opponent, f"unfinished ({stage})", True, command,
                             me, against_bot, flow.game is not None)
    if report.finding is Finding.UNREADABLE:
        return SavedGameInfo(path, when, opponent, "damaged: p2pgotg verify says more",
                             False, f"check: p2pgotg verify {path}", me, against_bot)
    result = "stopped: a broken rule was proven"
    if flow.result is not None:
        termination, winner = flow.result
        won = None if winner is None else winner == me
        head = "draw" if won is None else ("you won" if won else "you lost")
        result = f"{head}: {how_it_ended(termination, won)}"
    verdict = report.verdict
    if verdict is not None and not verdict.clean:
        cheat = "you" if verdict.cheater == me else "they"
        result += f" ({cheat} broke a rule)"
    return SavedGameInfo(path, when, opponent, f"{result}, {plural(moves, 'move')}", False,
                         f"review: p2pgotg show {path}", me, against_bot, True)
