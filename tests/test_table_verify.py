"""Table files and `p2pgotg verify FILE [FILE ...]` (SPEC 5.9): every seat's file gives
one verdict; a claim crossing the claimed seat's action voids it everywhere; the host's
two versions of one message convict it, through a joiner's acks and through two files;
a whisper is unreadable to the host that relays it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from p2pgotg.crypto import sign
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table import TableViolation
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.events import ActionVoided, WhisperReceived
from p2pgotg.protocol.table.talk import open_whisper
from p2pgotg.testing.table_relay import keys, make_table, play_random, write_files
from tests.tablekit import verdict_of


@pytest.mark.parametrize("n,seed", [(3, 21), (4, 22)])
def test_every_seats_file_gives_the_one_verdict(tmp_path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    table = make_table(n, rng)
    play_random(table, rng)
    paths = write_files(table, tmp_path)
    verdicts = [verdict_of(p) for p in paths]
    assert {code for code, _ in verdicts} == {0}
    results = {next(line for line in text.splitlines() if line.startswith("result:"))
               for _, text in verdicts}
    assert len(results) == 1
    assert verdict_of(*paths)[0] == 0


def test_an_unfinished_table_is_exit_3_and_a_cut_file_exit_2(tmp_path: Path) -> None:
    rng = random.Random(5)
    table = make_table(3, rng)
    table.settle(rng)
    paths = write_files(table, tmp_path)
    assert verdict_of(paths[1])[0] == 3
    data = paths[1].read_bytes()
    paths[1].write_bytes(data[:-3])
    code, text = verdict_of(paths[1])
    assert code == 2 and "damaged tail" in text


def _to_play(n: int, seed: int, plies: int) -> tuple[object, random.Random]:
    rng = random.Random(seed)
    table = make_table(n, rng)
    table.settle(rng)
    by_seat = table.by_seat()
    for _ in range(plies):
        status = table.host.status()
        actor = by_seat[status.seat_to_act]
        actor.act(rng.choice(list(actor.game.game.legal_actions)))
        table.settle(rng)
    return table, rng


@pytest.mark.parametrize("seed", range(6))
def test_a_claim_crossing_the_claimed_seats_action_voids_it_everywhere(
        tmp_path: Path, seed: int) -> None:
    """SPEC 5.7: the claimed seat's action that did not see the claim is void: not applied,
    taken back where it was, no violation; every seat and verify agree."""
    table, rng = _to_play(4, seed, 8)
    by_seat = table.by_seat()
    state = table.host.flow.state
    assert state is not None
    late = state.seat_to_act()
    assert late is not None
    claimant = state.next_in(late)
    assert claimant is not None
    ply = state.ply
    # both are made before either sees the other's: they cross
    by_seat[claimant].claim(late, "abandoned")
    by_seat[late].act(next(iter(by_seat[late].game.game.legal_actions)))
    table.settle(rng)
    statuses = [seat.status() for seat in table.seats]
    assert {tuple(sorted(s.left.items())) for s in statuses} == {((late, "abandonment"),)}
    assert {s.ply for s in statuses} == {ply}  # the late action is not in the game
    assert len({s.seat_to_act for s in statuses}) == 1
    assert late not in {s.seat_to_act for s in statuses}
    voided = [e for seat in table.seats for e in table.events.get(id(seat), [])
              if isinstance(e, ActionVoided)]
    held_first = any(m.seat == late and m.body.type == "action" and m.body["ply"] == ply
                     for m in table.host.flow.chains[late])
    assert held_first
    assert all(e.seat == late for e in voided)
    play_random(table, rng)
    paths = write_files(table, tmp_path)
    codes = {verdict_of(p)[0] for p in paths}
    assert codes == {4}  # a seat left by a claim: its claimant's word
    code, text = verdict_of(*paths)
    assert code == 4 and "claimed against" in text


def _forge_second_version(table: object, seq_text: str) -> tuple[bytes, bytes]:
    """The host chats; returns (the chat it made, a second version of it with the same
    place and acks, signed with the host's key): what an equivocating host shows."""
    host = table.host  # type: ignore[attr-defined]
    host.chat("A")
    first = host.take_outgoing()[-1]
    body = TableBody.decode(Envelope.decode(first).body_bytes)
    other = TableBody(body.type, body.seq, body.prev, body.seat, body.acks, body.game,
                      {"text": seq_text})
    data = other.encode()
    return first, Envelope(data, sign(keys(4)[0], data)).encode()


def test_a_host_that_shows_two_seats_two_versions_is_convicted(tmp_path: Path) -> None:
    """SPEC 5.1: seat 2 acks the version it got; seat 1 cannot take that message without
    it, and holding both convicts the host. verify of the two seats' files does too."""
    table, rng = _to_play(4, 3, 4)
    by_seat = table.by_seat()
    first, second = _forge_second_version(table, "B")
    link2 = next(link for link in table.links if link.joiner.my_seat == 2)
    link2.withhold = lambda seat, data: data == first
    table.settle(rng)  # seat 1 and 3 get "A"; seat 2 gets nothing yet
    by_seat[2].receive(second)  # the host hands seat 2 its other version
    by_seat[2].chat("seen")
    reply = by_seat[2].take_outgoing()[-1]
    table.collect()
    joiner1 = by_seat[1]
    assert joiner1.receive(reply) == []  # it acks what seat 1 does not hold: it waits
    with pytest.raises(TableViolation) as caught:
        joiner1.receive(second)  # to deliver it, the host must give seat 1 its second version
    assert (caught.value.rule, caught.value.seat, caught.value.signed) == ("equivocation", 0,
                                                                          True)
    table.collect()
    paths = write_files(table, tmp_path)
    file1, file2 = paths[1], paths[2]
    code, text = verdict_of(file1)
    assert code == 1 and "seat 0" in text and "equivocation" in text
    # seat 3 holds only "A", the table's other files only one version each: together they
    # convict the host
    file3 = paths[3]
    assert verdict_of(file3)[0] == 3
    code, text = verdict_of(file3, file2)
    assert code == 1 and "broke rule equivocation" in text and "(seat 0)" in text


def test_a_whisper_is_readable_by_its_receiver_only(tmp_path: Path) -> None:
    """SPEC 5.8: the host relays the box; only the seat it is for opens it."""
    table, rng = _to_play(3, 9, 2)
    by_seat = table.by_seat()
    by_seat[1].whisper(2, "let us take Red's tower")
    table.settle(rng)
    got = [e for e in table.events[id(by_seat[2])] if isinstance(e, WhisperReceived)]
    assert got == [WhisperReceived(1, "let us take Red's tower")]
    host = table.host
    box = next(m.body["box"] for m in host.flow.chains[1] if m.body.type == "whisper")
    assert b"tower" not in box
    host_key = keys(3)[0]
    assert open_whisper(host_key, host.flow.key_of(1), box) is None
    assert not any(isinstance(e, WhisperReceived) for e in table.events.get(id(host), []))
    assert not any(isinstance(e, WhisperReceived) for e in table.events[id(by_seat[1])])
