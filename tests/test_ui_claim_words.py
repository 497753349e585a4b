"""The screen's verdict words never call a claimed result proven (SPEC 2.6)."""

from __future__ import annotations

from p2pgotg.protocol.verdict import Verdict
from p2pgotg.rules import Termination
from p2pgotg.ui.words import verdict_words


def test_a_claimed_result_is_told_as_the_claimants_word() -> None:
    claimed = Verdict(Termination.TIME_FORFEIT, "host", clean=True, audit_complete=True,
                      claimants=("host",), disputed_by=("joiner",))
    words = verdict_words(claimed, "joiner", "Ann")
    assert "result stands" not in words
    assert "claim by Ann" in words and "disputed by you" in words


def test_a_proven_result_stands() -> None:
    proven = Verdict(Termination.RESIGNATION, "host", clean=True, audit_complete=True)
    assert verdict_words(proven, "joiner", "Ann").endswith("so the result stands.")
