"""Whole tables of sans-IO seats (SPEC chapter 5) through the scenarios of
`protocol/table_scenarios.py`, on other seeds than the recorded ones: what every seat ends
with, and what `verify` of their real files says. Expected values come from SPEC 5.5 to
5.9 (who leaves and how, who wins, which exit), never from the code under test."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.table import TableViolation
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.events import (
    ActionVoided,
    ClaimMade,
    DisputeMade,
    WhisperReceived,
)
from p2pgotg.protocol.table.seat import MAX_WAITING
from p2pgotg.protocol.table.transcript import TableRecordReader
from p2pgotg.testing.table_relay import Table, file_bytes
from protocol import table_scenarios as scenarios
from tests.tablekit import verdict_of

#: SPEC 4.7's endings by the rules (not decided outside them).
BY_THE_RULES = {"all_flags_planted", "pool_empty", "no_action"}


def kept_files(kept: scenarios.Kept, folder: Path) -> list[Path]:
    """The kept seats' files, as their drivers write them."""
    seats = {seat.my_seat: seat for seat in kept.table.seats}
    paths = []
    for s in kept.seats:
        path = folder / f"seat-{s}.gtr"
        path.write_bytes(file_bytes(kept.table, seats[s]))
        paths.append(path)
    return paths


def events_of(table: Table, kind: type) -> list:
    return [e for seat in table.seats for e in table.events.get(id(seat), [])
            if isinstance(e, kind)]


def one_status(kept: scenarios.Kept) -> dict:
    """The status every kept seat ends with, checked to be one."""
    seats = {seat.my_seat: seat for seat in kept.table.seats}
    statuses = {s: seats[s].status() for s in kept.seats}
    picture = {(st.over, st.order, st.ply, st.winners, st.termination,
                tuple(sorted(st.left.items()))) for st in statuses.values()}
    assert len(picture) == 1, picture
    over, order, ply, winners, termination, left = picture.pop()
    return {"over": over, "order": order, "ply": ply, "winners": winners,
            "termination": termination, "left": dict(left)}


@pytest.mark.parametrize("seed", [2, 3])
def test_a_coin_aborted_and_claimed_ends_the_game_before_the_setup(tmp_path: Path,
                                                                   seed: int) -> None:
    """SPEC 5.5: seat 1 never opens its coin; seat 2, the first seat after it in seat order,
    claims. No order can be made: the game ends before the setup, no winner, and verify
    exits 4 (a seat left by a claim: its claimant's word)."""
    kept = scenarios.coin_aborted(seed)
    end = one_status(kept)
    assert end["over"] and end["order"] is None and end["ply"] == -1
    assert end["winners"] == () and end["termination"] == "abandonment"
    assert end["left"] == {1: "abandonment"}
    assert {(e.claimant, e.seat) for e in events_of(kept.table, ClaimMade)} == {(2, 1)}
    for path in kept_files(kept, tmp_path):
        code, text = verdict_of(path)
        assert code == 4, text
        assert "no winner" in text and "seat 2 claimed against seat 1" in text
        assert "broke rule" not in text


@pytest.mark.parametrize("seed", [2, 3])
def test_a_withheld_action_is_claimed_and_disputed(tmp_path: Path, seed: int) -> None:
    """SPEC 5.1, 5.7: the relay keeps a joiner's action from the next seat, which claims
    against it; the seat claimed against disputes. Its action did not see the claim: void,
    everywhere. The claimant, the last seat in after the host resigns, wins; verify of every
    file, and of all together, exits 4 and prints the dispute."""
    kept = scenarios.withheld(seed)
    end = one_status(kept)
    claims = events_of(kept.table, ClaimMade)
    assert len({(e.claimant, e.seat) for e in claims}) == 1
    claimant, late = claims[0].claimant, claims[0].seat
    assert end["left"] == {late: "abandonment", 0: "resignation"}
    assert end["winners"] == (claimant,) and end["termination"] == "resignation"
    assert {e.seat for e in events_of(kept.table, ActionVoided)} == {late}
    assert {(e.seat, e.claim[0]) for e in events_of(kept.table, DisputeMade)} == {
        (late, claimant)}
    paths = kept_files(kept, tmp_path)
    for files in ([p] for p in paths):
        code, text = verdict_of(*files)
        assert code == 4 and f"(seat {late}) disputes the claim of" in text, text
        assert f"(seat {claimant}) wins (resignation)" in text
    assert verdict_of(*paths)[0] == 4


def test_a_resignation_before_the_order_ends_the_game_with_no_winner(tmp_path: Path) -> None:
    """SPEC 5.5: a seat that resigns before every seat opened its coin ends the game before
    the setup; no winner, nothing claimed: verify exits 0."""
    kept = scenarios.resignation_before_order(2)
    end = one_status(kept)
    assert end["order"] is None and end["winners"] == ()
    assert end["left"] == {1: "resignation"} and end["termination"] == "resignation"
    assert not events_of(kept.table, ClaimMade)
    for path in kept_files(kept, tmp_path):
        code, text = verdict_of(path)
        assert code == 0 and "no winner" in text and "seat 1 by resignation" in text


def test_a_whisper_that_does_not_open_is_unreadable_and_convicts_no_one(
        tmp_path: Path) -> None:
    """SPEC 5.8: the receiver is told the whisper is unreadable; no one else is told
    anything, and no seat is convicted (verify exits 0 on a game ended by resignations)."""
    kept = scenarios.unreadable_whisper(2)
    seats = kept.table.by_seat()
    assert [e for e in kept.table.events[id(seats[2])] if isinstance(e, WhisperReceived)] \
        == [WhisperReceived(1, None)]
    for s in (0, 1):
        assert not [e for e in kept.table.events.get(id(seats[s]), [])
                    if isinstance(e, WhisperReceived)]
    assert all(seat.failed is None for seat in kept.table.seats)
    for path in kept_files(kept, tmp_path):
        code, text = verdict_of(path)
        assert code == 0 and "broke rule" not in text


def test_a_flood_of_messages_that_never_get_ready_drops_the_connection(
        tmp_path: Path) -> None:
    """SPEC 5.4: at most 4,096 messages wait for what they acknowledge; one more and the
    connection is dropped, which proves nothing: no one is convicted, nothing is recorded,
    and the table goes on."""
    kept_table, _ = scenarios.seated(3, "flood", 2)
    host = kept_table.host
    flow = host.flow
    before = file_bytes(kept_table, host)

    def never_ready(i: int) -> bytes:
        """A message of seat 1 far ahead of its chain, acknowledging a message of seat 2
        that does not exist."""
        acks = (flow.chains[0][-1].hash, ZERO_HASH, bytes([7]) * 32)
        return scenarios.forged(kept_table, 1, "chat", {"text": f"{i}"}, acks=acks,
                                seq=1_000_000 + i)

    for i in range(MAX_WAITING):
        assert host.receive(never_ready(i)) == []
    with pytest.raises(TableViolation) as caught:
        host.receive(never_ready(MAX_WAITING))
    assert not caught.value.signed and "4096" in str(caught.value)
    assert host.failed is None and flow.violation is None
    assert file_bytes(kept_table, host) == before  # (nothing taken, nothing kept)
    path = tmp_path / "host.gtr"
    path.write_bytes(before)
    assert verdict_of(path)[0] == 3  # unfinished, no one convicted
    seats = kept_table.by_seat()
    seats[1].chat("still here")  # the table goes on
    kept_table.settle(random.Random(0))
    assert flow.chains[1][-1].body["text"] == "still here"


def test_the_waiting_limit_is_per_connection() -> None:
    """SPEC 5.4: 4,096 waiting messages per connection. One joiner's flood drops its own
    connection only; another joiner's message that must wait still waits; once the flooding
    connection is gone (`forget`), what waited from it is dropped and its next connection
    starts afresh."""
    kept_table, _ = scenarios.seated(3, "flood", 2)
    host = kept_table.host
    flow = host.flow

    def never_ready(seat: int, i: int) -> bytes:
        acks = [flow.chains[0][-1].hash, ZERO_HASH, ZERO_HASH]
        acks[3 - seat] = bytes([7]) * 32  # (a message of the other joiner that is not)
        return scenarios.forged(kept_table, seat, "chat", {"text": f"{i}"},
                                acks=tuple(acks), seq=1_000_000 + i)

    flooder, other = object(), object()
    for i in range(MAX_WAITING):
        host.receive(never_ready(1, i), flooder)
    with pytest.raises(TableViolation):
        host.receive(never_ready(1, MAX_WAITING), flooder)
    assert host.receive(never_ready(2, 0), other) == []  # (the other joiner's still waits)
    host.forget(flooder)
    assert host.receive(never_ready(1, MAX_WAITING + 1), flooder) == []


@pytest.mark.parametrize("n", [3, 4])
def test_a_table_of_hard_bots_plays_to_its_end_by_the_rules(tmp_path: Path, n: int) -> None:
    """Every seat plays the hard bot (a node budget): the game ends by the rules (SPEC 4.7),
    every seat holds the same game, which the rules replay from its actions, and every
    seat's file, and all of them together, verify clean to one verdict."""
    kept = scenarios.bot_game(n)(2)
    end = one_status(kept)
    assert end["over"] and end["termination"] in BY_THE_RULES and end["left"] == {}
    assert end["winners"]
    games = [seat.game.game for seat in kept.table.seats]
    replayed = Game(RuleOptions(seats=n))
    for action in games[0].history:
        replayed.push(action)
    assert replayed.is_over and replayed.outcome == games[0].outcome
    assert all(g.history == games[0].history for g in games)
    paths = kept_files(kept, tmp_path)
    results = set()
    for path in paths:
        code, text = verdict_of(path)
        assert code == 0, text
        results.add(next(line for line in text.splitlines() if line.startswith("result:")))
    assert len(results) == 1
    result = results.pop()
    assert all(f"(seat {s})" in result for s in end["winners"]), result
    assert verdict_of(*paths)[0] == 0


RECORDED = Path(__file__).parent.parent / "protocol" / "transcripts"


def _show(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p2pgotg", "show", str(path), "--text"],
                          capture_output=True, text=True, timeout=120)


def test_show_tells_a_tables_game_action_by_action_with_its_colours_and_seats() -> None:
    """`p2pgotg show` of a seat's file: every action, numbered, by colour and seat, with
    the board after it, as the game's order applies them; the verdict's lines after."""
    path = RECORDED / "table-honest-4-seat-2.gtr"
    shown = _show(path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    reader = TableRecordReader()
    records = reader.feed_table(path.read_bytes())
    actions = [body for r in records if r[0] == "msg"
               for body in [TableBody.decode(Envelope.decode(r[2]).body_bytes)]
               if body.type == "action"]
    numbered = [line for line in lines if re.match(r"\d+\. ", line)]
    assert len(numbered) == len(actions)  # an honest game: every action applied
    colours = ("Red", "Blue", "Green", "Yellow")
    for line, body in zip(numbered, actions, strict=True):
        assert re.match(rf"\d+\. ({'|'.join(colours)}) \(seat {body.seat}\) ", line), line
    assert "the file of: " in lines[1] and "(seat 2)" in lines[1]
    assert any(line.startswith("result:") and " wins (" in line for line in lines)
    assert sum(line.strip().startswith("a      b") for line in lines) == len(actions)


def test_show_tells_the_leaves_claims_void_actions_and_disputes() -> None:
    shown = _show(RECORDED / "table-withheld-seat-0.gtr")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert re.search(r"\(seat 1\) claims against \w+ \(seat 2\) \(abandoned\)", out)
    assert re.search(r"\(seat 2\) \S+: void", out)
    assert re.search(r"\(seat 0\) resigns", out)
    assert re.search(r"\(seat 2\) disputes the claim of \w+ \(seat 1\)", out)
    before = _show(RECORDED / "table-coin-aborted-seat-2.gtr")
    assert before.returncode == 0
    assert "order:      none" in before.stdout and "no winner" in before.stdout


def test_show_of_a_damaged_table_file_says_why_and_exits_2(tmp_path: Path) -> None:
    data = (RECORDED / "table-honest-3-seat-0.gtr").read_bytes()
    damaged = tmp_path / "damaged.gtr"
    damaged.write_bytes(data[:2000] + bytes([data[2000] ^ 1]) + data[2001:])
    shown = _show(damaged)
    assert shown.returncode == 2 and "cannot show it" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_show_cut_short_by_its_reader_leaves_no_traceback() -> None:
    """`p2pgotg show FILE | head -1`: the reader goes away after one line; the program stops
    quietly (a broken pipe is not a fault of the file) instead of printing a traceback."""
    import fcntl
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).parent.parent / "protocol" / "transcripts" / "table-honest-4-seat-0.gtr"
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # (smaller than what show prints)
    proc = subprocess.Popen([sys.executable, "-m", "p2pgotg", "show", str(path)],
                            stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        first = reader.readline()  # (then closed, as `head -1` does)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert first.startswith(str(path).encode()) and "Traceback" not in err, err
