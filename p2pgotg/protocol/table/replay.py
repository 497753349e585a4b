"""The table's game as a function of the messages that make it (SPEC 5.5 to 5.7).

Seats take messages in different orders (every order respects the acks, 5.4), and a claim
can cross the action of the seat it removes. So the game is never "what arrived first": it
is the replay of its game events (coin openings, leaves, actions) in one canonical order
that every seat and `verify` compute alike from the same messages. An event's place
depends only on its own message and view: a leave or an opening sits before the action
whose ply its view had reached, an action at its ply. An action that does not fit where it
falls (its seat removed by a claim it had not seen, or the game over) is void: kept, not
applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2pgotg.protocol.table.coin import turn_order
from p2pgotg.protocol.table.rules import TablePosition, TableRules

#: Event kinds, in the order they take at one ply: openings and leaves before the action.
OPEN, LEAVE, ACTION = "open", "leave", "action"
#: At one place, a resignation comes before claims (a resignation is a fact, a claim a word).
_KIND_RANK = {"resignation": 0, "time_forfeit": 1, "abandonment": 1}


@dataclass(frozen=True)
class GameEvent:
    """One message that changes the game: `seat` and `seq` name it; `place` is the ply its
    view had reached (-1 before the order); `value` is the secret (open), (target,
    termination) (leave) or (ply, code) (action)."""

    kind: str
    seat: int
    seq: int
    place: int
    value: Any

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        if self.kind == ACTION:
            return (self.place, 2, 0, self.seat, self.seq)
        if self.kind == OPEN:
            return (self.place, 1, 0, self.seat, self.seq)
        return (self.place, 0, _KIND_RANK[self.value[1]], self.seat, self.seq)


@dataclass
class Replay:
    """The state after a list of events, applied in key order."""

    rules: TableRules
    options: Any
    n: int
    game_id: bytes
    opened: dict[int, bytes] = field(default_factory=dict)
    order: tuple[int, ...] | None = None
    game: TablePosition | None = None
    left: dict[int, str] = field(default_factory=dict)  # seat -> termination
    claims: list[GameEvent] = field(default_factory=list)  # claims that removed a seat
    ended_early: tuple[str, int] | None = None  # (termination, seat) before the order
    applied: list[GameEvent] = field(default_factory=list)  # actions made
    void: list[GameEvent] = field(default_factory=list)  # actions and openings not applied
    last_turn_end: GameEvent | None = None  # the action after which the turn passed last

    @property
    def over(self) -> bool:
        return self.ended_early is not None or (self.game is not None and self.game.over)

    @property
    def ply(self) -> int:
        return -1 if self.game is None else self.game.ply

    def seat_to_act(self) -> int | None:
        if self.over or self.game is None or self.order is None:
            return None
        colour = self.game.to_act
        return None if colour is None else self.order[colour]

    def colour_of(self, seat: int) -> int | None:
        return None if self.order is None else self.order.index(seat)

    def play_order(self) -> list[int]:
        """The seats in play order: colour order once known, seat order before."""
        return list(self.order) if self.order is not None else list(range(self.n))

    def next_in(self, seat: int) -> int | None:
        """The first seat still in after `seat` in play order (None: nobody)."""
        seats = self.play_order()
        i = seats.index(seat)
        for step in range(1, self.n):
            other = seats[(i + step) % self.n]
            if other not in self.left:
                return other
        return None

    def apply(self, event: GameEvent) -> None:
        if event.kind == OPEN:
            self._open(event)
        elif event.kind == LEAVE:
            self._leave(event)
        else:
            self._act(event)

    def _open(self, event: GameEvent) -> None:
        if self.over or event.seat in self.left or self.order is not None:
            self.void.append(event)
            return
        self.opened[event.seat] = event.value
        if len(self.opened) == self.n:
            self.order = turn_order(self.game_id, [self.opened[s] for s in range(self.n)])
            self.game = self.rules.new_game(self.options)

    def _leave(self, event: GameEvent) -> None:
        target, termination = event.value
        if self.over or target in self.left:
            return  # (crossing the end, or a claim crossing the same seat's resignation)
        self.left[target] = termination
        if termination != "resignation":
            self.claims.append(event)
        if self.game is None or self.order is None:
            self.ended_early = (termination, target)
            return
        self.game.leave(self.order.index(target), termination)

    def _act(self, event: GameEvent) -> None:
        ply, code = event.value
        game = self.game
        if (game is None or self.over or event.seat in self.left
                or self.seat_to_act() != event.seat or ply != game.ply
                or game.problem(code) is not None):
            self.void.append(event)
            return
        before = game.to_act
        game.push(code)
        self.applied.append(event)
        if game.over or game.to_act != before:
            self.last_turn_end = event


def replay(rules: TableRules, options: Any, n: int, game_id: bytes,
           events: list[GameEvent]) -> Replay:
    """The state after `events` (already in key order)."""
    state = Replay(rules, options, n, game_id)
    for event in events:
        state.apply(event)
    return state
