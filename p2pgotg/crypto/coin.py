"""The coin toss for who moves first (SPEC 2.2, 2.4).

The joiner commits to a secret bound to its key and the game id; the host then shows its
own secret in the clear; the joiner opens. Neither can steer the coin: the joiner is bound
before it sees the host's secret, and the host chooses without seeing the joiner's. A joiner
that refuses to open loses. The coin never depends on the setup commitments.
"""

from __future__ import annotations

from p2pgotg.crypto.hashing import HASH_LEN, TAG_COIN_COMMIT, TAG_COIN_FLIP, fixed, tagged_hash

COIN_SECRET_LEN = 32


def coin_commitment(game_id: bytes, joiner_key: bytes, secret: bytes) -> bytes:
    """SHA-256(tag || game_id[32] || joiner_key[32] || secret[32])."""
    return tagged_hash(
        TAG_COIN_COMMIT,
        fixed(game_id, HASH_LEN, "game id"),
        fixed(joiner_key, 32, "joiner key"),
        fixed(secret, COIN_SECRET_LEN, "coin secret"),
    )


def host_is_white(game_id: bytes, host_secret: bytes, joiner_secret: bytes) -> bool:
    """The low bit of SHA-256(tag || game_id || host_secret || joiner_secret) is 0: the host
    plays White and moves first."""
    digest = tagged_hash(
        TAG_COIN_FLIP,
        fixed(game_id, HASH_LEN, "game id"),
        fixed(host_secret, COIN_SECRET_LEN, "host coin secret"),
        fixed(joiner_secret, COIN_SECRET_LEN, "joiner coin secret"),
    )
    return digest[0] & 1 == 0
