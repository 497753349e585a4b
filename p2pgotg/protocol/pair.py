"""Two peers wired back to back in memory (h11's ConnectionPair), with deterministic keys
and randomness, and a simple player loop for whole games."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import key_from_seed
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.protocol.events import Event
from p2pgotg.rules import Rank, RuleOptions, Setup

TLS_FP = hashlib.sha256(b"test certificate").digest()


def det_rand(label: str) -> Callable[[int], bytes]:
    """Deterministic 'randomness' for reproducible tests and vectors."""
    counter = [0]

    def randbytes(n: int) -> bytes:
        counter[0] += 1
        return hashlib.sha256(f"{label}/{counter[0]}".encode()).digest()[:n]

    return randbytes


@dataclass
class Pair:
    host: GotgPeer
    joiner: GotgPeer
    events: dict[str, list[Event]] = field(default_factory=lambda: {HOST: [], JOINER: []})
    log: list[tuple[str, bytes]] = field(default_factory=list)  # (sender, bytes) in order

    @classmethod
    def new(cls, options: RuleOptions | None = None, seed: str = "pair") -> Pair:
        host = GotgPeer(HOST, key_from_seed(hashlib.sha256(f"{seed}/host-key".encode()).digest()),
                    TLS_FP, options or RuleOptions(), det_rand(f"{seed}/host"))
        joiner = GotgPeer(JOINER,
                      key_from_seed(hashlib.sha256(f"{seed}/joiner-key".encode()).digest()),
                      TLS_FP, None, det_rand(f"{seed}/joiner"))
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


def forge(peer: GotgPeer, type_: str, fields: dict[str, Any], *, seq: int | None = None,
          prev: bytes | None = None, ack: bytes | None = None, game: bytes | None = None,
          key: Ed25519PrivateKey | None = None, record: bool = False) -> bytes:
    """A message signed by `peer`'s key (or `key`) saying whatever a cheater wants,
    with correct chain fields unless told otherwise. With `record`, the cheater's own chain
    state counts the message as sent (without checking it), so later messages follow it."""
    from p2pgotg.protocol.envelope import ZERO_HASH, seal
    from p2pgotg.protocol.messages import Body

    flow = peer.flow
    peer_hashes = flow.senders[peer.peer_role].hashes
    body = Body(
        type_,
        flow.next_seq(peer.role) if seq is None else seq,
        flow.last_hash(peer.role) if prev is None else prev,
        (peer_hashes[-1] if peer_hashes else ZERO_HASH) if ack is None else ack,
        (None if type_ == "hello" else flow.game_id) if game is None else game,
        fields,
    )
    data = seal(key or peer._key, body).encode()
    if record:
        push_unchecked(peer, data)
    return data


def push_unchecked(peer: GotgPeer, data: bytes) -> None:
    """Count `data` as sent by `peer` in its own chain state, skipping every check."""
    from p2pgotg.protocol.envelope import Envelope

    env = Envelope.decode(data)
    sender = peer.flow.senders[peer.role]
    sender.key = peer.public_key
    sender.index_of[env.hash] = len(sender.hashes)
    sender.hashes.append(env.hash)
    sender.envelopes.append(data)
    peer.flow.transcript.append((peer.role, data))


def tamper(peer: GotgPeer, data: bytes, **changes: Any) -> bytes:
    """Re-sign one of `peer`'s messages with some fields changed (what a cheater would
    send instead of what its honest code produced)."""
    from p2pgotg.protocol.envelope import Envelope, seal
    from p2pgotg.protocol.messages import Body

    body = Envelope.decode(data).body()
    fields = dict(body.fields)
    fields.update({k: v for k, v in changes.items() if k in fields or v is not None})
    new = Body(body.type, body.seq, body.prev, body.ack, body.game, fields)
    return seal(peer._key, new).encode()
