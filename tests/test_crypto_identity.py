"""Identity keys and signatures that prove something: a key of small order, outside the
prime-order subgroup or not canonical lets anyone 'sign' anything, so it is refused; and a
signature has one encoding only (S < L)."""

from __future__ import annotations

import pytest
from nacl.bindings import crypto_core_ed25519_add, crypto_scalarmult_ed25519_base_noclamp

from p2pgotg.crypto import key_from_seed, public_bytes, sign, valid_public_key, verify
from p2pgotg.crypto.identity import L

P_FIELD = 2**255 - 19
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
REAL = public_bytes(key_from_seed(bytes(32)))
BAD_POINTS = {
    "identity": b"\x01" + bytes(31),
    "order 2": (P_FIELD - 1).to_bytes(32, "little"),
    "order 4 (all-zero encoding)": bytes(32),
    "order 8": ORDER_8,
    "non-canonical identity": (P_FIELD + 1).to_bytes(32, "little"),
    "non-canonical, on the curve": (P_FIELD + 3).to_bytes(32, "little"),
    "a real key plus the order-8 point": crypto_core_ed25519_add(REAL, ORDER_8),
    "too short": REAL[:31],
}


@pytest.mark.parametrize("name", sorted(BAD_POINTS))
def test_every_improper_key_is_refused(name: str) -> None:
    assert not valid_public_key(BAD_POINTS[name])


def test_a_real_key_is_valid() -> None:
    for i in range(20):
        assert valid_public_key(public_bytes(key_from_seed(bytes([i]) * 32)))


def test_with_the_identity_key_a_signature_verifies_for_anything() -> None:
    """Why the key is checked: the equation alone accepts (s*B, s) for every message."""
    identity = b"\x01" + bytes(31)
    s = (7).to_bytes(32, "little")
    forged = crypto_scalarmult_ed25519_base_noclamp(s) + s
    assert verify(identity, b"one message", forged) and verify(identity, b"another", forged)
    assert not valid_public_key(identity)


def test_a_signature_has_one_encoding_only() -> None:
    key = key_from_seed(bytes(32))
    signature = sign(key, b"body")
    s = int.from_bytes(signature[32:], "little")
    assert verify(public_bytes(key), b"body", signature)
    assert not verify(public_bytes(key), b"body", signature[:32] + (s + L).to_bytes(32, "little"))
