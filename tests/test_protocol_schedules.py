"""No honest player is ever convicted, whatever the network does: every schedule of short
scripted games between two honest peers, explored exhaustively (p2pgotg.protocol.schedules),
ends with both sides agreeing and `verify` of both transcripts finding no rule broken."""

from __future__ import annotations

import pytest

from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.protocol.schedules import Explorer, plans

PLANS = plans()


@pytest.mark.slow
@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_every_schedule_of_honest_peers_ends_clean_and_agreed(plan) -> None:
    counts = Explorer(plan).run()
    problems = [f"{f.problem}\n  host:   {' '.join(f.schedule[0])}\n  joiner: "
                f"{' '.join(f.schedule[1])}" for f in counts.failures[:5]]
    assert not problems, "\n".join(problems)
    assert counts.schedules > 0 and counts.interleavings >= counts.schedules
    # the plan reached what it is about: its scripted ending, or its extras, somewhere
    assert counts.results, "no schedule finished"


def test_the_explorer_finds_a_judgment_that_depends_on_the_processing_order(monkeypatch):
    """Judge whether a sender knew of the end by what the receiver had processed, not by
    the sender's ack: the explorer finds honest crossing actions refused as `after-end`."""
    monkeypatch.setattr(GotgFlow, "_knew_end", lambda self, role, ack: self.is_over)
    plan = next(p for p in PLANS if p.name.startswith("blind: a challenge ["))
    counts = Explorer(plan).run()
    assert any("refused a message" in f.problem and "after-end" in f.problem
               for f in counts.failures), [f.problem for f in counts.failures]


def test_the_explorer_finds_two_sides_that_disagree(monkeypatch):
    """Let the receiver's own resignation always win over a crossing one (no draw): the
    two sides then end differently, and the explorer says so."""
    def no_draw(self, role, seq, kind, claim):
        from p2pgotg.protocol.events import MessageIgnored
        return [MessageIgnored(role, self._type)]

    monkeypatch.setattr(GotgFlow, "_draw_of_crossing_ends", no_draw)
    plan = next(p for p in PLANS if p.name.startswith("open: a challenge ["))
    counts = Explorer(plan).run()
    assert any("disagree" in f.problem for f in counts.failures)
