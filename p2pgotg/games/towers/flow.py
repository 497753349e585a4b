"""Towers on the protocol kernel (SPEC 4.11): every setup choice and every action of a turn
is one signed `action` message, checked against the rules engine as it arrives.

Towers hides nothing, so there are no commitments and no audit: the transcript is the game,
and its verdict is known the moment it ends. The kernel checks the chain, the hellos and
the coin (whose winner's colours choose first), and judges endings, claims, disputes and
draw offers; this subclass says whose turn it is and what is legal. Two players: the
regular two-colour game, or the seed's variant where each plays two colours in turn.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar

from p2pgotg.crypto.hashing import TAG_GAME_TOWERS
from p2pgotg.games.towers import messages as _messages  # noqa: F401  (registers its type)
from p2pgotg.games.towers.events import ActionPlayed
from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.errors import TowersError
from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.game import Phase as RulesPhase
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.rules.outcome import Outcome, Termination
from p2pgotg.games.towers.rules.seats import Colour
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import KERNEL_OWED_WORDS, EndKind, Fail, Flow, Phase, other
from p2pgotg.protocol.messages import Body

#: What a side can owe in Towers: a setup choice, or an action of its turn (both timed by
#: the clock when one is set, else only by the abandonment limit, SPEC 3.6).
OWED_WORDS = {**KERNEL_OWED_WORDS, "choice": "its setup choice", "action": "an action"}


class TowersFlow(Flow):
    """Towers' messages, on the kernel's chain, table and endings."""

    GAME: ClassVar[str | None] = "towers"
    TURN_ACTIONS = frozenset({"action", "draw_accept", "draw_decline"})
    PLAY_MESSAGES = frozenset({"action"})
    OWED_WORDS = OWED_WORDS

    def __init__(self, trusted: bool = False) -> None:
        super().__init__(trusted)
        self.game: Game | None = None

    # -- the kernel's hooks -------------------------------------------------------------

    def parse_options(self, raw: dict[str, Any]) -> RuleOptions:
        options = RuleOptions.from_dict(raw)
        if options.seats != 2 and not options.teams:
            raise ValueError(f"a Towers game of {options.seats} colours needs that many "
                             "players; this protocol seats two (2 colours, or 4 played as "
                             "two teams)")
        return options

    def options_bytes(self, options: Any) -> bytes:
        return bytes(options.to_bytes())

    def game_id_tag(self) -> bytes:
        return TAG_GAME_TOWERS

    def begin(self) -> list[Event]:
        self.game = Game(self.options)
        self.phase = Phase.PLAY
        return []

    def termination(self, value: str) -> enum.Enum:
        return Termination(value)

    def in_play(self) -> bool:
        return self.game is not None

    def game_owes(self, role: str) -> str | None:
        game = self.game
        if game is None or game.is_over or self.role_of(game.turn) != role:
            return None
        return "choice" if game.phase is RulesPhase.SETUP else "action"

    def timed_by_clock(self, kind: str) -> bool:
        return kind in ("choice", "action")

    def clock_limits(self) -> tuple[float, float]:
        options = self.options
        if options is None:
            return 0.0, 0.0
        return float(options.clock_seconds), float(options.turn_seconds)

    def clock_runs(self) -> str | None:
        game = self.game
        if game is None or self.is_over or game.is_over:
            return None
        return self.role_of(game.turn)

    def summary(self) -> list[tuple[str, str]]:
        game = self.game
        if game is None:
            return []
        points = game.team_points()
        lines = [("actions", str(game.ply)), ("layers left", str(game.pool))]
        if self.first is not None:
            lines.append(("points", ", ".join(
                f"{self.team_name(team)} {p}" for team, p in enumerate(points))))
        return lines

    def colours(self) -> tuple[str, str]:
        if self.game is None:
            return self.COLOURS
        return self.team_name(0), self.team_name(1)

    def require_turn(self, role: str, fail: Fail, what: str) -> None:
        game = self.game
        if game is None or game.is_over or game.phase is RulesPhase.SETUP:
            raise fail("out-of-turn", f"{what} outside play")
        if self.role_of(game.turn) != role:
            raise fail("out-of-turn", f"{what} when it is not the sender's turn")

    def agree_draw(self, role: str) -> list[Event]:
        return self.finish(role, Termination.DRAW_AGREED, None, EndKind.RULES)

    # -- seats and roles ----------------------------------------------------------------

    def role_of(self, seat: int) -> str:
        """The player of a colour: the coin's first player has team 0 (seat 0, and seat 2
        in the two-colours-each variant)."""
        assert self.first is not None and self.game is not None
        return self.first if self.game.team(seat) == 0 else other(self.first)

    def seats_of(self, role: str) -> tuple[int, ...]:
        """The colours `role` plays."""
        assert self.game is not None
        return tuple(s for s in range(self.game.seats) if self.role_of(s) == role)

    def team_name(self, team: int) -> str:
        """A team for people: its colours ("Red", or "Red and Green")."""
        game = self.game
        assert game is not None
        return "+".join(Colour(s).display_name for s in range(game.seats)
                            if game.team(s) == team)

    # -- play -----------------------------------------------------------------------------

    def _on_action(self, role: str, body: Body, ack: int, fail: Fail) -> list[Event]:
        game = self.game
        if game is None or game.is_over:
            raise fail("out-of-turn", "an action outside the game")
        seat = game.turn
        if self.role_of(seat) != role:
            raise fail("out-of-turn", f"an action when it is {Colour(seat).display_name}'s "
                       f"turn, which the {other(role)} plays")
        if body["ply"] != game.ply:
            raise fail("out-of-turn", f"an action for ply {body['ply']} at ply {game.ply}")
        if body.get("draw") and game.phase is RulesPhase.SETUP:
            raise fail("illegal-action", "a draw is offered in play, not in the setup")
        try:
            action = Action.from_code(body["code"])
            game.push(action)
        except TowersError as exc:
            raise fail("illegal-action", str(exc)) from None
        events = self.offer_or_decline(role, body)
        events.append(ActionPlayed(role, seat, action))
        outcome = game.outcome
        if outcome is not None:
            events += self.finish(role, outcome.termination, self._winner(outcome),
                                  EndKind.RULES)
        return events

    def _winner(self, outcome: Outcome) -> str | None:
        """The role of the one winning team; None for a tie (a draw, SPEC 4.8)."""
        if len(outcome.winners) != 1:
            return None
        assert self.first is not None
        return self.first if outcome.winners[0] == 0 else other(self.first)


TowersFlow.MESSAGES = {**TowersFlow.MESSAGES, "action": TowersFlow._on_action}
