"""A saved Towers game for the games list (`p2pgotg games`, the start screen's saved
games): the opponent, the colours, how it ended with the points, and the command that
resumes or shows it. Reading only."""

from __future__ import annotations

import datetime
from pathlib import Path

from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.net.play.player_name import saved_names, who
from p2pgotg.protocol import Finding, Report, Transcript
from p2pgotg.protocol.flow import HOST, other
from p2pgotg.ui.saved_games import SavedGameInfo
from p2pgotg.ui.towers.words import colours, ended_seat, points_words, reason_words
from p2pgotg.ui.words import plural

TITLE = "Towers"


def describe_towers(path: Path, when: datetime.datetime, transcript: Transcript,
                    report: Report, against_bot: bool) -> SavedGameInfo:
    """One saved Towers game, told from its owner's side."""
    flow = report.flow
    assert isinstance(flow, TowersFlow)
    me, them = transcript.role, other(transcript.role)
    names = saved_names(transcript.secrets, me, them)
    # (the bot seat gives its level as its name: `the bot (hard)`)
    opponent = (names[them] or "the bot") if against_bot else who(names[them],
                                                                   flow.key_of(them))
    game = flow.game
    began = game is not None and flow.first is not None
    seats = (colours(flow.seats_of(me)), colours(flow.seats_of(them))) if began else None
    actions = game.ply if game is not None else 0

    def info(result: str, unfinished: bool, command: str, begun: bool) -> SavedGameInfo:
        return SavedGameInfo(path, when, opponent, result, unfinished, command, me,
                             against_bot, begun, seats, TITLE)

    if report.unfinished:
        stage = f"{plural(actions, 'action')} made" if began else "not begun: the coin " \
            "was not tossed"
        if against_bot:
            command = "resume: p2pgotg play --game towers"
        elif me == HOST:
            command = "resume: p2pgotg host"
        else:
            command = "resume: p2pgotg join CODE (the invite code of that game)"
        return info(f"unfinished ({stage})", True, command, began)
    if report.finding is Finding.UNREADABLE or game is None or flow.result is None:
        return info("damaged: p2pgotg verify says more", False,
                    f"check: p2pgotg verify {path}", False)
    termination, winner = flow.result
    won = None if winner is None else winner == me
    head = "draw" if won is None else ("you won" if won else "you lost")
    ours = game.team(flow.seats_of(me)[0])
    result = (f"{head}: {reason_words(termination, ended_seat(game, termination), won)} "
              f"(points: {points_words(game, {ours: 'you'})})")
    verdict = report.verdict
    if verdict is not None and not verdict.clean:
        result += f" ({'you' if verdict.cheater == me else 'they'} broke a rule)"
    return info(f"{result}, {plural(actions, 'action')}", False,
                f"review: p2pgotg show {path}", True)
