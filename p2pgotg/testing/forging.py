"""Messages a cheater sends: whatever it wants to say, signed with its own key (any game).

A cheater can sign any lie of its own; these helpers build those lies for the tests of
SPEC 2.7's threat table. None of them signs with a key other than the peer's own: a
message under someone else's key (a bad signature, SPEC 2.3) is built outside the package,
from `next_body` and that key.
"""

from __future__ import annotations

from typing import Any

from p2pgotg.protocol.envelope import ZERO_HASH, Envelope, seal
from p2pgotg.protocol.messages import Body
from p2pgotg.protocol.peer import Peer


def next_body(peer: Peer, type_: str, fields: dict[str, Any], *, seq: int | None = None,
              prev: bytes | None = None, ack: bytes | None = None,
              game: bytes | None = None) -> Body:
    """The body of a message from `peer` saying `fields`, with the chain fields its next
    honest message would carry (each of them replaced when given)."""
    flow = peer.flow
    peer_hashes = flow.senders[peer.other_role].hashes
    return Body(
        type_,
        flow.next_seq(peer.role) if seq is None else seq,
        flow.last_hash(peer.role) if prev is None else prev,
        (peer_hashes[-1] if peer_hashes else ZERO_HASH) if ack is None else ack,
        (None if type_ == "hello" else flow.game_id) if game is None else game,
        fields,
    )


def forge(peer: Peer, type_: str, fields: dict[str, Any], *, seq: int | None = None,
          prev: bytes | None = None, ack: bytes | None = None, game: bytes | None = None,
          record: bool = False) -> bytes:
    """A message signed by `peer`'s own key saying whatever a cheater wants, with correct
    chain fields unless told otherwise (see `next_body`). With `record`, the cheater's own
    chain state counts the message as sent (without checking it), so later messages
    follow it."""
    body = next_body(peer, type_, fields, seq=seq, prev=prev, ack=ack, game=game)
    data = seal(peer._key, body).encode()
    if record:
        push_unchecked(peer, data)
    return data


def push_unchecked(peer: Peer, data: bytes) -> None:
    """Count `data` as sent by `peer` in its own chain state, skipping every check."""
    env = Envelope.decode(data)
    sender = peer.flow.senders[peer.role]
    sender.key = peer.public_key
    sender.index_of[env.hash] = len(sender.hashes)
    sender.hashes.append(env.hash)
    sender.envelopes.append(data)
    peer.flow.transcript.append((peer.role, data))


def tamper(peer: Peer, data: bytes, **changes: Any) -> bytes:
    """Re-sign one of `peer`'s own messages with some fields changed (what a cheater would
    send instead of what its honest code produced)."""
    body = Envelope.decode(data).body()
    fields = dict(body.fields)
    fields.update({k: v for k, v in changes.items() if k in fields or v is not None})
    new = Body(body.type, body.seq, body.prev, body.ack, body.game, fields)
    return seal(peer._key, new).encode()
