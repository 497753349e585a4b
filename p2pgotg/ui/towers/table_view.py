"""What the table screen shows, as formatted text (SPEC chapter 5): the title, the lobby
before the roster, the board and its counts, the seat list (colour, seat, who, still in
or left and how, points, clocks, who is to act, who has owed something a while), the log,
and the end: the result, `verify`'s lines of our own file and its path. Pure over the
screen's state."""

from __future__ import annotations

import textwrap

from prompt_toolkit.utils import get_cwidth

from p2pgotg.net.play.table_session import seat_keys
from p2pgotg.protocol.printable import ELLIPSIS
from p2pgotg.ui.board import Fragments, Marks
from p2pgotg.ui.towers import board
from p2pgotg.ui.towers.acting import targets
from p2pgotg.ui.towers.board import colour_style
from p2pgotg.ui.towers.panel import table, turn_words, what_to_do
from p2pgotg.ui.towers.table_log import LEFT_WORDS
from p2pgotg.ui.towers.table_model import TableScreen
from p2pgotg.ui.towers.words import colour
from p2pgotg.ui.words import clock_text

#: What a seat owes, in words (SPEC 5.7's names).
OWED_WORDS = {"coin_open": "its coin opening", "choice": "its setup choice",
              "action": "its action", "heads": "its heads"}
#: A seat that has owed something this long is shown as waited for.
WAITED = 10.0
#: Beside the seats on a joiner's screen: names are the host's word (SPEC 3.4 `names`).
NAMES_NOTE = "names: the host's word"


def title(screen: TableScreen) -> str:
    status = screen.status_value
    me = screen.my_seat
    parts = [f"Towers table of {screen.size}"]
    if me is not None:
        c = screen.colour_of(me)
        parts.append(f"you: seat {me}" + (f", {colour(c)}" if c is not None else ""))
    if status is None or status.phase == "hellos":
        parts.append("waiting for seats")
    elif status.over or (screen.session is not None and screen.session.done):
        parts.append("game over")
    elif screen.my_turn:
        parts.append("YOUR TURN")
    elif status.seat_to_act is not None:
        parts.append(f"{screen.who_to_act()} to act")
    else:
        parts.append("dealing the colours")
    return " | ".join(parts)


def in_lobby(screen: TableScreen) -> bool:
    status = screen.status_value
    return status is None or status.phase == "hellos"


def lobby_text(screen: TableScreen, width: int) -> Fragments:
    """Before the roster: how many seats are taken, by whom, and the invite to share."""
    seated = _seated_keys(screen)
    out: Fragments = [("class:heading", f" waiting for seats: {len(seated)} of {screen.size}"),
                      *_names_note(screen), ("", "\n\n")]
    for n, (key, host) in enumerate(seated):
        mine = screen.session is not None and key == screen.session.seat.public_key
        who = "you" if mine else screen.name_of(key)
        role = "the host" if host else f"joiner {n}"
        out.append(("", f"  {role:<9} key {key[:6].hex()}{'  ' + who if who else ''}\n"))
    for _ in range(screen.size - len(seated)):
        out.append(("class:dim", "  (a seat to take)\n"))
    if screen.invites:
        out.append(("", "\n Share this invite code (every player uses the same one):\n"))
        for code in screen.invites[:1]:
            out += [("class:invite", code[i:i + width - 1] + "\n")
                    for i in range(0, len(code), max(1, width - 1))]
    if screen.short_code:
        out.append(("", f" or the short code: {screen.short_code}\n"))
    return out


def _names_note(screen: TableScreen) -> Fragments:
    """On a joiner's screen, once names are shown: whose word they are (SPEC 3.4)."""
    return [("class:dim", f"  ({NAMES_NOTE})")] if screen.names_heard else []


def _seated_keys(screen: TableScreen) -> list[tuple[bytes, bool]]:
    """(key, is the host) of every hello held before the roster, the host's first."""
    session = screen.session
    if session is None:
        return []
    return [(key, n == 0) for n, key in enumerate(seat_keys(session.seat))]


def board_text(screen: TableScreen) -> Fragments:
    """The board with the cursor and marks, then the pool and each colour's counts."""
    game = screen.game
    if game is None:
        return []
    marks = Marks(cursor=screen.cursor, selected=screen.selected, targets=targets(screen),
                  last=screen.marked)
    labels = {c: _short(screen.label(s)) for c in range(game.seats)
              if (s := screen.seat_of(c)) is not None}
    return [*board.board_fragments(game, marks), ("", "\n"), *table(game, labels)]


def _short(label: str) -> str:
    return label if len(label) <= 4 else label[:4]


def seats_text(screen: TableScreen, width: int) -> Fragments:
    """One line a seat in play order: `>` the seat to act, its colour and seat, who, its
    points or how it left, its clock; then who has owed something a while."""
    status = screen.status_value
    game = screen.game
    if status is None:
        return []
    out: Fragments = [("class:heading", "Seats"), *_names_note(screen), ("", "\n")]
    points = game.seat_points() if game is not None else None
    clocks = getattr(screen.session, "clocks", None)
    now = screen.now()
    seats = list(status.order) if status.order is not None else list(range(status.seats))
    labels = {seat: screen.label(seat) or "-" for seat in seats}
    room = max(4, min(max(map(get_cwidth, labels.values())), width - 24))
    for seat in seats:
        c = screen.colour_of(seat)
        mark = ">" if seat == status.seat_to_act and not status.over else " "
        name = colour(c) if c is not None else "?"
        line = f"{name:<6} {seat} {_fit(labels[seat], room)}"
        if seat in status.left:
            state = "left: " + LEFT_WORDS.get(status.left[seat], status.left[seat])
        else:
            state = f"{points[c]:>2} pts" if points is not None and c is not None else "in"
            if clocks is not None and clocks.limit:
                state += f" {clock_text(clocks.remaining(str(seat), now))}"
        out.append(("class:strong", mark))
        out.append((colour_style(c) if c is not None else "", line))
        out.append(("", f" {state}"[: max(0, width - get_cwidth(line) - 2)] + "\n"))
    out += _waiting_lines(screen, width)
    return out


def _fit(text: str, columns: int) -> str:
    """`text` in exactly `columns` terminal columns (a wide character takes two): padded,
    or cut with an ellipsis."""
    if get_cwidth(text) > columns:
        while get_cwidth(text) > columns - 1:
            text = text[:-1]
        text += ELLIPSIS
    return text + " " * (columns - get_cwidth(text))


def _waiting_lines(screen: TableScreen, width: int) -> Fragments:
    """Seats that have owed something longer than WAITED seconds by our clock (away, as
    this seat sees it), and when our session claims (SPEC 5.7)."""
    status = screen.status_value
    if status is None or status.over:
        return []
    now = screen.now()
    out: Fragments = []
    for seat, what in sorted(status.owes.items()):
        since = screen.owed_since.get((seat, what, status.ply))
        if seat == screen.my_seat or since is None or now - since < WAITED:
            continue
        text = f"waiting {clock_text(now - since)} for {screen.who(seat)}: " \
               f"{OWED_WORDS.get(what, what)}"
        out += [("class:status.error", f"{part}\n") for part in
                textwrap.wrap(text, max(10, width - 1))]
    deadline = getattr(screen.session, "deadline", None)
    due = deadline(now) if callable(deadline) else None
    if due is not None and out:
        when, seat, _ = due
        text = f"claimed for us in {clock_text(when - now)} if {screen.who(seat)} stays away"
        out += [("class:dim", f"{part}\n") for part in textwrap.wrap(text, max(10, width - 1))]
    return out


def note_owed(screen: TableScreen) -> None:
    """Remember since when each seat owes what it owes (kept across redraws)."""
    status = screen.status_value
    if status is None:
        return
    now = screen.now()
    debts = {(seat, what, status.ply) for seat, what in status.owes.items()}
    screen.owed_since = {d: screen.owed_since.get(d, now) for d in debts}


def turn_text(screen: TableScreen, width: int) -> Fragments:
    """Whose colour acts and what it may do."""
    game = screen.game
    if game is None:
        status = screen.status_value
        if status is not None and status.phase == "coin":
            return [("class:dim", "the seats open their coins: the turn order comes\n")]
        return []
    labels = {c: screen.label(s) for c in range(game.seats)
              if (s := screen.seat_of(c)) is not None}
    out: Fragments = []
    for style, text in (("class:strong", turn_words(game, labels)),
                        ("class:dim", what_to_do(game))):
        out += [(style, f"{part}\n") for part in textwrap.wrap(text, max(10, width - 1))]
    return out


def log_text(screen: TableScreen, width: int) -> Fragments:
    out: Fragments = [("class:heading", "Log"), ("", "\n")]
    for entry in screen.log[-200:]:
        indent = len(entry.text) - len(entry.text.lstrip(" "))
        for part in textwrap.wrap(entry.text.strip(" "), max(10, width - 1 - indent),
                                  subsequent_indent="  ") or [""]:
            out.append((entry.style, " " * indent + part + "\n"))
    return out


def end_text(screen: TableScreen, width: int) -> Fragments:
    """The result, verify's verdict of our own file (SPEC 5.9), and where the file is."""
    session = screen.session
    out: Fragments = []
    wrap = max(10, width - 1)

    def lines(style: str, text: str) -> None:
        out.extend((style, f"{part}\n") for part in textwrap.wrap(text, wrap))

    failure = None if session is None else session.failure
    if failure:
        lines("class:status.error", f"The table stopped: {failure}")
    else:
        out.append(("class:heading", "Game over"))
        out.append(("", "\n"))
    for line in screen.verdict:
        lines("class:strong" if line.startswith("result:") else "",
              " ".join(line.split()))
    path = None if session is None else session.path
    if path is not None:
        lines("class:dim", "Saved (check it: p2pgotg verify FILE):")
        out += [("class:dim", f"{part}\n") for part in _cut(str(path), wrap)]
    return out


def _cut(text: str, width: int) -> list[str]:
    """A path cut into lines of `width`, nothing dropped (it is copied whole)."""
    return [text[i:i + width] for i in range(0, len(text), width)] or [""]


def is_over(screen: TableScreen) -> bool:
    session = screen.session
    return session is not None and bool(session.done)


def hints(screen: TableScreen) -> str:
    if screen.confirm is not None:
        return "y yes   n no"
    if is_over(screen):
        return "q quit   ? keys"
    if in_lobby(screen):
        return "waiting for the seats | chat TEXT | q quit | ? keys"
    return "Space actions, 1-9 do | Enter pick/drop | c3-c4 | chat | w SEAT | ? keys"
