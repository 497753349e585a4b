"""The counts beside the Towers board: whose colour acts and how many actions its turn has
left, the layers left in the pool, and each colour's reserve (pawns to spawn, flags to
plant), the pawns it took and its points as they stand (SPEC 4.8). Pure."""

from __future__ import annotations

from p2pgotg.games.towers.rules import Game, Phase
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.towers.board import colour_style
from p2pgotg.ui.towers.words import colour, points_words

NAME = 12  # the colour column: `Yellow (you)`


def took(game: Game, seat: int) -> int:
    """The other colours' pawns `seat` has captured."""
    return sum(game.captured(seat, other) for other in range(game.seats) if other != seat)


def seat_name(seat: int, labels: dict[int, str]) -> str:
    """`Red (you)`, `Blue (bot)`: a colour and who plays it, as the table has room."""
    label = labels.get(seat)
    return f"{colour(seat)} ({label})" if label else colour(seat)


def table(game: Game, labels: dict[int, str], acting: bool = True) -> Fragments:
    """The pool and one row a colour; `>` marks the colour to act (`acting`); with teams,
    the teams' points last. `labels` says who plays a colour (`you`, `bot`)."""
    points = game.seat_points()
    out: Fragments = [
        ("class:strong", f" {'Pool: ' + str(game.pool):<{NAME}}"),
        ("class:dim", f"{'reserve':^11}\n"),
        ("class:dim", f" {'colour':<{NAME}}{'pawns':>5}{'flags':>6}{'took':>5}{'points':>7}\n"),
    ]
    for seat in range(game.seats):
        mark = ">" if acting and not game.is_over and seat == game.turn else " "
        out.append(("class:strong", mark))
        out.append((colour_style(seat), f"{seat_name(seat, labels)[:NAME]:<{NAME}}"))
        out.append(("", f"{game.reserve_pawns(seat):>5}{game.reserve_flags(seat):>6}"
                        f"{took(game, seat):>5}{points[seat]:>7}\n"))
    if game.options.teams:
        out.append(("class:strong", f" teams: {points_words(game)}\n"))
    return out


def turn_words(game: Game, labels: dict[int, str]) -> str:
    """`Red (you) to act: 2 actions left`, `Blue (bot) to choose (the setup)`."""
    if game.is_over:
        return "game over"
    who = seat_name(game.turn, labels)
    if game.phase is Phase.SETUP:
        return f"{who} to choose (the setup)"
    left = game.actions_left
    return f"{who} to act: {left} action{'s' if left != 1 else ''} left"


def what_to_do(game: Game) -> str:
    """What the colour to act may do, in a line."""
    if game.is_over:
        return ""
    if game.phase is Phase.SETUP:
        return "setup: place a layer (+c3) or claim a start on the border (@a1)"
    first = game.first_action
    done = f"; done: {first.text()}" if first is not None else ""
    return f"play: move (c3-c4), build (+c3) or spawn (*c3){done}"
