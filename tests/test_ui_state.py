"""The screens' logic against two protocol peers wired back to back in memory (no network):
moves typed at the play screen, the automatic flag-run claim, draw offers, and what the
status line says when something is refused."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.clock import Clocks
from p2pgotg.net.play.session import Link
from p2pgotg.protocol import LocalProtocolError
from p2pgotg.rules import Move, Rank, Setup, Side, Termination
from p2pgotg.testing.pair import Pair
from p2pgotg.ui import end_screen, play_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import AppState, Mode, Screen


@dataclass
class PairSession:
    """What the screens read of a `GameSession`, over a `Pair` delivering at once."""

    pair: Pair
    role: str
    link: Link = Link.CONNECTED
    clocks: Clocks = field(default_factory=lambda: Clocks(0, 0))
    path: None = None
    problem: str | None = None
    peer_name: str | None = None  # (no name given: the screens say `your opponent`)

    @property
    def peer(self) -> GotgPeer:
        return self.pair.peer(self.role)

    @property
    def events(self) -> list:
        return self.pair.events[self.role]

    @property
    def verdict(self):
        return self.peer.flow.conclusion()

    @property
    def done(self) -> bool:
        return self.verdict is not None or self.peer.failed is not None

    def perform(self, action) -> list:
        events = action(self.peer)
        self.pair.events[self.role] += events
        self.pair.deliver()
        return events


class SyncDriver:
    """The runner's job, done at once: perform, say, absorb."""

    def __init__(self, state: AppState) -> None:
        self.state = state

    def perform(self, action, done: str | None = None) -> None:
        try:
            self.state.session.perform(action)
        except LocalProtocolError as exc:
            self.state.warn(str(exc))
            return
        if done:
            self.state.say(done)
        self.state.absorb()

    def now(self) -> float:
        return 0.0

    def invalidate(self) -> None:
        pass


def start(white: Setup, black: Setup) -> tuple[AppState, PairSession, PairSession]:
    """A game in play; the state sits in White's seat, against `Mode.BOT` words."""
    pair = Pair.new()
    pair.events["host"] += pair.host.start()
    pair.deliver()
    pair.events["joiner"] += pair.joiner.accept()
    pair.deliver()
    sessions = {p.side: PairSession(pair, p.role) for p in (pair.host, pair.joiner)}
    for side, setup in ((Side.WHITE, white), (Side.BLACK, black)):
        sessions[side].perform(lambda p, s=setup: p.commit_setup(s))
    state = AppState(Mode.BOT)
    state.driver = SyncDriver(state)
    state.attach(sessions[Side.WHITE])  # type: ignore[arg-type]
    state.absorb()
    return state, sessions[Side.WHITE], sessions[Side.BLACK]


def black_moves(black: PairSession, state: AppState, text: str) -> None:
    black.perform(lambda p: p.move(Move.parse(text)))
    state.absorb()


def typed(state: AppState, line: str) -> None:
    play_screen.submit(state, line)


@pytest.fixture
def flag_run(setup_with):
    """White's flag on e3 with a clear e-file; Black's d8 is `d8`, its f8 empty."""

    def make(d8: bool):
        white = setup_with(Side.WHITE, {"e3": Rank.FLAG})
        empty = ["e6", "e7", "e8", "f8", "a8"] + (["b8"] if d8 else ["d8"])
        black = setup_with(Side.BLACK, {"i6": Rank.PRIVATE}, empty=empty)
        return start(white, black)

    return make


def _shuffle(black: PairSession, state: AppState, n: int) -> None:
    black_moves(black, state, "i6-i5" if n % 2 == 0 else "i5-i6")


def test_a_flag_arriving_safe_claims_the_win_with_its_move(flag_run) -> None:
    state, white, black = flag_run(d8=False)
    assert state.screen is Screen.PLAY and white.peer.my_turn
    for n, step in enumerate(["e3 e4", "e4 e5", "e5 e6", "e6 e7"]):
        typed(state, step)
        assert not state.status_error, state.status
        _shuffle(black, state, n)
    typed(state, "e7 e8")  # d8, f8 empty: no enemy beside it, so it wins on arrival
    assert "win claimed" in state.status
    assert white.peer.flow.result == (Termination.FLAG_REACHED_BACK_RANK, white.role)
    assert state.screen is Screen.END
    assert "You win: your flag reached the far back rank." in fragments_text(
        end_screen.headline(state))
    assert "Audit clean" in fragments_text(end_screen.audit_text(state))


def test_a_flag_next_to_an_enemy_is_claimed_when_it_has_survived(flag_run) -> None:
    state, white, black = flag_run(d8=True)
    for n, step in enumerate(["e3 e4", "e4 e5", "e5 e6", "e6 e7", "e7 e8"]):
        typed(state, step)
        assert not state.status_error, state.status
        if n < 4:
            _shuffle(black, state, n)
    assert white.peer.flow.result is None  # d8 stands beside it: it must survive a turn
    black_moves(black, state, "i6-i5")
    # our turn again, the flag still there: the screen claims without being asked
    assert white.peer.flow.result == (Termination.FLAG_REACHED_BACK_RANK, white.role)
    assert state.screen is Screen.END


def test_refusals_say_why_and_change_nothing(setup_with) -> None:
    state, white, _ = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    ply = white.peer.view.ply
    for line, says in [
        ("a3 a5", "not one square forward, back or sideways"),
        ("a6 a5", "not yours"),
        ("e5 e4", "there is no piece on e5"),
        ("decline", "has not offered a draw"),
        ("c3 c", "not a move"),
    ]:
        typed(state, line)
        assert state.status_error and says in state.status, (line, state.status)
        assert white.peer.view.ply == ply
    typed(state, "a3 a4")
    typed(state, "a4 a5")
    assert "the bot's turn" in state.status and white.peer.view.ply == ply + 1


def test_draw_offers_both_ways(setup_with) -> None:
    state, white, black = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    typed(state, "draw")
    assert "goes with your next move" in state.status
    typed(state, "a3 a4")
    assert black.peer.draw_offered_to_me
    assert any("you offer a draw" in line.text for line in state.log)
    black.perform(lambda p: p.decline_draw())
    state.absorb()
    assert any("the bot declines the draw" in line.text for line in state.log)
    black.perform(lambda p: p.move(Move.parse("a6-a5"), offer_draw=True))
    state.absorb()
    assert "offering a draw: type draw to accept" in state.status
    typed(state, "draw")
    assert white.peer.flow.result == (Termination.DRAW_AGREED, None)
    assert "Draw: a draw was agreed." in fragments_text(end_screen.headline(state))


def test_the_log_names_ranks_the_view_knows(setup_with) -> None:
    state, _, black = start(setup_with(Side.WHITE, {"e3": Rank.SERGEANT}),
                                setup_with(Side.BLACK, {"e6": Rank.SPY}))
    typed(state, "e3 e4")
    black_moves(black, state, "e6-e5")
    typed(state, "e4 e5")  # a Sergeant attacks a Spy: the Spy wins
    log = [line.text for line in state.log]
    assert "      your SGT vs their SPY" in log and "      -> your SGT eliminated" in log
    board = fragments_text(play_screen.board_text(state))
    assert "You lost (1): SGT" in board and "You took (0): -" in board


def test_clocks_show_in_the_title_when_the_rules_have_them(setup_with) -> None:
    state, white, _ = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    assert "you " not in play_screen.title(state)  # no clock: nothing to show
    white.clocks = Clocks(300, 0)
    white.clocks.switch(white.role, 0.0)
    state.driver.now = lambda: 61.5  # type: ignore[method-assign]
    assert "you 3:59 bot 5:00" in play_screen.title(state)


def test_a_resumed_game_shows_its_moves_so_far(setup_with) -> None:
    """A session restored from its transcript starts with no events: the log is rebuilt
    from the view's history."""
    state, white, black = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    typed(state, "a3 a4")
    black_moves(black, state, "a6-a5")
    typed(state, "chat your move was quick")
    typed(state, "draw")
    typed(state, "b3 b4")
    black.perform(lambda p: p.decline_draw())
    black.perform(lambda p: p.chat("no draw yet"))
    black_moves(black, state, "b6-b5")

    class Restored(PairSession):
        @property
        def events(self) -> list:
            return []

    again = AppState(Mode.HOST)
    again.driver = SyncDriver(again)
    again.attach(Restored(white.pair, white.role))  # type: ignore[arg-type]
    again.absorb()
    # chat lines and draw offers come back too, between the moves they came with
    assert [line.text for line in again.log] == [
        "Resumed: you are White.", "  1 you  a3-a4", "  2 opp  a6-a5",
        "  you: your move was quick", "  you offer a draw", "  3 you  b3-b4",
        "  your opponent declines the draw", "  opp: no draw yet", "  4 opp  b6-b5"]


# -- peer text on the screen is escaped (issue 13, finding 5) ---------------------------------

#: What a hostile peer can put in a chat line past the schema (which refuses only C0):
#: the one-byte CSI (erase the screen), a bidi override, DEL, a zero-width joiner.
HOSTILE_CHAT = "\x9b2J\u202egniw I\x7f\u200d"


def _hidden(text: str) -> bool:
    import unicodedata

    return any(unicodedata.category(c) in {"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"}
               for c in text)


def test_a_peers_chat_with_escape_sequences_is_shown_escaped(setup_with) -> None:
    state, _, black = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    black.perform(lambda p: p._send("chat", {"text": HOSTILE_CHAT}))  # past `chat`'s filter
    state.absorb()
    assert "  bot: \\x9b2J\\u202egniw I\\x7f\\u200d" in [line.text for line in state.log]
    assert not any(_hidden(line.text) for line in state.log)


def test_a_resumed_games_chat_is_shown_escaped_too(setup_with) -> None:
    _, white, black = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    black.perform(lambda p: p._send("chat", {"text": HOSTILE_CHAT}))
    again = AppState(Mode.BOT)
    again.driver = SyncDriver(again)
    again._log_resumed(white.peer)
    assert any("\\x9b2J" in line.text for line in again.log)
    assert not any(_hidden(line.text) for line in again.log)


def test_a_peers_reason_in_notes_refusals_and_errors_is_shown_escaped() -> None:
    """A refusal or stop reason (an unsigned control frame: any text at all) reaches the
    status line, the network note and the error screen inside our own sentences."""
    from p2pgotg.net.reaching.control_frames import SessionError
    from p2pgotg.ui import lobby_screen
    from p2pgotg.ui.errors import explain

    reason = "\x1b]0;pwned\x07\r\x1b[2Kjoiner wins\x1b]52;c;ZWNobyBoaQ==\x07"
    state = AppState(Mode.HOST)
    state.fatal = explain(SessionError(f"the other player stopped: {reason}"))
    state.net_note = f"a connection was refused: expected hi, got {reason}"
    state.warn(f"refused: {reason}")
    shown = [state.fatal or "", state.net_note, state.status,
             fragments_text(lobby_screen.error_body(state))]
    for text in shown:
        assert "\\x1b]0;pwned\\x07\\x0d\\x1b[2K" in text and "\\x1b]52;c;" in text
        assert not _hidden(text.replace("\n", ""))  # (the screen's own line breaks)


def test_the_screen_refuses_an_eleventh_chat_line_in_a_row_saying_why(setup_with) -> None:
    """SPEC 2.10: at most 10 chat lines in a row; our side never sends one more (issue 13,
    finding 3), and the player reads why in the status line."""
    state, white, _ = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    for i in range(10):
        typed(state, f"chat line {i}")
    sent = white.peer.flow.next_seq(white.role)
    typed(state, "chat one more")
    assert state.status_error
    assert "chat not sent: 10 chat lines in a row is the most" in state.status
    assert white.peer.flow.next_seq(white.role) == sent  # nothing signed, nothing sent
    typed(state, "a3 a4")  # a move starts a new count
    typed(state, "chat now it goes")
    assert white.peer.flow.next_seq(white.role) == sent + 2


def test_a_question_stays_in_the_status_line_while_the_game_goes_on(setup_with) -> None:
    """`resign this game? y/n` is not overwritten by the opponent's move arriving meanwhile;
    once the opponent resigns, there is nothing left to resign: the question goes."""
    state, _, black = start(setup_with(Side.WHITE, {}), setup_with(Side.BLACK, {}))
    typed(state, "a3 a4")
    typed(state, "resign")
    assert state.confirm is not None and "resign this game?" in state.status
    black_moves(black, state, "a6-a5")
    assert state.confirm is not None and "resign this game?" in state.status
    assert any("a6-a5" in line.text for line in state.log)  # (the log has the move)
    black.perform(lambda p: p.resign())
    state.absorb()
    assert state.confirm is None and "game over: You win: they resigned" in state.status
