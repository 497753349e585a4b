"""One player's end of a Towers game (SPEC 4.11): the kernel's peer, with Towers' actions.

Towers has no secrets and nothing automatic to answer: every action is the player's own
decision (`act`), checked by the flow before it is signed, so a peer never sends what the
other side would have to convict.
"""

from __future__ import annotations

from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.game import Game
from p2pgotg.games.towers.rules.game import Phase as RulesPhase
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.errors import LocalProtocolError
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.peer import Peer


class TowersPeer(Peer):
    """A Towers player: the kernel's hello, coin, talk, resignations and claims, and `act`."""

    FLOW = TowersFlow
    flow: TowersFlow

    @property
    def options(self) -> RuleOptions | None:
        options = self.flow.options
        assert options is None or isinstance(options, RuleOptions)
        return options

    @property
    def view(self) -> Game | None:
        """The game as it stands (the whole board: Towers hides nothing)."""
        return self.flow.game

    @property
    def my_seats(self) -> tuple[int, ...]:
        """The colours this player plays (one, or two in the two-colours-each variant)."""
        return () if self.flow.game is None else self.flow.seats_of(self.role)

    @property
    def my_turn(self) -> bool:
        game = self.flow.game
        return (game is not None and not self.flow.is_over and not game.is_over
                and self.flow.role_of(game.turn) == self.role)

    @property
    def in_setup(self) -> bool:
        game = self.flow.game
        return game is not None and game.phase is RulesPhase.SETUP

    @property
    def draw_offered_to_me(self) -> bool:
        return self.flow.draw_offer == self.peer_role and not self.flow.is_over

    def act(self, action: Action, offer_draw: bool = False) -> list[Event]:
        """Make one action (a setup choice, or one of the turn's two): refused with the
        rule's words when it is not this player's turn or the rules forbid it."""
        game = self.flow.game
        if game is None or not self.my_turn:
            raise LocalProtocolError("it is not your turn")
        problem = game.problem(action)
        if problem is not None:
            raise LocalProtocolError(f"{action.text()}: {problem}")
        if offer_draw and game.phase is RulesPhase.SETUP:
            raise LocalProtocolError("a draw can be offered once the setup is over")
        fields: dict[str, object] = {"ply": game.ply, "code": action.code()}
        if offer_draw:
            fields["draw"] = True
        return self._send("action", fields)

    def accept_draw(self) -> list[Event]:
        return self._send("draw_accept", {})

    def decline_draw(self) -> list[Event]:
        return self._send("draw_decline", {})
