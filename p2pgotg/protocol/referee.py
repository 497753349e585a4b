"""Replaying a saved transcript: the same `GameFlow` the peers ran, with no secrets.

This is `p2pgotg verify`: anyone holding the file can check every signature, every link
of the hash chain, every opening against its commitment, and every move.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2pgotg.crypto import coin_commitment, equal, piece_commitment, seed_commitment
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.flow import GameFlow, other
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.protocol.verdict import Verdict


class Finding(enum.IntEnum):
    """verify's exit codes."""

    CLEAN = 0  # finished and clean
    VIOLATION = 1  # someone broke a rule, proven by their signature
    UNREADABLE = 2  # the file is damaged, forged or not a transcript
    UNFINISHED = 3  # nothing proven either way yet: the game or its audit is not over


@dataclass(frozen=True)
class Report:
    finding: Finding
    verdict: Verdict | None
    flow: GameFlow
    problem: str = ""

    def describe(self) -> str:
        if self.finding is Finding.UNREADABLE:
            return f"cannot verify: {self.problem}"
        if self.verdict is None:
            return f"unfinished game: {self.problem}"
        return self.verdict.describe()


def replay(transcript: Transcript) -> Report:
    flow = GameFlow()
    for role, data in transcript.messages:
        try:
            flow.process(role, data)
        except RuleViolation as v:
            if not v.signed:
                return Report(Finding.UNREADABLE, None, flow,
                              f"message {v.index} from the {role}: {v.detail} "
                              "(the file is damaged or forged)")
            verdict = Verdict(None, other(v.role), clean=False, audit_complete=False,
                              cheater=v.role, rule=v.rule, detail=v.detail, index=v.index)
            return Report(Finding.VIOLATION, verdict, flow)
    problem = _owner_consistency(transcript, flow)
    if problem:
        return Report(Finding.UNREADABLE, None, flow, problem)
    if transcript.torn_tail:
        return Report(Finding.UNREADABLE, None, flow, "the last record is cut short")
    conclusion = flow.conclusion()
    if conclusion is None:
        return Report(Finding.UNFINISHED, None, flow, f"the game is in phase {flow.phase.value}")
    return Report(Finding.CLEAN if conclusion.clean else Finding.VIOLATION, conclusion, flow)


def _owner_consistency(transcript: Transcript, flow: GameFlow) -> str:
    """The header's key and the owner's secrets must agree with the signed messages."""
    role = transcript.role
    hello = flow.hellos.get(role)
    if hello is not None and not equal(hello["key"], transcript.key):
        return "the header's key is not the key that signed the owner's messages"
    secrets = transcript.secrets
    joiner_hello = flow.hellos.get("joiner")
    if "coin" in secrets and role == "joiner" and joiner_hello is not None:
        assert flow.game_id is not None
        if not equal(coin_commitment(flow.game_id, transcript.key, secrets["coin"]),
                     joiner_hello["coin"]):
            return "the saved coin secret does not open the joiner's coin commitment"
    reveal = flow.reveals.get(role)
    if reveal is not None and "ranks" in secrets and flow.game_id is not None:
        if tuple(secrets["squares"]) != reveal.squares:
            return "the saved setup squares differ from the revealed ones"
        for pid in range(21):
            salt = secrets["salts"][pid * 32:(pid + 1) * 32]
            rank = secrets["ranks"][pid]
            if rank > 14 or not equal(
                piece_commitment(flow.game_id, transcript.key, pid, rank, salt),
                reveal.commits[pid],
            ):
                return f"the saved secret of piece {pid} does not open its commitment"
        if not equal(seed_commitment(flow.game_id, transcript.key, secrets["seed"]),
                     reveal.seed_commit):
            return "the saved seed does not open its commitment"
    return ""
