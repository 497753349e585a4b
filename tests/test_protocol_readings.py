"""One reading of each place in SPEC where two careful implementations could disagree
(the third fair-play review read SPEC as a second team would): each test states the
reading from SPEC's words and drives the state machine with signed messages."""

from __future__ import annotations

import random

import pytest

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol import RemoteProtocolError
from p2pgotg.protocol.pair import Pair, forge
from p2pgotg.protocol.wire import WireError
from p2pgotg.rules import ChallengeMode, Move, Rank, RuleOptions, Termination


def to_play(seed: int = 3, options: RuleOptions | None = None) -> Pair:
    pair = Pair.new(options, seed=f"readings-{seed}")
    pair.handshake(rng=random.Random(seed))
    return pair


def mover_of(pair: Pair) -> GotgPeer:
    return pair.host if pair.host.my_turn else pair.joiner


def refused(receiver: GotgPeer, data: bytes) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as caught:
        receiver.receive(data)
    return caught.value


def a_challenge(pair: Pair, rng: random.Random) -> Move:
    """Random plain moves until the side to move can challenge with a piece that is not
    its flag, against a piece that is not the other side's flag."""
    for _ in range(2000):
        mover = mover_of(pair)
        view = mover.view
        assert view is not None
        other = pair.peer(mover.peer_role)
        for move in view.legal_moves:
            if view.is_challenge(move):
                mine, theirs = view.piece_at(move.from_square), view.piece_at(move.to_square)
                assert mine is not None and theirs is not None
                if mover.own_setup.ranks[mine.pid] is not Rank.FLAG and \
                        other.own_setup.ranks[theirs.pid] is not Rank.FLAG:
                    return move
        mover.move(rng.choice([m for m in view.legal_moves if not view.is_challenge(m)]))
        pair.deliver()
    raise AssertionError("no challenge came")


def test_a_draw_offer_is_true_or_absent_never_false() -> None:
    """SPEC 2.4: `draw` true offers a draw; absent means no offer; `false` is malformed."""
    pair = to_play()
    mover = mover_of(pair)
    view = mover.view
    move = next(m for m in view.legal_moves if not view.is_challenge(m))
    import msgpack

    from p2pgotg.crypto import sign
    from p2pgotg.protocol.envelope import Envelope

    flow, them = mover.flow, pair.peer(mover.peer_role)
    raw = msgpack.packb({"t": "move", "seq": flow.next_seq(mover.role),
                         "prev": flow.last_hash(mover.role),
                         "ack": flow.senders[them.role].hashes[-1], "game": flow.game_id,
                         "ply": view.ply, "from": move.from_square, "to": move.to_square,
                         "draw": False}, use_bin_type=True)
    data = Envelope(raw, sign(mover._key, raw)).encode()
    assert refused(them, data).violation.rule == "malformed-message"


def test_an_open_challenge_with_a_blind_point_is_opening_extra() -> None:
    """SPEC 2.4: a challenge carries exactly its mode's field; the other one is extra."""
    pair = to_play()
    move = a_challenge(pair, random.Random(1))
    mover = mover_of(pair)
    rank = mover.own_setup.ranks[mover.view.piece_at(move.from_square).pid]
    data = forge(mover, "move", {"ply": mover.view.ply, "from": move.from_square,
                                 "to": move.to_square,
                                 "open": [int(rank), mover._own.salts[
                                     mover.view.piece_at(move.from_square).pid]],
                                 "ot_r": bytes(32)})
    assert refused(pair.peer(mover.peer_role), data).violation.rule == "opening-extra"


def test_a_host_hello_with_a_coin_breaks_hello_fields() -> None:
    pair = Pair.new(seed="readings-hello")
    pair.host.start()
    (hello,) = pair.host.data_to_send()
    from p2pgotg.protocol.envelope import Envelope

    fields = dict(Envelope.decode(hello).body().fields)
    fields["coin"] = bytes(32)
    fresh = Pair.new(seed="readings-hello")
    data = forge(fresh.host, "hello", fields)
    assert refused(fresh.joiner, data).violation.rule == "hello-fields"


@pytest.mark.parametrize("type_, fields", [("draw_accept", {}),
                                           ("claim_flag", {"claim": [0, 0, bytes(32)]})])
def test_no_one_is_to_move_while_a_challenge_waits(type_, fields) -> None:
    """SPEC 2.4: while a challenge waits for its answer, a draw accept (the defender had
    been offered a draw with the challenge) and a flag claim are out-of-turn."""
    pair = to_play(5)
    move = a_challenge(pair, random.Random(5))
    attacker = mover_of(pair)
    defender = pair.peer(attacker.peer_role)
    attacker.move(move, offer_draw=True)
    (challenge,) = attacker.data_to_send()
    defender.flow.process(attacker.role, challenge)  # (held: its reply is not made)
    error = refused(attacker, forge(defender, type_, fields))
    assert error.violation.rule == "out-of-turn"
    assert "challenge waits" in error.violation.detail


def test_the_side_that_offered_a_draw_cannot_accept_it_out_of_turn_first() -> None:
    """SPEC 2.4: `draw_accept` from the side not to move is `out-of-turn` (checked before
    `no-draw-offer`)."""
    pair = to_play()
    mover = mover_of(pair)
    view = mover.view
    mover.move(next(m for m in view.legal_moves if not view.is_challenge(m)), offer_draw=True)
    pair.deliver()
    data = forge(mover, "draw_accept", {})
    assert refused(pair.peer(mover.peer_role), data).violation.rule == "out-of-turn"


def test_a_challenge_in_flight_at_a_resignation_decides_nothing_even_on_a_flag() -> None:
    """SPEC 2.4: the attacker's challenge on the defender's Flag crosses the defender's
    resignation; nobody answered it, so the resignation is the result on both sides, and
    the audit still replays the challenge (here it is honest: clean)."""
    pair, takes = _a_flag_within_reach()
    mover = mover_of(pair)
    other = pair.peer(mover.peer_role)
    mover.move(takes[0])
    challenge = mover.data_to_send()
    other.resign()
    resignation = other.data_to_send()
    for data in challenge:
        other.receive(data)
    for data in resignation:
        mover.receive(data)
    pair.deliver()
    for peer in (pair.host, pair.joiner):
        verdict = peer.flow.conclusion()
        assert verdict is not None and verdict.clean and verdict.audit_complete
        assert (verdict.termination, verdict.winner) == (Termination.RESIGNATION, mover.role)


def _a_flag_within_reach() -> tuple[Pair, list[Move]]:
    """Random plain moves until the side to move can challenge the other side's Flag."""
    rng = random.Random(11)
    for seed in range(20):
        pair = to_play(seed)
        for _ in range(300):
            mover = mover_of(pair)
            view, other = mover.view, pair.peer(mover.peer_role)
            takes = [m for m in view.legal_moves if view.is_challenge(m)
                     and other.own_setup.ranks[view.piece_at(m.to_square).pid] is Rank.FLAG]
            if takes:
                return pair, takes
            plain = [m for m in view.legal_moves if not view.is_challenge(m)]
            if not plain:
                break
            mover.move(rng.choice(plain))
            pair.deliver()
    raise AssertionError("no flag came within reach")


def test_a_claim_outranked_by_a_crossing_resignation_is_still_disputable() -> None:
    """SPEC 2.4 dispute: a claim may be disputed whether or not it took effect. The side to
    move resigns while the other's time claim is on its way (the resignation decides), then
    disputes the claim: no violation on either side."""
    pair = to_play(2, RuleOptions(move_seconds=60))
    mover = mover_of(pair)
    claimant = pair.peer(mover.peer_role)
    claimant.claim_forfeit("time")
    claim = claimant.data_to_send()
    mover.resign()
    resignation = mover.data_to_send()
    for data in claim:
        mover.receive(data)
    for data in resignation:
        claimant.receive(data)
    pair.deliver()
    seq = max(mover.flow.claims_made[claimant.role])
    assert seq not in mover.flow.claims[claimant.role]  # (it took no effect at the mover)
    mover.dispute(seq)
    pair.deliver()
    for peer in (pair.host, pair.joiner):
        verdict = peer.flow.conclusion()
        assert verdict is not None and verdict.clean and not verdict.claimants
        assert (verdict.termination, verdict.winner) == (Termination.RESIGNATION,
                                                         claimant.role)


def test_blind_mode_refuses_an_open_opening_on_a_challenge() -> None:
    pair = to_play(4, RuleOptions(challenge_mode=ChallengeMode.BLIND))
    move = a_challenge(pair, random.Random(4))
    mover = mover_of(pair)
    pid = mover.view.piece_at(move.from_square).pid
    data = forge(mover, "move", {"ply": mover.view.ply, "from": move.from_square,
                                 "to": move.to_square,
                                 "open": [int(mover.own_setup.ranks[pid]), mover._own.salts[pid]]})
    assert refused(pair.peer(mover.peer_role), data).violation.rule == "opening-extra"


def test_a_body_need_not_be_canonical_msgpack() -> None:
    """SPEC 2.1: keys in any order and integers in wider forms are valid; the signature
    covers the bytes as sent."""
    import msgpack

    pair = to_play()
    mover = mover_of(pair)
    view = mover.view
    move = next(m for m in view.legal_moves if not view.is_challenge(m))
    from p2pgotg.protocol.envelope import Envelope
    from p2pgotg.protocol.messages import Body

    honest = Body("move", mover.flow.next_seq(mover.role), mover.flow.last_hash(mover.role),
                  pair.peer(mover.peer_role).flow.senders[mover.peer_role].hashes[-1],
                  mover.flow.game_id, {"ply": view.ply, "from": move.from_square,
                                       "to": move.to_square})
    raw = msgpack.unpackb(honest.encode(), raw=False)
    packer = msgpack.Packer(use_bin_type=True)
    items = sorted(raw.items(), reverse=True)  # another key order
    odd = packer.pack_map_header(len(items)) + b"".join(
        packer.pack(k) + (b"\xcd" + v.to_bytes(2, "big") if isinstance(v, int) else
                          packer.pack(v)) for k, v in items)  # u16 for small ints
    assert odd != honest.encode() and Body.decode(odd) == Body.decode(honest.encode())
    from p2pgotg.crypto import sign

    envelope = Envelope(odd, sign(mover._key, odd)).encode()
    pair.peer(mover.peer_role).receive(envelope)  # accepted


def test_a_chat_of_an_emoji_sequence_is_valid_and_an_escape_is_not() -> None:
    from p2pgotg.protocol.messages import Body

    Body("chat", 3, bytes(32), bytes(32), bytes(32), {"text": "\U0001f468\u200d\U0001f469"})
    with pytest.raises(WireError):
        Body("chat", 3, bytes(32), bytes(32), bytes(32), {"text": "\x1b[2J"})
