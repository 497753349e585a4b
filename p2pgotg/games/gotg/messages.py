"""Game of the Generals' message types (SPEC 2.4, 2.9.5), registered with the kernel's."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from p2pgotg.protocol.messages import (
    B32,
    SEQ,
    Schema,
    bin_of,
    bytes_below,
    int_in,
    register,
    true,
)
from p2pgotg.protocol.wire import WireError

_SQ = int_in(0, 71)


def _opening(v: Any) -> tuple[int, bytes]:
    """[rank 0..14, salt 32 bytes]"""
    if not isinstance(v, list) or len(v) != 2:
        raise WireError("must be [rank, salt]")
    return int_in(0, 14)(v[0]), B32(v[1])


def _claim(v: Any) -> tuple[int, int, bytes]:
    """[piece id 0..20, rank 0..14, salt 32 bytes]"""
    if not isinstance(v, list) or len(v) != 3:
        raise WireError("must be [piece id, rank, salt]")
    return int_in(0, 20)(v[0]), int_in(0, 14)(v[1]), B32(v[2])


MESSAGES: Schema = MappingProxyType({
    "setup_commit": {"hash": (B32, True)},
    "setup_reveal": {
        "squares": (bytes_below(21, 72, "a square"), True), "commits": (bin_of(21 * 32), True),
        "seed_commit": (B32, True), "ot": (B32, False),
    },
    "move": {
        "ply": (SEQ, True), "from": (_SQ, True), "to": (_SQ, True),
        "open": (_opening, False), "ot_r": (B32, False), "claim": (_claim, False),
        "draw": (true, False),
    },
    "reply": {"ply": (SEQ, True), "open": (_opening, True)},
    "blind_reply": {"ply": (SEQ, True), "commits": (bin_of(5 * 32), True),
                    "cts": (bin_of(15 * 32), True)},
    "blind_outcome": {"ply": (SEQ, True), "token": (B32, True)},
    "blind_proof": {"ply": (SEQ, True), "x": (B32, True), "open": (_opening, True)},
    "claim_flag": {"claim": (_claim, True)},
    "audit": {"ranks": (bytes_below(21, 15, "a rank"), True), "salts": (bin_of(21 * 32), True),
              "seed": (B32, True)},
})

register(MESSAGES)
