"""Towers' message type (SPEC 4.11), registered with the kernel's: one `action` per setup
choice and per action of a turn, named by its one-byte code (SPEC 4.9)."""

from __future__ import annotations

from types import MappingProxyType

from p2pgotg.games.towers.rules.actions import CODES
from p2pgotg.protocol.messages import SEQ, Schema, int_in, register, true

MESSAGES: Schema = MappingProxyType({
    "action": {"ply": (SEQ, True), "code": (int_in(0, CODES - 1), True),
               "draw": (true, False)},
})

register(MESSAGES)
