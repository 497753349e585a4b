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
    `index` is the message's position in this transcript, `seq` its sequence number in its
    sender's chain (the same in every file of the game; None when it could not be read),
    `signed` says whether the sender's signature on it was good (only then is it proof
    that anyone can check).
    """

    def __init__(self, role: str, rule: str, detail: str, index: int | None, signed: bool,
                 seq: int | None = None):
        self.role, self.rule, self.detail, self.index, self.signed, self.seq = (
            role, rule, detail, index, signed, seq,
        )
        super().__init__(f"{role} broke rule {rule}{where_words(seq, index)}: {detail}")


def where_words(seq: int | None, index: int | None) -> str:
    """" in its message 17 (message 35 of this file)": the sender's own numbering first,
    which every file of the game shares, then the place in this file."""
    if seq is None:
        return "" if index is None else f" at message {index} of this file"
    here = "" if index is None else f" (message {index} of this file)"
    return f" in its message {seq}{here}"


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol. `violation` says how; `evidence` is its message bytes."""

    def __init__(self, violation: RuleViolation, evidence: bytes):
        self.violation = violation
        self.evidence = evidence
        super().__init__(str(violation))
