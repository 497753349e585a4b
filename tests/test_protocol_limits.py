"""The limits of SPEC 2.10 (issue 13, finding 3: 25,000 signed chat lines grew a host by
46 MiB and its transcript by 13.2 MB, and nothing cut them): chat size, chat lines in a row,
messages per game. Expected values come from SPEC 2.10's table; the sender's own signed
message over a limit convicts it, and our own side never sends one."""

from __future__ import annotations

import random

import pytest

from p2pgotg.cli import main
from p2pgotg.crypto import sign
from p2pgotg.protocol import LocalProtocolError, RemoteProtocolError
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.events import ChatReceived
from p2pgotg.protocol.transcript import encode_record
from p2pgotg.protocol.wire import pack
from p2pgotg.testing.forging import forge
from p2pgotg.testing.pair import Pair
from protocol.scenarios import Result as ScenarioResult
from protocol.scenarios import (
    _shuffle,
    chat_flood,
    limit_filling_pair,
    transcript_bytes,
)


def _raw_chat(peer, text: str) -> bytes:
    """A chat signed by `peer` with any text at all (`Body` refuses to build one that is
    too long: a hostile peer packs its own bytes)."""
    flow = peer.flow
    theirs = flow.senders[peer.other_role].hashes
    body = pack({"t": "chat", "seq": flow.next_seq(peer.role), "prev": flow.last_hash(peer.role),
                 "ack": theirs[-1] if theirs else bytes(32), "game": flow.game_id,
                 "text": text})
    return Envelope(body, sign(peer._key, body)).encode()


def _in_play(seed: str) -> Pair:
    pair = Pair.new(seed=seed)
    pair.handshake(rng=random.Random(3))
    return pair


def test_ten_chat_lines_in_a_row_are_taken_and_a_move_starts_a_new_count() -> None:
    pair = _in_play("limits-ten")
    waiting = pair.joiner if pair.host.my_turn else pair.host
    mover = pair.peer(waiting.other_role)
    last: dict = {}
    for round_ in range(3):
        for i in range(10):  # SPEC 2.10: at most 10 in a row
            waiting.chat(f"round {round_} line {i}")
        pair.deliver()
        mover.move(_shuffle(mover, last))
        pair.deliver()
        waiting.move(_shuffle(waiting, last))
        pair.deliver()
    chats = [e for e in pair.events[mover.role] if isinstance(e, ChatReceived)]
    assert len(chats) == 30
    assert mover.failed is None and waiting.failed is None


def test_an_eleventh_chat_line_in_a_row_convicts_its_sender(tmp_path, capsys) -> None:
    result = chat_flood(1)
    assert result.error is not None
    assert result.error.violation.rule == "chat-limit"
    cheater = result.error.violation.role
    path = tmp_path / "flood.gtr"
    path.write_bytes(transcript_bytes(result))
    assert main(["verify", str(path)]) == 1
    assert f"{cheater}) broke rule chat-limit" in capsys.readouterr().out


def test_our_side_refuses_an_eleventh_chat_line_and_sends_nothing() -> None:
    pair = _in_play("limits-refuse")
    waiting = pair.joiner if pair.host.my_turn else pair.host
    for i in range(10):
        waiting.chat(f"line {i}")
    pair.deliver()
    seq = waiting.flow.next_seq(waiting.role)
    with pytest.raises(LocalProtocolError, match="chat not sent: 10 chat lines in a row"):
        waiting.chat("one more")
    assert waiting.data_to_send() == [] and waiting.flow.next_seq(waiting.role) == seq
    assert waiting.failed is None  # refused, not broken: the game goes on


def test_a_chat_line_over_280_characters_is_refused_here_and_convicts_there() -> None:
    pair = _in_play("limits-size")
    waiting = pair.joiner if pair.host.my_turn else pair.host
    waiting.chat("x" * 280)  # the most a line holds
    with pytest.raises(LocalProtocolError, match=r"281 characters.*at most 280"):
        waiting.chat("x" * 281)
    pair.deliver()
    receiver = pair.peer(waiting.other_role)
    with pytest.raises(RemoteProtocolError) as info:
        receiver.receive(_raw_chat(waiting, "y" * 281))
    assert info.value.violation.rule == "malformed-message" and info.value.violation.signed


@pytest.mark.slow
def test_a_game_at_the_message_limit_is_legal_our_side_sends_no_more_and_message_10000_convicts(
        tmp_path, capsys) -> None:
    pair = limit_filling_pair(1)  # a real game played up to the limit (a few seconds)
    flooder = pair.joiner
    assert flooder.flow.next_seq(flooder.role) == 10_000 and flooder.my_turn
    at_limit = tmp_path / "at-limit.gtr"
    kept = transcript_bytes(ScenarioResult(pair.host, None))  # the host's file so far
    at_limit.write_bytes(kept)
    assert main(["verify", str(at_limit)]) == 3  # unfinished, nothing broken
    capsys.readouterr()
    # our side refuses to go over, and sends nothing
    with pytest.raises(LocalProtocolError, match="limit of 10000 messages"):
        flooder.chat("one more")
    with pytest.raises(LocalProtocolError, match="limit of 10000 messages"):
        flooder.move(flooder.view.legal_moves[0])
    assert flooder.data_to_send() == []
    # a peer that goes over anyway is convicted by its own signed message
    over = forge(flooder, "chat", {"text": "over the limit"})
    with pytest.raises(RemoteProtocolError) as info:
        pair.host.receive(over)
    assert info.value.violation.rule == "message-limit" and info.value.violation.signed
    path = tmp_path / "over-limit.gtr"
    path.write_bytes(kept + b"".join(encode_record(r) for r in pair.host.take_records()))
    assert path.stat().st_size < 27_500_000  # SPEC 2.10's bound on a transcript
    assert main(["verify", str(path)]) == 1
    assert "joiner) broke rule message-limit" in capsys.readouterr().out
    flooder.resign()  # what ends a game is still ours to send past the limit
    assert flooder.data_to_send()
