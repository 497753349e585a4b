"""Onion service addresses (version 3) and the key behind a host's address (SPEC 3.3.1, 3.8).

An address is ``base32(PUBKEY | CHECKSUM | VERSION)`` and ``.onion``, lowercase: PUBKEY the
service's 32-byte Ed25519 public key, VERSION 0x03 and CHECKSUM the first two bytes of
SHA3-256(".onion checksum" | PUBKEY | VERSION) (Tor's rend-spec-v3, "Encoding onion
addresses"). The address is the key: only its holder can publish the service, which is
why an onion candidate fits the invite's pin model.

The host derives its service key from its identity key and the game's join secret, so a
host that resumes a game publishes the same address again and the joiner's old invite
still reaches it, while two games never share one address.

>>> onion_address(bytes(32))
'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaam2dqd.onion'
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SUFFIX = ".onion"
VERSION = 3
CHECKSUM_TAG = b".onion checksum"
KEY_TAG = b"p2pgotg/onion-key/v1"
ADDRESS_LETTERS = 56  # base32 of 35 bytes


class OnionError(ValueError):
    """Not a version 3 onion address; the text says why."""


def _checksum(public_key: bytes) -> bytes:
    return hashlib.sha3_256(CHECKSUM_TAG + public_key + bytes([VERSION])).digest()[:2]


def onion_address(public_key: bytes) -> str:
    """The address of the service with this Ed25519 public key."""
    if len(public_key) != 32:
        raise OnionError("an onion service key is 32 bytes")
    raw = public_key + _checksum(public_key) + bytes([VERSION])
    return base64.b32encode(raw).decode("ascii").lower() + SUFFIX


def is_onion(name: str) -> bool:
    """Whether a hostname is in Tor's .onion domain (reachable only through Tor)."""
    return name.lower().endswith(SUFFIX)


def onion_key(address: str) -> bytes:
    """The public key in a version 3 address; OnionError says what is wrong with it."""
    name = address.lower()
    if not name.endswith(SUFFIX):
        raise OnionError(f"{address!r} does not end in {SUFFIX}")
    letters = name[:-len(SUFFIX)]
    if len(letters) != ADDRESS_LETTERS:
        raise OnionError(f"an onion address has {ADDRESS_LETTERS} letters before {SUFFIX}, "
                         f"not {len(letters)} (version 2 addresses are gone from Tor)")
    try:
        raw = base64.b32decode(letters.upper())
    except ValueError:
        raise OnionError("an onion address uses only the letters a-z and digits 2-7") from None
    public_key, checksum, version = raw[:32], raw[32:34], raw[34]
    if version != VERSION:
        raise OnionError(f"onion address version {version}, not {VERSION}")
    if checksum != _checksum(public_key):
        raise OnionError("the onion address's checksum does not match: a letter is wrong")
    return public_key


def game_seed(identity_seed: bytes, join_secret: bytes) -> bytes:
    """The 32-byte seed of a game's service key: HMAC-SHA256 keyed with the host's identity
    key (its 32-byte Ed25519 seed) over KEY_TAG | join secret. Only the host can compute
    it; the same game gives the same address each time the host runs."""
    return hmac.new(identity_seed, KEY_TAG + join_secret, hashlib.sha256).digest()


def public_key_of(seed: bytes) -> bytes:
    """The Ed25519 public key of a 32-byte seed."""
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def expanded_key(seed: bytes) -> bytes:
    """The 64-byte expanded secret key Tor's ADD_ONION takes as ``ED25519-V3:`` (RFC 8032
    5.1.5: SHA-512 of the seed, the first half clamped, the second half kept)."""
    digest = bytearray(hashlib.sha512(seed).digest())
    digest[0] &= 248
    digest[31] &= 127
    digest[31] |= 64
    return bytes(digest)
