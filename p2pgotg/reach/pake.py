"""The PAKE that turns a short code into an authenticated channel (SPEC 3.7).

SPAKE2 in its symmetric form (the ``spake2`` package, Ed25519 group, as magic-wormhole
uses it), with the short code as password and ``ID`` as the identity string. Each side
then proves it holds the key with an HMAC over its role and the SHA-256 fingerprint of the
host's TLS certificate *as that side saw it*. That fingerprint binds the PAKE to the TLS
channel: a machine in the middle that ends TLS on both sides shows the joiner its own
certificate, so the confirmations differ and the attempt fails; it learns nothing but
whether its one guess of the code was right.

Sans-IO: messages in and out as bytes; the randomness comes from ``entropy`` (tests pass
a fixed one to reproduce the vectors in protocol/vectors-pake.json).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable

from spake2 import SPAKE2_Symmetric
from spake2.spake2 import SPAKEError

ID = b"p2pgotg/short-code/v1"
CONFIRM_TAG = b"p2pgotg/pake-confirm/v1"
MESSAGE_SIZE = 33
KEY_SIZE = 32
CONFIRM_SIZE = 32
FINGERPRINT_SIZE = 32
HOST_ROLE = b"h"
JOINER_ROLE = b"j"


class PakeError(ValueError):
    """The PAKE failed: a wrong code, or someone who is not the other player."""


def confirmation(key: bytes, role: bytes, fingerprint: bytes) -> bytes:
    """HMAC-SHA256(key, CONFIRM_TAG || role || fingerprint): fixed-length inputs only."""
    if len(key) != KEY_SIZE or len(fingerprint) != FINGERPRINT_SIZE or \
            role not in (HOST_ROLE, JOINER_ROLE):
        raise ValueError("confirmation inputs have fixed sizes")
    return hmac.new(key, CONFIRM_TAG + role + fingerprint, hashlib.sha256).digest()


class PakeSide:
    """One side of the exchange: ``message`` to send, ``finish`` with the other's message,
    then ``confirm`` (ours) and ``check`` (theirs)."""

    def __init__(self, password: bytes, fingerprint: bytes, role: bytes,
                 entropy: Callable[[int], bytes] = os.urandom) -> None:
        if len(fingerprint) != FINGERPRINT_SIZE:
            raise ValueError("the TLS fingerprint is 32 bytes")
        self._spake = SPAKE2_Symmetric(password, idSymmetric=ID, entropy_f=entropy)
        self.message = self._spake.start()
        self._fingerprint = fingerprint
        self._role = role
        self._key: bytes | None = None

    def finish(self, message: object) -> None:
        if not isinstance(message, bytes) or len(message) != MESSAGE_SIZE:
            raise PakeError("the other side's PAKE message is malformed")
        if message == self.message:
            raise PakeError("the other side echoed our PAKE message back")
        try:
            self._key = self._spake.finish(message)
        except (SPAKEError, ValueError) as exc:
            raise PakeError(f"the other side's PAKE message is invalid: {exc}") from None

    @property
    def key(self) -> bytes:
        if self._key is None:
            raise RuntimeError("finish() first")
        return self._key

    def confirm(self) -> bytes:
        return confirmation(self.key, self._role, self._fingerprint)

    def check(self, mac: object) -> None:
        other = JOINER_ROLE if self._role == HOST_ROLE else HOST_ROLE
        expected = confirmation(self.key, other, self._fingerprint)
        if not isinstance(mac, bytes) or not hmac.compare_digest(mac, expected):
            raise PakeError("the short code does not match")
