"""The game id and the fixed-length encoding of rule options that goes into it (GUIDE 4.3)."""

from __future__ import annotations

import struct

from p2pgotg.crypto import TAG_GAME, tagged_hash
from p2pgotg.crypto.hashing import fixed
from p2pgotg.rules import ChallengeMode, FlagRule, RuleOptions

_FLAG_RULES = list(FlagRule)
_MODES = list(ChallengeMode)


def options_bytes(options: RuleOptions) -> bytes:
    """12 bytes: flag rule index u8, two-squares u8 (0/1), chasing u8 (0/1), challenge mode
    index u8, clock seconds u32, move seconds u32 (big-endian).

    Indices: flag rule safe_or_survive=0, always_survive=1, immediate=2;
    challenge mode open=0, blind=1."""
    return bytes([
        _FLAG_RULES.index(options.flag_rule),
        int(options.two_squares),
        int(options.chasing),
        _MODES.index(options.challenge_mode),
    ]) + struct.pack(">II", options.clock_seconds, options.move_seconds)


def game_id(
    host_nonce: bytes,
    joiner_nonce: bytes,
    host_key: bytes,
    joiner_key: bytes,
    version: int,
    options: RuleOptions,
) -> bytes:
    """SHA-256(tag || host_nonce[32] || joiner_nonce[32] || host_key[32] || joiner_key[32]
    || version[2, big-endian] || options[12])."""
    return tagged_hash(
        TAG_GAME,
        fixed(host_nonce, 32, "host nonce"),
        fixed(joiner_nonce, 32, "joiner nonce"),
        fixed(host_key, 32, "host key"),
        fixed(joiner_key, 32, "joiner key"),
        struct.pack(">H", version),
        options_bytes(options),
    )
