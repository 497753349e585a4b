"""Reviewing a finished game from its saved transcript: both armies revealed (the audit
opened them), stepped through move by move, each challenge explained. Pure: the file is
read once by `Review.from_file`, and the screen (`review_screen`) only reads this.

Any transcript that verifies can be shown, the other player's too; one that cannot is
refused with a `ReviewError` whose text says why, in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from p2pgotg.games import replay
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.net.paths import own_public_keys
from p2pgotg.net.player_name import player_label, saved_names
from p2pgotg.protocol import Finding, Report, Transcript, TranscriptError, parse
from p2pgotg.protocol.flow import HOST, JOINER, other
from p2pgotg.rules import (
    ChallengeResult,
    Game,
    IllegalMoveError,
    PlyRecord,
    Rank,
    RuleOptions,
    RulesError,
    Setup,
    Side,
    Termination,
)
from p2pgotg.ui.words import rank_name

if TYPE_CHECKING:
    from p2pgotg.ui.towers.review import TowersReview

BOT_FOLDER = "bot"  # games against the bot (SPEC 3.5): `play` resumes them


class ReviewError(Exception):
    """This file cannot be shown; `str()` says why, for the player."""


def setups_from_flow(flow: GotgFlow) -> dict[Side, Setup]:
    """Every setup the audit opened: a side's ranks are known once its audit arrived."""
    out: dict[Side, Setup] = {}
    if flow.white is None:
        return out
    for role in (HOST, JOINER):
        if role in flow.audits and role in flow.reveals:
            ranks = flow.audits[role][0]
            squares = flow.reveals[role].squares
            side = flow.side_of(role)
            try:
                out[side] = Setup(side, {sq: Rank(r) for sq, r in
                                         zip(squares, ranks, strict=True)})
            except (RulesError, ValueError):  # a broken setup: the verdict says so
                continue
    return out


@dataclass(frozen=True)
class Step:
    """One move of the game, told with both ranks known."""

    number: int
    record: PlyRecord
    text: str  # `12. White b3-b4`
    explained: str  # for a challenge: who met whom and who left the board


def _challenge_words(full: Game, record: PlyRecord) -> str:
    attacker, defender = full.rank_of(record.piece), full.rank_of(record.defender) \
        if record.defender is not None else None
    side, other = record.side.display_name, record.side.other.display_name
    a = rank_name(attacker) if attacker is not None else "piece"
    d = rank_name(defender) if defender is not None else "piece"
    result = record.result
    if result is ChallengeResult.ATTACKER_WINS:
        gone = f"{other}'s {d} is eliminated"
    elif result is ChallengeResult.DEFENDER_WINS:
        gone = f"{side}'s {a} is eliminated"
    else:
        gone = "both are eliminated"
    words = f"{side}'s {a} challenges {other}'s {d}: {gone}"
    if record.lost_flag is not None:
        words += f"; {record.lost_flag.display_name}'s flag is lost"
    return words + "."


class Stepping:
    """A review's place in its game: `ply` of `total` steps, moved within the game."""

    steps: Sequence[object]
    ply: int

    @property
    def total(self) -> int:
        return len(self.steps)

    def go(self, ply: int) -> None:
        self.ply = max(0, min(self.total, ply))


@dataclass
class Review(Stepping):
    """A finished game, ready to step through; `ply` is how many moves are shown played."""

    path: Path
    owner: Side  # whose transcript it is: the board is drawn from that side
    setups: dict[Side, Setup]
    steps: list[Step]
    result: str  # `White wins: their flag reached the far back rank` and the audit's word
    audit: str
    options: RuleOptions
    players: dict[Side, str] = field(default_factory=dict)  # `you`, `Ana (key 6f2b...)`
    ply: int = 0

    @property
    def players_line(self) -> str:
        """`you, White; Ana (key 6f2b32fac51f), Black`."""
        return "; ".join(f"{self.players[side]}, {side.display_name}" for side in Side
                         if side in self.players)

    @classmethod
    def from_file(cls, path: Path) -> Review:
        transcript, report = _judged(path)
        return cls.from_report(path, transcript, report)

    @classmethod
    def from_report(cls, path: Path, transcript: Transcript, report: Report) -> Review:
        flow = report.flow
        if flow is not None and not isinstance(flow, GotgFlow):
            raise ReviewError(f"{path} is a game this review does not show")
        if report.finding is Finding.UNREADABLE:
            raise ReviewError(f"{path} is damaged or forged, so it cannot be shown: "
                              "p2pgotg verify says more")
        if flow is None or flow.game is None or flow.white is None or flow.options is None:
            raise ReviewError(f"{path}: this game never got past the setup, so there is "
                              "nothing to show")
        if report.finding is Finding.UNFINISHED:
            raise ReviewError(f"{path}: this game is not finished, so its ranks were never "
                              f"all opened; finish it ({_resume_words(path, transcript.role)})"
                              " to see it")
        setups = setups_from_flow(flow)
        if len(setups) != 2:
            raise ReviewError(f"{path}: the audit never opened both setups (the game was "
                              "stopped by a broken rule), so the armies cannot be shown")
        full = Game.from_setups(setups[Side.WHITE], setups[Side.BLACK], flow.options)
        steps = []
        for number, record in enumerate(flow.game.history, 1):
            words = _challenge_words(full, record) if record.defender is not None else ""
            try:
                replayed = full.push(record.move, record.result, record.lost_flag)
            except IllegalMoveError:
                raise ReviewError(f"{path}: move {number} does not replay from the opened "
                                  "setups; p2pgotg verify says more") from None
            steps.append(Step(number, replayed,
                              f"{number}. {record.side.display_name} {record.move.text()}",
                              words))
        owner = flow.side_of(transcript.role)
        verdict = report.verdict
        me, them = transcript.role, other(transcript.role)
        own_keys = own_public_keys()
        players = {flow.side_of(role): player_label(name, flow.key_of(role), own_keys)
                   for role, name in saved_names(transcript.secrets, me, them).items()}
        return cls(path, owner, setups, steps, _result_words(flow),
                   _audit_words(report.finding, verdict.detail if verdict else ""),
                   flow.options, players)

    # -- stepping ---------------------------------------------------------------------

    def game(self) -> Game:
        """The position after `ply` moves, every rank known."""
        full = Game.from_setups(self.setups[Side.WHITE], self.setups[Side.BLACK], self.options)
        for step in self.steps[: self.ply]:
            record = step.record
            full.push(record.move, record.result, record.lost_flag)
        return full

    @property
    def current(self) -> Step | None:
        return self.steps[self.ply - 1] if self.ply else None

    def text_lines(self) -> list[str]:
        """The game as `p2pgotg show --text` prints it: move by move, then the result."""
        return [f"{self.path}: {self.options.describe()}", f"players: {self.players_line}",
                *(f"{step.text:<24}{step.explained}".rstrip() for step in self.steps),
                f"{self.result}; {self.audit}"]


def _judged(path: Path) -> tuple[Transcript, Report]:
    """A saved game read and judged, or the reason it cannot be shown (ReviewError)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReviewError(f"cannot read {path}: {exc.strerror or 'unreadable'}") from None
    try:
        transcript = parse(data)
    except TranscriptError:
        raise ReviewError(f"{path} is not a saved game of p2pgotg (or it is damaged): "
                          "check it with p2pgotg verify") from None
    return transcript, replay(transcript)


def load_review(path: Path) -> Review | TowersReview:
    """The review of a saved game of either game (Towers' by `ui.towers.review`), or the
    reason it cannot be shown (ReviewError)."""
    from p2pgotg.games.towers.flow import TowersFlow
    from p2pgotg.ui.towers.review import TowersReview

    transcript, report = _judged(path)
    if isinstance(report.flow, TowersFlow):
        return TowersReview.from_report(path, transcript, report,
                                        _resume_words(path, transcript.role))
    return Review.from_report(path, transcript, report)


def _resume_words(path: Path, role: str) -> str:
    """The command that picks this unfinished game up again (SPEC 3.5's folders)."""
    if path.parent.name == BOT_FOLDER:
        return "p2pgotg play offers to resume it"
    if role == HOST:
        return "p2pgotg host offers to resume it"
    return "p2pgotg join CODE, with the invite code of that game, resumes it"


def _result_words(flow: GotgFlow) -> str:
    """`White wins: Black resigned`, told with colours, never roles."""
    if flow.result is None:
        return "The game stopped when a broken rule was proven"
    ended, winner = flow.result
    termination = None if ended is None else Termination(ended.value)
    if winner is None:
        return "Draw: " + ("a draw was agreed" if termination is Termination.DRAW_AGREED
                           else "neither side can move")
    won = flow.side_of(winner)
    w, lost = won.display_name, won.other.display_name
    how = {
        Termination.FLAG_CAPTURED: f"{lost}'s flag was eliminated",
        Termination.FLAG_REACHED_BACK_RANK: f"{w}'s flag reached the far back rank",
        Termination.RESIGNATION: f"{lost} resigned",
        Termination.NO_LEGAL_MOVE: f"{lost} had no legal move",
        Termination.TIME_FORFEIT: f"{lost} ran out of time",
        Termination.ABANDONMENT: f"{lost} left the game and did not come back",
    }.get(termination, f"{lost} was caught breaking the rules") if termination else \
        f"{lost} was caught breaking the rules"
    return f"{w} wins: {how}"


def _audit_words(finding: Finding, detail: str) -> str:
    if finding is Finding.CLEAN:
        return "audit clean: every commitment opened and checked"
    return f"the audit found a broken rule: {detail}" if detail else "the audit was not clean"
