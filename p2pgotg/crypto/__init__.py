"""Cryptographic building blocks: pure functions over bytes, no I/O, no game rules.

Rank indices (0..14) and piece ids (0..20) are the only game facts this layer knows.
"""

from p2pgotg.crypto.coin import COIN_SECRET_LEN, coin_commitment, host_is_white
from p2pgotg.crypto.commitments import (
    SALT_LEN,
    SEED_LEN,
    piece_commitment,
    seed_commitment,
    setup_hash,
)
from p2pgotg.crypto.hashing import HASH_LEN, TAG_BODY, TAG_GAME, equal, tagged_hash
from p2pgotg.crypto.identity import (
    key_from_seed,
    public_bytes,
    sign,
    valid_public_key,
    verify,
)

__all__ = [
    "COIN_SECRET_LEN", "HASH_LEN", "SALT_LEN", "SEED_LEN", "TAG_BODY", "TAG_GAME",
    "coin_commitment", "equal", "host_is_white", "key_from_seed", "piece_commitment",
    "public_bytes", "seed_commitment", "setup_hash", "sign", "tagged_hash", "valid_public_key",
    "verify",
]
