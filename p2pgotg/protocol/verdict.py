"""The verdict of a game: its result, whether the audit found it clean, and what the result
rests on (the transcript's proof, or a side's claim about time or absence)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from p2pgotg.protocol.errors import where_words


@dataclass(frozen=True)
class Verdict:
    termination: enum.Enum | None  # the game's termination; None when a violation ended it
    winner: str | None  # role; a cheater always loses
    clean: bool  # no rule was broken
    audit_complete: bool  # both sides opened every commitment and the replay agreed
    cheater: str | None = None
    rule: str | None = None
    detail: str = ""
    #: Where the violating message sits in this file: not part of the verdict, which is the
    #: same for every file of the game (the message is named by its sender's `seq`).
    index: int | None = field(default=None, compare=False)
    #: The roles whose forfeit claims the result rests on: their word about time or absence,
    #: which no transcript can prove (empty when the transcript proves the result).
    claimants: tuple[str, ...] = ()
    disputed_by: tuple[str, ...] = ()  # roles that signed a dispute of such a claim
    first: str | None = None  # the role that moved first, when the coin was tossed
    colours: tuple[str, str] = ("White", "Black")  # the first and the second seat's names
    seq: int | None = None  # the violating message's sequence number in its sender's chain
    #: The result is the loser's signed resignation, and the winner's own commitments were
    #: all opened and checked: proven without the loser's audit (SPEC 2.6).
    winner_audited: bool = False
    #: The game hides nothing (Towers): there is nothing to open, every message was checked
    #: as it came, and `audit_complete` says only that.
    nothing_hidden: bool = False

    @property
    def proven(self) -> bool:
        """The transcript alone proves this result: a clean, complete audit and no claim,
        or a rule broken in a signed message."""
        return (not self.clean) or (
            (self.audit_complete or self.winner_audited) and not self.claimants)

    def who(self, role: str | None) -> str:
        """A role as a reader of the result wants it: its colour first, when known."""
        if role is None:
            return "nobody"
        if self.first is None:
            return role
        colour = self.colours[0] if role == self.first else self.colours[1]
        return f"{colour} ({role})"

    def result(self) -> str:
        """`White (host) wins (resignation)`, `draw (time forfeit)`."""
        how = self.termination.value.replace("_", " ") if self.termination else \
            "a proven violation"
        return ("draw" if self.winner is None else f"{self.who(self.winner)} wins") + f" ({how})"

    def _loser(self) -> str | None:
        if self.winner is None:
            return None
        return "joiner" if self.winner == "host" else "host"

    def describe(self) -> str:
        if not self.clean:
            return (f"{self.who(self.cheater)} broke rule {self.rule}"
                    f"{where_words(self.seq, self.index)}: "
                    f"{self.detail}; {self.who(self.winner)} wins")
        text = self.result()
        if self.claimants:
            words = " and ".join(self.who(r) for r in self.claimants)
            text += (f"; this rests on the claim of {words}: a claim about time or absence "
                     "is its claimant's word, which no transcript can prove")
            if self.disputed_by:
                text += f"; disputed by {' and '.join(self.who(r) for r in self.disputed_by)}"
            if self.detail:
                text += f" ({self.detail})"
        if self.audit_complete and self.nothing_hidden:
            return f"{text}; nothing hidden: every message checked as it came, clean"
        if self.audit_complete:
            return f"{text}; audit complete: every commitment opened and checked, clean"
        if self.winner_audited:
            return (f"{text}; proven by the resignation {self.who(self._loser())} signed and "
                    f"the audit of {self.who(self.winner)}: every commitment of the winner "
                    f"opened and checked, clean ({self.who(self._loser())} never opened its "
                    "own)")
        if self.claimants:
            return f"{text}; audit incomplete"
        return f"{text}; audit incomplete: {self.detail}"
