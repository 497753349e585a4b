"""Ed25519 identity keys and message signatures (GUIDE 4.6), as values: no files here."""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from p2pgotg.crypto.hashing import TAG_SIGN

SIGNATURE_LEN = 64


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    """The raw 32-byte public key."""
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_from_seed(seed: bytes) -> Ed25519PrivateKey:
    """A private key from its 32-byte seed (deterministic tests and vectors)."""
    return Ed25519PrivateKey.from_private_bytes(seed)


def sign(key: Ed25519PrivateKey, body: bytes) -> bytes:
    """Ed25519 signature over `tag || 0x00 || body` (the exact body bytes)."""
    return key.sign(TAG_SIGN + b"\x00" + body)


def verify(public_key: bytes, body: bytes, signature: bytes) -> bool:
    """True when `signature` is `public_key`'s signature over `body`."""
    if len(public_key) != 32 or len(signature) != SIGNATURE_LEN:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            signature, TAG_SIGN + b"\x00" + body
        )
    except (InvalidSignature, ValueError):
        return False
    return True
