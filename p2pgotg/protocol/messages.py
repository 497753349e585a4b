"""Message bodies: the kernel's message types, the games' (registered by each game module),
and a body validated on construction against its type's schema.

A body is a msgpack map with string keys. Common keys: `t` (type), `seq`, `prev`, `ack`,
and `game` (every type but `hello`). SPEC 2.4 lists the kernel's and Game of the Generals'
types; each game's chapter lists its own. Type names are unique across games: a game's
schema is registered once, and a flow takes only its own game's types (and the kernel's).
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


Field = Callable[[Any], Any]
#: type -> {field: (validator, required)}
Schema = Mapping[str, Mapping[str, tuple[Field, bool]]]


def int_in(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise WireError(f"must be an integer in {lo}..{hi}")
        return v
    return check


def bin_of(n: int) -> Callable[[Any], bytes]:
    def check(v: Any) -> bytes:
        if not isinstance(v, bytes) or len(v) != n:
            raise WireError(f"must be {n} bytes")
        return v
    return check


def bytes_below(n: int, bound: int, what: str) -> Callable[[Any], bytes]:
    """n bytes, each a value below `bound` (squares below 72, ranks below 15)."""
    def check(v: Any) -> bytes:
        if not isinstance(v, bytes) or len(v) != n:
            raise WireError(f"must be {n} bytes")
        if max(v) >= bound:
            raise WireError(f"every byte must be {what} (0..{bound - 1})")
        return v
    return check


def true(v: Any) -> bool:
    if v is not True:
        raise WireError("must be true when present")
    return True


def text(n: int) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) > n or any(ord(c) < 32 for c in v):
            raise WireError(f"must be printable text of at most {n} characters")
        return v
    return check


def one_of(*values: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in values:
            raise WireError(f"must be one of {', '.join(values)}")
        return v
    return check


def a_map(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise WireError("must be a map")
    return v


B32 = bin_of(32)
SEQ = int_in(0, MAX_SEQ)

#: The kernel's messages (SPEC 2.4): the table, the end of a game, and talk.
KERNEL: Schema = MappingProxyType({
    "hello": {
        "version": (int_in(0, 65535), True), "role": (one_of("host", "joiner"), True),
        "options": (a_map, True), "nonce": (B32, True), "key": (B32, True),
        "tls": (B32, True), "coin": (B32, False), "rules": (text(32), False),
    },
    "coin": {"secret": (B32, True)},
    "coin_open": {"secret": (B32, True)},
    "resign": {},
    "chat": {"text": (text(MAX_CHAT), True)},
    "forfeit_claim": {"reason": (one_of("time", "abandoned", "audit"), True)},
    "dispute": {"claim": (SEQ, True)},
    # A draw offer rides on a game's own message of play (its `draw` field); these answer it.
    "draw_accept": {},
    "draw_decline": {},
})
_REGISTERED: dict[str, Mapping[str, tuple[Field, bool]]] = dict(KERNEL)


def register(schema: Schema) -> None:
    """Add a game's message types (at the game module's import). A type name belongs to one
    game: registering another schema under a taken name is a bug."""
    for name, fields in schema.items():
        if _REGISTERED.setdefault(name, fields) is not fields:
            raise ValueError(f"message type {name!r} is taken")


def schema_of(type_: str) -> Mapping[str, tuple[Field, bool]] | None:
    return _REGISTERED.get(type_)


def registered() -> Schema:
    """Every message type known now: the kernel's and the imported games'."""
    return MappingProxyType(dict(_REGISTERED))


_COMMON = {"t", "seq", "prev", "ack", "game"}


def check_fields(type_: str, fields: Mapping[str, Any],
                 schema: Mapping[str, tuple[Field, bool]]) -> Mapping[str, Any]:
    """The fields of a `type_` body checked against its schema: the values its validators
    give, read-only. WireError names the field that is unknown, invalid or missing. Shared
    by chapter 2's bodies and a table's (SPEC 5.2), whose common keys differ."""
    checked = {}
    for name, value in fields.items():
        if name not in schema:
            raise WireError(f"{type_} has no field {name!r}")
        try:
            checked[name] = schema[name][0](value)
        except WireError as exc:
            raise WireError(f"{type_}.{name}: {exc}") from None
    for name, (_, required) in schema.items():
        if required and name not in checked:
            raise WireError(f"{type_} lacks field {name!r}")
    return MappingProxyType(checked)


def body_map(data: bytes, required: tuple[str, ...]) -> dict[str, Any]:
    """A body's bytes as a map that holds a string `t` (its type) and the `required` common
    keys: WireError saying what is not so."""
    raw = unpack(data)
    if not isinstance(raw, dict):
        raise WireError("a message body must be a map")
    missing = {"t", *required} - set(raw)
    if missing:
        raise WireError(f"message body lacks {', '.join(sorted(missing))}")
    if not isinstance(raw["t"], str):
        raise WireError("t: must be a string")
    return raw


@dataclass(frozen=True)
class Body:
    """One message body, checked against its type's schema when built."""

    type: str
    seq: int
    prev: bytes
    ack: bytes
    game: bytes | None
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        schema = schema_of(self.type)
        if schema is None:
            raise WireError(f"unknown message type {self.type!r}")
        SEQ(self.seq)
        B32(self.prev)
        B32(self.ack)
        if self.type == "hello":
            if self.game is not None:
                raise WireError("hello carries no game id")
        else:
            try:
                B32(self.game)
            except WireError:
                raise WireError("game: must be 32 bytes") from None
        object.__setattr__(self, "fields", check_fields(self.type, self.fields, schema))

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
        raw = body_map(data, ("seq", "prev", "ack"))
        fields = {k: v for k, v in raw.items() if k not in _COMMON}
        return cls(raw["t"], raw["seq"], raw["prev"], raw["ack"], raw.get("game"), fields)
