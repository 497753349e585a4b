"""A table message's body (SPEC 5.2): the common keys `t`, `seq`, `prev`, and but for a
hello `from`, `acks` (one head per seat) and `game`, then its type's fields, checked on
construction.

Two seats keep chapter 2's `Body` (one `ack`); a table's vector of heads is its own shape,
so this is a sibling of `p2pgotg.protocol.messages.Body` that shares its field checks
(`check_fields`) and its reading of a body's map (`body_map`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from p2pgotg.protocol.messages import (
    B32,
    MAX_CHAT,
    SEQ,
    Field,
    Schema,
    a_map,
    body_map,
    check_fields,
    int_in,
    one_of,
    text,
)
from p2pgotg.protocol.table.talk import MAX_BOX
from p2pgotg.protocol.wire import WireError, pack, unpack

SEAT = int_in(0, 3)


def _box(v: Any) -> bytes:
    if not isinstance(v, bytes) or not 40 <= len(v) <= MAX_BOX:
        raise WireError(f"must be 40..{MAX_BOX} bytes")
    return v


def _claim_ref(v: Any) -> tuple[int, int]:
    if not isinstance(v, list) or len(v) != 2:
        raise WireError("must be [seat, seq]")
    return SEAT(v[0]), SEQ(v[1])


#: The table's own messages (SPEC 5.3 and 5.5 to 5.8); a game adds its own (`register`).
TABLE_MESSAGES: dict[str, Mapping[str, tuple[Field, bool]]] = {
    "hello": {
        "version": (int_in(0, 65535), True), "role": (one_of("host", "joiner"), True),
        "rules": (text(32), True), "options": (a_map, True), "nonce": (B32, True),
        "key": (B32, True), "tls": (B32, True), "coin": (B32, True), "host": (B32, False),
    },
    "roster": {},
    "coin_open": {"secret": (B32, True)},
    "heads": {},
    "resign": {},
    "chat": {"text": (text(MAX_CHAT), True)},
    "whisper": {"to": (SEAT, True), "box": (_box, True)},
    "forfeit_claim": {"seat": (SEAT, True), "reason": (one_of("time", "abandoned"), True)},
    "dispute": {"claim": (_claim_ref, True)},
}


def register(schema: Schema) -> None:
    """Add a game's table messages (Towers: `action`); a name belongs to one schema."""
    for name, fields in schema.items():
        if TABLE_MESSAGES.setdefault(name, fields) is not fields:
            raise ValueError(f"table message type {name!r} is taken")


_COMMON = ("t", "seq", "prev", "from", "acks", "game")


@dataclass(frozen=True)
class TableBody:
    """One table message body, checked against its type's schema when built. `seat` (the
    `from` key), `acks` and `game` are None in a hello only."""

    type: str
    seq: int
    prev: bytes
    seat: int | None
    acks: tuple[bytes, ...] | None
    game: bytes | None
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        schema = TABLE_MESSAGES.get(self.type)
        if schema is None:
            raise WireError(f"unknown table message type {self.type!r}")
        SEQ(self.seq)
        B32(self.prev)
        if self.type == "hello":
            if (self.seat, self.acks, self.game) != (None, None, None):
                raise WireError("a hello carries no from, acks or game")
        else:
            if self.seat is None or self.acks is None or self.game is None:
                raise WireError(f"a {self.type} carries from, acks and game")
            SEAT(self.seat)
            if not isinstance(self.acks, tuple) or not 3 <= len(self.acks) <= 4:
                raise WireError("acks: must be an array of 3 or 4 hashes")
            for h in self.acks:
                B32(h)
            try:
                B32(self.game)
            except WireError:
                raise WireError("game: must be 32 bytes") from None
        object.__setattr__(self, "fields", check_fields(self.type, self.fields, schema))

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def encode(self) -> bytes:
        raw: dict[str, Any] = {"t": self.type, "seq": self.seq, "prev": self.prev}
        if self.type != "hello":
            assert self.acks is not None
            raw.update({"from": self.seat, "acks": list(self.acks), "game": self.game})
        for name, value in self.fields.items():
            raw[name] = list(value) if isinstance(value, tuple) else value
        return pack(raw)

    @classmethod
    def decode(cls, data: bytes) -> TableBody:
        raw = body_map(data, ("seq", "prev"))
        acks = raw.get("acks")
        if acks is not None:
            if not isinstance(acks, list):
                raise WireError("acks: must be an array")
            acks = tuple(acks)
        fields = {k: v for k, v in raw.items() if k not in _COMMON}
        return cls(raw["t"], raw["seq"], raw["prev"], raw.get("from"), acks, raw.get("game"),
                   fields)


def author_of(body_bytes: bytes) -> int | None:
    """The `from` of a body, read without checking the rest (None: a hello, or unreadable):
    which key must have signed it."""
    try:
        raw = unpack(body_bytes)
    except WireError:
        return None
    seat = raw.get("from") if isinstance(raw, dict) else None
    return seat if isinstance(seat, int) and not isinstance(seat, bool) else None
