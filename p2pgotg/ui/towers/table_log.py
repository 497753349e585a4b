"""The table session's events folded into the table screen (SPEC 5.5 to 5.8): the lobby's
news, the turn order, each action by its colour (with what it took), seats that leave and
how, claims (and that ours may be disputed), chat and whispers, and the end."""

from __future__ import annotations

from p2pgotg.games.towers.rules import Action, Game, Phase, Termination, TowersError
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.printable import printable
from p2pgotg.protocol.table.events import (
    ActionMade,
    ActionVoided,
    ChatSaid,
    ClaimMade,
    DisputeMade,
    HelloHeld,
    OrderDecided,
    SeatLeft,
    SeatTaken,
    TableEnded,
    WhisperReceived,
)
from p2pgotg.ui.towers import board
from p2pgotg.ui.towers.board import colour_style
from p2pgotg.ui.towers.table_model import RESIGN, TableScreen
from p2pgotg.ui.towers.words import action_note, colour

#: How a seat left, in words (SPEC 5.7: a claim is its claimant's word).
LEFT_WORDS = {
    "resignation": "resigned",
    "time_forfeit": "ran out of time (claimed)",
    "abandonment": "stayed away too long (claimed)",
}
REASON_WORDS = {"time": "ran out of time", "abandoned": "stayed away too long"}


def absorb(screen: TableScreen) -> None:
    """Fold the session's new events into the log and the status line."""
    session = screen.session
    if session is None:
        return
    while screen.seen < len(session.events):
        event = session.events[screen.seen]
        screen.seen += 1
        on_event(screen, event)


def on_event(screen: TableScreen, event: Event) -> None:
    if isinstance(event, HelloHeld):
        screen.add(f"  a joiner sat down (key {event.key[:6].hex()})", "class:log.info")
    elif isinstance(event, SeatTaken):
        screen.add(f"  {_seat_words(screen, event.seat)}: key {event.key[:6].hex()}",
                   "class:log.info")
    elif isinstance(event, OrderDecided):
        _on_order(screen, event)
    elif isinstance(event, ActionMade):
        _on_action(screen, event.seat, event.action)  # type: ignore[arg-type]
    elif isinstance(event, ActionVoided):
        screen.replay = None  # (a claim took it back: the log goes on without notes)
        screen.add(f"  {screen.who(event.seat)}: {_text(event.action)} is void (a claim "
                   "removed the seat before it)", "class:log.info")
    elif isinstance(event, SeatLeft):
        _on_left(screen, event)
    elif isinstance(event, ClaimMade):
        _on_claim(screen, event)
    elif isinstance(event, DisputeMade):
        claimant, _ = event.claim
        if event.seat == screen.my_seat:  # (ours: typed, or made by the session, SPEC 5.7)
            screen.disputed.add(event.claim)
        screen.add(f"  {screen.who(event.seat)} disputes the claim of "
                   f"{screen.who(claimant)}", "class:log.info")
    elif isinstance(event, ChatSaid):
        screen.add(f"  {screen.who(event.seat)}: {printable(event.text)}", "class:log.chat")
    elif isinstance(event, WhisperReceived):
        _on_whisper(screen, event)
    elif isinstance(event, TableEnded):
        _on_end(screen, event)


def _text(action: object) -> str:
    return action.text() if isinstance(action, Action) else "an action"


def _on_order(screen: TableScreen, event: OrderDecided) -> None:
    game = screen.game
    screen.replay = Game(game.options) if game is not None else None
    order = ", ".join(f"{colour(c)} {_seat_words(screen, seat)}"
                      for c, seat in enumerate(event.order))
    screen.add(f"The turn order: {order}.", "class:log.info")
    if screen.my_turn:
        screen.tell("your turn: place a layer or claim your start (Space lists the actions "
                    "on the cursor's square)")
    elif event.order:
        screen.tell(f"{screen.who(event.order[0])} chooses first")


def _seat_words(screen: TableScreen, seat: int) -> str:
    """`seat 2 (bot)`, `seat 0 (you)`: a seat and who sits there, when known."""
    label = screen.label(seat)
    return f"seat {seat} ({label})" if label else f"seat {seat}"


def _on_action(screen: TableScreen, seat: int, action: Action) -> None:
    replay = screen.replay
    c = screen.colour_of(seat)
    if replay is not None and (replay.is_over or replay.problem(action) is not None):
        replay = screen.replay = None
    note = action_note(replay, action) if replay is not None else ""
    number = replay.ply + 1 if replay is not None else 0
    if replay is not None:
        try:
            replay.push(action)
        except TowersError:
            screen.replay = None
    squares = board.action_squares(action)
    if screen.marked_colour == c:
        squares |= screen.marked
    screen.marked, screen.marked_colour = squares, c
    name = colour(c) if c is not None else f"seat {seat}"
    count = f"{number:>3}" if number else "  -"
    text = f"{count} {name:<6} {action.text():<5}"
    screen.add(f"{text}  {note}" if note else text,
               colour_style(c) if c is not None else "")
    game = screen.game
    if game is None or game.is_over:
        return
    if seat == screen.my_seat:
        then = _your_turn(game) if screen.my_turn else f"{screen.who_to_act()} to act"
        screen.tell(f"you played {action.text()}{', ' + note if note else ''}; {then}")
        return
    if screen.selected is not None and game.pawn_at(screen.selected) != screen.my_colour:
        screen.selected = None  # (our picked-up pawn was taken)
    said = f"{screen.who(seat)} played {action.text()}{', ' + note if note else ''}"
    if screen.my_turn:
        said += f". {_your_turn(game).capitalize()}"
    screen.tell(said)


def _your_turn(game: Game) -> str:
    if game.phase is Phase.SETUP:
        return "your turn: place a layer or claim your start"
    left = game.actions_left
    return f"your turn: {left} action{'s' if left != 1 else ''} left"


def _on_left(screen: TableScreen, event: SeatLeft) -> None:
    how = LEFT_WORDS.get(event.termination, event.termination.replace("_", " "))
    c = screen.colour_of(event.seat)
    if screen.replay is not None and c is not None and not screen.replay.is_over:
        screen.replay.leave(c, Termination(event.termination))  # (the others play on)
    screen.add(f"  {screen.who(event.seat)} left: {how}", "class:log.end")
    if event.seat == screen.my_seat and screen.confirm == RESIGN:
        screen.confirm = None
    if event.seat == screen.my_seat and event.termination != "resignation" \
            and screen.claims_on_me:
        return  # (the claim's news stands: it says how to dispute it)
    screen.tell(f"{screen.who(event.seat)} left the table: {how}")


def _on_claim(screen: TableScreen, event: ClaimMade) -> None:
    reason = REASON_WORDS.get(event.reason, event.reason)
    line = (f"  {screen.who(event.claimant)} claims that {screen.who(event.seat)} "
            f"{reason} (its word, SPEC 5.7)")
    screen.add(line, "class:log.end")
    if event.seat == screen.my_seat and event.claimant != screen.my_seat:
        screen.claims_on_me.append((event.claimant, event.seq))
        screen.tell(f"{screen.who(event.claimant)} claims that you {reason}: type dispute "
                    "to dispute it (it is kept in every file)")
    elif event.claimant == screen.my_seat:
        screen.tell(f"you claimed that {screen.who(event.seat)} {reason}")
    else:
        screen.tell(line.strip())


def _on_whisper(screen: TableScreen, event: WhisperReceived) -> None:
    who = screen.who(event.from_seat)
    if event.text is None:
        screen.add(f"  {who} whispered to you, unreadable (it did not open: it proves "
                   "nothing)", "class:log.whisper")
        return
    screen.add(f"  {who} (private): {printable(event.text)}", "class:log.whisper")


def _on_end(screen: TableScreen, event: TableEnded) -> None:
    screen.ended = result_words(screen, event.termination, event.winners)
    screen.add(f"{screen.ended}.", "class:log.end")
    screen.selected = None
    if screen.confirm == RESIGN:
        screen.confirm = None
    screen.tell(f"game over: {screen.ended}")


def result_words(screen: TableScreen, termination: str | None,
                 winners: tuple[int, ...]) -> str:
    """`You win (all flags placed): Red 12, Blue 9...`, `Blue (seat 2) wins (resignation)`,
    `no winner (abandonment)`: who won, by whose reading of the rules (SPEC 5.7)."""
    how = (termination or "a broken rule").replace("_", " ")
    if not winners:
        head = f"no winner ({how})"
    elif winners == (screen.my_seat,):
        head = f"You win ({how})"
    else:
        names = " and ".join(screen.who(s) for s in winners)
        head = f"{names} {'wins' if len(winners) == 1 else 'win'} ({how})"
    position = screen.session.seat.game if screen.session is not None else None
    described = position.describe() if position is not None else ""
    return f"{head}: {described}" if described else head
