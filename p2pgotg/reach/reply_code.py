"""Reply codes: the joiner's half of the signalling exchange for hole punching (SPEC 3.8).

The invite (v2) carries the host's PUNCH candidate; when no direct candidate answers, the
joiner prints a reply code with its own public mapping, the person sends it back, and the
host takes it (its screen, or ``p2pgotg host --reply CODE``). Then both sides open TCP to
each other at once. Like WebRTC's offer and answer, but carried by the players.

Layout (``gr1-`` then base32, as the invite)::

    candidates        count byte, then candidates (SPEC 3.3), kind PUNCH
    issued            u32, Unix time in seconds when the joiner made the code
    nonce             8 random bytes: the same code is taken once
    tag               8 bytes: HMAC-SHA256(join secret, TAG || the bytes above)[:8]
    check             CRC-32 of TAG || the bytes above, little-endian

The tag binds the code to one invite: a host with another join secret (another game, or a
host run again) recognises a code that is not for it. It is not secret: the addresses in
it are what any router on the path sees.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass

from p2pgotg.reach.candidates import Candidate, CodeError, read_candidates, write_candidates
from p2pgotg.reach.codetext import from_text, to_text

PREFIX = "gr1-"
TAG = b"p2pgotg/reply/v1"
NONCE_SIZE = 8
MAC_SIZE = 8
MAX_AGE = 600  # seconds: older codes are stale (the joiner has stopped waiting by then)
MAX_SKEW = 120  # seconds a code may seem to come from the future (clocks differ)


class ReplyCodeError(ValueError):
    """A reply code that cannot be used; the text is the user-facing reason."""


class ForeignReplyError(ReplyCodeError):
    """The reply code was made for another game's invite."""


class StaleReplyError(ReplyCodeError):
    """The reply code is too old, or was already used."""


@dataclass(frozen=True)
class ReplyCode:
    candidates: tuple[Candidate, ...]
    issued: int
    nonce: bytes
    mac: bytes

    @classmethod
    def make(cls, candidates: list[Candidate], issued: int, nonce: bytes,
             secret: bytes) -> ReplyCode:
        if len(nonce) != NONCE_SIZE:
            raise ValueError(f"the nonce is {NONCE_SIZE} bytes")
        body = _body(candidates, issued, nonce)
        return cls(tuple(candidates), issued, nonce, _mac(secret, body))

    def encode(self) -> str:
        return to_text(PREFIX, TAG, _body(list(self.candidates), self.issued, self.nonce)
                       + self.mac)

    @classmethod
    def decode(cls, text: str) -> ReplyCode:
        try:
            body = from_text(PREFIX, TAG, text, "reply code")
            candidates, offset = read_candidates(body, 0)
        except CodeError as exc:
            raise ReplyCodeError(f"bad reply code: {exc}") from None
        if len(body) != offset + 4 + NONCE_SIZE + MAC_SIZE:
            raise ReplyCodeError("bad reply code: its length does not fit its candidates")
        issued = struct.unpack_from(">I", body, offset)[0]
        nonce = body[offset + 4:offset + 4 + NONCE_SIZE]
        return cls(tuple(candidates), issued, nonce, body[-MAC_SIZE:])

    def verify(self, secret: bytes, now: float) -> None:
        """Raise ForeignReplyError or StaleReplyError when the code is not for this host now."""
        body = _body(list(self.candidates), self.issued, self.nonce)
        if not hmac.compare_digest(_mac(secret, body), self.mac):
            raise ForeignReplyError(
                "this reply code belongs to another game: it answers a different invite code"
                " (ask the other player to join with the invite this host shows now)")
        age = now - self.issued
        if age > MAX_AGE:
            raise StaleReplyError(
                f"this reply code is stale: it was made {int(age // 60)} minutes ago, and the"
                " other player has stopped waiting; ask for a fresh one")
        if age < -MAX_SKEW:
            raise StaleReplyError("this reply code claims to be made in the future: check the"
                                  " clocks of both computers")


def _body(candidates: list[Candidate], issued: int, nonce: bytes) -> bytes:
    if not 0 <= issued <= 0xFFFFFFFF:
        raise ValueError("issued is a u32")
    return write_candidates(candidates) + struct.pack(">I", issued) + nonce


def _mac(secret: bytes, body: bytes) -> bytes:
    return hmac.new(secret, TAG + body, hashlib.sha256).digest()[:MAC_SIZE]
