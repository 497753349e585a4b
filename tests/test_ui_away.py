"""The game screens while the other player is away (SPEC 3.6, 3.8): the countdown to the
claim moves and is shown only when a claim would come; the code that brings the other
player back stands alone across the whole width, copied whole; a host takes a reply code
in a game as in the lobby; labels on invite codes say what the code really reaches."""

from __future__ import annotations

import random
from pathlib import Path

import trio
from screens import code_on_lines_of_its_own, rendered

from p2pgotg.net.play.session import GameSession, Link, Timeouts
from p2pgotg.net.reaching.invite import NAT_EASY, Invite
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.reach.candidates import LAN, MAPPED, PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode
from p2pgotg.rules import Setup
from p2pgotg.testing.pair import Pair
from p2pgotg.ui import away_panel, lobby_screen, play_screen, setup_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import AppState, Mode, Prompt, Screen

SECRET = bytes(range(16))
INVITE = Invite.v2([Candidate(LAN, "192.168.1.2", 4000),
                    Candidate(PUNCH, "203.0.113.9", 21000)], bytes(32), SECRET, NAT_EASY)


class TrioDriver:
    """The runner's part the screens use: the trio clock, and the reply codes handed on."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    def now(self) -> float:
        return trio.current_time()

    def take_reply(self, code: str) -> None:
        self.replies.append(code)

    def invalidate(self) -> None:
        pass


def away_game(tmp_path: Path, role: str | None, *, in_play: bool = True,
              committed: bool = True) -> tuple[AppState, GameSession]:
    """A game of two in-memory peers, seen from `role`'s seat (None: the side to move),
    whose other side has just gone away: in play, or in the setup with the host's
    committed (so the joiner owes its own)."""
    pair = Pair.new()
    if in_play:
        pair.handshake()
    else:
        pair.events[HOST] += pair.host.start()
        pair.deliver()
        pair.events[JOINER] += pair.joiner.accept()
        pair.deliver()
        assert pair.host.side is not None
        if committed:
            pair.events[HOST] += pair.host.commit_setup(Setup.random(pair.host.side,
                                                                     random.Random(1)))
            pair.deliver()
    if role is None:
        role = HOST if pair.host.my_turn else JOINER
    session = GameSession(pair.peer(role), tmp_path, SECRET, Timeouts(abandon=180.0))
    session._after([])  # (what each side owes, from now: as a connection's first message)
    session.link, session.away_since = Link.RECONNECTING, trio.current_time()
    state = AppState(Mode.HOST if role == HOST else Mode.JOIN)
    state.driver = TrioDriver()  # type: ignore[assignment]
    state.invites = [INVITE.encode()]
    state.attach(session)
    state.absorb()
    return state, session


def shown(state: AppState) -> str:
    return fragments_text(away_panel.panel(state, 80))


async def test_the_countdown_moves_while_the_other_side_is_away(tmp_path, mock_clock):
    """Issue 27: "back in 3:00" stayed 3:00 after 66 s. The joiner owes its setup (300 s),
    the abandonment limit (180 s) comes first, and both run while it is away."""
    state, session = away_game(tmp_path, HOST, in_play=False)
    assert session.peer.flow.owes(JOINER) is not None
    assert "back in 3:00" in shown(state)
    mock_clock.jump(66)
    assert "back in 1:54" in shown(state)
    mock_clock.jump(200)  # (past the limit: nothing below zero)
    assert "back in 0:00" in shown(state)


async def test_no_countdown_while_we_owe_the_move(tmp_path, mock_clock):
    """No claim comes while the other side owes nothing (our move, no clock): the screen
    says the game waits, and no time."""
    state, session = away_game(tmp_path, None)
    assert session.peer.my_turn
    text = shown(state)
    assert "it goes on when they come back" in text and "back in" not in text


async def test_the_joiners_reply_code_stands_alone_across_the_width(tmp_path, mock_clock):
    """Issue 27: the code was squeezed into the board's 44-column side panel (a mouse
    selection took the move log along) and ended a sentence with a ")" stuck to it."""
    state, _session = away_game(tmp_path, JOINER)
    code = ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 21001)], 1_700_000_000,
                          bytes(8), SECRET).encode()
    state.reply_code = code
    lines = shown(state).splitlines()
    assert code in lines  # a line that is the code and nothing else
    assert state.screen is Screen.PLAY
    assert all(code not in fragments_text([f]) for f in play_screen.board_text(state))


async def test_the_hosts_invite_is_broken_at_the_width_with_nothing_around_it(tmp_path,
                                                                         mock_clock):
    state, _session = away_game(tmp_path, HOST)
    lines = shown(state).splitlines()
    code = state.invites[0]
    start = next(i for i, line in enumerate(lines) if code.startswith(line))
    parts = lines[start:start + 2]
    assert "".join(parts) == code and all(len(p) <= 79 for p in parts)


async def test_the_panel_is_drawn_whole_under_the_board(tmp_path, mock_clock):
    """Its window does not wrap lines: a sentence longer than the window was cut at its
    edge (`... type r and E`); it is broken between words, the code on lines of its own.
    A host that listens on this computer only takes no reply code, and is not told to."""
    state, _session = away_game(tmp_path, HOST)
    lines = rendered(state)
    code_on_lines_of_its_own(lines, state.invites[0])
    assert "They come back with the same command. If they send you a reply code, type r " \
        "and Enter (or paste it) to take it. Their invite code:" in " ".join(lines)
    state.invites = [Invite("127.0.0.1", 4000, bytes(32), SECRET).encode()]
    lines = rendered(state)
    code_on_lines_of_its_own(lines, state.invites[0])
    assert "They come back with the same command. Their invite code:" in lines
    assert not any("reply code" in line for line in lines)


async def test_a_host_takes_a_reply_code_on_the_game_screens(tmp_path, mock_clock):
    """`r` (or `reply`) and Enter on the play screen opens the reply prompt; a code pasted
    on the move line is taken as it is, its label and a stray bracket left out; on the
    setup screen `p` opens the prompt (its `r` makes a random setup)."""
    state, _session = away_game(tmp_path, HOST)
    driver = state.driver
    play_screen.submit(state, "r")
    assert state.prompt is Prompt.REPLY_CODE
    code = ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 21001)], 1_700_000_000,
                          bytes(8), SECRET).encode()
    lobby_screen.submit_reply(state, f"({code})")
    assert driver.replies == [code] and state.prompt is None  # type: ignore[attr-defined]
    play_screen.submit(state, f"reply: {code}")
    assert driver.replies == [code, code]  # type: ignore[attr-defined]
    assert "r Enter: take a reply code" in play_screen.hints(state)

    setup_state, _ = away_game(tmp_path / "setup", HOST, in_play=False)
    assert setup_state.screen is Screen.SETUP
    assert setup_screen.hints(setup_state).startswith(f"{setup_screen.REPLY_KEY} take a reply")


async def test_a_joiner_is_told_to_send_its_code_not_to_take_one(tmp_path, mock_clock):
    """Also with a code typed after `reply`: the prompt's words, and nothing handed on
    (the runner would have said that this host listens on this computer only)."""
    state, _session = away_game(tmp_path, JOINER)
    play_screen.submit(state, "r")
    assert state.prompt is None and "only the host takes reply codes" in state.status
    code = ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 21001)], 1_700_000_000,
                          bytes(8), SECRET).encode()
    play_screen.submit(state, f"reply {code}")
    assert state.status == "only the host takes reply codes: send yours to the host"
    assert state.driver.replies == []  # type: ignore[attr-defined]


def test_an_invite_is_labelled_by_everything_it_lists() -> None:
    """Issue 27: an invite that also carried the public address was labelled "for a player
    who can reach 192.168.1.2"."""
    where = lobby_screen._where
    assert where(INVITE.encode()) == ("for a player who can reach 192.168.1.2, or anywhere "
                                      "else with a reply code (your public address "
                                      "203.0.113.9)")
    mapped = Invite.v2([Candidate(MAPPED, "203.0.113.9", 4000),
                        Candidate(LAN, "192.168.1.2", 4000)], bytes(32), SECRET, NAT_EASY)
    assert where(mapped.encode()) == ("for a player anywhere (on the internet it reaches "
                                      "203.0.113.9:4000)")
    lan_only = Invite.v2([Candidate(LAN, "192.168.1.2", 4000)], bytes(32), SECRET)
    assert where(lan_only.encode()) == "for a player who can reach 192.168.1.2"
    assert where(Invite("127.0.0.1", 4000, bytes(32), SECRET).encode()) == \
        "for a player on this computer (127.0.0.1)"


async def test_the_screen_is_redrawn_while_the_other_side_is_away(tmp_path, autojump_clock):
    """The countdown only moves if the screen is drawn again: the runner's ticker redraws
    every half second while the connection is down, clock or no clock."""
    from p2pgotg.ui.runner import Controller, Launch

    _state, session = away_game(tmp_path, HOST)
    assert not (session.clocks.limit or session.clocks.per_move)  # (no clock to redraw)
    controller = Controller(AppState(Mode.HOST), Launch())
    controller.state.session = session

    class FakeApp:
        drawn = 0

        def invalidate(self) -> None:
            self.drawn += 1

    controller.app = FakeApp()  # type: ignore[assignment]
    with trio.move_on_after(5):
        await controller._ticker()
    assert controller.app.drawn >= 9  # type: ignore[attr-defined]
    session.link = Link.CONNECTED
    before = controller.app.drawn  # type: ignore[attr-defined]
    with trio.move_on_after(5):
        await controller._ticker()
    assert controller.app.drawn == before  # type: ignore[attr-defined]


async def test_a_board_screen_needs_the_rows_of_the_away_panel_too(tmp_path, mock_clock):
    """Nothing is cut: at 80x24 the play screen holds its board and the panel; the setup
    screen, its tray being taller, asks for a larger window while the panel is shown."""
    from p2pgotg.ui.app import BOARD_SCREEN_SIZE, board_screen_need

    playing, _session = away_game(tmp_path, HOST)
    assert board_screen_need(playing, 80, 4) == BOARD_SCREEN_SIZE
    setting_up, _ = away_game(tmp_path / "setup", HOST, in_play=False, committed=False)
    columns, rows = board_screen_need(setting_up, 80, 4)
    assert columns == 80 and rows > 24
    setting_up.session.link = Link.CONNECTED  # type: ignore[union-attr]
    assert board_screen_need(setting_up, 80, 4) == BOARD_SCREEN_SIZE
