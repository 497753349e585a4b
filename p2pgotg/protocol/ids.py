"""The game id: both sides' fresh nonces and keys, the protocol version and the game's
rule options as fixed-length bytes, so that neither side can steer it and no message of an
old game is valid in a new one (SPEC 2.2). Each game gives its options' bytes and its own
domain tag (Game of the Generals: `p2pgotg/game/v1` and 12 bytes)."""

from __future__ import annotations

import struct

from p2pgotg.crypto import tagged_hash
from p2pgotg.crypto.hashing import fixed


def game_id(
    host_nonce: bytes,
    joiner_nonce: bytes,
    host_key: bytes,
    joiner_key: bytes,
    version: int,
    options: bytes,
    tag: bytes,
) -> bytes:
    """SHA-256(tag || host_nonce[32] || joiner_nonce[32] || host_key[32] || joiner_key[32]
    || version[2, big-endian] || options), `options` of the fixed length its game gives."""
    return tagged_hash(
        tag,
        fixed(host_nonce, 32, "host nonce"),
        fixed(joiner_nonce, 32, "joiner nonce"),
        fixed(host_key, 32, "host key"),
        fixed(joiner_key, 32, "joiner key"),
        struct.pack(">H", version),
        options,
    )
