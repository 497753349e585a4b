"""What the Towers screens say about actions, points and endings: pure functions over the
rules engine's values (SPEC 4.5-4.8), shared by the play screen, the end screen, the
review and the games list.

>>> from p2pgotg.games.towers.rules import Game
>>> g = Game()
>>> for text in ("@a1", "@c5", "a1-a2"):
...     g.push_text(text)
>>> action_note(g, Action.from_text("a2-a3"))
''
>>> reason_words(Termination.ALL_FLAGS_PLANTED, 1, None)
'Blue placed all its flags'
"""

from __future__ import annotations

import enum

from p2pgotg.games.towers.rules import Action, Colour, Game, Kind, Phase, Termination
from p2pgotg.games.towers.rules.seats import LAYERS


def colour(seat: int) -> str:
    """`Red`."""
    return Colour(seat).display_name


def colours(seats: tuple[int, ...]) -> str:
    """`Red`, or `Red+Green` for a player of two colours (as `verify` names them)."""
    return "+".join(colour(s) for s in seats)


def action_note(before: Game, action: Action) -> str:
    """What a move did besides moving, said short for the log (empty when nothing):
    `took Blue's pawn` (its flag went back to Blue), `sent Blue's flag back`. `before` is
    the game just before the action."""
    if action.kind is not Kind.MOVE or action.to is None:
        return ""
    victim, flag = before.pawn_at(action.to), before.flag_at(action.to)
    if victim is not None:
        return f"took {colour(victim)}'s pawn"
    if flag is not None and flag != before.turn:
        return f"sent {colour(flag)}'s flag back"
    return ""


def action_sentence(before: Game, action: Action) -> str:
    """The action in a sentence, by the colour that made it (`before`: the game just
    before it): `Red claims a1 as its start.`, `Blue moves c3-c4, takes Red's pawn (Red's
    flag goes back to Red) and plants a flag on c4.`"""
    who = colour(before.turn)
    square = action.text()[-2:]
    if action.kind is Kind.CLAIM:
        return f"{who} claims {square} as its start (a pawn and a flag there)."
    if action.kind is Kind.LAYER:
        height = before.height(action.square) + 1
        where = f"{square}, now {height} high; {before.pool - 1} left in the pool"
        if before.phase is Phase.SETUP:
            return f"{who} places a layer on {where}."
        return f"{who} builds under its pawn on {where}."
    if action.kind is Kind.SPAWN:
        return f"{who} spawns a pawn from its reserve on {square}."
    assert action.to is not None
    victim, flag = before.pawn_at(action.to), before.flag_at(action.to)
    text = f"{who} moves {action.text()}"
    if victim is not None:
        lost = colour(victim)
        text += f", takes {lost}'s pawn ({lost}'s flag goes back to {lost}),"
    elif flag is not None and flag != before.turn:
        text += f", sends {colour(flag)}'s flag back,"
    climb = before.height(action.to) - before.height(action.square)
    if climb:
        text += f" ({'up' if climb > 0 else 'down'} {abs(climb)})"
    own = flag == before.turn
    return text + (" onto its own flag." if own else f" and plants a flag on {square}.")


def reason_words(termination: enum.Enum | None, seat: int | None, won: bool | None) -> str:
    """Why a Towers game ended, said to a player (`won` None for a draw, or for a reader
    who did not play; `termination` None: a proven violation ended it). `seat` is the
    colour the rules' ending names (the one that placed all its flags, or could not act)."""
    mine = bool(won)
    if termination is None:
        return ("they were caught breaking the rules" if mine
                else "you were found breaking the rules")
    value = Termination(termination.value)
    named = colour(seat) if seat is not None else "a colour"
    return {
        Termination.POOL_EMPTY: f"all {LAYERS} layers placed",
        Termination.ALL_FLAGS_PLANTED: f"{named} placed all its flags",
        Termination.NO_ACTION: f"{named} could not act",
        Termination.RESIGNATION: "they resigned" if mine else "you resigned",
        Termination.DRAW_AGREED: "a draw was agreed",
        Termination.TIME_FORFEIT: "they ran out of time" if mine else "you ran out of time",
        Termination.ABANDONMENT: ("they left the game and did not come back" if mine
                                  else "you were away too long"),
    }[value]


def reason_told(termination: enum.Enum | None, seat: int | None,
                loser: str | None) -> str:
    """Why a Towers game ended, told by a reader's side (the review, the games list):
    `loser` names the colours that resigned, ran out of time, left or broke a rule
    (`Blue`); None when those ended it as a draw (both at once)."""
    if termination is None:
        return f"{loser or 'a player'} was caught breaking the rules"
    value = Termination(termination.value)
    if value in (Termination.POOL_EMPTY, Termination.ALL_FLAGS_PLANTED, Termination.NO_ACTION,
                 Termination.DRAW_AGREED):
        return reason_words(value, seat, None)
    if loser is None:
        return ("both sides resigned at once" if value is Termination.RESIGNATION
                else "both sides claimed the game at once")
    return {Termination.RESIGNATION: f"{loser} resigned",
            Termination.TIME_FORFEIT: f"{loser} ran out of time",
            Termination.ABANDONMENT: f"{loser} left the game and did not come back",
            }[value]


def ended_seat(game: Game, termination: enum.Enum | None) -> int | None:
    """The colour a rules ending names (from the engine's outcome), else None."""
    outcome = game.outcome
    if outcome is None or termination is None or outcome.termination.value != termination.value:
        return None
    return outcome.seat


def points_words(game: Game, labels: dict[int, str] | None = None) -> str:
    """Each team's points as they stand: `Red 7, Blue 18`, or `Red+Green 9, Blue+Yellow
    7`; `labels` adds a word after a team's colours (`you`)."""
    labels = labels or {}
    parts = []
    for team, points in enumerate(game.team_points()):
        names = "+".join(colour(s) for s in range(game.seats) if game.team(s) == team)
        label = f" ({labels[team]})" if team in labels else ""
        parts.append(f"{names}{label} {points}")
    return ", ".join(parts)
