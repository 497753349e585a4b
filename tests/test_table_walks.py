"""No honest seat of a table is convicted, every seat ends with one game and every file (and
all of them together) gives one verdict, whatever the seats, the relay and the network do:
random walks of tables of three and four (protocol.table_walks, SPEC chapter 5), and proof
that the walks find the bugs they are for."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table import TableSeat
from p2pgotg.protocol.table.flow import TableFlow
from p2pgotg.protocol.table.replay import Replay
from protocol.table_walks import TableWalk, walk

#: The walks the suite runs (seeds 0 to QUICK - 1; three and four seats by turns).
QUICK = 150


@pytest.mark.slow
def test_random_walks_of_honest_tables_end_with_one_game_and_one_verdict() -> None:
    counts = walk(range(QUICK), plies=400)
    assert not counts.failures, "\n".join(f.describe() for f in counts.failures[:3])
    assert counts.walks == QUICK and len(counts.end_states) > QUICK * 0.9
    # the walks reach what they are for: every kind of step, claims crossing the actions
    # they void (SPEC 5.7), and endings by the rules, by resignations and by claims
    for kind in ("up", "down", "act", "chat", "whisper", "resign", "claim", "dispute",
                 "drop", "reconnect", "crash", "void"):
        assert counts.seen.get(kind, 0) > 10, kind
    endings = " ".join(counts.results)
    for how in ("placed all its flags", "resignation", "abandonment", "claimed", "clean",
                "3 seats", "4 seats"):
        assert how in endings, how


def test_a_table_walk_is_reproducible_from_its_seed() -> None:
    first, second = TableWalk(7, 3), TableWalk(7, 3)
    assert first.run() == second.run() and first.steps == second.steps


def _lacking_before_the_roster_only(self: TableSeat, have: Sequence[int]) -> list[bytes]:
    """An earlier `lacking`: a joiner's hello the host took before its roster was resent
    only while the roster was not made, so a joiner that missed another's hello on a
    dropped connection could never take the roster (SPEC 5.4: it gets "exactly what it
    missed")."""
    out = []
    for seat, data in self.flow.accepted:
        if seat < 0:
            if not self.flow.rostered:
                out.append(data)
            continue
        taken = self.flow.by_hash.get(Envelope.decode(data).hash)
        if taken is None or taken.seq >= (have[seat] if seat < len(have) else 0):
            out.append(data)
    return out


def test_the_walks_find_a_joiner_that_never_gets_the_hellos_it_missed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TableSeat, "lacking", _lacking_before_the_roster_only)
    counts = walk(range(40), plies=400)
    assert any("game is not over (phase hellos" in f.problem for f in counts.failures)


def test_the_walks_find_claims_judged_in_the_receivers_view(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC 5.7: a claim is checked in its claimant's view. Judged in what the receiver
    holds instead, an honest claim that crossed the claimed seat's action convicts its
    claimant."""
    owes = TableFlow.owes

    def owes_as_received(self: TableFlow, seat: int, view: tuple[int, ...],
                         state: Replay) -> str | None:
        return owes(self, seat, self.view_of_all(), self.state or state)

    monkeypatch.setattr(TableFlow, "owes", owes_as_received)
    counts = walk(range(100, 140), plies=400)
    assert any("false-claim" in f.problem for f in counts.failures)
