"""What the table kernel needs of a game (SPEC 5.6, 5.7): a position that takes actions by
code, says who is to act and what they owe, and lets a seat leave. Towers implements it in
`p2pgotg.games.towers.table`."""

from __future__ import annotations

from typing import Any, Protocol


class TablePosition(Protocol):
    """A game in progress, in colours 0..N-1 (the table's order maps them to seats)."""

    @property
    def ply(self) -> int: ...
    @property
    def to_act(self) -> int | None: ...  # the colour to act; None once over
    @property
    def over(self) -> bool: ...

    def owed(self) -> str:
        """What the colour to act owes ("choice" in a setup, "action" in play)."""
        ...

    def problem(self, code: int) -> str | None:
        """Why the action `code` is not legal now (None: legal)."""
        ...

    def push(self, code: int) -> Any:
        """Make the legal action `code`; returns the game's action value."""
        ...

    def leave(self, colour: int, termination: str) -> None: ...

    def winners(self) -> tuple[int, ...]:
        """The winning colours once over (none: no winner)."""
        ...

    def termination(self) -> str | None: ...

    def describe(self) -> str:
        """The outcome in words, once over (`Blue wins 9-7-3 (all 50 layers placed)`)."""
        ...


class TableRules(Protocol):
    """One game as a table plays it."""

    name: str  # the hello's `rules`

    def parse_options(self, raw: dict[str, Any]) -> Any:
        """The options of a hello (ValueError, with the reason, when a table cannot play
        them)."""
        ...

    def options_bytes(self, options: Any) -> bytes: ...
    def seats(self, options: Any) -> int: ...
    def clock_set(self, options: Any) -> bool: ...
    def new_game(self, options: Any) -> TablePosition: ...
    def decode_action(self, code: int) -> Any: ...
