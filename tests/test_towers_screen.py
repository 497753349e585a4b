"""The Towers screens' logic (ui/towers), without a terminal: what the board and the counts
show for a position, what the input line reads, and the play screen against two protocol
peers wired back to back in memory. Expected values come from the seed's rules and SPEC
chapter 4 (worked by hand below), not from the code under test."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from screens import code_on_lines_of_its_own, rendered
from test_ui_state import SyncDriver

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules import Game, RuleOptions
from p2pgotg.net.play.clock import Clocks
from p2pgotg.net.play.session import Link
from p2pgotg.net.reaching.invite import NAT_EASY, Invite
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.protocol.events import Event
from p2pgotg.reach.candidates import LAN, MAPPED, ONION, PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode
from p2pgotg.testing.pair import TLS_FP, DetRand, det_key
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import AppState, Confirm, Mode, Prompt, Screen
from p2pgotg.ui.towers import board, end, owns, play
from p2pgotg.ui.towers.commands import CommandError, parse_command
from p2pgotg.ui.towers.panel import table

FILES = "abcde"


def cells(text: str) -> dict[str, str]:
    """The drawn board read back: each square's seven characters, by name."""
    out = {}
    for line in text.splitlines():
        if len(line) > 3 and line[1] in "12345" and line[0] == " " and line[2] == " ":
            rank = line[1]
            for column, file in enumerate(FILES):
                out[f"{file}{rank}"] = line[3 + 7 * column: 10 + 7 * column]
    return out


def square(text: str, name: str) -> tuple[int, str, str]:
    """(height, pawn letter, flag letter) drawn on a square."""
    cell = cells(text)[name]
    return int(cell[1:3]), cell[4], cell[5]


def drawn(game: Game, **marks) -> str:
    return fragments_text(board.board_fragments(game, board.Marks(**marks)))


# -- the board and the counts, for a position (SPEC 4.2-4.8) --------------------------------

def test_the_board_shows_each_squares_height_pawn_and_flag() -> None:
    # SPEC 4.3: Red +c3, Blue +c3 (a tower of two), Red @a1, Blue +b2, Blue @e5 (Blue is
    # the only one left to claim: with two colours it may first place one more layer)
    game = Game()
    for text in ("+c3", "+c3", "@a1", "+b2", "@e5"):
        game.push_text(text)
    text = drawn(game)
    assert square(text, "c3") == (2, ".", ".")
    assert square(text, "b2") == (1, ".", ".")
    assert square(text, "a1") == (0, "R", "r")  # a claim: a pawn and a flag (T4)
    assert square(text, "e5") == (0, "B", "b")
    assert square(text, "d4") == (0, ".", ".")
    # Red moves a1-b1 (T19: the flag left behind stays, a flag is planted on b1), then
    # builds under that pawn (T20)
    game.push_text("a1-b1")
    game.push_text("+b1")
    text = drawn(game)
    assert square(text, "a1") == (0, ".", "r")
    assert square(text, "b1") == (1, "R", "r")
    lines = text.splitlines()
    assert lines[0].startswith(" 5 ") and lines[8].startswith(" 1 ")  # rank 5 on top
    assert lines[-1].split() == list(FILES)
    assert all(len(line) <= board.WIDTH for line in lines)


def test_the_counts_follow_the_rules() -> None:
    game = Game()
    for text in ("+c3", "+c3", "@a1", "+b2", "@e5", "a1-b1", "+b1"):
        game.push_text(text)
    rows = fragments_text(table(game, {0: "you", 1: "bot"})).splitlines()
    # the pool: 50 layers less 3 placed in the setup and 1 built
    assert rows[0].split()[:2] == ["Pool:", "46"]
    by_colour = {row.split()[0].lstrip(">"): row.split()[-4:] for row in rows[2:]}
    # Red: 6 pawns, one on the board; 13 flags, two on the board (a1, b1); no capture;
    # 1 point a flag on the board. Blue: one pawn and one flag on the board (e5).
    assert by_colour["Red"] == ["5", "11", "0", "2"]
    assert by_colour["Blue"] == ["5", "12", "0", "1"]
    assert rows[2].startswith(" Red (you)") and rows[3].startswith(">Blue (bot)")  # Blue acts


def test_a_capture_from_a_higher_tower_shows_the_taken_pawn_and_the_flag_sent_home() -> None:
    game = Game.from_position(heights={"b2": 2}, pawns={"b2": 0, "b3": 1},
                              flags={"b2": 0, "b3": 1})
    from p2pgotg.ui.towers.words import action_note, action_sentence

    move = game.legal_actions[[a.text() for a in game.legal_actions].index("b2-b3")]
    assert action_note(game, move) == "took Blue's pawn"
    assert "takes Blue's pawn (Blue's flag goes back to Blue)" in action_sentence(game, move)
    game.push(move)
    text = drawn(game)
    assert square(text, "b3") == (0, "R", "r")
    assert square(text, "b2") == (2, ".", "r")
    rows = fragments_text(table(game, {})).splitlines()
    by_colour = {row.split()[0].lstrip(">"): row.split()[-4:] for row in rows[2:]}
    # Red: flags b2 and b3 on the board, one capture: 3 points; Blue: no pawn left on the
    # board, its flag back (13 in reserve), one pawn taken (5 left to spawn), 0 points
    assert by_colour["Red"] == ["5", "11", "1", "3"]
    assert by_colour["Blue"] == ["5", "13", "0", "0"]


def test_four_colours_each_in_its_own_letters_and_colour() -> None:
    options = RuleOptions(seats=4, teams=True)
    game = Game(options)
    for text in ("@a1", "@a5", "@e5", "@e1"):  # Red, Blue, Green, Yellow
        game.push_text(text)
    fragments = board.board_fragments(game)
    text = fragments_text(fragments)
    assert [square(text, sq)[1:] for sq in ("a1", "a5", "e5", "e1")] == \
        [("R", "r"), ("B", "b"), ("G", "g"), ("Y", "y")]
    styles = {t: s for s, t, *_ in fragments if t in "RBGY"}
    assert {letter: style.split()[-2] for letter, style in styles.items()} == {
        "R": "class:towers.red", "B": "class:towers.blue", "G": "class:towers.green",
        "Y": "class:towers.yellow"}
    rows = fragments_text(table(game, {})).splitlines()
    # 9 flags a colour with four (the seed's table), one planted by each claim
    assert [row.split()[-3] for row in rows[2:6]] == ["8"] * 4
    assert rows[-1].strip() == "teams: Red+Green 2, Blue+Yellow 2"


def test_the_marks_are_text() -> None:
    game = Game()
    text = drawn(game, cursor=12, last=frozenset({0}))
    assert cells(text)["c3"] == "[ 0 ..]"
    assert cells(text)["a1"] == ": 0 ..:"


# -- the input line (SPEC 4.9) --------------------------------------------------------------

@pytest.mark.parametrize(("line", "action"), [
    ("c3-c4", "c3-c4"), ("C3 c4", "c3-c4"), ("c3c4", "c3-c4"), ("+c3", "+c3"),
    ("+ c3", "+c3"), ("*c3", "*c3"), ("@A1", "@a1")])
def test_typed_notation(line: str, action: str) -> None:
    command = parse_command(line)
    assert command.kind == "action" and command.action is not None
    assert command.action.text() == action


def test_a_lone_prefix_acts_on_the_cursors_square() -> None:
    assert [parse_command(p, cursor=12).action.text() for p in "+*@"] == ["+c3", "*c3", "@c3"]


@pytest.mark.parametrize(("line", "words"), [
    ("f3-f4", "files a-e, ranks 1-5"), ("c3-e5", "c3 to e5 is not one step"),
    ("resign now", "resign takes nothing after it"), ("chat", "chat needs a message"),
    ("hello", "unknown command")])
def test_typed_lines_that_are_not_actions_say_why(line: str, words: str) -> None:
    with pytest.raises(CommandError, match=words):
        parse_command(line)


# -- the play screen against two peers in memory ----------------------------------------------

@dataclass
class TableSession:
    """What the screens read of a `GameSession`: one side of two Towers peers delivering
    at once."""

    table: Table
    role: str
    link: Link = Link.CONNECTED
    clocks: Clocks = field(default_factory=lambda: Clocks(0, 0))
    path: None = None
    peer_name: str | None = None
    peer_left: str | None = None  # (why the other side went, when it did)

    def claim_due(self, now: float) -> float | None:
        return None  # (no claim in these games: no countdown is shown)

    @property
    def peer(self) -> TowersPeer:
        return self.table.peers[self.role]

    @property
    def events(self) -> list[Event]:
        return self.table.events[self.role]

    @property
    def verdict(self):
        return self.peer.flow.conclusion()

    @property
    def done(self) -> bool:
        return self.verdict is not None or self.peer.failed is not None

    def perform(self, action) -> list[Event]:
        events = action(self.peer)
        self.table.events[self.role] += events
        self.table.deliver()
        return events


class Table:
    def __init__(self, options: RuleOptions | None = None, seed: str = "screen") -> None:
        self.peers = {
            HOST: TowersPeer(HOST, det_key(f"{seed}/host"), TLS_FP,
                             options or RuleOptions(), DetRand(f"{seed}/host")),
            JOINER: TowersPeer(JOINER, det_key(f"{seed}/joiner"), TLS_FP, None,
                               DetRand(f"{seed}/joiner"))}
        self.events: dict[str, list[Event]] = {HOST: [], JOINER: []}
        self.sent = 0  # messages delivered, both ways

    def deliver(self) -> None:
        while True:
            moved = False
            for sender, receiver in ((HOST, JOINER), (JOINER, HOST)):
                for data in self.peers[sender].data_to_send():
                    self.events[receiver] += self.peers[receiver].receive(data)
                    self.sent += 1
                    moved = True
            if not moved:
                return


def seated(options: RuleOptions | None = None) -> tuple[AppState, TableSession, TableSession]:
    """A Towers game just begun; the state sits in Red's seat (the coin's first player),
    against `Mode.BOT` words."""
    table = Table(options)
    sessions = {role: TableSession(table, role) for role in (HOST, JOINER)}
    sessions[HOST].perform(lambda p: p.start())
    sessions[JOINER].perform(lambda p: p.accept())
    red = next(s for s in sessions.values() if 0 in s.peer.my_seats)
    blue = sessions[JOINER if red.role == HOST else HOST]
    state = AppState(Mode.BOT)
    state.driver = SyncDriver(state)
    state.attach(red)  # type: ignore[arg-type]
    state.absorb()
    return state, red, blue


def they_play(blue: TableSession, state: AppState, *texts: str) -> None:
    from p2pgotg.games.towers.rules import Action

    for text in texts:
        blue.perform(lambda p, t=text: p.act(Action.from_text(t)))
    state.absorb()


def test_a_towers_game_shows_the_towers_screen() -> None:
    state, _red, _ = seated()
    assert state.screen is Screen.PLAY and owns(state)
    assert "You, Red vs the bot, Blue" in play.title(state)
    assert "YOUR TURN" in play.title(state)
    assert "You play Red; the bot (hard) plays Blue: you choose first." in \
        [line.text for line in state.log]
    assert state.side is None  # (no Game of the Generals side to draw from)


def test_an_illegal_action_typed_or_keyed_says_why_and_sends_nothing() -> None:
    state, red, blue = seated()
    table = red.table
    play.submit(state, "+e2")  # Red places a layer; Blue claims a1
    they_play(blue, state, "@a1")
    before = table.sent
    play.submit(state, "@c3")  # a start is on the outer border (T5)
    assert state.status_error and "@c3" in state.status and "border" in state.status
    play.submit(state, "@b1")  # one border step from a1: two squares must lie between (T6)
    assert state.status_error and "too near the start on a1" in state.status
    play.submit(state, "a1-a2")  # Blue's pawn, and no moves in the setup
    assert state.status_error
    state.cursor = 1  # b1: the keys say the same, only a layer there
    play.list_actions(state)
    assert state.status == "b1: 1 +b1 (layer)  (a number does it)"
    play.step_pawn(state, 1, 0)
    assert state.status_error
    assert table.sent == before  # nothing went out
    assert red.peer.view.ply == 2 and red.peer.my_turn


def test_keys_list_the_actions_on_a_square_and_a_digit_makes_one() -> None:
    state, red, blue = seated()
    state.cursor = 0  # a1
    play.list_actions(state)
    assert state.status.startswith("a1: 1 +a1 (layer)  2 @a1 (claim)")
    play.choose(state, 2)
    assert red.peer.view.start(0) == 0
    they_play(blue, state, "@e5")
    # in play: our pawn on a1 may move up or right, or build (SPEC 4.5, 4.6)
    play.list_actions(state)
    assert "+a1 (build)" in state.status and "a1-a2" in state.status and \
        "a1-b1" in state.status
    play.enter(state)  # pick the pawn up: its moves are marked
    assert state.selected == 0 and play.targets(state) == {1, 5}
    state.cursor = 5  # a2
    play.enter(state)
    assert red.peer.view.pawn_at(5) == 0 and red.peer.view.flag_at(0) == 0
    # Shift+right: the same pawn moves again, which the rules forbid (T11)
    play.step_pawn(state, 1, 0)
    assert state.status_error and "two different pawns" in state.status
    play.submit(state, "+")  # a layer under the pawn on the cursor's square
    assert red.peer.view.height(5) == 1 and not red.peer.my_turn
    assert [line.text.split()[1:3] for line in state.log if line.text[:3].strip()
            .isdigit()] == [["Red", "@a1"], ["Blue", "@e5"], ["Red", "a1-a2"],
                            ["Red", "+a2"]]


def test_a_draw_offer_goes_with_an_action_and_is_answered_on_the_other_side() -> None:
    state, _red, blue = seated()
    play.submit(state, "draw")
    assert state.status_error and "once every colour has claimed" in state.status
    play.submit(state, "@a1")
    they_play(blue, state, "@e5")
    play.submit(state, "draw")
    assert "goes with your next action" in state.status
    play.submit(state, "a1-a2")
    assert blue.peer.draw_offered_to_me
    play.submit(state, "+a2")  # (an offer is answered on the receiver's turn)
    blue.perform(lambda p: p.accept_draw())
    state.absorb()
    assert state.screen is Screen.END
    words = fragments_text(end.headline(state))
    assert "Draw: a draw was agreed (points: Red (you) 2, Blue (bot) 1)." in words


def test_the_end_says_the_result_with_the_points_and_the_reason() -> None:
    state, _red, blue = seated()
    play.submit(state, "@a1")
    they_play(blue, state, "@e5")
    play.submit(state, "chat good game")
    play.submit(state, "resign")
    assert state.confirm is Confirm.RESIGN
    from p2pgotg.ui import play_screen

    play_screen.resign(state)  # (what `y` does)
    assert state.screen is Screen.END
    head = fragments_text(end.headline(state))
    assert head.strip() == "The bot wins: you resigned (points: Red (you) 1, Blue (bot) 1)."
    assert "  you: good game" in [line.text for line in state.log]
    verdict = fragments_text(end.verdict_text(state))
    assert "Nothing hidden: every action was checked as it came" in verdict


def test_a_game_ended_by_the_rules_names_the_reason_and_the_points() -> None:
    """Blue plants its last flag: `Blue placed all its flags` (T22), and the points are each
    colour's flags on the board plus the pawns it took (T23), counted here from the board."""
    import random

    state, red, blue = seated()
    rng = random.Random(4)
    while not red.peer.flow.is_over:
        peer = red if red.peer.my_turn else blue
        action = rng.choice(peer.peer.view.legal_actions)
        peer.perform(lambda p, a=action: p.act(a))
        state.absorb()
    game = red.peer.view
    outcome = game.outcome
    flags = [sum(game.flag_at(sq) == seat for sq in range(25)) for seat in (0, 1)]
    took = [game.captured(0, 1), game.captured(1, 0)]
    points = [flags[0] + took[0], flags[1] + took[1]]
    reason = {"pool_empty": "all 50 layers placed",
              "all_flags_planted": f"{['Red', 'Blue'][outcome.seat or 0]} placed all its flags",
              "no_action": f"{['Red', 'Blue'][outcome.seat or 0]} could not act"}[
        outcome.termination.value]
    head = "Draw" if points[0] == points[1] else \
        "You win" if points[0] > points[1] else "The bot wins"
    assert fragments_text(end.headline(state)).strip() == \
        f"{head}: {reason} (points: Red (you) {points[0]}, Blue (bot) {points[1]})."


def test_a_resumed_game_shows_its_actions_and_talk_so_far() -> None:
    state, red, blue = seated()
    play.submit(state, "@a1")
    they_play(blue, state, "@e5")
    play.submit(state, "chat still there?")
    play.submit(state, "a1-a2")
    # the same seat, as a program started again finds it: a new state on the same peer
    again = AppState(Mode.BOT)
    again.driver = SyncDriver(again)
    resumed = TableSession(red.table, red.role)
    resumed.table.events[red.role] = []  # (a restored session has no events of its own)
    again.attach(resumed)  # type: ignore[arg-type]
    again.absorb()
    texts = [line.text for line in again.log]
    assert texts[0] == "Resumed."
    assert [t.split()[1:3] for t in texts if t[:3].strip().isdigit()] == \
        [["Red", "@a1"], ["Blue", "@e5"], ["Red", "a1-a2"]]
    assert "  you: still there?" in texts
    assert again.status == "resumed: your turn: 1 action left"


def test_the_help_on_a_towers_screen_is_towers_keys_and_rules() -> None:
    from p2pgotg.ui.help import help_lines

    state, _red, _blue = seated()
    state.toggle_help()
    lines = [text for _, text in help_lines(state)]
    assert " Space       list the actions on the cursor's square, numbered: 1..9 makes one" \
        in lines
    assert " How to play Towers" in lines and all(len(line) <= 80 for line in lines)
    assert not any("Spy" in line for line in lines)  # (not Game of the Generals')


# -- while the other side is away (SPEC 3.6, 3.8) -----------------------------------------

SECRET = bytes(range(16))
#: A host's invite that lists a punch candidate: the host takes reply codes (SPEC 3.8).
INVITE = Invite.v2([Candidate(LAN, "192.168.1.2", 4000), Candidate(PUNCH, "203.0.113.9",
                                                                   21000)],
                   bytes(32), SECRET, NAT_EASY).encode()
REPLY = ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 21001)], 1_700_000_000, bytes(8),
                       SECRET).encode()


class ReplyDriver(SyncDriver):
    """The runner's part, with the reply codes it is handed kept (the runner passes them
    to the running host: `Controller.take_reply`)."""

    def __init__(self, state: AppState) -> None:
        super().__init__(state)
        self.replies: list[str] = []

    def take_reply(self, code: str) -> None:
        self.replies.append(code)


def away(mode: Mode, invite: str = INVITE, options: RuleOptions | None = None
         ) -> tuple[AppState, TableSession, ReplyDriver]:
    """A Towers game of two seen from Red's seat as `mode`'s player, whose other side has
    just gone away."""
    state, red, _blue = seated(options)
    state.mode = mode
    driver = state.driver = ReplyDriver(state)
    state.invites = [invite] if mode is Mode.HOST else []
    red.link = Link.RECONNECTING
    return state, red, driver


def test_an_away_hosts_invite_stands_across_the_width_under_the_board() -> None:
    """SPEC 3.8: each code "is shown on lines of its own across the whole width, nothing
    before or after it, so that a selection copies it whole"; the column beside the board
    broke the invite into 40-column pieces beside the log. The board and its counts stay
    whole in an 80x24 window."""
    state, red, _driver = away(Mode.HOST)
    lines = rendered(state)
    pieces = code_on_lines_of_its_own(lines, INVITE)
    assert len(pieces) == 2  # (116 characters: 79, then the rest)
    words = " ".join(lines[1:lines.index(pieces[0])])
    assert "The connection dropped. The game is saved; it goes on when they come back." \
        in words
    assert "If they send you a reply code, type r and Enter (or paste it) to take it. " \
        "Their invite code:" in words
    squares = cells("\n".join(lines))  # the board, every square, and the counts
    assert len(squares) == 25 and counts_whole(lines, ("Red", "Blue"))
    assert not any(INVITE[:20] in line[board.WIDTH:] for line in lines[:14])
    column = fragments_text(play.turn_text(state, 41))  # (beside the board: the turn only)
    assert "connection dropped" not in column and "gg2-" not in column
    assert play.hints(state).startswith("r Enter: take a reply code")
    red.link = Link.CONNECTING  # (a host waits for the joiner to come back: still away)
    assert INVITE[:79] in rendered(state)
    red.link = Link.CONNECTED
    assert not any("gg2-" in line or "dropped" in line for line in rendered(state))


def test_a_returning_joiners_reply_code_stands_across_the_width_under_the_board() -> None:
    """The joiner's fresh reply code (shown after 4 s, SPEC 3.8) on a line of its own."""
    state, red, _driver = away(Mode.JOIN)
    red.link = Link.CONNECTING  # (a joiner on its way back says nothing yet)
    assert not any("dropped" in line for line in rendered(state))
    red.link = Link.RECONNECTING
    state.reply_code = REPLY
    lines = rendered(state)
    assert code_on_lines_of_its_own(lines, REPLY) == [REPLY]
    at = lines.index(REPLY)
    assert "send them this reply code (they press r, or run p2pgotg host --reply CODE):" \
        in " ".join(lines[at - 2:at])
    assert len(cells("\n".join(lines))) == 25 and counts_whole(lines, ("Red", "Blue"))


def long_invite(lan6: int) -> str:
    """An invite of a host with many addresses: its LAN's, `lan6` IPv6 ones, a mapped and a
    punch candidate and its onion service (SPEC 3.8)."""
    from p2pgotg.reach.tor_onion import onion_address

    return Invite.v2([Candidate(LAN, "192.168.1.2", 4000),
                      *(Candidate(LAN, f"fd00::{n}", 4000) for n in range(2, 2 + lan6)),
                      Candidate(MAPPED, "198.51.100.1", 4000),
                      Candidate(PUNCH, "198.51.100.1", 21000),
                      Candidate(ONION, onion_address(bytes(32)), 4000)],
                     bytes(32), SECRET, NAT_EASY).encode()


def counts_whole(lines: list[str], colours: tuple[str, ...]) -> bool:
    """Every colour's row of the counts is on the screen (beside the board or under it)."""
    return all(any(re.search(rf"[ >]{c} \((you|opp)\) +\d+ +\d+ +\d+ +\d+$", line)
                   for line in lines) for c in colours)


def test_a_long_invite_fits_80x24_and_a_taller_screen_asks_for_more_rows() -> None:
    """Nothing is cut, and an 80x24 window keeps the board: while the panel is under the
    board the counts stand beside it, so four lines of code fit with everything else;
    where even that is too much (four colours, clocks, five lines of code), the window
    says how large it must be, and at that size everything is whole."""
    code = long_invite(1)
    state, _red, _driver = away(Mode.HOST, code)
    lines = rendered(state)
    assert len(code_on_lines_of_its_own(lines, code)) == 4
    assert len(cells("\n".join(lines))) == 25 and counts_whole(lines, ("Red", "Blue"))

    code = long_invite(4)
    options = RuleOptions(seats=4, teams=True, clock_seconds=600)
    state, red, _driver = away(Mode.HOST, code, options)
    red.clocks = Clocks(600, 0)
    small = " ".join(rendered(state))
    assert "This window is 80x24: this screen needs at least 80x" in small, small
    need = int(small.split("needs at least 80x")[1].split()[0])
    lines = rendered(state, rows=need)
    assert len(code_on_lines_of_its_own(lines, code)) == 5
    assert len(cells("\n".join(lines))) == 25 and "clocks: " in "\n".join(lines)
    assert counts_whole(lines, ("Red", "Blue", "Green", "Yellow"))
    assert any("teams: Red+Green" in line for line in lines)


def test_a_towers_host_takes_a_reply_code_at_the_action_line() -> None:
    """SPEC 3.8: "the move line's `r` or `reply`, or the code pasted there", with the words
    of Game of the Generals' screens; a malformed code is one line that says what is wrong,
    and nothing is handed on."""
    state, red, driver = away(Mode.HOST)
    play.submit(state, f"reply {REPLY}")
    assert driver.replies == [REPLY] and not state.status_error
    assert state.status == "taking the reply code: punching through the NATs..."
    play.submit(state, f"reply: {REPLY}")  # (pasted with the joiner's label)
    play.submit(state, REPLY)  # (pasted alone)
    assert driver.replies == [REPLY] * 3
    play.submit(state, "r")  # alone: the reply prompt, as on the move line
    assert state.prompt is Prompt.REPLY_CODE
    assert play.hints(state).startswith("paste the reply code the other player sent you")
    state.prompt = None
    for typo in ("reply gr1-aaaa", REPLY[:-3]):
        play.submit(state, typo)
        assert state.status_error and state.status.startswith("bad reply code") and \
            state.status.endswith("check that all of it was copied"), state.status
        assert "\n" not in state.status and driver.replies == [REPLY] * 3
    red.link = Link.CONNECTED
    play.submit(state, f"reply {REPLY}")
    assert state.status == "the other player is already connected: no reply code is needed"
    joiner, _red, joiner_driver = away(Mode.JOIN)
    play.submit(joiner, f"reply {REPLY}")
    assert joiner.status == "only the host takes reply codes: send yours to the host"
    assert joiner_driver.replies == [] and joiner.prompt is None


def test_the_clocks_show_beside_the_board_when_the_rules_have_them() -> None:
    state, red, _blue = seated(RuleOptions(clock_seconds=600, turn_seconds=90))
    red.clocks = Clocks(600, 90)
    text = fragments_text(play.turn_text(state, 40))
    assert "clocks: you 10:00 bot 10:00" in text
    assert "clocks" not in fragments_text(play.turn_text(seated()[0], 40))
