"""The session's events folded into the Towers screens: the log of actions (each by its
colour, with what it took), the talk (chat, draw offers), the end and the verdict, and the
status line's news. The interface's `AppState.absorb` hands a Towers session here."""

from __future__ import annotations

from p2pgotg.games.towers.events import ActionPlayed
from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules import Game, Phase, TowersError
from p2pgotg.protocol import JOINER
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
from p2pgotg.protocol.printable import controls_escaped, printable
from p2pgotg.ui.state import AppState, Confirm, LogLine
from p2pgotg.ui.towers import board, towers_peer
from p2pgotg.ui.towers.end import result_words
from p2pgotg.ui.towers.model import TowersScreen
from p2pgotg.ui.towers.play import screen_state
from p2pgotg.ui.towers.words import action_note, colour, colours
from p2pgotg.ui.words import capital, verdict_words


def absorb(state: AppState) -> None:
    """Fold the session's new events into the log and the status line."""
    session, peer = state.session, towers_peer(state)
    if session is None or peer is None:
        return
    towers = screen_state(state)
    if towers.session is not session:  # a new game (or the first): start afresh
        towers = state.towers = TowersScreen(session=session)
        state.cursor = board.square_at(2, 2)
        if peer.view is not None and not any(isinstance(e, ColoursDecided)
                                             for e in session.events):
            _log_resumed(state, towers, peer)  # (its coin was tossed in an earlier run)
    while towers.seen < len(session.events):
        event = session.events[towers.seen]
        towers.seen += 1
        _on_event(state, towers, event, peer, quiet=False)


def _add(state: AppState, text: str, style: str = "") -> None:
    state.log.append(LogLine(controls_escaped(text), style))


def _tell(state: AppState, text: str) -> None:
    """News in the status line, unless a question waits there for y or n."""
    if state.confirm is None:
        state.say(text)


def _on_event(state: AppState, towers: TowersScreen, event: Event, peer: TowersPeer,
              quiet: bool) -> None:
    them = state.opponent
    if isinstance(event, OptionsProposed) and peer.role == JOINER and not quiet:
        _tell(state, "the host proposes these rules: press a to accept, q to decline")
    elif isinstance(event, ColoursDecided):
        _on_colours(state, towers, peer, quiet)
    elif isinstance(event, ActionPlayed):
        _on_action(state, towers, event, peer, quiet)
    elif isinstance(event, DrawOffered):
        mine = event.role == peer.role
        _add(state, "  you offer a draw" if mine else f"  {them} offers a draw",
             "class:log.info")
    elif isinstance(event, DrawDeclined):
        who = "you decline" if event.role == peer.role else f"{them} declines"
        _add(state, f"  {who} the draw", "class:log.info")
    elif isinstance(event, ChatReceived):
        who = "you" if event.role == peer.role else state.opponent_short
        _add(state, f"  {who}: {printable(event.text)}", "class:log.chat")
    elif isinstance(event, GameEnded):
        words = result_words(state, peer) or "the game is over"
        towers.ended = f"game over: {words}"
        _add(state, f"{words}.", "class:log.end")
        state.selected = None
        if state.confirm is Confirm.RESIGN:  # (nothing is left to resign)
            state.confirm = None
        if not quiet:
            _tell(state, f"{towers.ended}.")
    elif isinstance(event, AuditCompleted):
        _add(state, verdict_words(event.verdict, peer.role, them), "class:log.end")
        if not quiet and towers.ended:
            _tell(state, f"{towers.ended}.")


def _on_colours(state: AppState, towers: TowersScreen, peer: TowersPeer, quiet: bool) -> None:
    game = peer.view
    if game is None:
        return
    towers.replay = Game(game.options)
    mine = peer.my_seats
    theirs = tuple(s for s in range(game.seats) if s not in mine)
    first = "you choose first" if 0 in mine else f"{state.opponent} chooses first"
    _add(state, f"You play {colours(mine)}; {state.opponent_label} plays {colours(theirs)}: "
         f"{first}.", "class:log.info")
    if not quiet:
        _tell(state, "your turn: place a layer or claim your start (Space lists the actions "
              "on the cursor's square)" if peer.my_turn else capital(first))


def _on_action(state: AppState, towers: TowersScreen, event: ActionPlayed,
               peer: TowersPeer, quiet: bool) -> None:
    game = peer.view
    assert game is not None
    replay = towers.replay
    if replay is None or replay.is_over or replay.problem(event.action) is not None:
        replay = None  # (never for checked messages: the log then goes on without notes)
    note = action_note(replay, event.action) if replay is not None else ""
    number = (replay.ply if replay is not None else len(state.log)) + 1
    if replay is not None:
        try:
            replay.push(event.action)
        except TowersError:
            towers.replay = None
    squares = board.action_squares(event.action)
    if towers.marked_seat == event.seat:  # (the same colour again: its turn goes on)
        squares |= towers.marked
    towers.marked, towers.marked_seat = squares, event.seat
    mine = event.seat in peer.my_seats
    text = f"{number:>3} {colour(event.seat):<6} {event.action.text():<5}"
    _add(state, f"{text}  {note}" if note else text,
         "class:log.mine" if mine else "class:log.theirs")
    if quiet or peer.flow.is_over or game.is_over:
        return
    if mine:
        then = _your_turn(game) if peer.my_turn else f"{state.opponent} to act"
        _tell(state, f"you played {event.action.text()}{', ' + note if note else ''}; {then}")
        return
    if state.selected is not None and game.pawn_at(state.selected) not in peer.my_seats:
        state.selected = None  # (our picked-up pawn was taken)
    said = f"{state.opponent} played {event.action.text()}{', ' + note if note else ''}"
    if peer.draw_offered_to_me and peer.my_turn:
        said += (f", offering a draw: type draw to accept, decline, or just act. "
                 f"{capital(_your_turn(game))}")
    elif peer.draw_offered_to_me:
        said += ", offering a draw (answer it on your turn)"
    elif peer.my_turn:
        said += f". {capital(_your_turn(game))}"
    _tell(state, said)


def _your_turn(game: Game) -> str:
    if game.phase is Phase.SETUP:
        return "your turn: place a layer or claim your start"
    left = game.actions_left
    return f"your turn: {left} action{'s' if left != 1 else ''} left"


def _log_resumed(state: AppState, towers: TowersScreen, peer: TowersPeer) -> None:
    """A game picked up from its saved transcript: the log so far, rebuilt by replaying
    its messages, chat and draw offers between the actions they came with."""
    _add(state, "Resumed.", "class:log.info")
    replayed = TowersFlow()
    for role, data in peer.flow.transcript:
        try:
            events, _ = replayed.process(role, data)
        except Exception:  # noqa: BLE001  (our own checked messages: never)
            break
        for event in events:
            _on_event(state, towers, event, peer, quiet=True)
    game = peer.view
    if peer.flow.is_over or game is None:
        _tell(state, "resumed: the game is over")
    elif peer.my_turn:
        _tell(state, f"resumed: {_your_turn(game)}")
    else:
        _tell(state, f"resumed: {state.opponent} to act")
