"""Commitments: one per piece, one for the whole setup, one for the OT seed (SPEC 2.2).

All layouts are fixed-length; SPEC.md section "Hashed byte layouts" states them byte by byte.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2pgotg.crypto.hashing import (
    HASH_LEN,
    TAG_COMMIT,
    TAG_SEED,
    TAG_SETUP,
    fixed,
    tagged_hash,
)

KEY_LEN = 32
SALT_LEN = 32
SEED_LEN = 32
PIECES = 21
RANKS = 15


def piece_commitment(game_id: bytes, owner_key: bytes, pid: int, rank: int, salt: bytes) -> bytes:
    """SHA-256(tag || game_id[32] || owner_key[32] || pid[1] || rank[1] || salt[32])."""
    if not (0 <= pid < PIECES):
        raise ValueError(f"piece id {pid} out of range 0..20")
    if not (0 <= rank < RANKS):
        raise ValueError(f"rank {rank} out of range 0..14")
    return tagged_hash(
        TAG_COMMIT,
        fixed(game_id, HASH_LEN, "game id"),
        fixed(owner_key, KEY_LEN, "owner key"),
        bytes([pid, rank]),
        fixed(salt, SALT_LEN, "salt"),
    )


def seed_commitment(game_id: bytes, owner_key: bytes, seed: bytes) -> bytes:
    """SHA-256(tag || game_id[32] || owner_key[32] || seed[32]): the blind mode's OT seed."""
    return tagged_hash(
        TAG_SEED,
        fixed(game_id, HASH_LEN, "game id"),
        fixed(owner_key, KEY_LEN, "owner key"),
        fixed(seed, SEED_LEN, "seed"),
    )


def setup_hash(
    game_id: bytes,
    owner_key: bytes,
    squares: bytes,
    commitments: Sequence[bytes],
    seed_commit: bytes,
) -> bytes:
    """The privacy screen: SHA-256(tag || game_id || owner_key || squares[21] ||
    21 piece commitments[21*32] || seed commitment[32])."""
    if len(commitments) != PIECES:
        raise ValueError("a setup has 21 piece commitments")
    return tagged_hash(
        TAG_SETUP,
        fixed(game_id, HASH_LEN, "game id"),
        fixed(owner_key, KEY_LEN, "owner key"),
        fixed(squares, PIECES, "squares"),
        *(fixed(c, HASH_LEN, "commitment") for c in commitments),
        fixed(seed_commit, HASH_LEN, "seed commitment"),
    )
