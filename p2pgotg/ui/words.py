"""What the screens say about a game, from one player's seat: pure functions over the view.

Ranks are named only when the view knows them (`Game.rank_of`), so a result reads the way an
arbiter would say it ("their piece was eliminated") whenever a rank is hidden.
"""

from __future__ import annotations

import enum

from p2pgotg.protocol import Verdict
from p2pgotg.protocol.printable import controls_escaped
from p2pgotg.rules import ChallengeResult, Game, Piece, PlyRecord, Rank, Side, Termination


def capital(text: str) -> str:
    """`text` starting a sentence: its first letter upper case, the rest as it is (a
    name keeps its own spelling)."""
    return text[:1].upper() + text[1:]


def plural(count: int, noun: str) -> str:
    """`1 move`, `2 moves`, `0 pieces`: a count and its noun, agreeing."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def rank_name(rank: Rank) -> str:
    """The display name without its star count: short enough for a side panel."""
    return rank.display_name.split(" (", 1)[0]


def piece_words(view: Game, piece: Piece, me: Side) -> str:
    """`your CPT`, `their MAJ`, or `their piece` when this view does not know the rank."""
    rank = view.rank_of(piece)
    owner = "your" if piece.side is me else "their"
    return f"{owner} {rank.code}" if rank is not None else f"{owner} piece"


def challenge_lines(view: Game, record: PlyRecord, me: Side) -> list[str]:
    """Two short lines: who met whom, and who left the board."""
    assert record.defender is not None and record.result is not None
    attacker = piece_words(view, record.piece, me)
    defender = piece_words(view, record.defender, me)
    if record.result is ChallengeResult.ATTACKER_WINS:
        gone = f"{defender} eliminated"
    elif record.result is ChallengeResult.DEFENDER_WINS:
        gone = f"{attacker} eliminated"
    else:
        gone = "both eliminated"
    lines = [f"{attacker} vs {defender}", f"-> {gone}"]
    if record.lost_flag is not None:
        lines.append("-> " + ("your" if record.lost_flag is me else "their") + " flag is lost")
    return lines


def result_headline(winner_side: Side | None, me: Side | None, opponent: str) -> str:
    """`You win`, `The bot wins`, `Draw`."""
    if winner_side is None:
        return "Draw"
    if winner_side is me:
        return "You win"
    return f"{capital(opponent)} wins"


def how_it_ended(termination: enum.Enum | None, won: bool | None) -> str:
    """The reason, said to the player (`won` is None for a draw; `termination` is None
    when a proven violation ended the game)."""
    mine = bool(won)
    if termination is None:
        return ("they were caught breaking the rules" if mine
                else "you were found breaking the rules")
    return {
        Termination.FLAG_CAPTURED: (
            "their flag was eliminated in a challenge" if mine
            else "your flag was eliminated in a challenge"
        ),
        Termination.FLAG_REACHED_BACK_RANK: (
            "your flag reached the far back rank" if mine
            else "their flag reached your back rank"
        ),
        Termination.RESIGNATION: "they resigned" if mine else "you resigned",
        Termination.DRAW_AGREED: "a draw was agreed",
        Termination.NO_LEGAL_MOVE: "they had no legal move" if mine else "you had no legal move",
        Termination.NEITHER_CAN_MOVE: "neither side can move",
        Termination.TIME_FORFEIT: "they ran out of time" if mine else "you ran out of time",
        Termination.ABANDONMENT: (
            "they left the game and did not come back" if mine
            else "you were away too long"
        ),
    }[Termination(termination.value)]


def verdict_words(verdict: Verdict, my_role: str, opponent: str) -> str:
    """The audit's verdict in plain words, with `you` and the opponent's name for roles."""

    def who(role: str | None) -> str:
        return "you" if role == my_role else opponent

    if not verdict.clean:
        winner = "You win" if verdict.winner == my_role else f"{who(verdict.winner)} wins"
        return (
            f"The audit caught {who(verdict.cheater)} breaking the rules "
            f"(rule {verdict.rule}: {controls_escaped(verdict.detail)}). "
            f"{capital(winner)}."
        )
    claim = ""
    if verdict.claimants:  # (time or absence: a claimant's word, never proven: SPEC 2.6)
        words = " and ".join(who(r) for r in verdict.claimants)
        disputed = " and ".join(who(r) for r in verdict.disputed_by)
        whose = "your" if words == "you" else "their"
        claim = (f" The result rests on a claim by {words}: {whose} word, which no record can "
                 f"prove{f'; disputed by {disputed}' if disputed else ''}.")
    if verdict.audit_complete:
        return (
            "Audit clean: both sides opened every commitment and every move and challenge "
            "checked out" + (", so the result stands." if not claim else "." + claim)
        )
    return f"Audit incomplete: {controls_escaped(verdict.detail)}.{claim}"


def clock_text(seconds: float | None) -> str:
    """`14:05`, `1:02:03`; `-` when there is no clock."""
    if seconds is None:
        return "-"
    total = max(0, int(seconds + 0.999))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
