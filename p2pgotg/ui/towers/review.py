"""Reviewing a Towers game from its saved transcript: every action (setup choices
included) with the colour that made it and what it did, the board after each, and the
result (SPEC 4.11). Pure: the file is read once by `TowersReview.from_report`, and the
screen (`review_screen`) and `p2pgotg show --text` only read this.

Towers hides nothing, so any transcript that verifies can be shown as far as it goes, an
unfinished game's too (it says so, and how to resume it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.games.towers.rules import Action, Game, RuleOptions, TowersError
from p2pgotg.net.paths import own_public_keys
from p2pgotg.net.player_name import player_label, saved_names
from p2pgotg.protocol import Finding, Report, Transcript
from p2pgotg.protocol.flow import other
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.review import ReviewError, Stepping
from p2pgotg.ui.towers.board import board_fragments
from p2pgotg.ui.towers.words import (
    action_sentence,
    colour,
    ended_seat,
    points_words,
    reason_told,
)


@dataclass(frozen=True)
class Step:
    """One action of the game, told by the colour that made it."""

    number: int
    seat: int
    action: Action
    text: str  # `12. Red c3-c4`
    explained: str  # `Red moves c3-c4 and plants a flag on c4.`


@dataclass
class TowersReview(Stepping):
    """A Towers game, ready to step through; `ply` is how many actions are shown made."""

    path: Path
    options: RuleOptions
    steps: list[Step]
    result: str  # `Blue wins: Blue placed all its flags (points: Red 7, Blue 18)`
    audit: str
    players: dict[str, str] = field(default_factory=dict)  # colours -> `you`, `Ana (key ...)`
    ply: int = 0

    @property
    def players_line(self) -> str:
        """`you, Red; Ana (key 6f2b32fac51f), Blue`."""
        return "; ".join(f"{who}, {colours}" for colours, who in self.players.items())

    @classmethod
    def from_report(cls, path: Path, transcript: Transcript, report: Report,
                    resume: str) -> TowersReview:
        """The review of a transcript already judged (`report`); `resume` says how its
        owner resumes it, for an unfinished game."""
        flow = report.flow
        assert isinstance(flow, TowersFlow)
        if report.finding is Finding.UNREADABLE:
            raise ReviewError(f"{path} is damaged or forged, so it cannot be shown: "
                                    "p2pgotg verify says more")
        if flow.game is None or flow.first is None or flow.options is None:
            raise ReviewError(f"{path}: this game never began (the coin was not "
                                    "tossed), so there is nothing to show")
        game = Game(flow.options)
        steps = []
        for number, action in enumerate(flow.game.history, 1):
            seat = game.turn
            sentence = action_sentence(game, action)
            try:
                game.push(action)
            except TowersError:
                raise ReviewError(f"{path}: action {number} does not replay; p2pgotg "
                                        "verify says more") from None
            steps.append(Step(number, seat, action, f"{number}. {colour(seat)} "
                              f"{action.text()}", sentence))
        me, them = transcript.role, other(transcript.role)
        own_keys = own_public_keys()
        players = {"+".join(colour(s) for s in flow.seats_of(role)):
                   player_label(name, flow.key_of(role), own_keys)
                   for role, name in saved_names(transcript.secrets, me, them).items()}
        result = f"Unfinished ({resume})" if report.unfinished else _result_words(flow)
        return cls(path, flow.options, steps, result, _audit_words(report), players)

    # -- stepping ---------------------------------------------------------------------

    def game(self) -> Game:
        """The position after `ply` actions."""
        game = Game(self.options)
        for step in self.steps[: self.ply]:
            game.push(step.action)
        return game

    @property
    def current(self) -> Step | None:
        return self.steps[self.ply - 1] if self.ply else None

    def text_lines(self) -> list[str]:
        """The game as `p2pgotg show --text` prints it: every action with its colour and
        what it did, the board after each (as on the screen: each square's height, then
        its pawn's colour letter and its flag's, `.` for none), then the result."""
        lines = [f"{self.path}: Towers, {self.options.describe()}",
                 f"players: {self.players_line}"]
        game = Game(self.options)
        for step in self.steps:
            game.push(step.action)
            lines.append(f"{step.text:<18}{step.explained}")
            board = fragments_text(board_fragments(game, spaced=False))
            lines += [f"   {row}".rstrip() for row in board.splitlines()]
        lines.append(f"{self.result}; {self.audit}")
        return lines


def _result_words(flow: TowersFlow) -> str:
    """`Blue wins: Blue placed all its flags (points: Red 7, Blue 18)`, with colours."""
    assert flow.game is not None and flow.first is not None
    if flow.result is None:
        return "The game stopped when a broken rule was proven"
    termination, winner = flow.result
    names = {role: "+".join(colour(s) for s in flow.seats_of(role))
             for role in (flow.first, other(flow.first))}
    loser = names[other(winner)] if winner is not None else None
    reason = reason_told(termination, ended_seat(flow.game, termination), loser)
    if winner is None:
        head = "Draw"
    else:
        head = f"{names[winner]} {'win' if '+' in names[winner] else 'wins'}"
    return f"{head}: {reason} (points: {points_words(flow.game)})"


def _audit_words(report: Report) -> str:
    if report.finding is Finding.CLEAN:
        return "nothing hidden: every action checked as it came, clean"
    if report.finding is Finding.CLAIMED:
        return ("no rule broken, but the result rests on a claim about time or absence: "
                "its claimant's word")
    if report.finding is Finding.VIOLATION and report.verdict is not None:
        return f"a broken rule: {report.verdict.detail}"
    return "unfinished: every action so far checked as it came"
