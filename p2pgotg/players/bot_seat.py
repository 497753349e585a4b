"""The bot as a seat at a networked game: reads its peer's view, answers with an action.

`step` is pure (no I/O, no waiting): the driver calls it whenever something changed and
performs what it returns. The bot only ever sees its own `GotgPeer`'s view.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.players.actions import ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.players.bot import Bot
from p2pgotg.players.levels import SEAT_DEFAULT, Level
from p2pgotg.protocol import Phase
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import JOINER
from p2pgotg.rules import Game, Side

PeerAction = Callable[[GotgPeer], list[Event]]


#: What the bot decided, as plain picklable values (so another process can decide):
#: ("setup", Setup) | ("draw", accept) | ("claim", Piece) | ("resign",)
#: | ("move", Move, offer_draw, claim: Piece | None)
Decision = tuple


def needs_decision(peer: GotgPeer) -> str | None:
    """What the bot must decide for `peer` now: "setup", "turn", or None (nothing, or
    nothing the bot decides: accepting the host's rules is not a decision)."""
    flow = peer.flow
    if peer.failed is not None or flow.is_over or peer.side is None:
        return None
    if flow.phase is Phase.SETUP and peer.own_setup is None:
        return "setup"
    if peer.view is not None and peer.my_turn:
        return "turn"
    return None


def rules_to_accept(peer: GotgPeer) -> PeerAction | None:
    """A joiner's bot accepts whatever rules the host proposes (its one non-decision)."""
    flow = peer.flow
    if peer.role == JOINER and flow.phase is Phase.HELLO and flow.hellos.get("host") \
            and not flow.hellos.get(JOINER) and peer.failed is None and not flow.is_over:
        return lambda p: p.accept()
    return None


def decide_turn(bot: Bot, view: Game, draw_offered: bool) -> Decision:
    """The bot's decision on its turn from `view` (which it may push and pop)."""
    if draw_offered:
        return ("draw", bot.wants_draw(view))
    action = bot.choose_action(view)
    if isinstance(action, ClaimFlag):
        return ("claim", action.piece)
    if isinstance(action, Resign):
        return ("resign",)
    assert isinstance(action, (PlayMove, OfferDraw))
    move = action.move
    claim = None
    if not view.is_challenge(move):
        view.push(move)
        found = bot.after_move_claim(view)
        view.pop()
        claim = found.piece if found else None
    return ("move", move, isinstance(action, OfferDraw), claim)


def as_peer_action(decision: Decision) -> PeerAction:
    """The protocol action that carries out `decision`."""
    kind = decision[0]
    if kind == "setup":
        setup = decision[1]
        return lambda p: p.commit_setup(setup)
    if kind == "draw":
        return (lambda p: p.accept_draw()) if decision[1] else (lambda p: p.decline_draw())
    if kind == "claim":
        piece = decision[1]
        return lambda p: p.claim_flag(piece)
    if kind == "resign":
        return lambda p: p.resign()
    _, move, offer, claim = decision
    return lambda p: p.move(move, offer_draw=offer, claim=claim)


class BotSeat:
    """Plays one side of a game through the protocol, from that side's view only."""

    def __init__(self, rng: random.Random, level: Level | str | int = SEAT_DEFAULT) -> None:
        self.rng = rng
        self.level = level  # the Bot's level (see `p2pgotg.players.levels`)
        self.bot: Bot | None = None

    def step(self, peer: GotgPeer) -> PeerAction | None:
        """The next thing to do, or None when it is someone else's move."""
        kind = needs_decision(peer)
        if kind is None or peer.side is None:
            return rules_to_accept(peer)
        bot = self.bot_for(peer.side)
        if kind == "setup":
            return as_peer_action(("setup", bot.choose_setup()))
        assert peer.view is not None
        return as_peer_action(decide_turn(bot, peer.view, peer.draw_offered_to_me))

    def bot_for(self, side: Side) -> Bot:
        """The bot of this seat (made once, when the seat's side is known)."""
        if self.bot is None:
            self.bot = Bot(side, self.rng, self.level)
        return self.bot
