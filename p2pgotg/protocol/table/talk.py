"""Whispers (SPEC 5.8): text sealed end to end between two seats' identity keys, so the
relay carries ciphertext it cannot read.

The Curve25519 keys come from the Ed25519 identity keys (libsodium's conversion), so a
seat needs no second key and the box is bound to the keys the hellos signed.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from nacl.bindings import (
    crypto_box_easy,
    crypto_box_NONCEBYTES,
    crypto_box_open_easy,
    crypto_sign_ed25519_pk_to_curve25519,
    crypto_sign_ed25519_sk_to_curve25519,
    crypto_sign_seed_keypair,
)
from nacl.exceptions import CryptoError

#: The most a whisper's `box` may hold: a nonce, a chat line of 280 characters of at most
#: 4 bytes each, and the 16-byte tag.
MAX_BOX = crypto_box_NONCEBYTES + 280 * 4 + 16


def _curve_secret(key: Ed25519PrivateKey) -> bytes:
    seed = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    _, secret = crypto_sign_seed_keypair(seed)
    return bytes(crypto_sign_ed25519_sk_to_curve25519(secret))


def seal_whisper(key: Ed25519PrivateKey, to_key: bytes, text: str, nonce: bytes) -> bytes:
    """nonce[24] ‖ crypto_box(text, nonce, to's Curve25519 key, our Curve25519 key)."""
    if len(nonce) != crypto_box_NONCEBYTES:
        raise ValueError(f"a whisper's nonce is {crypto_box_NONCEBYTES} bytes")
    box = crypto_box_easy(text.encode("utf-8"), nonce,
                          crypto_sign_ed25519_pk_to_curve25519(to_key), _curve_secret(key))
    return nonce + bytes(box)


def open_whisper(key: Ed25519PrivateKey, from_key: bytes, box: bytes) -> str | None:
    """The text of a whisper to us from `from_key`'s seat, or None when it does not open
    (or is not UTF-8): unreadable, and it proves nothing."""
    if len(box) < crypto_box_NONCEBYTES + 16:
        return None
    try:
        plain = crypto_box_open_easy(box[crypto_box_NONCEBYTES:], box[:crypto_box_NONCEBYTES],
                                     crypto_sign_ed25519_pk_to_curve25519(from_key),
                                     _curve_secret(key))
        return bytes(plain).decode("utf-8")
    except (CryptoError, UnicodeDecodeError, ValueError):
        return None
