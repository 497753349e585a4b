"""Ed25519 identity keys and message signatures (GUIDE 4.6), as values: no files here.

A signature is evidence only if the key behind it is a proper public key: a key of small
order (the identity point among them) or outside the prime-order subgroup lets anyone make
"signatures" that verify for any message. So a peer's key is validated once, in its hello
(`valid_public_key`), and every signature is verified strictly (`verify`, SPEC 2.1): R a
valid point (canonical, not of small order, in the prime-order subgroup), S canonical
(S < L), then RFC 8032's cofactorless equation (OpenSSL through `cryptography`) on a
validated key. That is what libsodium's verification accepts too: OpenSSL alone would take
R = the identity point, a second signature only the key holder can make, which libsodium
refuses.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from nacl.bindings import crypto_core_ed25519_is_valid_point

from p2pgotg.crypto.hashing import TAG_SIGN

SIGNATURE_LEN = 64
PUBLIC_KEY_LEN = 32
#: The identity point's canonical encoding: refused as a signature's R (SPEC 2.1).
IDENTITY_POINT = bytes([1]) + bytes(31)
#: The order of edwards25519's prime-order subgroup; a signature's S must be below it.
L = 2**252 + 27742317777372353535851937790883648493


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    """The raw 32-byte public key."""
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_from_seed(seed: bytes) -> Ed25519PrivateKey:
    """A private key from its 32-byte seed (deterministic tests and vectors)."""
    return Ed25519PrivateKey.from_private_bytes(seed)


def valid_public_key(public_key: bytes) -> bool:
    """True for a proper identity key: 32 bytes, a canonical encoding of a point on
    edwards25519, not of small order, in the prime-order subgroup (libsodium's
    `crypto_core_ed25519_is_valid_point`, the same check as the blind mode's points).

    >>> valid_public_key(bytes([1]) + bytes(31))  # the identity point
    False
    """
    return len(public_key) == PUBLIC_KEY_LEN and bool(
        crypto_core_ed25519_is_valid_point(public_key))


def sign(key: Ed25519PrivateKey, body: bytes) -> bytes:
    """Ed25519 signature over `tag || 0x00 || body` (the exact body bytes)."""
    return key.sign(TAG_SIGN + b"\x00" + body)


def verify(public_key: bytes, body: bytes, signature: bytes) -> bool:
    """True when `signature` is `public_key`'s signature over `body`: R a valid point, S
    canonical (below L) and the verification equation holding. The key itself is checked
    once, in the hello that carries it (`valid_public_key`).

    R is tested by comparison, not by decoding it: the equation compares encodings, and with
    the key in the prime-order subgroup [S]B - [k]A is in it too, so an R that passes is
    canonical and in that subgroup already; the one small-order point there is the identity,
    which is all that is left to refuse (libsodium's small-order test on R, which a full
    point validation per signature would repeat at several times the cost)."""
    if len(public_key) != PUBLIC_KEY_LEN or len(signature) != SIGNATURE_LEN:
        return False
    if signature[:32] == IDENTITY_POINT:
        return False  # the one way the equation below holds with an R that is not valid
    if int.from_bytes(signature[32:], "little") >= L:
        return False  # a non-canonical S: the same signature in another encoding
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            signature, TAG_SIGN + b"\x00" + body
        )
    except (InvalidSignature, ValueError):
        return False
    return True
