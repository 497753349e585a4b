"""The table screen's logic (ui/towers/table_*), without a terminal: three real kernel
seats (`TableSeat`) wired through tablekit's relay loop, one screen state per seat, keys
and typed lines driven as the application drives them (`perform` run at once, as the
SyncDriver of the two-party screen tests does). Expected words come from the seed's rules
(002: a start is claimed on the outer border) and SPEC chapter 5 (the lobby, the turn
order, leaving, claims and disputes, whispers), not from the code under test."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from tablekit import verdict_of

from p2pgotg.crypto import key_from_seed, public_bytes
from p2pgotg.games.towers.rules import RuleOptions
from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.table import TableSeat
from p2pgotg.protocol.table.talk import seal_whisper
from p2pgotg.testing.table_relay import Table, make_table, write_files
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.commands import CommandError
from p2pgotg.ui.towers import table_play, table_view
from p2pgotg.ui.towers.table_app import own_verdict
from p2pgotg.ui.towers.table_commands import read_line, whisper_seat
from p2pgotg.ui.towers.table_log import absorb
from p2pgotg.ui.towers.table_model import RESIGN, TableScreen


class KernelSession:
    """What the screen reads of a TableSession, over a seat of a tablekit table: its
    events are the ones the relay loop gave it plus its own."""

    def __init__(self, table: Table, seat: TableSeat) -> None:
        self.table, self.seat = table, seat
        self.failure: str | None = None
        self.path: Path | None = None

    @property
    def events(self) -> list[Event]:
        return self.table.events.setdefault(id(self.seat), [])

    @property
    def status(self) -> Any:
        return self.seat.status()

    @property
    def done(self) -> bool:
        return bool(self.status.over)

    def perform(self, fn: Any) -> list[Event]:
        events = fn(self.seat)
        self.events.extend(events)
        return events


def seated(table: Table, seat: TableSeat) -> TableScreen:
    screen = TableScreen(seats=3, role="host" if seat.is_host else "joiner")
    session = KernelSession(table, seat)
    screen.session = session

    def perform(fn: Any, done: str | None) -> None:
        try:
            session.perform(fn)
        except LocalProtocolError as exc:
            screen.warn(str(exc))
            return
        if done:
            screen.say(done)
        absorb(screen)

    screen.perform_fn = perform
    return screen


class Game3:
    """A table of three in play (the turn order dealt), a screen at every seat."""

    def __init__(self, seed: int = 5) -> None:
        self.rng = random.Random(seed)
        self.table = make_table(3, self.rng)
        self.table.settle(self.rng)
        self.screens = {s.my_seat: seated(self.table, s) for s in self.table.seats}
        self.settle()

    def settle(self) -> None:
        self.table.settle(self.rng)
        for screen in self.screens.values():
            absorb(screen)

    def acting(self) -> TableScreen:
        status = self.table.host.status()
        return self.screens[status.seat_to_act]

    def waiting(self) -> TableScreen:
        status = self.table.host.status()
        return next(s for seat, s in self.screens.items() if seat != status.seat_to_act)

    def log(self, seat: int) -> str:
        return "\n".join(line.text for line in self.screens[seat].log)


def test_the_lobby_counts_the_seats_taken_until_the_roster() -> None:
    # SPEC 5.3: the host's hello first, then each joiner's; the roster once N-1 are held
    rng = random.Random(1)
    host = TableSeat.host(TOWERS_TABLE, key_from_seed(bytes(32)), RuleOptions(seats=4),
                          bytes(32), rng.randbytes)
    host.start()
    table = Table(host, [])
    screen = seated(table, host)
    assert table_view.in_lobby(screen)
    text = fragments_text(table_view.lobby_text(screen, 80))
    assert "waiting for seats: 1 of 4" in text
    assert text.count("(a seat to take)") == 3
    hello = host.take_outgoing()[0]
    joiner_key = key_from_seed(bytes([7]) * 32)
    joiner = TableSeat.joiner(TOWERS_TABLE, joiner_key, hello, bytes(32), rng.randbytes)
    joiner.start()
    screen.labels[public_bytes(joiner_key)] = "bot"
    host.receive(joiner.take_outgoing()[0])
    text = fragments_text(table_view.lobby_text(screen, 80))
    assert "waiting for seats: 2 of 4" in text
    assert f"key {public_bytes(joiner_key)[:6].hex()}  bot" in text
    assert "waiting for seats" in table_view.title(screen)


def test_the_seat_list_shows_colours_seats_who_acts_and_points() -> None:
    game = Game3()
    screen = game.screens[0]
    order = game.table.host.status().order
    text = fragments_text(table_view.seats_text(screen, 41))
    lines = [line for line in text.splitlines()[1:] if line.strip()]
    # SPEC 5.5: colour c is played by order[c]; Red acts first (seed 002)
    assert [line[1:7].strip() for line in lines] == ["Red", "Blue", "Green"]
    assert [int(line[8]) for line in lines] == list(order)
    assert lines[0].startswith(">") and not any(line.startswith(">") for line in lines[1:])
    mine = lines[list(order).index(0)]
    assert " you " in mine and mine.rstrip().endswith("0 pts")  # nothing planted yet


def test_the_seat_list_shows_the_names_the_host_gave_marked_as_its_word() -> None:
    # SPEC 3.4 `names`: by the key of each seat's hello; at most 24 characters, which a
    # narrow column cuts visibly; our own seat is still `you`
    game = Game3()
    screen = game.screens[1]
    screen.role = "joiner"
    flow = game.table.host.flow
    long = "Maximiliana Wolkenstein"
    screen.session.names = {bytes(flow.key_of(0)): "Ana", bytes(flow.key_of(1)): "Bo",
                            bytes(flow.key_of(2)): long}
    width = 39
    text = fragments_text(table_view.seats_text(screen, width))
    heading, *lines = [line for line in text.splitlines() if line.strip()]
    assert "names: the host's word" in heading
    by_seat = {int(line[8]): line[10:].split("  ")[0].strip() for line in lines}
    assert by_seat[0] == "Ana" and by_seat[1] == "you"
    assert by_seat[2] != long and by_seat[2].endswith("…") and long.startswith(by_seat[2][:-1])
    assert all(len(line) <= width for line in lines)
    game.screens[0].session.names = {bytes(flow.key_of(1)): "Bo"}
    host_view = fragments_text(table_view.seats_text(game.screens[0], width))
    assert "names: the host's word" not in host_view  # (the host's are its joiners' own)
    assert " Bo " in host_view


def test_an_action_out_of_turn_is_refused_and_nothing_is_sent() -> None:
    game = Game3()
    waiting = game.waiting()
    before = len(waiting.session.seat.flow.chains[waiting.my_seat])
    table_play.submit(waiting, "@a1")
    assert waiting.status_error and waiting.status.startswith("not your turn")
    assert game.acting().who(game.acting().my_seat) == "you"
    assert len(waiting.session.seat.flow.chains[waiting.my_seat]) == before


def test_an_illegal_action_is_refused_in_the_rules_words() -> None:
    # seed 002: a start is claimed on a square of the outer border; c3 is the centre
    game = Game3()
    acting = game.acting()
    table_play.submit(acting, "@c3")
    assert acting.status_error and "outer border" in acting.status
    table_play.submit(acting, "c3-c5")
    assert acting.status_error and "not one step" in acting.status


def test_an_action_by_keys_and_one_typed_reach_every_seat() -> None:
    game = Game3()
    acting = game.acting()
    acting.cursor = 12  # c3
    table_play.list_actions(acting)
    assert acting.status.startswith("c3: 1 +c3 (layer)")
    table_play.choose(acting, 1)
    assert not acting.status_error, acting.status
    game.settle()
    for seat in game.screens:
        assert game.table.by_seat()[seat].game.game.height(12) == 1  # one layer on c3
        assert "  1 Red    +c3" in game.log(seat)
    acting = game.acting()  # Blue's choice: typed
    table_play.submit(acting, "+b2")
    game.settle()
    assert all("  2 Blue   +b2" in game.log(seat) for seat in game.screens)


def test_chat_goes_to_the_table_and_a_whisper_to_one_seat() -> None:
    game = Game3()
    sender = game.screens[0]
    table_play.submit(sender, "chat hello table")
    table_play.submit(sender, "w 2 meet at c3")
    game.settle()
    assert "you: hello table" in game.log(0)
    assert "(private): meet at c3" in game.log(0)  # ours, as sent
    assert f"{game.screens[1].who(0)}: hello table" in game.log(1)
    assert f"{game.screens[2].who(0)} (private): meet at c3" in game.log(2)
    assert "meet at c3" not in game.log(1)  # SPEC 5.8: only its receiver opens it


def test_a_whisper_that_does_not_open_is_shown_as_unreadable() -> None:
    game = Game3()
    seat1 = game.table.by_seat()[1]
    wrong = public_bytes(key_from_seed(bytes([9]) * 32))  # sealed to another key
    box = seal_whisper(key_from_seed(bytes([8]) * 32), wrong, "you cannot read this",
                       bytes(24))
    seat1._send("whisper", {"to": 2, "box": box})
    game.settle()
    assert "whispered to you, unreadable" in game.log(2)
    assert "cannot read this" not in game.log(2)


def test_a_whisper_names_a_seat_by_number_or_colour() -> None:
    assert read_line("/w 2 hi there").text == "hi there"
    assert whisper_seat("Blue", (2, 0, 1), 3) == 0  # colour 1 (Blue) is order[1]
    assert whisper_seat("1", None, 3) == 1
    with pytest.raises(CommandError, match="Yellow"):
        whisper_seat("Yellow", (2, 0, 1), 3)  # no fourth colour at a table of three
    with pytest.raises(CommandError, match="no seat 5"):
        whisper_seat("5", None, 3)
    with pytest.raises(CommandError, match="no draw"):
        read_line("draw")  # SPEC 5.6


def test_resigning_asks_first_then_the_others_play_on() -> None:
    game = Game3()
    me = game.screens[0]
    table_play.submit(me, "resign")
    assert me.confirm == RESIGN and "resign?" in me.status
    table_play.answer(me, False)
    assert 0 not in me.status_value.left
    table_play.submit(me, "resign")
    table_play.answer(me, True)
    game.settle()
    # SPEC 4.13 / 5.7: the seat leaves, the game goes on while two teams are still in
    assert me.status_value.left == {0: "resignation"}
    assert not me.status_value.over
    assert "you left: resigned" in game.log(0)
    assert f"{game.screens[1].who(0)} left: resigned" in game.log(1)
    seats = fragments_text(table_view.seats_text(game.screens[1], 41))
    assert "left: resigned" in seats


def test_a_claim_is_said_and_the_seat_claimed_against_disputes_it() -> None:
    game = Game3()
    acting = game.acting()
    victim = acting.my_seat
    status = game.table.host.status()
    claimant = status.order[1]  # SPEC 5.7: the first seat still in after it
    game.screens[claimant].perform(lambda s: s.claim(victim, "abandoned"))
    game.settle()
    assert "claims that you stayed away too long" in acting.status
    assert "type dispute" in acting.status
    assert f"{acting.who(claimant)} claims that you stayed away too long" in game.log(victim)
    assert acting.status_value.left == {victim: "abandonment"}
    table_play.submit(acting, "dispute")
    game.settle()
    for seat, screen in game.screens.items():
        assert f"{screen.who(victim)} disputes the claim of {screen.who(claimant)}" \
            in game.log(seat) or seat == victim
    table_play.submit(acting, "dispute")
    assert acting.status_error and "disputed already" in acting.status


def test_a_claim_the_seats_program_disputed_by_itself_is_not_disputed_again() -> None:
    """The session disputes a claim against a seat that was here (SPEC 5.7); the person's
    `dispute` then says so, where it would sign a second dispute (out-of-turn)."""
    game = Game3()
    acting = game.acting()
    victim = acting.my_seat
    claimant = game.table.host.status().order[1]
    game.screens[claimant].perform(lambda s: s.claim(victim, "abandoned"))
    game.settle()
    claim, = acting.claims_on_me
    acting.perform(lambda s: s.dispute(claim))  # (as the session does by itself)
    game.settle()
    table_play.submit(acting, "dispute")
    assert acting.status_error and "disputed already" in acting.status


def test_the_end_shows_verifys_verdict_of_our_own_file(tmp_path: Path) -> None:
    game = Game3()
    for seat in (0, 1):
        screen = game.screens[seat]
        if not screen.status_value.over:
            table_play.submit(screen, "resign")
            table_play.answer(screen, True)
            game.settle()
    screen = game.screens[0]
    assert screen.status_value.over and screen.ended is not None
    assert screen.ended.startswith(f"{screen.who(2)} wins (resignation)")
    paths = write_files(game.table, tmp_path)
    screen.verdict = own_verdict(paths[0])
    code, printed = verdict_of(paths[0])
    assert code == 0
    result = next(line for line in screen.verdict if line.startswith("result:"))
    assert result in printed  # what `p2pgotg verify` prints of the same file
    assert "(seat 2) wins (resignation)" in result  # SPEC 4.13: the last team in wins
    assert any(line.startswith("left:") and "resignation" in line for line in screen.verdict)
    assert "Game over" in fragments_text(table_view.end_text(screen, 41))
