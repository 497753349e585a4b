"""What the keys on the board do, on the Towers play screen and at a table alike: move the
cursor, list the legal actions on its square (a digit then makes one), pick up a pawn and
drop it one step away, step a pawn with Shift+arrow.

Both screens offer what these need as an `ActingScreen`: the cursor, the picked-up square,
the numbered actions, the status line, and three things each does its own way (whose pawn
stands where, why we may not act now, sending a checked action). Every action is checked
against the rules (`Game.problem`) before it is sent; an illegal one is refused with the
rule it breaks.
"""

from __future__ import annotations

from typing import Protocol

from p2pgotg.games.towers.rules import Action, Game, Kind, Phase, neighbours, square_name
from p2pgotg.ui.towers import board

KIND_WORDS = {Kind.SPAWN: "spawn", Kind.CLAIM: "claim"}


class ActingScreen(Protocol):
    """A Towers screen whose board the keys act on."""

    cursor: int
    selected: int | None  # the picked-up pawn's square
    choices: tuple[Action, ...]  # the actions last listed, numbered from 1
    choices_for: tuple[int, int] | None  # the (ply, square) they were listed for

    @property
    def game(self) -> Game | None:
        """The position, once there is one."""

    @property
    def my_turn(self) -> bool: ...

    def say(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...

    def holds(self, square: int) -> bool:
        """Whether our pawn stands on `square`."""

    def why_not_now(self) -> str | None:
        """Why we may not act now, in words for the status line; None: we may."""

    def send(self, action: Action) -> None:
        """Send an action the rules allow (it has been checked)."""


def may_act(screen: ActingScreen) -> Game | None:
    """The game, when we may act now; else None, the reason said."""
    why = screen.why_not_now()
    if why is not None:
        screen.warn(why)
        return None
    return screen.game


def move_cursor(screen: ActingScreen, dx: int, dy: int) -> None:
    screen.cursor = board.step(screen.cursor, dx, dy)


def targets(screen: ActingScreen) -> frozenset[int]:
    """Where the picked-up pawn may move now."""
    game, sq = screen.game, screen.selected
    if game is None or sq is None or not screen.my_turn:
        return frozenset()
    return frozenset(a.to for a in game.legal_actions
                     if a.kind is Kind.MOVE and a.square == sq and a.to is not None)


def try_action(screen: ActingScreen, action: Action) -> None:
    """Check the action against the rules first: an illegal one is refused with the rule
    it breaks and nothing is sent."""
    game = may_act(screen)
    if game is None:
        return
    problem = game.problem(action)
    if problem is not None:
        screen.warn(f"{action.text()}: {problem}")
        return
    screen.selected = None
    screen.choices, screen.choices_for = (), None
    if action.kind is Kind.MOVE and action.to is not None:
        screen.cursor = action.to
    screen.send(action)


def choice_words(game: Game, action: Action) -> str:
    """An action for the numbered list: its notation, and the kind when it has a prefix."""
    if action.kind is Kind.MOVE:
        return action.text()
    if action.kind is Kind.LAYER:
        return f"{action.text()} ({'layer' if game.phase is Phase.SETUP else 'build'})"
    return f"{action.text()} ({KIND_WORDS[action.kind]})"


def why_nothing(game: Game, sq: int) -> str:
    """Why no action can be made on a square: the rules' words for the likeliest ones."""
    kinds = (Kind.LAYER, Kind.CLAIM) if game.phase is Phase.SETUP else (Kind.LAYER,
                                                                          Kind.SPAWN)
    reasons = [game.problem(Action(kind, sq)) for kind in kinds]
    return "; ".join(dict.fromkeys(r for r in reasons if r)) or "no legal action"


def list_actions(screen: ActingScreen, quiet: bool = False) -> str:
    """Number the legal actions on the cursor's square (a digit then makes one) and say
    them; when there is none, say why. Returns the list's words."""
    screen.choices, screen.choices_for = (), None
    game = may_act(screen)
    if game is None:
        return ""
    sq = screen.cursor
    here = tuple(a for a in game.legal_actions if a.square == sq)
    if not here:
        screen.warn(f"nothing to do on {square_name(sq)}: {why_nothing(game, sq)}")
        return ""
    screen.choices, screen.choices_for = here[:9], (game.ply, sq)
    listed = "  ".join(f"{n} {choice_words(game, a)}" for n, a in enumerate(here[:9], 1))
    if not quiet:
        screen.say(f"{square_name(sq)}: {listed}  (a number does it)")
    return listed


def choose(screen: ActingScreen, number: int) -> None:
    """A digit: make that action of the list shown for the cursor's square."""
    game, choices = screen.game, screen.choices
    if game is None or screen.choices_for != (game.ply, screen.cursor) or not choices:
        screen.warn("press Space first: it lists the actions on the cursor's square, "
                    "numbered")
        return
    if not 1 <= number <= len(choices):
        screen.warn(f"the list has {len(choices)} action{'s' if len(choices) != 1 else ''}: "
                    f"choose 1 to {len(choices)}")
        return
    try_action(screen, choices[number - 1])


def step_pawn(screen: ActingScreen, dx: int, dy: int) -> None:
    """Shift+arrow: move the pawn under the cursor one square that way."""
    sq = screen.cursor
    to = board.step(sq, dx, dy)
    if to == sq:
        screen.warn(f"no square beyond {square_name(sq)} that way")
        return
    try_action(screen, Action.move(sq, to))


def enter(screen: ActingScreen) -> None:
    """Pick up our pawn under the cursor, or move the picked-up pawn there; on any other
    square, list what can be done there."""
    game = screen.game
    if game is None:
        may_act(screen)  # (says why nothing can be done yet)
        return
    sq, picked = screen.cursor, screen.selected
    if picked is not None and sq == picked:
        screen.selected = None
        screen.say("put down")
        return
    if screen.holds(sq) and game.phase is Phase.PLAY and not game.is_over:
        screen.selected = sq
        if not screen.my_turn:
            screen.say(f"the pawn on {square_name(sq)} picked up; wait for your turn")
            return
        listed = list_actions(screen, quiet=True)
        moves = "Enter on a + moves it there" if targets(screen) else "it cannot move now"
        screen.say(f"pawn on {square_name(sq)} picked up: {moves}; or {listed}")
        return
    if picked is not None:
        if sq not in neighbours(picked):
            screen.warn(f"{square_name(picked)} to {square_name(sq)} is not one step: a pawn "
                        "moves one square up, down, left or right")
            return
        try_action(screen, Action.move(picked, sq))
        return
    list_actions(screen)
