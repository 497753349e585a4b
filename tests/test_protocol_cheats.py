"""Every cheat in SPEC.md's threat table, produced by a dishonest peer and caught."""

from __future__ import annotations

import pytest

from p2pgotg.protocol import Finding, RemoteProtocolError, parse, replay
from p2pgotg.protocol.scenarios import SCENARIOS, bad_signature
from p2pgotg.protocol.transcript import encode_header, encode_record

CHEATS = [s for s in SCENARIOS if s.rule is not None]


@pytest.mark.parametrize("scenario", CHEATS, ids=lambda s: s.name)
@pytest.mark.parametrize("seed", [1, 2])
def test_each_cheat_is_caught_with_the_rule_named(scenario, seed) -> None:
    result = scenario.run(seed)
    honest = result.honest
    data = encode_header(honest.role, honest.public_key) + b"".join(
        encode_record(r) for r in honest.take_records())
    report = replay(parse(data))
    if result.error is None:  # caught by the audit, a proof, or a claim: the verdict says
        verdict = honest.flow.conclusion()
        assert verdict is not None and not verdict.clean
        assert verdict.rule == scenario.rule and verdict.cheater == honest.peer_role
    else:
        assert isinstance(result.error, RemoteProtocolError)
        assert result.error.violation.rule == scenario.rule
        assert result.error.violation.signed  # the evidence is signed: proof for anyone
        assert honest.failed is result.error  # the connection is in its error state
        assert scenario.rule in str(result.error)
    assert report.finding is Finding.VIOLATION
    assert report.verdict is not None and report.verdict.rule == scenario.rule
    cheater = report.verdict.cheater
    assert cheater == honest.peer_role
    assert report.verdict.winner == honest.role


def test_a_message_signed_by_another_key_is_refused_and_not_kept() -> None:
    result = bad_signature(1)
    assert isinstance(result.error, RemoteProtocolError)
    assert result.error.violation.rule == "bad-signature"
    assert not result.error.violation.signed
    records = result.honest.take_records()
    assert all(r[0] != "msg" or r[2] != result.error.evidence for r in records)


def test_a_failed_connection_refuses_further_use() -> None:
    from p2pgotg.protocol import ProtocolError
    result = SCENARIOS[[s.name for s in SCENARIOS].index("attacker-lies")].run(1)
    with pytest.raises(ProtocolError):
        result.honest.receive(b"anything")
    with pytest.raises(ProtocolError):
        result.honest.resign()


@pytest.mark.parametrize("name", ["stall-on-challenge", "blind-attacker-aborts"])
def test_a_side_that_withholds_its_part_of_a_challenge_loses_on_time(name: str) -> None:
    scenario = SCENARIOS[[s.name for s in SCENARIOS].index(name)]
    result = scenario.run(1)
    verdict = result.honest.flow.conclusion()
    assert verdict is not None and verdict.winner == result.honest.role
    assert verdict.termination is not None and verdict.termination.value == "time_forfeit"
