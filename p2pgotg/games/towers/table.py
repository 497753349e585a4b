"""Towers at a table of three or four seats (SPEC 5.6): its `action` message and the rules
engine as the table kernel plays it. Colours are the rules' seats (Red is colour 0); the
table's order says which seat plays each.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games.towers.rules.actions import CODES, Action
from p2pgotg.games.towers.rules.errors import TowersError
from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.game import Phase as RulesPhase
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.rules.outcome import Termination
from p2pgotg.protocol.messages import SEQ, Schema, int_in
from p2pgotg.protocol.table.body import register
from p2pgotg.protocol.table.seat import TableRecord, TableSeat

#: SPEC 5.6: no draw offer at a table.
MESSAGES: Schema = MappingProxyType({
    "action": {"ply": (SEQ, True), "code": (int_in(0, CODES - 1), True)},
})
register(MESSAGES)


class TowersPosition:
    """A Towers game as the table kernel sees it (`p2pgotg.protocol.table.rules`)."""

    def __init__(self, options: RuleOptions) -> None:
        self.game = Game(options)

    @property
    def ply(self) -> int:
        return self.game.ply

    @property
    def to_act(self) -> int | None:
        return None if self.game.is_over else self.game.turn

    @property
    def over(self) -> bool:
        return self.game.is_over

    def owed(self) -> str:
        return "choice" if self.game.phase is RulesPhase.SETUP else "action"

    def problem(self, code: int) -> str | None:
        try:
            action = Action.from_code(code)
        except TowersError as exc:
            return str(exc)
        return self.game.problem(action)

    def push(self, code: int) -> Action:
        action = Action.from_code(code)
        self.game.push(action)
        return action

    def leave(self, colour: int, termination: str) -> None:
        self.game.leave(colour, Termination(termination))

    def winners(self) -> tuple[int, ...]:
        outcome = self.game.outcome
        if outcome is None:
            return ()
        return tuple(s for s in range(self.game.seats) if self.game.team(s) in outcome.winners)

    def termination(self) -> str | None:
        outcome = self.game.outcome
        return None if outcome is None else outcome.termination.value

    def describe(self) -> str:
        outcome = self.game.outcome
        return "" if outcome is None else outcome.describe()


class TowersTable:
    """Towers' rules for the table kernel: three or four seats, one colour each."""

    name = "towers"

    def parse_options(self, raw: dict[str, Any]) -> RuleOptions:
        options = RuleOptions.from_dict(raw)
        if options.seats not in (3, 4) or options.teams:
            raise ValueError("a table seats three or four players, one colour each (two "
                             "players play on the two-party protocol, SPEC 4.11)")
        return options

    def options_bytes(self, options: RuleOptions) -> bytes:
        return bytes(options.to_bytes())

    def seats(self, options: RuleOptions) -> int:
        return options.seats

    def clock_set(self, options: RuleOptions) -> bool:
        return bool(options.clock_seconds or options.turn_seconds)

    def new_game(self, options: RuleOptions) -> TowersPosition:
        return TowersPosition(options)

    def decode_action(self, code: int) -> Action:
        return Action.from_code(code)


TOWERS_TABLE = TowersTable()


def host_seat(key: Ed25519PrivateKey, options: RuleOptions, tls: bytes) -> TableSeat:
    """The host's seat of a Towers table (table-api's `TableSeat.host`)."""
    return TableSeat.host(TOWERS_TABLE, key, options, tls)


def joiner_seat(key: Ed25519PrivateKey, host_hello: bytes, tls_seen: bytes) -> TableSeat:
    """A joiner's seat, once it took the host's hello on a connection that showed
    `tls_seen` (refused with LocalProtocolError otherwise)."""
    return TableSeat.joiner(TOWERS_TABLE, key, host_hello, tls_seen)


def restored_seat(key: Ed25519PrivateKey, tls: bytes, records: Sequence[TableRecord],
                  is_host: bool) -> TableSeat:
    """A seat rebuilt from its file's records (resume)."""
    return TableSeat.restore(TOWERS_TABLE, key, tls, records, is_host)
