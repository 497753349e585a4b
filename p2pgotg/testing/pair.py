"""Two peers wired back to back in memory (h11's ConnectionPair), with deterministic keys
and randomness, and a simple player loop for whole games."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import key_from_seed
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.protocol.events import Event
from p2pgotg.rules import Rank, RuleOptions, Setup

TLS_FP = hashlib.sha256(b"test certificate").digest()


class DetRand:
    """Deterministic 'randomness' for reproducible tests, transcripts and vectors: call `n`
    is SHA-256(f"{label}/{n}"), cut to the size asked. A deep copy (an explorer's branch of
    a game) continues independently of the original."""

    def __init__(self, label: str) -> None:
        self.label, self.counter = label, 0

    def __call__(self, n: int) -> bytes:
        self.counter += 1
        return hashlib.sha256(f"{self.label}/{self.counter}".encode()).digest()[:n]


def det_key(label: str) -> Ed25519PrivateKey:
    """A deterministic identity key: its seed is SHA-256 of `label`."""
    return key_from_seed(hashlib.sha256(label.encode()).digest())


@dataclass
class Pair:
    host: GotgPeer
    joiner: GotgPeer
    events: dict[str, list[Event]] = field(default_factory=lambda: {HOST: [], JOINER: []})
    log: list[tuple[str, bytes]] = field(default_factory=list)  # (sender, bytes) in order

    @classmethod
    def new(cls, options: RuleOptions | None = None, seed: str = "pair",
            classes: Mapping[str, type[GotgPeer]] | None = None) -> Pair:
        """Two fresh peers whose keys and randomness follow from `seed`; `classes` names a
        role's peer class when it is not `GotgPeer` (a cheater's, say)."""
        classes = classes or {}
        host = classes.get(HOST, GotgPeer)(HOST, det_key(f"{seed}/host-key"), TLS_FP,
                                           options or RuleOptions(), DetRand(f"{seed}/host"))
        joiner = classes.get(JOINER, GotgPeer)(JOINER, det_key(f"{seed}/joiner-key"), TLS_FP,
                                               None, DetRand(f"{seed}/joiner"))
        return cls(host, joiner)

    def peer(self, role: str) -> GotgPeer:
        return self.host if role == HOST else self.joiner

    def deliver(self) -> None:
        """Move bytes both ways until both sides are quiet."""
        while True:
            moved = False
            for sender, receiver in ((self.host, self.joiner), (self.joiner, self.host)):
                for data in sender.data_to_send():
                    self.log.append((sender.role, data))
                    self.events[receiver.role] += receiver.receive(data)
                    moved = True
            if not moved:
                return

    def handshake(self, host_setup: Callable[[GotgPeer], Setup] | None = None,
                  joiner_setup: Callable[[GotgPeer], Setup] | None = None,
                  rng: random.Random | None = None) -> None:
        rng = rng or random.Random(0)
        self.events[HOST] += self.host.start()
        self.deliver()
        self.events[JOINER] += self.joiner.accept()
        self.deliver()
        for peer, chooser in ((self.host, host_setup), (self.joiner, joiner_setup)):
            assert peer.side is not None
            setup = chooser(peer) if chooser else Setup.random(peer.side, rng)
            self.events[peer.role] += peer.commit_setup(setup)
            self.deliver()

    def play_random(self, rng: random.Random, max_plies: int = 3000) -> None:
        """Both sides play random legal moves (claiming flag wins when they can)."""
        while not self.host.flow.is_over and self.host.view is not None:
            mover = self.host if self.host.my_turn else self.joiner
            view = mover.view
            assert view is not None and mover.my_turn, "someone must be to move"
            if view.ply >= max_plies:
                mover.resign()
                self.deliver()
                break
            flag = next((p for p in view.pieces(view.turn) if view.rank_of(p) is Rank.FLAG),
                        None)
            if flag is not None and view.flag_claim_problem(view.turn, flag) is None:
                mover.claim_flag(flag)
            else:
                mover.move(rng.choice(view.legal_moves))
            self.deliver()
