"""The signed envelope: `{"body": bytes, "sig": bytes}` in msgpack (SPEC 2.3).

The signature covers the exact body bytes; the hash chain runs over body hashes, never
over signatures, so a message is identified by what it says, not by how it was signed.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import TAG_BODY, sign, tagged_hash, verify
from p2pgotg.protocol.messages import Body
from p2pgotg.protocol.wire import WireError, pack, unpack

ZERO_HASH = bytes(32)


def body_hash(body_bytes: bytes) -> bytes:
    """SHA-256(tag || 0x00 || body): the identity of a message in the chain."""
    return tagged_hash(TAG_BODY, body_bytes)


@dataclass(frozen=True)
class Envelope:
    body_bytes: bytes
    signature: bytes

    def encode(self) -> bytes:
        return pack({"body": self.body_bytes, "sig": self.signature})

    @classmethod
    def decode(cls, data: bytes) -> Envelope:
        raw = unpack(data)
        if not isinstance(raw, dict) or set(raw) != {"body", "sig"}:
            raise WireError("an envelope is a map of exactly body and sig")
        body, sig = raw["body"], raw["sig"]
        if not isinstance(body, bytes) or not isinstance(sig, bytes) or len(sig) != 64:
            raise WireError("envelope body must be bytes and sig 64 bytes")
        return cls(body, sig)

    def verified_by(self, public_key: bytes) -> bool:
        return verify(public_key, self.body_bytes, self.signature)

    @property
    def hash(self) -> bytes:
        return body_hash(self.body_bytes)

    def body(self) -> Body:
        return Body.decode(self.body_bytes)


def seal(key: Ed25519PrivateKey, body: Body) -> Envelope:
    data = body.encode()
    return Envelope(data, sign(key, data))
