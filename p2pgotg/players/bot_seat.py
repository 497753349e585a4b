"""The bot as a seat at a networked game: reads its peer's view, answers with an action.

`step` is pure (no I/O, no waiting): the driver calls it whenever something changed and
performs what it returns. The bot only ever sees its own `Peer`'s view.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from p2pgotg.players.actions import ClaimFlag, OfferDraw, PlayMove, Resign
from p2pgotg.players.bot import Bot
from p2pgotg.protocol import Peer, Phase
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import JOINER

PeerAction = Callable[[Peer], list[Event]]


class BotSeat:
    """Plays one side of a game through the protocol, from that side's view only."""

    def __init__(self, rng: random.Random, level: int = 1) -> None:
        self.rng = rng
        self.level = level  # the Bot's level: 0 random legal moves, 1 the heuristic
        self.bot: Bot | None = None

    def step(self, peer: Peer) -> PeerAction | None:
        """The next thing to do, or None when it is someone else's move."""
        flow = peer.flow
        if peer.failed is not None or flow.is_over:
            return None
        if peer.role == JOINER and flow.phase is Phase.HELLO and flow.hellos.get("host") \
                and not flow.hellos.get(JOINER):
            return lambda p: p.accept()  # a bot accepts whatever rules the host proposes
        side = peer.side
        if side is None:
            return None
        if self.bot is None:
            self.bot = Bot(side, self.rng, self.level)
        bot = self.bot
        if flow.phase is Phase.SETUP and peer.own_setup is None:
            setup = bot.choose_setup()
            return lambda p: p.commit_setup(setup)
        view = peer.view
        if view is None or not peer.my_turn:
            return None
        if peer.draw_offered_to_me:
            if bot.wants_draw(view):
                return lambda p: p.accept_draw()
            return lambda p: p.decline_draw()
        action = bot.choose_action(view)
        if isinstance(action, ClaimFlag):
            return lambda p: p.claim_flag(action.piece)
        if isinstance(action, Resign):
            return lambda p: p.resign()
        assert isinstance(action, (PlayMove, OfferDraw))
        move = action.move
        claim = None
        if not view.is_challenge(move):
            view.push(move)
            found = bot.after_move_claim(view)
            view.pop()
            claim = found.piece if found else None
        offer = isinstance(action, OfferDraw)
        return lambda p: p.move(move, offer_draw=offer, claim=claim)
