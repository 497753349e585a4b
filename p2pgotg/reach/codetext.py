"""The text form shared by p2pgotg's long codes: a prefix such as ``gg2-`` and the
lowercase, unpadded RFC 4648 base32 of a byte layout that ends in a CRC-32 check.

A reader ignores whitespace and letter case, rejects characters outside ``a-z2-7``, base32
lengths no encoder makes and non-zero spare bits, so a typo is named before any byte is
read (SPEC 3.3).
"""

from __future__ import annotations

import base64
import re
import struct
import zlib

from p2pgotg.reach.candidates import CodeError

_ALPHABET = set("abcdefghijklmnopqrstuvwxyz234567")
_VERSION_PREFIX = re.compile(r"g[gr](\d+)-")


def check(tag: bytes, body: bytes) -> bytes:
    """CRC-32 (IEEE) of tag || body, little-endian: one codeword with the body."""
    return struct.pack("<I", zlib.crc32(body, zlib.crc32(tag)))


def to_text(prefix: str, tag: bytes, body: bytes) -> str:
    raw = body + check(tag, body)
    return prefix + base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def from_text(prefix: str, tag: bytes, text: str, what: str, minimum: int = 5) -> bytes:
    """The body (check removed and verified); CodeError names the first problem. A code of
    fewer than `minimum` bytes (its check included) is cut off, said before the check."""
    code = "".join(text.split()).lower()
    if not code.startswith(prefix):
        found = _VERSION_PREFIX.match(code)
        if found and found.group(0)[:2] == prefix[:2]:
            raise CodeError(f"this {what} starts with {found.group(0)!r}, a format this version"
                            f" of p2pgotg does not know (it reads {prefix!r}); update p2pgotg")
        raise CodeError(f"a {what} starts with {prefix!r}")
    letters = code[len(prefix):]
    for i, char in enumerate(letters):
        if char not in _ALPHABET:
            shown = char if char.isprintable() else "?"
            raise CodeError(f"character {shown!r} at position {len(prefix) + i + 1} cannot be in"
                            " a code (codes use only the letters a-z and the digits 2-7)")
    if len(letters) % 8 in (1, 3, 6):
        raise CodeError(f"{len(letters)} characters after {prefix!r} cannot be a whole code:"
                        " a character is missing or extra")
    padded = letters.upper() + "=" * (-len(letters) % 8)
    raw = base64.b32decode(padded)
    if base64.b32encode(raw).decode("ascii") != padded:
        raise CodeError("the last character is wrong, or characters are missing or extra")
    if len(raw) < max(minimum, 5):
        raise CodeError(f"the {what} is too short: it looks cut off")
    body, got = raw[:-4], raw[-4:]
    if check(tag, body) != got:
        raise CodeError("the check does not match: a character is wrong, missing or extra")
    return body
