"""Every cheat in SPEC.md's threat table, produced by a dishonest peer and caught; every
claim judged in its claimant's own view; and only positive evidence convicts."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games import replay
from p2pgotg.protocol import Finding, ProtocolError, RemoteProtocolError, RuleViolation, parse
from p2pgotg.protocol.pair import Pair, forge
from p2pgotg.protocol.scenarios import (
    SCENARIOS,
    Scenario,
    bad_signature,
    drop_a_message,
    replay_other_game,
    transcript_bytes,
)

CHEATS = [s for s in SCENARIOS if s.exit_code == 1]
CLAIMED = [s for s in SCENARIOS if s.exit_code == 4]
EDITED = [s for s in SCENARIOS if s.exit_code == 2]
CROSSINGS = [s for s in SCENARIOS if s.exit_code == 0 and s.cheat.startswith(("a ", "res"))]


def _scenario(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


@pytest.mark.parametrize("scenario", CHEATS, ids=lambda s: s.name)
@pytest.mark.parametrize("seed", [1, 2])
def test_each_cheat_is_caught_with_the_rule_named(scenario: Scenario, seed: int) -> None:
    result = scenario.run(seed)
    honest = result.honest
    report = replay(parse(transcript_bytes(result)))
    if result.error is None:  # caught by the audit or a proof: the verdict says
        verdict = honest.flow.conclusion()
        assert verdict is not None and not verdict.clean
        assert verdict.rule == scenario.rule and verdict.cheater == honest.peer_role
    else:
        assert isinstance(result.error, RemoteProtocolError)
        assert result.error.violation.rule == scenario.rule
        assert result.error.violation.signed  # the evidence is signed: proof for anyone
        assert honest.failed is result.error  # the connection is in its error state
        assert scenario.rule is not None and scenario.rule in str(result.error)
    assert report.finding is Finding.VIOLATION
    assert report.verdict is not None and report.verdict.rule == scenario.rule
    assert report.verdict.cheater == (scenario.cheater or honest.peer_role)
    assert report.verdict.winner == honest.role


@pytest.mark.parametrize("scenario", CLAIMED, ids=lambda s: s.name)
def test_a_result_resting_on_a_claim_is_never_a_clean_proven_result(scenario: Scenario
                                                                      ) -> None:
    result = scenario.run(1)
    report = replay(parse(transcript_bytes(result)))
    assert report.finding is Finding.CLAIMED  # exit 4: no rule broken, nothing proven
    assert report.verdict is not None and report.verdict.clean
    assert report.verdict.claimants and not report.verdict.proven
    assert "claimant's word" in report.describe()
    if scenario.winner is not None:
        expected = None if scenario.winner == "draw" else scenario.winner
        assert report.verdict.winner == expected
    if scenario.termination is not None:
        assert report.verdict.termination is not None
        assert report.verdict.termination.value == scenario.termination


def test_a_disputed_claim_says_so() -> None:
    report = replay(parse(transcript_bytes(_scenario("disputed-time-claim").run(1))))
    assert report.verdict is not None and report.verdict.disputed_by
    assert "disputed by" in report.describe()


@pytest.mark.parametrize("scenario", EDITED, ids=lambda s: s.name)
def test_what_a_file_owner_can_do_makes_the_file_unreadable_never_a_conviction(
        scenario: Scenario) -> None:
    report = replay(parse(transcript_bytes(scenario.run(1))))
    assert report.finding is Finding.UNREADABLE, report.describe()


@pytest.mark.parametrize("scenario", CROSSINGS, ids=lambda s: s.name)
def test_messages_that_cross_on_the_wire_convict_nobody(scenario: Scenario) -> None:
    result = scenario.run(1)
    report = replay(parse(transcript_bytes(result)))
    assert report.finding is Finding.CLEAN, report.describe()
    assert result.honest.failed is None
    assert report.verdict is not None and report.verdict.termination is not None
    assert report.verdict.termination.value == scenario.termination


def test_the_burst_loser_is_not_the_winner_either() -> None:
    """The instant audit claim: the loser's own order (resignation, audit, claim, then the
    winner's crossing audit) gives the same clean result as the winner's."""
    result = _scenario("instant-audit-claim").run(1)
    winner = result.honest
    flow = winner.flow
    assert flow.audit_claim is None and flow.verdict is not None and flow.verdict.clean
    assert flow.verdict.audit_complete and not flow.verdict.claimants


@pytest.mark.parametrize("make", [bad_signature, replay_other_game, drop_a_message],
                         ids=["bad-signature", "other-game", "sequence-gap"])
def test_input_that_proves_nothing_is_refused_and_the_peer_stays_usable(make) -> None:
    result = make(1)
    assert isinstance(result.error, RemoteProtocolError)
    assert not result.error.violation.signed
    assert result.honest.failed is None  # the driver drops the connection and resumes
    records = result.records if result.records is not None else result.honest.take_records()
    assert all(r[0] != "msg" or r[2] != result.error.evidence for r in records)


def test_a_failed_connection_refuses_further_use() -> None:
    result = _scenario("attacker-lies").run(1)
    with pytest.raises(ProtocolError):
        result.honest.receive(b"anything")
    with pytest.raises(ProtocolError):
        result.honest.resign()


@pytest.mark.parametrize("name", ["stall-on-challenge", "blind-attacker-aborts"])
def test_a_side_that_withholds_its_part_of_a_challenge_loses_on_time(name: str) -> None:
    result = _scenario(name).run(1)
    verdict = result.honest.flow.conclusion()
    assert verdict is not None and verdict.winner == result.honest.role
    assert verdict.termination is not None and verdict.termination.value == "time_forfeit"
    assert verdict.claimants == (result.honest.role,)


def test_an_honest_peer_refuses_to_make_a_claim_its_own_view_contradicts() -> None:
    pair = Pair.new(seed="own-view")
    pair.handshake(rng=random.Random(3))
    mover = pair.host if pair.host.my_turn else pair.joiner
    waiting = pair.peer(mover.peer_role)
    with pytest.raises(ProtocolError, match="no time limit"):
        waiting.claim_forfeit("time")  # the mover owes a move; no clock is set
    with pytest.raises(ProtocolError, match="owed nothing"):
        mover.claim_forfeit("abandoned")  # the claimant is to move: the other owes nothing
    with pytest.raises(ProtocolError, match="before the game was over"):
        mover.claim_forfeit("audit")


def test_the_same_reveal_is_judged_the_same_on_both_sides() -> None:
    """privacy-screen by the reveal's ack: the cheater's own flow, which had the host's
    commitment in hand, judges the reveal as the host does."""
    result = _scenario("reveal-without-ack").run(1)
    assert result.error is not None and result.error.violation.rule == "privacy-screen"
    from p2pgotg.games.gotg.flow import GotgFlow
    from p2pgotg.protocol.envelope import Envelope

    messages = [(r[1], r[2]) for r in result.honest.take_records() if r[0] == "msg"]
    *before, (_, reveal) = messages
    # the joiner's order: the host's commitment in hand, the host's reveal not yet
    cheater_order = GotgFlow()
    for role, data in before:
        if Envelope.decode(data).body().type != "setup_reveal":
            cheater_order.process(role, data)
    assert len(cheater_order.setup_commits) == 2
    with pytest.raises(RuleViolation, match="privacy-screen"):
        cheater_order.process("joiner", reveal)


def test_a_zero_ack_after_a_nonzero_one_is_chain_ack() -> None:
    pair = Pair.new(seed="zero-ack")
    pair.handshake(rng=random.Random(4))
    sender = pair.host if pair.host.my_turn else pair.joiner
    data = forge(sender, "chat", {"text": "hi"}, ack=bytes(32))
    with pytest.raises(RemoteProtocolError, match="chain-ack"):
        pair.peer(sender.peer_role).receive(data)
