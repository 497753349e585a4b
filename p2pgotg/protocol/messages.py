"""Message bodies: the schema of every message type, validated on construction.

A body is a msgpack map with string keys. Common keys: `t` (type), `seq`, `prev`, `ack`,
and `game` (every type but `hello`). SPEC.md section "Messages" lists the same table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from p2pgotg.protocol.wire import WireError, pack, unpack

PROTOCOL_VERSION = 1
MAX_CHAT = 280
MAX_SEQ = 2**31 - 1  # sequence numbers and plies: 0..2147483647


def _int(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise WireError(f"must be an integer in {lo}..{hi}")
        return v
    return check


def _bin(n: int) -> Callable[[Any], bytes]:
    def check(v: Any) -> bytes:
        if not isinstance(v, bytes) or len(v) != n:
            raise WireError(f"must be {n} bytes")
        return v
    return check


def _bytes_below(n: int, bound: int, what: str) -> Callable[[Any], bytes]:
    """n bytes, each a value below `bound` (squares below 72, ranks below 15)."""
    def check(v: Any) -> bytes:
        if not isinstance(v, bytes) or len(v) != n:
            raise WireError(f"must be {n} bytes")
        if max(v) >= bound:
            raise WireError(f"every byte must be {what} (0..{bound - 1})")
        return v
    return check


def _true(v: Any) -> bool:
    if v is not True:
        raise WireError("must be true when present")
    return True


def _str(n: int) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) > n or any(ord(c) < 32 for c in v):
            raise WireError(f"must be printable text of at most {n} characters")
        return v
    return check


def _one_of(*values: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in values:
            raise WireError(f"must be one of {', '.join(values)}")
        return v
    return check


def _map(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise WireError("must be a map")
    return v


def _opening(v: Any) -> tuple[int, bytes]:
    """[rank 0..14, salt 32 bytes]"""
    if not isinstance(v, list) or len(v) != 2:
        raise WireError("must be [rank, salt]")
    return _int(0, 14)(v[0]), _bin(32)(v[1])


def _claim(v: Any) -> tuple[int, int, bytes]:
    """[piece id 0..20, rank 0..14, salt 32 bytes]"""
    if not isinstance(v, list) or len(v) != 3:
        raise WireError("must be [piece id, rank, salt]")
    return _int(0, 20)(v[0]), _int(0, 14)(v[1]), _bin(32)(v[2])


_B32 = _bin(32)
_PLY = _int(0, MAX_SEQ)
_SQ = _int(0, 71)

# type -> {field: (validator, required)}
SCHEMA: Mapping[str, Mapping[str, tuple[Callable[[Any], Any], bool]]] = MappingProxyType({
    "hello": {
        "version": (_int(0, 65535), True), "role": (_one_of("host", "joiner"), True),
        "options": (_map, True), "nonce": (_B32, True), "key": (_B32, True),
        "tls": (_B32, True), "coin": (_B32, False),
    },
    "coin": {"secret": (_B32, True)},
    "coin_open": {"secret": (_B32, True)},
    "setup_commit": {"hash": (_B32, True)},
    "setup_reveal": {
        "squares": (_bytes_below(21, 72, "a square"), True), "commits": (_bin(21 * 32), True),
        "seed_commit": (_B32, True), "ot": (_B32, False),
    },
    "move": {
        "ply": (_PLY, True), "from": (_SQ, True), "to": (_SQ, True),
        "open": (_opening, False), "ot_r": (_B32, False), "claim": (_claim, False),
        "draw": (_true, False),
    },
    "reply": {"ply": (_PLY, True), "open": (_opening, True)},
    "blind_reply": {"ply": (_PLY, True), "commits": (_bin(5 * 32), True),
                    "cts": (_bin(15 * 32), True)},
    "blind_outcome": {"ply": (_PLY, True), "token": (_B32, True)},
    "blind_proof": {"ply": (_PLY, True), "x": (_B32, True), "open": (_opening, True)},
    "claim_flag": {"claim": (_claim, True)},
    "draw_accept": {},
    "draw_decline": {},
    "resign": {},
    "chat": {"text": (_str(MAX_CHAT), True)},
    "forfeit_claim": {"reason": (_one_of("time", "abandoned", "audit"), True)},
    "dispute": {"claim": (_PLY, True)},
    "audit": {"ranks": (_bytes_below(21, 15, "a rank"), True), "salts": (_bin(21 * 32), True),
              "seed": (_B32, True)},
})

_COMMON = {"t", "seq", "prev", "ack", "game"}


@dataclass(frozen=True)
class Body:
    """One message body, checked against SCHEMA when built."""

    type: str
    seq: int
    prev: bytes
    ack: bytes
    game: bytes | None
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        schema = SCHEMA.get(self.type)
        if schema is None:
            raise WireError(f"unknown message type {self.type!r}")
        _int(0, MAX_SEQ)(self.seq)
        _B32(self.prev)
        _B32(self.ack)
        if self.type == "hello":
            if self.game is not None:
                raise WireError("hello carries no game id")
        else:
            try:
                _B32(self.game)
            except WireError:
                raise WireError("game: must be 32 bytes") from None
        checked = {}
        for name, value in self.fields.items():
            if name not in schema:
                raise WireError(f"{self.type} has no field {name!r}")
            try:
                checked[name] = schema[name][0](value)
            except WireError as exc:
                raise WireError(f"{self.type}.{name}: {exc}") from None
        for name, (_, required) in schema.items():
            if required and name not in checked:
                raise WireError(f"{self.type} lacks field {name!r}")
        object.__setattr__(self, "fields", MappingProxyType(checked))

    def __deepcopy__(self, memo: dict[int, Any]) -> Body:
        return self  # (immutable: a copied flow shares its bodies)

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def encode(self) -> bytes:
        raw: dict[str, Any] = {"t": self.type, "seq": self.seq, "prev": self.prev, "ack": self.ack}
        if self.game is not None:
            raw["game"] = self.game
        for name, value in self.fields.items():
            raw[name] = list(value) if isinstance(value, tuple) else value
        return pack(raw)

    @classmethod
    def decode(cls, data: bytes) -> Body:
        raw = unpack(data)
        if not isinstance(raw, dict):
            raise WireError("a message body must be a map")
        missing = {"t", "seq", "prev", "ack"} - set(raw)
        if missing:
            raise WireError(f"message body lacks {', '.join(sorted(missing))}")
        fields = {k: v for k, v in raw.items() if k not in _COMMON}
        t = raw["t"]
        if not isinstance(t, str):
            raise WireError("t: must be a string")
        return cls(t, raw["seq"], raw["prev"], raw["ack"], raw.get("game"), fields)
