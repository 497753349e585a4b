"""What the table screen keeps between two keys (SPEC chapter 5): the seat's session once
there is one, what the lobby shows before it, the cursor and the numbered actions, the
status line, the log, the question waiting for y or n, and the end's verdict.

The session is a `net.play.table_session.TableSession` (one seat at a table, across
connections); the screen reads it and asks for actions through `perform`, which the
application runs inside trio (`table_app`), and tests run at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from p2pgotg.games.towers.rules import Action, Game
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.printable import controls_escaped
from p2pgotg.ui.towers.board import square_at
from p2pgotg.ui.towers.words import colour

#: `perform(fn, done)`: run `fn(seat)` on the session's `TableSeat`; say `done` after it.
Perform = Callable[[Callable[[Any], list[Event]], "str | None"], None]

RESIGN = "resign"  # the questions the table screen asks (y or n)
QUIT = "quit"


@dataclass(frozen=True)
class LogLine:
    text: str
    style: str = ""


@dataclass
class TableScreen:
    """The table screen's state; `session` is None until the host's hello is in."""

    seats: int  # the table's size, known from the command line or the invite's `ok`
    role: str = "host"
    session: Any = None  # a TableSession (duck-typed: tests drive the kernel directly)
    perform_fn: Perform | None = None
    ascii: bool = False
    invites: list[str] = field(default_factory=list)  # the host's, shown in the lobby
    short_code: str | None = None
    labels: dict[bytes, str] = field(default_factory=dict)  # key -> who (`bot`, a name)
    status: str = ""
    status_error: bool = False
    confirm: str | None = None
    help_visible: bool = False
    cursor: int = square_at(2, 2)
    selected: int | None = None
    choices: tuple[Action, ...] = ()
    choices_for: tuple[int, int] | None = None
    log: list[LogLine] = field(default_factory=list)
    seen: int = 0  # the session's events folded into the log so far
    replay: Game | None = None  # the game as the log has told it, for what an action took
    marked: frozenset[int] = frozenset()  # the last colour's squares this turn
    marked_colour: int | None = None
    claims_on_me: list[tuple[int, int]] = field(default_factory=list)  # (claimant, seq)
    disputed: set[tuple[int, int]] = field(default_factory=set)
    owed_since: dict[tuple[int, str, int], float] = field(default_factory=dict)
    ended: str | None = None  # the result in words, once the game is over
    verdict: list[str] = field(default_factory=list)  # verify's lines of our own file
    network_done: bool = False  # the connections are closed: quitting loses nothing
    now: Callable[[], float] = lambda: 0.0

    # -- the status line ------------------------------------------------------------------

    def say(self, text: str) -> None:
        self.status, self.status_error = controls_escaped(text), False

    def warn(self, text: str) -> None:
        self.status, self.status_error = controls_escaped(text), True

    def tell(self, text: str) -> None:
        """News for the status line, unless a question waits there for y or n."""
        if self.confirm is None:
            self.say(text)

    def add(self, text: str, style: str = "") -> None:
        self.log.append(LogLine(controls_escaped(text), style))

    # -- the session, read ------------------------------------------------------------------

    @property
    def status_value(self) -> Any:
        """The seat's `TableStatus`, or None before there is a seat."""
        return None if self.session is None else self.session.status

    @property
    def size(self) -> int:
        """The table's seats: the session's once there is one (a joiner learns it there)."""
        status = self.status_value
        return int(status.seats) if status is not None and status.seats else self.seats

    @property
    def game(self) -> Game | None:
        """The rules' game once the turn order is known."""
        position = None if self.session is None else self.session.seat.game
        return None if position is None else position.game

    @property
    def my_seat(self) -> int | None:
        return None if self.session is None else self.session.seat.my_seat

    def colour_of(self, seat: int) -> int | None:
        status = self.status_value
        order = None if status is None else status.order
        return None if order is None or seat not in order else order.index(seat)

    def seat_of(self, colour_: int) -> int | None:
        status = self.status_value
        order = None if status is None else status.order
        return None if order is None or not 0 <= colour_ < len(order) else order[colour_]

    @property
    def my_colour(self) -> int | None:
        me = self.my_seat
        return None if me is None else self.colour_of(me)

    @property
    def my_turn(self) -> bool:
        status = self.status_value
        return status is not None and not status.over and status.seat_to_act is not None \
            and status.seat_to_act == self.my_seat

    def label(self, seat: int) -> str:
        """Who sits at `seat`: `you`, the seat's name, `bot`, or ``."""
        if seat == self.my_seat:
            return "you"
        session = self.session
        if session is None:
            return ""
        try:
            key = session.seat.flow.key_of(seat)
        except (IndexError, KeyError, AttributeError):
            return ""
        return self.name_of(bytes(key))

    def name_of(self, key: bytes) -> str:
        """The name of the seat whose hello `key` signs, as the session was told it (SPEC
        3.4 `names`: checked already), else our own label of it (`bot`), else ``."""
        names = getattr(self.session, "names", None) or {}
        return str(names.get(key) or self.labels.get(key, ""))

    @property
    def names_heard(self) -> bool:
        """Whether the names shown are the host's word (a joiner's screen, SPEC 3.4)."""
        return self.role == "joiner" and bool(getattr(self.session, "names", None))

    def who(self, seat: int) -> str:
        """`you`, else `Blue (seat 2)` once the order is known, `seat 2` before (as verify
        names a seat)."""
        if seat == self.my_seat:
            return "you"
        c = self.colour_of(seat)
        return f"seat {seat}" if c is None else f"{colour(c)} (seat {seat})"

    def who_to_act(self) -> str:
        status = self.status_value
        seat = None if status is None else status.seat_to_act
        return "nobody" if seat is None else self.who(seat)

    def holds(self, square: int) -> bool:
        """Whether our pawn stands on `square`."""
        game, mine = self.game, self.my_colour
        return game is not None and mine is not None and game.pawn_at(square) == mine

    def why_not_now(self) -> str | None:
        """Why we may not act now (None: we may)."""
        status = self.status_value
        if self.session is None or status is None:
            return "the table is not full yet: wait for the seats"
        if status.over or self.session.done:
            return "the game is over"
        if self.game is None:
            return "the turn order is not decided yet: wait for every seat's coin"
        if self.my_seat in status.left:
            return "you have left this table"
        if not self.my_turn:
            return f"not your turn: {self.who_to_act()} is to act"
        return None

    # -- asking the session -------------------------------------------------------------------

    def perform(self, fn: Callable[[Any], list[Event]], done: str | None = None) -> None:
        if self.perform_fn is None or self.session is None:
            self.warn("not seated yet: wait for the host")
            return
        self.perform_fn(fn, done)

    def send(self, action: Action) -> None:
        """Send an action the rules allow (`ui.towers.acting` has checked it)."""
        self.perform(partial(_act, action=action), f"you played {action.text()}")


def _act(seat: Any, action: Action) -> Any:
    return seat.act(action)
