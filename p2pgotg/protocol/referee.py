"""Replaying a saved transcript: the same flow the peers ran, with no secrets.

This is `p2pgotg verify`: anyone holding the file can check every signature, every link
of the hash chain, every opening against its commitment, and every move. The flow is the
game's (its first message, the host's hello, names the game): the caller says how to make
one (`p2pgotg.games.flow_for`), since the kernel knows no game.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from p2pgotg.crypto import equal
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.flow import Flow, other
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.verdict import Verdict


class Finding(enum.IntEnum):
    """verify's exit codes (SPEC 2.8)."""

    CLEAN = 0  # finished, the audit complete and clean: the transcript proves the result
    VIOLATION = 1  # someone broke a rule, proven by a message it signed
    UNREADABLE = 2  # the file is damaged, forged, cut short, or not a transcript
    UNFINISHED = 3  # nothing proven either way yet: the game or its audit is not over
    CLAIMED = 4  # finished, no rule broken, but the result rests on a claim (its word)


@dataclass(frozen=True)
class Report:
    finding: Finding
    verdict: Verdict | None
    flow: Flow | None  # (None: the file held no message)
    problem: str = ""
    torn_tail: bool = False  # the file's last record was cut short (a crash while writing)
    #: The game is not over in the intact records: its owner can resume it (a torn tail
    #: included, which resuming cuts off).
    unfinished: bool = False

    def describe(self) -> str:
        if self.finding is Finding.UNREADABLE:
            return f"cannot verify: {self.problem}"
        if self.verdict is None:
            return f"unfinished game: {self.problem}"
        return self.verdict.describe()


class Referee:
    """Judges a transcript record by record, as a file is read (`verify` streams files
    through it, so memory does not grow with the file: only with the game, which SPEC 2.10
    bounds).

    Only a signed message that itself breaks a rule convicts its signer (exit 1); anything
    that the file's owner could have caused by leaving out, reordering or damaging records
    (a gap in the other side's sequence, an ack naming nothing held, the owner's own secrets
    not opening its commitments) makes the file unreadable (exit 2), never a conviction."""

    def __init__(self, role: str, key: bytes, open_flow: Callable[[bytes], Flow]) -> None:
        self.role = role
        self.key = key
        self._open_flow = open_flow  # the game's flow, from the first message
        self.flow: Flow | None = None
        self.secrets: dict[str, bytes] = {}
        self.messages = 0  # message records read
        self._violation: RuleViolation | None = None
        self._unreadable = ""

    def add(self, record: Record) -> None:
        if record[0] == "secrets":
            self.secrets.update(record[1])
            return
        _, role, data = record
        self.messages += 1
        if self._violation is not None or self._unreadable:
            return  # judged already: the rest of the file is only read, to see it is whole
        if self.flow is None:
            self.flow = self._open_flow(data)
        try:
            self.flow.process(role, data)
        except RuleViolation as v:
            if not v.signed:
                self._unreadable = (f"message {v.index} from the {role}: {v.detail} "
                                    "(the file is damaged, edited or forged)")
            else:
                self._violation = v

    def finish(self, torn_tail: bool = False) -> Report:
        """The verdict, once every record is in. `torn_tail`: the file's last record was cut
        short. That is what a crash while writing leaves; the torn record was never sent
        (a record is written before its message is sent), so it proves nothing about anyone
        and the game can go on from the intact records before it."""
        flow = self.flow
        if self._unreadable:
            return Report(Finding.UNREADABLE, None, flow, self._unreadable, torn_tail)
        if flow is None:
            return Report(Finding.UNFINISHED, None, None, "the file holds no message yet",
                          torn_tail, unfinished=True)
        problem = _owner_consistency(self.role, self.key, self.secrets, flow)
        if problem:
            return Report(Finding.UNREADABLE, None, flow, problem, torn_tail)
        violation = self._violation
        if violation is not None:
            verdict = Verdict(None, other(violation.role), clean=False, audit_complete=False,
                              cheater=violation.role, rule=violation.rule,
                              detail=violation.detail, index=violation.index,
                              seq=violation.seq, first=flow.first, colours=flow.colours())
            return Report(Finding.VIOLATION, verdict, flow, torn_tail=torn_tail)
        conclusion = flow.conclusion()
        if torn_tail:
            before = ("the game is unfinished: resuming it (the same `p2pgotg host` or "
                      "`join` command) cuts the torn record off and plays on"
                      if conclusion is None else
                      f"the records before it show: {conclusion.describe()}")
            return Report(Finding.UNREADABLE, None, flow,
                          "damaged tail: the last record is cut short, as a crash while "
                          "writing leaves it; that record was never sent, so it proves "
                          f"nothing about anyone, and {self.messages} intact messages come "
                          f"before it; {before}", torn_tail, unfinished=conclusion is None)
        if conclusion is None:
            return Report(Finding.UNFINISHED, None, flow,
                          f"the game is in phase {flow.phase.value}", unfinished=True)
        if not conclusion.clean:
            return Report(Finding.VIOLATION, conclusion, flow)
        return Report(Finding.CLAIMED if conclusion.claimants else Finding.CLEAN,
                      conclusion, flow)


def _owner_consistency(role: str, key: bytes, secrets: dict[str, bytes], flow: Flow) -> str:
    """The header's key and the owner's secrets must agree with the signed messages."""
    hello = flow.hellos.get(role)
    if hello is not None and not equal(hello["key"], key):
        return "the header's key is not the key that signed the owner's messages"
    return flow.secrets_problem(role, key, secrets)
