"""The player's saved games, for `p2pgotg games` and the start screen's list: who the
opponent was, when, how it ended, unfinished games first, each with the command that
resumes it (or shows it). Reading only: a file that cannot be read is listed as such and
never touched."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from pathlib import Path

from p2pgotg.games import replay
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.net.play.player_name import saved_names, who
from p2pgotg.protocol import Finding, TranscriptError, parse
from p2pgotg.protocol.flow import HOST, other
from p2pgotg.protocol.table.transcript import is_table_file
from p2pgotg.ui.review import BOT_FOLDER  # (games against the bot, kept apart)
from p2pgotg.ui.words import how_it_ended, plural

#: The title of a seat's file of a table of three or four (SPEC 5.9).
TABLE = "Towers at a table"


@dataclass(frozen=True)
class SavedGameInfo:
    path: Path
    when: datetime.datetime
    opponent: str  # `the bot (hard)`, or the name the opponent gave and its key's fingerprint
    result: str  # from the file owner's side: `you won: they resigned`, `unfinished`...
    unfinished: bool
    command: str  # what to run to resume it (unfinished) or show it (finished)
    role: str | None = None  # the file owner's seat: host or joiner
    against_bot: bool = False
    begun: bool = False  # past the setup: there are moves (or an end) to speak of
    colours: tuple[str, str] | None = None  # (ours, theirs) once the coin has decided
    game: str | None = None  # a game other than Game of the Generals: its title (`Towers`)

    def lines(self) -> list[str]:
        """Two lines for a list: who played what and how it went, then the command."""
        when = self.when.strftime("%Y-%m-%d %H:%M")
        if self.colours is None:
            players = f"against {self.opponent}"
        else:
            players = f"you, {self.colours[0]} against {self.opponent}, {self.colours[1]}"
        game = f"{self.game}, " if self.game else ""
        return [f"{when}  {game}{players}: {self.result}", f"    {self.command}"]


def list_saved_games(games: Path) -> list[SavedGameInfo]:
    """Every game in `games` (and its bot folder): unfinished first, then newest first. A
    game this account played against itself (both seats' files, SPEC 3.5) is one entry."""
    found = []
    for folder, against_bot in ((games, False), (games / BOT_FOLDER, True)):
        if not folder.is_dir():
            continue
        paths = sorted(folder.glob("*.gtr"))
        game_ids = [path.stem.split("-", 1)[0] for path in paths]
        for path, game_id in zip(paths, game_ids, strict=True):
            info = describe_game(path, against_bot)
            if game_ids.count(game_id) > 1:  # several seats of one game: the host's file
                if info.role != HOST:
                    continue  # (a table's bot seats resume with their host's table)
                if not (info.game or "").startswith(TABLE):
                    info = replace(info, opponent="your own second seat")
            found.append(info)
    return sorted(found, key=lambda g: (not g.unfinished, -g.when.timestamp()))

def describe_game(path: Path, against_bot: bool) -> SavedGameInfo:
    """One saved game, told from its owner's side (a file that cannot be read says so)."""
    try:
        when = datetime.datetime.fromtimestamp(path.stat().st_mtime)
        data = path.read_bytes()
        if is_table_file(data):  # (a seat's file of a table of three or four, SPEC 5.9)
            from p2pgotg.ui.towers.table_saved import describe_table

            return describe_table(path, when)
        transcript = parse(data)
    except (OSError, TranscriptError):
        return SavedGameInfo(path, datetime.datetime.fromtimestamp(0), "?",
                             "cannot be read (damaged, or not a saved game)", False,
                             f"p2pgotg verify {path}")
    report = replay(transcript)
    flow = report.flow
    me = transcript.role
    if isinstance(flow, TowersFlow):
        from p2pgotg.ui.towers.saved import describe_towers

        return describe_towers(path, when, transcript, report, against_bot)
    if not isinstance(flow, GotgFlow):  # (a file with no message, or another game's)
        return SavedGameInfo(path, when, "?", "not begun" if flow is None else
                             "another game", report.unfinished,
                             f"check: p2pgotg verify {path}", me, against_bot)
    names = saved_names(transcript.secrets, me, other(me))
    if against_bot:  # (the bot seat gives its level as its name: `the bot (hard)`)
        opponent = names[other(me)] or "the bot"
    else:
        opponent = who(names[other(me)], flow.key_of(other(me)))
    colours = None
    if flow.white is not None:
        mine = flow.side_of(me)
        colours = (mine.display_name, mine.other.display_name)
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
                             me, against_bot, flow.game is not None, colours)
    if report.finding is Finding.UNREADABLE:
        return SavedGameInfo(path, when, opponent, "damaged: p2pgotg verify says more",
                             False, f"check: p2pgotg verify {path}", me, against_bot,
                             colours=colours)
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
                         f"review: p2pgotg show {path}", me, against_bot, True, colours)
