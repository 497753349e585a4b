"""Two Towers peers back to back in memory (the Towers counterpart of `pair.Pair`), with
deterministic keys and randomness, for tests, recorded transcripts and benchmarks."""

from __future__ import annotations

import random

from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.flow import HOST, JOINER
from p2pgotg.protocol.peer import Record
from p2pgotg.testing.pair import TLS_FP, DetRand, det_key


class Table:
    """A host and a joiner of one Towers game, past the hellos and the coin (unless not
    `start`: then nothing is sent yet)."""

    def __init__(self, options: RuleOptions | None = None, seed: str = "towers",
                 start: bool = True) -> None:
        self.host = TowersPeer(HOST, det_key(f"{seed}/host"), TLS_FP,
                               options or RuleOptions(), DetRand(f"{seed}/host"))
        self.joiner = TowersPeer(JOINER, det_key(f"{seed}/joiner"), TLS_FP, None,
                                 DetRand(f"{seed}/joiner"))
        self.records: dict[str, list[Record]] = {HOST: [], JOINER: []}
        if not start:
            return
        self.host.start()
        self.deliver()
        self.joiner.accept()
        self.deliver()

    def peer(self, role: str) -> TowersPeer:
        return self.host if role == HOST else self.joiner

    def deliver(self, keep: bool = True) -> None:
        """Move bytes both ways until both sides are quiet, keeping each side's records in
        `records` (unless not `keep`: then they stay with the peers, `take_records`)."""
        while True:
            moved = False
            for sender, receiver in ((self.host, self.joiner), (self.joiner, self.host)):
                for data in sender.data_to_send():
                    receiver.receive(data)
                    moved = True
            for peer in (self.host, self.joiner) if keep else ():
                self.records[peer.role] += peer.take_records()
            if not moved:
                return

    def to_act(self) -> TowersPeer:
        """The player whose colour acts."""
        peer = self.host if self.host.my_turn else self.joiner
        assert peer.my_turn, "someone must be to act"
        return peer

    def other(self, peer: TowersPeer) -> TowersPeer:
        return self.joiner if peer is self.host else self.host

    def play(self, text: str, offer_draw: bool = False) -> None:
        """The player to act makes the action written `text`."""
        self.to_act().act(Action.from_text(text), offer_draw)
        self.deliver()

    def play_random(self, rng: random.Random, limit: int = 2000) -> list[Action]:
        """Random legal actions by whoever is to act, until the end or `limit` actions."""
        played: list[Action] = []
        while not self.host.flow.is_over and len(played) < limit:
            peer = self.to_act()
            assert peer.view is not None
            action = rng.choice(peer.view.legal_actions)
            peer.act(action)
            played.append(action)
            self.deliver()
        return played
