"""No honest player is convicted and both files of a game give one verdict, whatever either
side does and whatever the network does: random walks over every honest action
(protocol.walks), and proof that the walks find the bugs they are for."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from p2pgotg.games.gotg.flow import TURN_ACTIONS, GotgFlow
from protocol.walks import Walk, WalkFailure, walk, walk_options

#: The quick version's budget: the walks the suite runs (seeds 0 to QUICK - 1).
QUICK = 300


@pytest.mark.slow
def test_random_walks_of_honest_peers_end_clean_with_one_verdict() -> None:
    counts = walk(range(QUICK))
    assert not counts.failures, "\n".join(f.describe() for f in counts.failures[:3])
    assert counts.walks == QUICK and len(counts.end_states) > QUICK * 0.9
    # the walks reach what they are for: crossings of every kind of step, every ending
    for kind in ("deliver", "decide", "chat", "resign", "claim", "dispute", "drop", "crash"):
        assert counts.seen.get(kind, 0) > 10, kind
    endings = " ".join(counts.results)
    for how in ("resignation", "flag_captured", "draw_agreed", "time_forfeit", "abandonment",
                "(claimed)"):
        assert how in endings, how


#: The Towers walks the suite runs (its games are longer in messages).
TOWERS_QUICK = 200


@pytest.mark.slow
def test_random_walks_of_honest_towers_players_end_clean_with_one_verdict() -> None:
    """The same promise for Towers (SPEC 4.11): every honest action of both players and the
    network, both variants, with and without a clock."""
    counts = walk(range(TOWERS_QUICK), game="towers")
    assert not counts.failures, "\n".join(f.describe() for f in counts.failures[:3])
    assert len(counts.end_states) > TOWERS_QUICK * 0.9
    for kind in ("deliver", "decide", "chat", "resign", "claim", "dispute", "drop", "crash"):
        assert counts.seen.get(kind, 0) > 10, kind
    endings = " ".join(counts.results)
    for how in ("resignation", "all_flags_planted", "draw_agreed", "time_forfeit",
                "abandonment"):
        assert how in endings, how


def test_a_walk_is_reproducible_from_its_seed() -> None:
    first, second = Walk(42, walk_options(42)), Walk(42, walk_options(42))
    assert first.run() == second.run() and first.steps == second.steps


def _rolled_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous version's rule: a turn action that crossed the end is judged, then
    taken back unless it decides the end, so the sender's next crossing action meets a
    board without it."""
    for type_ in TURN_ACTIONS:
        handler = GotgFlow.MESSAGES[type_]

        def judged_then_taken_back(self, role, body, ack, fail, handler=handler):
            if not self.is_over:
                return handler(self, role, body, ack, fail)
            saved = {name: copy.deepcopy(getattr(self, name)) for name in
                     ("game", "pending", "draw_offer", "blind_log", "used_points")}
            result = self.result
            events = handler(self, role, body, ack, fail)
            if self.result == result:
                for name, value in saved.items():
                    setattr(self, name, value)
            return events

        monkeypatch.setitem(GotgFlow.MESSAGES, type_, judged_then_taken_back)


@pytest.mark.slow
def test_the_walks_find_an_honest_defender_convicted_after_a_crossing_end(monkeypatch):
    """The critical finding of the third fair-play review: the attacker resigns (or claims)
    while its challenge waits for the reply; the defender's reply and next move both cross
    it; with the crossing reply taken back, the honest defender's move is convicted
    `out-of-turn` on the other side's file. The quick budget finds it."""
    _rolled_back(monkeypatch)
    counts = walk(range(QUICK))
    found = [f for f in counts.failures if "out-of-turn" in f.problem
             and "while a challenge waits for its reply" in f.problem]
    assert found, [f.problem for f in counts.failures]


@pytest.mark.slow
def test_the_walks_find_two_files_with_two_verdicts(monkeypatch):
    """Let the receiver's own resignation or claim always stand over a crossing one (no
    draw): one game's two files then give two verdicts, and the walks say so."""
    from p2pgotg.protocol.events import MessageIgnored

    def first_arrival_stands(self, role, seq, kind, claim):
        return [MessageIgnored(role, self._type)]

    monkeypatch.setattr(GotgFlow, "_draw_of_crossing_ends", first_arrival_stands)
    counts = walk(range(QUICK))
    assert any(isinstance(f, WalkFailure) and "two verdicts" in f.problem
               for f in counts.failures), [f.problem for f in counts.failures]


def test_both_explorers_end_with_their_tallies(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m protocol.walks` and `python -m protocol.table_walks` print one summary:
    how many walks, how often each kind of step ran, how the games ended; exit 0 when
    nothing failed."""
    from protocol import table_walks, walks

    for explorer, a_step in ((walks, "deliver"), (table_walks, "up")):
        assert explorer.main(["--walks", "3"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("3 walks (") and "0 failures" in lines[0], lines
        assert lines[1].startswith("steps: ") and f" {a_step} " in lines[1], lines
        assert lines[2].startswith("results: ") and lines[2] != "results: ", lines


def test_an_explorer_shows_the_first_five_failures_and_exits_1(
        capsys: pytest.CaptureFixture[str]) -> None:
    from protocol.walks import WalkCounts, explore

    class Failing:
        """A walk that fails at its one step."""

        def __init__(self, seed: int) -> None:
            self.seed, self.steps, self.seen = seed, ["a step"], {"step": 1}

        def run(self) -> WalkFailure:
            return WalkFailure(self.seed, None, f"problem {self.seed}", self.steps)

    def failing(show: Callable[[WalkFailure], None]) -> WalkCounts:
        counts = WalkCounts()
        for seed in range(7):
            counts.take(Failing(seed), show)
        return counts

    assert explore(failing) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("FAIL")] == [
        f"FAIL walk {seed} (): problem {seed}" for seed in range(5)]
    assert "7 walks (7 steps" in out and "7 failures" in out
