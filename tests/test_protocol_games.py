"""Whole games between two back-to-back peers: honest play ends in a clean, agreed audit."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games import replay
from p2pgotg.games.gotg.events import MovePlayed
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol import HOST, JOINER, Phase, parse
from p2pgotg.protocol.events import AuditCompleted, GameEnded
from p2pgotg.protocol.pair import Pair
from p2pgotg.protocol.transcript import encode_header, encode_record
from p2pgotg.rules import ChallengeMode, FlagRule, RuleOptions, Termination

OPTION_SETS = [
    RuleOptions(),
    RuleOptions(challenge_mode=ChallengeMode.BLIND),
    RuleOptions(two_squares=True, chasing=True),
    RuleOptions(flag_rule=FlagRule.IMMEDIATE),
    RuleOptions(flag_rule=FlagRule.ALWAYS_SURVIVE, two_squares=True),
]


def transcript_bytes(peer: GotgPeer) -> bytes:
    return encode_header(peer.role, peer.public_key) + b"".join(
        encode_record(r) for r in peer.take_records())


@pytest.mark.parametrize("seed", range(10))
def test_random_games_end_in_a_clean_agreed_audit(seed: int) -> None:
    options = OPTION_SETS[seed % len(OPTION_SETS)]
    pair = Pair.new(options, seed=f"games-{seed}")
    pair.handshake(rng=random.Random(seed))
    pair.play_random(random.Random(seed))
    for role in (HOST, JOINER):
        peer = pair.peer(role)
        assert peer.phase is Phase.DONE
        ended = [e for e in pair.events[role] if isinstance(e, GameEnded)]
        audited = [e for e in pair.events[role] if isinstance(e, AuditCompleted)]
        assert len(ended) == 1 and len(audited) == 1
        verdict = audited[0].verdict
        assert verdict.clean and verdict.audit_complete
        assert verdict.termination is ended[0].termination
    assert pair.host.flow.verdict == pair.joiner.flow.verdict
    # each sender's messages are the same, byte for byte, on both sides
    for role in (HOST, JOINER):
        assert pair.host.flow.senders[role].envelopes == pair.joiner.flow.senders[role].envelopes


def test_both_transcripts_verify_clean_with_the_same_verdict() -> None:
    pair = Pair.new(seed="verify-both")
    pair.handshake(rng=random.Random(3))
    pair.play_random(random.Random(3))
    reports = [replay(parse(transcript_bytes(pair.peer(r)))) for r in (HOST, JOINER)]
    assert [int(r.finding) for r in reports] == [0, 0]
    assert reports[0].verdict == reports[1].verdict == pair.host.flow.verdict


def test_open_challenge_declares_both_ranks_to_both_sides() -> None:
    pair = Pair.new(seed="declare")
    pair.handshake(rng=random.Random(5))
    pair.play_random(random.Random(5))
    challenges = [e for e in pair.events[HOST] if isinstance(e, MovePlayed)
                  and e.record.result is not None]
    assert challenges, "a random game has challenges"
    joiner_view = [e for e in pair.events[JOINER] if isinstance(e, MovePlayed)
                   and e.record.result is not None]
    for a, b in zip(challenges, joiner_view, strict=True):
        assert a.attacker_rank is not None and a.defender_rank is not None
        assert (a.attacker_rank, a.defender_rank, a.record) == (
            b.attacker_rank, b.defender_rank, b.record)


def test_draw_offer_accept_and_decline() -> None:
    pair = Pair.new(seed="draw")
    pair.handshake(rng=random.Random(1))
    rng = random.Random(1)
    mover = pair.host if pair.host.my_turn else pair.joiner
    mover.move(rng.choice([m for m in mover.view.legal_moves]), offer_draw=True)
    pair.deliver()
    other = pair.peer(mover.peer_role)
    assert other.draw_offered_to_me and not mover.draw_offered_to_me
    other.decline_draw()
    pair.deliver()
    assert not other.draw_offered_to_me and other.my_turn
    other.move(rng.choice(other.view.legal_moves), offer_draw=True)
    pair.deliver()
    mover.accept_draw()
    pair.deliver()
    verdict = pair.host.flow.verdict
    assert verdict is not None and verdict.clean and verdict.winner is None
    assert verdict.termination is Termination.DRAW_AGREED


def test_moving_declines_a_draw_offer_implicitly() -> None:
    pair = Pair.new(seed="draw2")
    pair.handshake(rng=random.Random(2))
    rng = random.Random(2)
    mover = pair.host if pair.host.my_turn else pair.joiner
    mover.move(rng.choice(mover.view.legal_moves), offer_draw=True)
    pair.deliver()
    other = pair.peer(mover.peer_role)
    other.move(rng.choice(other.view.legal_moves))
    pair.deliver()
    assert not other.draw_offered_to_me
    from p2pgotg.protocol import LocalProtocolError
    with pytest.raises(LocalProtocolError):
        mover.accept_draw()


def test_chat_and_resignation_out_of_turn() -> None:
    pair = Pair.new(seed="chat")
    pair.handshake(rng=random.Random(4))
    waiting = pair.joiner if pair.host.my_turn else pair.host
    waiting.chat("good luck\x07 and have fun")
    pair.deliver()
    from p2pgotg.protocol.events import ChatReceived
    chats = [e for e in pair.events[waiting.peer_role] if isinstance(e, ChatReceived)]
    assert chats[-1].text == "good luck and have fun"
    waiting.resign()  # a player may resign while the opponent thinks
    pair.deliver()
    verdict = pair.host.flow.verdict
    assert verdict is not None and verdict.winner == waiting.peer_role
    assert verdict.termination is Termination.RESIGNATION


def test_a_restored_peer_finishes_the_game() -> None:
    pair = Pair.new(seed="restore")
    pair.handshake(rng=random.Random(8))
    rng = random.Random(8)
    saved: list = list(pair.host.take_records())
    for _ in range(40):
        mover = pair.host if pair.host.my_turn else pair.joiner
        mover.move(rng.choice(mover.view.legal_moves))
        pair.deliver()
        saved += pair.host.take_records()
        if pair.host.flow.is_over:
            break
    restored = GotgPeer.restore(HOST, pair.host._key, pair.host._tls, saved,
                            pair.host.options)
    assert restored.view is not None and restored.view.ascii() == pair.host.view.ascii()
    assert restored.own_setup == pair.host.own_setup
    assert restored.received_count() == pair.host.received_count()
    pair.host = restored
    pair.play_random(rng)
    assert pair.host.flow.verdict == pair.joiner.flow.verdict
    assert pair.host.flow.verdict is not None and pair.host.flow.verdict.clean


def test_a_resent_message_is_applied_once() -> None:
    pair = Pair.new(seed="resend")
    pair.handshake(rng=random.Random(9))
    mover = pair.host if pair.host.my_turn else pair.joiner
    mover.move(mover.view.legal_moves[0])
    (data,) = mover.data_to_send()
    other = pair.peer(mover.peer_role)
    first = other.receive(data)
    ply = other.view.ply
    assert other.receive(data) == []  # a reconnect resent it: nothing happens twice
    assert other.view.ply == ply and first
    assert mover.messages_since(mover.flow.next_seq(mover.role) - 1) == [data]


def test_a_blind_challenge_tells_each_side_only_the_outcome() -> None:
    from p2pgotg.games.gotg.events import ChallengeStarted

    pair = Pair.new(RuleOptions(challenge_mode=ChallengeMode.BLIND), seed="blind-view")
    pair.handshake(rng=random.Random(6))
    pair.play_random(random.Random(6))
    challenges = [e for e in pair.events[HOST] if isinstance(e, MovePlayed)
                  and e.record.result is not None]
    assert challenges
    assert all(e.attacker_rank is None and e.defender_rank is None for e in challenges)
    started = [e for e in pair.events[JOINER] if isinstance(e, ChallengeStarted)]
    assert started and all(e.attacker_rank is None for e in started)
    # neither view learned an opponent rank from a challenge (a flag claim would be the
    # only way during play, and this game ends by capture)
    assert pair.host.flow.result[0] is Termination.FLAG_CAPTURED
    for peer in (pair.host, pair.joiner):
        view = peer.view
        opponent = peer.side.other
        pieces = [p for p in view.known_ranks() if p.side is opponent]
        assert pieces == []
        assert len(peer.flow.blind_log) == len(challenges)
    verdict = pair.host.flow.verdict
    assert verdict is not None and verdict.clean and verdict.audit_complete
