"""Game of the Generals (Salpakan), the first game on the protocol kernel: its messages
(`messages`), its flow (`flow.GotgFlow`: setup, play, challenges, audit), its peer
(`peer.GotgPeer`) and its events. Its rules engine is `p2pgotg.rules`, its bots
`p2pgotg.players`, its screens `p2pgotg.ui`."""

from __future__ import annotations

from p2pgotg.games import GameModule
from p2pgotg.games.gotg import messages as _messages  # noqa: F401  (registers its types)
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.gotg.peer import GotgPeer

MODULE = GameModule(name=None, title="Game of the Generals", flow=GotgFlow, peer=GotgPeer)

__all__ = ["MODULE", "GotgFlow", "GotgPeer"]
