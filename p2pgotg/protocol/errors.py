"""Protocol errors, h11 style: who broke the rules decides the class.

`LocalProtocolError`: we tried something the protocol forbids (nothing is sent, nothing
changes). `RemoteProtocolError`: the peer did; the connection moves to its error state and
keeps the evidence (the peer's signed bytes, when the signature was good).
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base class of protocol errors; `str(err)` is the user-facing message."""


class LocalProtocolError(ProtocolError):
    """We asked for something the protocol or the rules do not allow now."""


class RuleViolation(ProtocolError):
    """A message that breaks a rule of the protocol or the game.

    `role` is who sent it, `rule` names the rule (a short identifier listed in SPEC.md),
    `index` is the message's position in the transcript, `signed` says whether the sender's
    signature on it was good (only then is it proof that anyone can check).
    """

    def __init__(self, role: str, rule: str, detail: str, index: int | None, signed: bool):
        self.role, self.rule, self.detail, self.index, self.signed = (
            role, rule, detail, index, signed,
        )
        where = f" at message {index}" if index is not None else ""
        super().__init__(f"{role} broke rule {rule}{where}: {detail}")


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol. `violation` says how; `evidence` is its message bytes."""

    def __init__(self, violation: RuleViolation, evidence: bytes):
        self.violation = violation
        self.evidence = evidence
        super().__init__(str(violation))
