"""What the Towers screens keep between two keys, beside the application state's cursor,
picked-up square, log and draw offer (`AppState`): the session's events folded in so far,
the game the log is told from, and the actions last offered for a square by number."""

from __future__ import annotations

from dataclasses import dataclass

from p2pgotg.games.towers.rules import Action, Game


@dataclass
class TowersScreen:
    session: object | None = None  # the session these belong to (a new one starts afresh)
    seen: int = 0  # the session's events folded into the log so far
    #: The game replayed from the events as they are folded in: each action is told from
    #: the position just before it (what it took, what it sent back).
    replay: Game | None = None
    #: The legal actions last listed for a square, numbered from 1, and the (ply, square)
    #: they were listed for: a digit picks one while both still hold.
    choices: tuple[Action, ...] = ()
    choices_for: tuple[int, int] | None = None
    ended: str | None = None  # `You win: ...` once the game has ended
    #: The squares of the last colour's actions in its turn so far, marked on the board
    #: (the other side's whole turn, when ours begins), and that colour.
    marked: frozenset[int] = frozenset()
    marked_seat: int | None = None
