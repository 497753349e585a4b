"""The verdict of a game: its result, and whether the audit found it clean."""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.rules import Termination


@dataclass(frozen=True)
class Verdict:
    termination: Termination | None  # None when a violation ended the game
    winner: str | None  # role; a cheater always loses
    clean: bool  # no rule was broken
    audit_complete: bool  # both sides opened every commitment and the replay agreed
    cheater: str | None = None
    rule: str | None = None
    detail: str = ""
    index: int | None = None  # transcript message index of the violation

    def describe(self) -> str:
        if not self.clean:
            return (
                f"{self.cheater} broke rule {self.rule} at message {self.index}: {self.detail}; "
                f"{self.winner} wins"
            )
        result = (
            "draw" if self.winner is None else f"{self.winner} wins"
        ) + f" ({self.termination.value.replace('_', ' ') if self.termination else '?'})"
        if self.audit_complete:
            return f"{result}; audit complete: every commitment opened and checked, clean"
        return f"{result}; audit incomplete: {self.detail}"
