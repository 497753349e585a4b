"""A table's game id and its turn order (SPEC 5.3, 5.5): fixed-length hash inputs only.

Every seat commits to a secret in its hello, bound to its key and the host's fresh nonce;
the order is drawn from every seat's opened secret, so no seat (the host included) chooses
where anyone plays.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from p2pgotg.crypto.hashing import (
    HASH_LEN,
    TAG_TABLE_COIN_COMMIT,
    TAG_TABLE_COIN_FLIP,
    TAG_TABLE_GAME,
    fixed,
    tagged_hash,
)

SECRET_LEN = 32


def table_game_id(version: int, options: bytes, hellos: Sequence[bytes]) -> bytes:
    """H(tag, version u16 ‖ options ‖ hello_0[32] ‖ ... ‖ hello_{N-1}[32]), each hello_i the
    body hash of seat i's hello (SPEC 5.3)."""
    return tagged_hash(TAG_TABLE_GAME, struct.pack(">H", version), options,
                       *(fixed(h, HASH_LEN, "hello hash") for h in hellos))


def seat_coin_commitment(host_nonce: bytes, key: bytes, secret: bytes) -> bytes:
    """H(tag, host_nonce[32] ‖ key[32] ‖ secret[32]): a seat's commitment in its hello."""
    return tagged_hash(TAG_TABLE_COIN_COMMIT, fixed(host_nonce, 32, "host nonce"),
                       fixed(key, 32, "identity key"), fixed(secret, SECRET_LEN, "coin secret"))


def turn_order(game_id: bytes, secrets: Sequence[bytes]) -> tuple[int, ...]:
    """The seat of each colour: d = H(tag, game ‖ s_0 ‖ ... ‖ s_{N-1}); colour c goes to
    R[u64(d[8c:8c+8]) mod (N - c)], R the seats not yet placed, ascending (SPEC 5.5).

    >>> sorted(turn_order(bytes(32), [bytes(32)] * 4))
    [0, 1, 2, 3]
    """
    n = len(secrets)
    digest = tagged_hash(TAG_TABLE_COIN_FLIP, fixed(game_id, HASH_LEN, "game id"),
                         *(fixed(s, SECRET_LEN, "coin secret") for s in secrets))
    rest = list(range(n))
    order = []
    for c in range(n):
        (k,) = struct.unpack(">Q", digest[8 * c:8 * c + 8])
        order.append(rest.pop(k % (n - c)))
    return tuple(order)
