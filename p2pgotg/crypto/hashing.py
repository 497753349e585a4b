"""Domain-separated SHA-256 over fixed-length byte layouts (SPEC 2.1, 2.2).

Every hash input is `tag || 0x00 || fields`, where the tag names the purpose and version and
every field has a fixed length, so no two different inputs can produce the same bytes. We
never hash msgpack: it has more than one encoding of the same value.
"""

from __future__ import annotations

import hashlib
import hmac

TAG_COMMIT = b"p2pgotg/commit/v1"
TAG_SETUP = b"p2pgotg/setup/v1"
TAG_SEED = b"p2pgotg/seed/v1"
TAG_GAME = b"p2pgotg/game/v1"
TAG_GAME_TOWERS = b"p2pgotg/towers/game/v1"  # (a Towers game's id, SPEC 4.11)
TAG_COIN_COMMIT = b"p2pgotg/coin-commit/v1"
TAG_COIN_FLIP = b"p2pgotg/coin-flip/v1"
TAG_BODY = b"p2pgotg/body/v1"
#: A table of three or four seats (SPEC 5.3, 5.5): its game id, each seat's coin
#: commitment and the order drawn from every seat's secret.
TAG_TABLE_GAME = b"p2pgotg/table/game/v1"
TAG_TABLE_COIN_COMMIT = b"p2pgotg/table/coin-commit/v1"
TAG_TABLE_COIN_FLIP = b"p2pgotg/table/coin-flip/v1"
#: A joiner coming back to a table's seat signs this over the host's nonce (SPEC 3.4).
TAG_TABLE_SEAT_PROOF = b"p2pgotg/table/seat-proof/v1"
TAG_SIGN = b"p2pgotg/sign/v1"

HASH_LEN = 32


def tagged_hash(tag: bytes, *fields: bytes) -> bytes:
    """SHA-256(tag || 0x00 || fields...). Callers pass fixed-length fields only."""
    if b"\x00" in tag:
        raise ValueError("a domain tag may not contain a NUL byte")
    h = hashlib.sha256(tag + b"\x00")
    for field in fields:
        h.update(field)
    return h.digest()


def equal(a: bytes, b: bytes) -> bool:
    """Constant-time comparison of two byte strings."""
    return hmac.compare_digest(a, b)


def fixed(value: bytes, length: int, what: str) -> bytes:
    """Check that a hashed field has its fixed length (a programming error otherwise)."""
    if not isinstance(value, (bytes, bytearray)) or len(value) != length:
        raise ValueError(f"{what} must be {length} bytes")
    return bytes(value)
