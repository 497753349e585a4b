"""The seat proof of a joiner coming back to a table (SPEC 3.4, "At a table").

A `hi` names the seat it comes back to, but control frames are unsigned and every player
at the table holds the join secret: without a proof, a co-player could take a seat's
connection away, make that seat look absent and claim against it (SPEC 5.7). So the host's
`ok` to such a `hi` carries a fresh nonce, and the connection becomes the seat's only once
the joiner has signed, with the key of that seat's hello, the hash of (nonce, game id,
seat). Python's `ssl` has no TLS 1.3 exporter, so the proof cannot name the TLS session;
the fresh nonce, sent inside this TLS connection, is what binds the proof to it (a proof
made for another connection names another nonce).
"""

from __future__ import annotations

import secrets

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto.hashing import HASH_LEN, TAG_TABLE_SEAT_PROOF, fixed, tagged_hash
from p2pgotg.crypto.identity import sign, verify

NONCE_LEN = 32


def fresh_nonce() -> bytes:
    return secrets.token_bytes(NONCE_LEN)


def seat_proof_hash(nonce: bytes, game_id: bytes, seat: int) -> bytes:
    """H("p2pgotg/table/seat-proof/v1", nonce[32] ‖ game[32] ‖ seat u8)."""
    return tagged_hash(TAG_TABLE_SEAT_PROOF, fixed(nonce, NONCE_LEN, "nonce"),
                       fixed(game_id, HASH_LEN, "game id"), bytes([seat]))


def prove_seat(key: Ed25519PrivateKey, nonce: bytes, game_id: bytes, seat: int) -> bytes:
    """The `prove` frame's `sig`: SPEC 2.2's signature with the seat proof as its body."""
    return sign(key, seat_proof_hash(nonce, game_id, seat))


def seat_proven(public_key: bytes, sig: bytes, nonce: bytes, game_id: bytes,
                seat: int) -> bool:
    """Whether `sig` is `public_key`'s seat proof for this nonce, game and seat (verified
    strictly, SPEC 2.1)."""
    return verify(public_key, seat_proof_hash(nonce, game_id, seat), sig)
