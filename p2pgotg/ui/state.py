"""The one application-state object: which screen, the cursor, the status line, the game.

Key handlers change it and the layout reads it (pyvim's `Editor`). It never touches sockets
or trio: protocol actions go through `driver`, which runs them inside trio (`runner`). The
session's events are folded in by `absorb`, which the runner calls after every change.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from p2pgotg.games.gotg.events import ChallengeStarted, GameStarted, MovePlayed, SetupCommitted
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.net.play.player_name import who
from p2pgotg.players.levels import PLAY_DEFAULT
from p2pgotg.protocol import JOINER, Phase
from p2pgotg.protocol.events import (
    AuditCompleted,
    ChatReceived,
    ColoursDecided,
    DrawDeclined,
    DrawOffered,
    Event,
    GameEnded,
    OptionsProposed,
)
from p2pgotg.protocol.peer import Action
from p2pgotg.protocol.printable import controls_escaped, printable
from p2pgotg.rules import Game, PlyRecord, Rank, Side, Termination
from p2pgotg.ui import board
from p2pgotg.ui.review import Review
from p2pgotg.ui.saved_games import SavedGameInfo
from p2pgotg.ui.setup_editor import SetupEditor
from p2pgotg.ui.words import (
    capital,
    challenge_lines,
    how_it_ended,
    result_headline,
    verdict_words,
)

if TYPE_CHECKING:
    from p2pgotg.net.play.session import GameSession
    from p2pgotg.ui.towers.model import TowersScreen
    from p2pgotg.ui.towers.review import TowersReview


class Mode(enum.Enum):
    """How this program found its opponent."""

    BOT = "bot"  # `p2pgotg play`: the built-in bot over loopback
    HOST = "host"
    JOIN = "join"


class Screen(enum.Enum):
    START = "start"
    GAMES = "games"  # the saved games, from the start screen
    REVIEW = "review"  # a finished game, move by move (`p2pgotg show`, end and start screens)
    RESUME = "resume"  # `play` found an unfinished game against the bot: resume it?
    LOBBY = "lobby"
    SETUP = "setup"
    PLAY = "play"
    END = "end"
    ERROR = "error"


class Prompt(enum.Enum):
    """What the input line is asking for, when it is not the play screen's command line."""

    JOIN_CODE = "invite code: "
    LOAD = "load formation: "
    SAVE = "save formation as: "
    REPLY_CODE = "reply code: "


class Confirm(enum.Enum):
    """A question waiting for y or n."""

    QUIT = "quit"
    RESIGN = "resign"
    RANDOM = "random"  # a random formation over pieces placed by hand


class Driver(Protocol):
    """What the state asks of the trio side (implemented in `runner`)."""

    def perform(self, action: Action[GotgPeer], done: str | None = None) -> None:
        """Run `action` on the session inside trio; say `done` when it worked, the error
        in the status line when it did not."""

    def start(self, mode: Mode, invite: str | None = None) -> None: ...

    def rematch(self) -> None: ...

    def leave(self) -> None:
        """Leave the game in play (telling the other side) and go back to the start screen."""

    def resume_answer(self, choice: int | None) -> None:
        """The player's answer to the offer of unfinished games: the index of the one to
        resume, or None for a new game."""

    def games_folder(self) -> Path:
        """Where the saved games are."""

    def take_reply(self, code: str) -> None:
        """The host punches to the joiner whose reply code this is (SPEC 3.8)."""

    def now(self) -> float:
        """The trio clock's time, for reading the game clocks."""

    def invalidate(self) -> None: ...


class _NoDriver:
    def perform(self, action: Action[GotgPeer], done: str | None = None) -> None:
        raise RuntimeError("no driver attached")

    def start(self, mode: Mode, invite: str | None = None) -> None:
        raise RuntimeError("no driver attached")

    def rematch(self) -> None:
        raise RuntimeError("no driver attached")

    def leave(self) -> None:
        raise RuntimeError("no driver attached")

    def resume_answer(self, choice: int | None) -> None:
        raise RuntimeError("no driver attached")

    def take_reply(self, code: str) -> None:
        raise RuntimeError("no driver attached")

    def games_folder(self) -> Path:
        from p2pgotg.net.play.saved_games import games_dir

        return games_dir()

    def now(self) -> float:
        return 0.0

    def invalidate(self) -> None:
        pass


@dataclass
class ResumeOffer:
    """Unfinished games the player may pick up again, or leave for a new one (Screen.RESUME):
    `play` offers its games against the bot, hosting its hosted games."""

    heading: str  # `You have 2 unfinished games against the bot.`
    games: list[str]  # one line each, in the order offered
    new_game: str  # what `n` does
    cursor: int = 0

    def move(self, step: int) -> None:
        self.cursor = max(0, min(len(self.games) - 1, self.cursor + step))


@dataclass(frozen=True)
class LogLine:
    text: str
    style: str = ""


class AppState:
    """Everything the screens show and the keys change."""

    def __init__(self, mode: Mode | None = None, *, ascii: bool = False,
                 rng: random.Random | None = None) -> None:
        self.mode = mode
        self.ascii = ascii
        self.rng = rng or random.Random()
        self.driver: Driver = _NoDriver()
        # the connection, before and around the session
        self.session: GameSession | None = None
        self.invites: list[str] = []
        self.short_code: str | None = None  # the host's LAN short code, shown large
        #: The joiner's reply code for the host, while it is not connected (SPEC 3.8).
        self.reply_code: str | None = None
        self.host_options: Any = None  # the rules we propose, before a joiner (either game's)
        self._net_note = ""
        self._fatal: str | None = None
        self.finished = False  # the network side is done with this game
        # the screen
        self.status = ""
        self.status_error = False
        self.help_on: Screen | None = None  # the screen the `?` overlay was opened on
        self.help_scroll = 0  # the overlay's first line shown
        self.prompt: Prompt | None = None
        self.confirm: Confirm | None = None
        self.from_start = mode is None  # quitting a game goes back to the start screen
        self.review: Review | TowersReview | None = None  # the game being reviewed (REVIEW)
        self.review_back: Screen | None = None  # where leaving the review goes
        self.saved_games: list[SavedGameInfo] | None = None  # Screen.GAMES, when shown
        self.games_cursor = 0
        self.resume_offer: ResumeOffer | None = None  # Screen.RESUME: the unfinished games
        self.cursor = 0  # a square index
        self.selected: int | None = None  # the square of a piece picked up to move
        self.editor: SetupEditor | None = None
        self.log: list[LogLine] = []
        self.offer_draw = False  # send a draw offer with the next move
        self.end_view_setups = False  # end screen: starting setups instead of final position
        self.end_view_challenges = False  # end screen: every challenge with both ranks
        self.challenge_page = 0  # end screen: which page of the challenge list
        self.games = 0
        self.game: str | None = None  # the game to play or host: None GotG, "towers" Towers
        self.towers: TowersScreen | None = None  # the Towers screens' own state (ui/towers)
        self.bot_level = PLAY_DEFAULT  # how well the bot plays; the start screen changes it
        self._seen = 0
        self._claimed_at: tuple[int, int] | None = None  # (ply, events) of the last claim
        self._ended: str | None = None  # `game over: You win: ...` once the game has ended

    # -- the session, read -------------------------------------------------------------

    @property
    def peer(self) -> GotgPeer | None:
        return self.session.peer if self.session else None

    @property
    def view(self) -> Game | None:
        return self.peer.view if self.peer else None

    @property
    def side(self) -> Side | None:
        peer = self.peer
        return peer.side if isinstance(peer, GotgPeer) else None

    @property
    def viewer(self) -> Side:
        """Which way round to draw the board (White's way until colours are known)."""
        side = self.side
        return Side.WHITE if side is None else side

    @property
    def peer_name(self) -> str | None:
        """The name the other side gave (escaped; a label that proves nothing)."""
        return self.session.peer_name if self.session is not None else None

    @property
    def opponent(self) -> str:
        """The other side in a sentence: the bot, the name it gave, or your opponent."""
        if self.mode is Mode.BOT:
            return "the bot"
        return self.peer_name or "your opponent"

    @property
    def opponent_short(self) -> str:
        """For the move log's narrow column."""
        if self.mode is Mode.BOT:
            return "bot"
        return (self.peer_name or "opp")[:4]

    @property
    def opponent_label(self) -> str:
        """Who the other side is, where it is introduced: the bot and its level, or the name
        it gave with its key's short fingerprint (which is what identifies it)."""
        if self.mode is Mode.BOT:
            return f"the bot ({self.bot_level})"
        peer = self.peer
        key = peer.flow.key_of(peer.other_role) if peer is not None else None
        if key is None and self.peer_name is None:
            return "your opponent"
        return who(self.peer_name, key)

    @property
    def confirm_quit(self) -> bool:
        return self.confirm is Confirm.QUIT

    @property
    def screen(self) -> Screen:
        if self.review is not None:
            return Screen.REVIEW
        if self.mode is None:
            return Screen.GAMES if self.saved_games is not None else Screen.START
        if self.resume_offer is not None and self.session is None:
            return Screen.RESUME
        session = self.session
        if session is None:
            return Screen.ERROR if self.fatal else Screen.LOBBY
        peer = session.peer
        if peer.failed is not None or peer.flow.is_over or session.done:
            return Screen.END
        if self.fatal:
            return Screen.ERROR
        phase = peer.phase
        if phase is Phase.SETUP and self.side is not None:
            return Screen.SETUP
        if phase is Phase.PLAY:
            return Screen.PLAY
        return Screen.LOBBY

    @property
    def help_visible(self) -> bool:
        """The `?` overlay is shown only over the screen it was opened on: leaving that
        screen (a game starting, going back to the start screen) closes it."""
        return self.help_on is not None and self.help_on is self.screen

    def toggle_help(self) -> None:
        self.help_on = None if self.help_visible else self.screen
        self.help_scroll = 0

    @property
    def in_game(self) -> bool:
        """A game that quitting would leave unfinished."""
        s = self.session
        return s is not None and not s.done and s.peer.flow.game_id is not None

    @property
    def takes_text(self) -> bool:
        """Whether letters typed go to the input line (else they are single-key commands)."""
        return self.prompt is not None or (self.screen is Screen.PLAY and self.confirm is None)

    @property
    def began(self) -> bool:
        """The game got past the setup: there are moves (or an end) to speak of."""
        peer = self.peer
        return peer is not None and (peer.view is not None or peer.flow.is_over)

    def ask_quit(self) -> None:
        """Ask (y/n) before quitting, saying what becomes of the game."""
        self.confirm = Confirm.QUIT
        where = "leave this game for the start screen" if self.from_start else "quit"
        if not self.in_game:
            self.say(f"{where}? y/n")
        elif self.mode is Mode.BOT:
            self.say(f"{where}? The game is saved: p2pgotg play offers to resume it. y/n")
        else:
            self.say(f"{where}? The game is saved: run the same command again to resume it. "
                     "y/n")

    def ask(self, question: Confirm, text: str) -> None:
        self.confirm = question
        self.say(f"{text} y/n")

    # -- the status line ---------------------------------------------------------------

    # Every line the screen shows passes here escaped (SPEC 3.4): peer text rides inside
    # network notes, refusals, errors and verdicts, and must not steer the terminal.

    @property
    def net_note(self) -> str:
        """The network layer's last word (connected, lost, resuming...)."""
        return self._net_note

    @net_note.setter
    def net_note(self, text: str) -> None:
        self._net_note = controls_escaped(text)

    @property
    def fatal(self) -> str | None:
        """Why no game can go on: shown on the error screen."""
        return self._fatal

    @fatal.setter
    def fatal(self, text: str | None) -> None:
        self._fatal = None if text is None else controls_escaped(text)

    def _tell(self, text: str) -> None:
        """What the game just did, in the status line, unless a question waits there for
        y or n: the question stays where the player reads it (the log has the news)."""
        if self.confirm is None:
            self.say(text)

    def say(self, text: str) -> None:
        self.status, self.status_error = controls_escaped(text), False

    def warn(self, text: str) -> None:
        self.status, self.status_error = controls_escaped(text), True

    # -- following the session ---------------------------------------------------------

    def attach(self, session: GameSession) -> None:
        """A new game (or the same one again: then nothing changes)."""
        if session is self.session:
            return
        self.session = session
        self.fatal = None
        self.finished = False
        self.log = []
        self._seen = 0
        self._claimed_at = None
        self._ended = None
        self.editor = None
        self.selected = None
        self.offer_draw = False
        self.end_view_setups = False
        self.end_view_challenges = False
        self.challenge_page = 0
        self.confirm = None
        self.games += 1
        self.say("")

    def absorb(self) -> None:
        """Fold the session's new events into the log and the status line; claim a flag
        win when the rules give it."""
        session = self.session
        if session is None:
            return
        if isinstance(session.peer, TowersPeer):  # (Towers tells its own events)
            from p2pgotg.ui.towers.log import absorb

            absorb(self)
            return
        view = session.peer.view
        if self._seen == 0 and not self.log and view is not None and view.history:
            self._log_resumed(session.peer)
        while self._seen < len(session.events):
            event = session.events[self._seen]
            self._seen += 1
            self._on_event(event, session.peer)
        peer = session.peer
        if self.editor is None and peer.side is not None and peer.phase is not Phase.HELLO:
            self.editor = SetupEditor(peer.side)
            self.cursor = board.square_at(peer.side, 4, 6)
            own = peer.own_setup
            if own is not None:  # a resumed game: show what was committed
                self.editor.placement = dict(own.placement)
        self._claim_flag_when_due()

    def _own_squares(self) -> set[int]:
        view, side = self.view, self.side
        if view is None or side is None:
            return set()
        return {sq for p in view.pieces(side) if (sq := view.square_of(p)) is not None}

    def _mine(self, role: str) -> bool:
        return self.peer is not None and role == self.peer.role

    def _add(self, text: str, style: str = "") -> None:
        self.log.append(LogLine(controls_escaped(text), style))

    def _on_event(self, event: Event, peer: GotgPeer) -> None:
        them = self.opponent
        if isinstance(event, OptionsProposed) and peer.role == JOINER:
            self._tell("the host proposes these rules: press a to accept, q to decline")
        elif isinstance(event, ColoursDecided):
            side = peer.side
            assert side is not None
            first = "you start" if side is Side.WHITE else f"{them} starts"
            self._add(f"You are {side.display_name}; {self.opponent_label} is "
                      f"{side.other.display_name}: {first}.", "class:log.info")
        elif isinstance(event, SetupCommitted):
            if self._mine(event.role):
                self._tell(f"setup committed: waiting for {self.opponent}")
            else:
                self._add(f"{capital(self.opponent)} is ready.", "class:log.info")
        elif isinstance(event, GameStarted):
            self._add("The game begins.", "class:log.info")
            self.cursor = board.square_at(self.viewer, 4, 5)
            self._tell("your move" if peer.my_turn else f"{self.opponent} moves first")
        elif isinstance(event, ChallengeStarted):
            who = "you challenge" if self._mine(event.role) else f"{them} challenges"
            self._tell(f"{who} on {event.move.text()[-2:]}: waiting for the reply")
        elif isinstance(event, MovePlayed):
            self._on_move(event, peer)
        elif isinstance(event, DrawOffered | DrawDeclined | ChatReceived):
            self._log_talk(event, peer)
        elif isinstance(event, GameEnded):
            side = peer.side
            winner_side = None if event.winner is None else peer.flow.side_of(event.winner)
            won = None if winner_side is None else winner_side is side
            head = result_headline(winner_side, side, self.opponent)
            self._ended = f"game over: {head}: {how_it_ended(event.termination, won)}"
            if won and event.termination is Termination.FLAG_REACHED_BACK_RANK:
                self._ended += ": win claimed"  # (SPEC 1.7: the client says it claimed)
            self._add(f"{self._ended.removeprefix('game over: ')}.", "class:log.end")
            self.selected = None
            if self.confirm is Confirm.RESIGN:  # (nothing is left to resign)
                self.confirm = None
            self._tell(f"{self._ended}. Checking the audit...")  # (nothing waits any more)
        elif isinstance(event, AuditCompleted):
            self._add(verdict_words(event.verdict, peer.role, self.opponent), "class:log.end")
            done = "the audit is in (below)" if event.verdict.audit_complete else \
                "the audit is incomplete (below)"
            self._tell(f"{self._ended}; {done}" if self._ended else done)

    def _on_move(self, event: MovePlayed, peer: GotgPeer) -> None:
        view, side = peer.view, peer.side
        assert view is not None and side is not None
        record = event.record
        history = view.history
        number = next((len(history) - i for i, r in enumerate(reversed(history))
                       if r is record), len(history))
        self._log_move(view, record, number, side)
        challenge = record.defender is not None
        if record.side is not side:
            self.selected = self.selected if self.selected in self._own_squares() else None
            if not peer.flow.is_over:
                text = f"{self.opponent} played {record.move.text()}"
                if challenge:
                    text += ": " + "; ".join(challenge_lines(view, record, side))
                if peer.draw_offered_to_me:
                    text += ", offering a draw: type draw to accept, decline, or just move"
                self._tell(f"{text}. Your move." if not peer.draw_offered_to_me else text)
        elif challenge:
            self._tell("; ".join(challenge_lines(view, record, side)))

    def _log_move(self, view: Game, record: PlyRecord, number: int, side: Side) -> None:
        mover = "you" if record.side is side else self.opponent_short
        challenge = record.defender is not None
        self._add(f"{number:>3} {mover:<4} {record.move.text()}{'  x' if challenge else ''}",
                  "class:log.mine" if record.side is side else "class:log.theirs")
        if challenge:
            for line in challenge_lines(view, record, side):
                self._add(f"      {line}", "class:log.challenge")

    def _log_resumed(self, peer: GotgPeer) -> None:
        """A game picked up from its saved transcript: the log so far, rebuilt by replaying
        the messages, so chat lines and draw offers come back between the moves they came
        with; the moves are told from the view (which knows our own ranks)."""
        view, side = peer.view, peer.side
        assert view is not None and side is not None
        self._add(f"Resumed: you are {side.display_name}.", "class:log.info")
        replayed = GotgFlow()
        number = 0
        for role, data in peer.flow.transcript:
            try:
                events, _ = replayed.process(role, data)
            except Exception:  # noqa: BLE001  (our own checked messages: never; moves stay)
                break
            for event in events:
                if isinstance(event, MovePlayed) and number < len(view.history):
                    number += 1
                    self._log_move(view, view.history[number - 1], number, side)
                elif isinstance(event, DrawOffered | DrawDeclined | ChatReceived):
                    self._log_talk(event, peer)
        for rest in range(number, len(view.history)):
            self._log_move(view, view.history[rest], rest + 1, side)
        if peer.flow.is_over:
            self._tell("resumed: the game is over; checking the audit...")
        elif peer.flow.pending is not None:
            self._tell("resumed: a challenge waits for its reply")
        else:
            self._tell("resumed: your move" if peer.my_turn else
                     f"resumed: {self.opponent} to move")

    def _log_talk(self, event: Event, peer: GotgPeer) -> None:
        """A draw offer, a declined draw or a chat line, in the log."""
        them = self.opponent
        if isinstance(event, DrawOffered):
            mine = self._mine(event.role)
            self._add("  you offer a draw" if mine else f"  {them} offers a draw",
                      "class:log.info")
        elif isinstance(event, DrawDeclined):
            who = "you decline" if self._mine(event.role) else f"{them} declines"
            self._add(f"  {who} the draw", "class:log.info")
        elif isinstance(event, ChatReceived):
            who = "you" if self._mine(event.role) else self.opponent_short
            self._add(f"  {who}: {printable(event.text)}", "class:log.chat")

    def _claim_flag_when_due(self) -> None:
        """At the start of our turn, a flag of ours that has made it to the far back rank
        wins: claim it without being asked (the rules leave no choice worth making)."""
        peer, view = self.peer, self.view
        session = self.session
        if peer is None or view is None or session is None or not peer.my_turn:
            return
        when = (view.ply, len(session.events))  # (a refused claim is tried again later)
        if self._claimed_at == when:
            return
        side = peer.side
        assert side is not None
        flag = next((p for p in view.pieces(side) if view.rank_of(p) is Rank.FLAG), None)
        if flag is not None and view.flag_claim_problem(side, flag) is None:
            self._claimed_at = when
            self.say("your flag reached the far back rank and survived: claiming the win")
            self.driver.perform(lambda p: p.claim_flag(flag),
                                "your flag reached the far back rank: win claimed")

    # -- marks for the board -----------------------------------------------------------

    def last_marks(self) -> tuple[frozenset[int], frozenset[int]]:
        """(squares of the last move, squares of the last challenge)."""
        view = self.view
        if view is None or not view.history:
            return frozenset(), frozenset()
        last = view.history[-1]
        moved = frozenset((last.move.from_square, last.move.to_square))
        for record in reversed(view.history):
            if record.defender is not None:
                challenge = frozenset((record.move.to_square,))
                return (moved - challenge if record is last else moved), challenge
        return moved, frozenset()

    def targets(self) -> frozenset[int]:
        """Where the picked-up piece may go now."""
        view, sq = self.view, self.selected
        if view is None or sq is None or self.peer is None or not self.peer.my_turn:
            return frozenset()
        return frozenset(m.to_square for m in view.legal_moves if m.from_square == sq)
