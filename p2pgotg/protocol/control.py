"""Session control frames (SPEC 3.4, 3.7): frozen values, and the one validator for them.

Control frames are not signed and prove nothing: they admit a joiner (`hi`, `ok`), refuse or
stop (`error`), say a side is going (`leave`) or finished (`bye`), carry the short code's
PAKE (`pake`), and at a table give each seat's name (`names`). A frame is a control frame
when it is a msgpack map with a `ctl` key; anything else on the connection is a game
message, judged by SPEC 2.3. A control frame carries exactly its kind's keys (none missing,
none unknown), each of its type, and `v`, the integer session version: so two
implementations read every frame alike.

    >>> decode(encode(Bye(have=3)))
    Bye(have=3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import msgpack

from p2pgotg.protocol.printable import printable

SESSION_VERSION = 1
#: Why a side says it is leaving (`leave`): the joiner declined the host's rules, or the
#: player quit a game that can be resumed. Other values are read as "quit".
LEAVE_REASONS = ("declined", "quit")
MAX_REASON = 1000  # characters of an `error` frame's reason (it is shown, escaped and cut)


class ControlError(ValueError):
    """A control frame that breaks SPEC 3.4; the text says what is wrong, for the user
    (any text of the peer's in it is escaped already: `printable`)."""


class AdvisoryError(ControlError):
    """A malformed frame of a kind that only advises (`names`, SPEC 3.4): its receiver says
    so and goes on, for a connection dropped over it would meet the same frame again."""


class OtherVersion(ControlError):
    """A control frame of another session version (an integer other than ours)."""

    def __init__(self, version: int) -> None:
        super().__init__(f"the other side speaks p2pgotg session version {version}; this "
                         f"program speaks version {SESSION_VERSION}: update one of them")
        self.version = version


@dataclass(frozen=True)
class Hi:
    """The joiner's greeting: the invite's join secret, the game id when resuming (None
    for a new game), how many of the host's game messages it holds, and the body hash of
    the host's hello it holds (None when none)."""

    secret: bytes
    game: bytes | None
    #: A count; at a table (SPEC 5.4) the counts of every seat's messages it holds, by seat.
    have: int | tuple[int, ...]
    first: bytes | None
    name: str | None = None  # the joiner's name, when it has one: a label, never trusted
    seat: int | None = None  # at a table, the seat it comes back to (SPEC 5.4)
    kind: ClassVar[str] = "hi"


@dataclass(frozen=True)
class Ok:
    """The host admits: its game id (None before the hellos), how many of the joiner's
    messages it holds, and the body hash of its hello (None before it)."""

    game: bytes | None
    have: int
    first: bytes | None
    name: str | None = None  # the host's name, when it has one
    rules: str | None = None  # the game its hello names (None: Game of the Generals)
    seats: int | None = None  # a table's seats, 3 or 4 (SPEC 5.4); None: a game of two
    #: At a table, to a `hi` that names a seat: fresh bytes the joiner signs with that
    #: seat's key (`Prove`, SPEC 3.4) before the connection becomes the seat's.
    nonce: bytes | None = None
    kind: ClassVar[str] = "ok"


@dataclass(frozen=True)
class Prove:
    """`prove`: a joiner coming back to a table's seat shows it holds that seat's key, its
    signature over the seat proof (SPEC 3.4: the `ok`'s nonce, the game id, the seat)."""

    sig: bytes
    kind: ClassVar[str] = "prove"


@dataclass(frozen=True)
class Refusal:
    """`error`: refused, or stopping; the reason is shown to the user, escaped."""

    reason: str
    kind: ClassVar[str] = "error"


@dataclass(frozen=True)
class Leave:
    why: str  # one of LEAVE_REASONS (another value is kept as "quit")
    kind: ClassVar[str] = "leave"


@dataclass(frozen=True)
class Bye:
    #: How many of the other side's messages the sender holds; at a table (SPEC 5.4) how
    #: many of each seat's.
    have: int | tuple[int, ...]
    kind: ClassVar[str] = "bye"


@dataclass(frozen=True)
class Pake:
    """One step of the short code's PAKE (SPEC 3.7): a SPAKE2 message, a confirmation, or
    the host's confirmation with the join secret."""

    msg: bytes | None = None
    confirm: bytes | None = None
    secret: bytes | None = None
    kind: ClassVar[str] = "pake"


@dataclass(frozen=True)
class Names:
    """`names`: at a table, the host's word on each seat's name (SPEC 3.4): pairs of the
    key that signs a seat's hello and the name. Unsigned and advisory: each name is left
    as sent, for its receiver to check as any name (one bad name costs only itself)."""

    names: tuple[tuple[bytes, object], ...]
    kind: ClassVar[str] = "names"


@dataclass(frozen=True)
class Unknown:
    """A kind this version does not know: ignored in play, refused where another is due."""

    name: str
    kind: ClassVar[str] = "unknown"


Known = Hi | Ok | Refusal | Leave | Bye | Pake | Prove | Names
Control = Known | Unknown
_KINDS: dict[str, type[Known]] = {
    cls.kind: cls for cls in (Hi, Ok, Refusal, Leave, Bye, Pake, Prove, Names)}
#: Kinds that only advise: a malformed one raises AdvisoryError, for its receiver to ignore.
_ADVISORY = frozenset({"names"})


def _bin(size: int) -> Callable[[Any], bytes]:
    def check(value: Any) -> bytes:
        if not isinstance(value, bytes) or len(value) != size:
            raise ControlError(f"must be {size} bytes")
        return value
    return check


def _nil_or(check: Callable[[Any], bytes]) -> Callable[[Any], bytes | None]:
    return lambda value: None if value is None else check(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ControlError("must be a count (an integer from 0)")
    return value


#: The seats of a table (SPEC 5): the length of a table `hi`'s `have`, an `ok`'s `seats`.
TABLE_SEATS = (3, 4)


def _counts(value: Any) -> int | tuple[int, ...]:
    """A `hi`'s `have`: a count, or at a table one count per seat (SPEC 5.4)."""
    if isinstance(value, list):
        if len(value) not in TABLE_SEATS:
            raise ControlError("must be a count, or an array of one count per seat (3 or 4)")
        return tuple(_count(item) for item in value)
    return _count(value)


def _seat(value: Any) -> int:
    """A `hi`'s `seat`: a joiner's seat at a table, 1..3 (seat 0 is the host's)."""
    if isinstance(value, bool) or value not in (1, 2, 3):
        raise ControlError("must be a joiner's seat (1 to 3)")
    return int(value)


def _seats(value: Any) -> int:
    if isinstance(value, bool) or value not in TABLE_SEATS:
        raise ControlError("must be the seats of a table (3 or 4)")
    return int(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ControlError("must be text")
    return value[:MAX_REASON]


def _label(value: Any) -> str | None:
    """A `name`: a label the sender chose, shown escaped; anything but text is ignored."""
    return value[:MAX_REASON] if isinstance(value, str) else None


def _seat_names(value: Any) -> tuple[tuple[bytes, object], ...]:
    """A `names` frame's pairs: at most one per seat, each a hello's key and a name (the
    name as sent: its receiver checks it)."""
    shape = f"must be an array of at most {max(TABLE_SEATS)} [key, name] pairs (a key is " \
        "32 bytes)"
    if not isinstance(value, list) or len(value) > max(TABLE_SEATS):
        raise ControlError(shape)
    pairs = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], bytes)
                and len(item[0]) == 32):
            raise ControlError(shape)
        pairs.append((item[0], item[1]))
    return tuple(pairs)


def _game_name(value: Any) -> str:
    """An `ok`'s `rules`: the game's name as a hello gives it (text of 1..32 characters)."""
    if not isinstance(value, str) or not 1 <= len(value) <= 32:
        raise ControlError("must be a game's name (text of 1 to 32 characters)")
    return value


def _why(value: Any) -> str:
    return value if value in LEAVE_REASONS else "quit"


_B32 = _bin(32)
#: kind -> {key: check}; the pake kind has three shapes, each of its keys optional.
_SCHEMA: Mapping[str, Mapping[str, Callable[[Any], Any]]] = {
    "hi": {"secret": _bin(16), "game": _nil_or(_B32), "have": _counts,
           "first": _nil_or(_B32), "name": _label, "seat": _seat},
    "ok": {"game": _nil_or(_B32), "have": _count, "first": _nil_or(_B32), "name": _label,
           "rules": _game_name, "seats": _seats, "nonce": _B32},
    "error": {"reason": _text},
    "leave": {"why": _why},
    "bye": {"have": _counts},
    "pake": {"msg": _bin(33), "confirm": _B32, "secret": _bin(16)},
    "prove": {"sig": _bin(64)},
    "names": {"names": _seat_names},
}
_PAKE_SHAPES = ({"msg"}, {"confirm"}, {"confirm", "secret"})
#: Keys a kind may leave out (absent: None).
_OPTIONAL = {"hi": {"name", "seat"}, "ok": {"name", "rules", "seats", "nonce"}}


def _raw(frame: bytes) -> dict[str, Any] | None:
    try:
        value = msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=65536,
                                max_str_len=65536, max_array_len=64, max_map_len=16,
                                max_ext_len=0)
    except Exception:  # noqa: BLE001  (whatever does not decode is a game message to judge)
        return None
    if isinstance(value, dict) and "ctl" in value:
        return value
    return None


def is_control(frame: bytes) -> bool:
    """Whether `frame` is a control frame (a msgpack map with a `ctl` key) rather than a
    game message."""
    return _raw(frame) is not None


def decode(frame: bytes) -> Control | None:
    """The control frame in `frame`, None when it is a game message; ControlError when it
    is a control frame that breaks SPEC 3.4 (OtherVersion for another session version)."""
    raw = _raw(frame)
    if raw is None:
        return None
    kind, version = raw.pop("ctl"), raw.pop("v", None)
    if not isinstance(kind, str):
        raise ControlError("a control frame's kind is not text")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ControlError(f"the session frame's version is not a number "
                           f"({printable(version, 20)}): the other side does not speak the "
                           "p2pgotg session protocol")
    if version != SESSION_VERSION:
        raise OtherVersion(version)
    schema = _SCHEMA.get(kind)
    if schema is None:
        return Unknown(kind)
    error = AdvisoryError if kind in _ADVISORY else ControlError
    keys = set(raw)
    unknown, missing = keys - set(schema), set(schema) - keys - _OPTIONAL.get(kind, set())
    if kind == "pake":
        missing = set() if keys in _PAKE_SHAPES else missing
        if keys not in _PAKE_SHAPES and not unknown:
            raise error(f"a pake frame carries {sorted(keys)}, not msg, confirm, or "
                               "confirm and secret")
    if unknown or missing:
        what = "has unknown keys " + ", ".join(sorted(unknown)) if unknown else \
            "lacks " + ", ".join(sorted(missing))
        raise error(f"the {kind} frame {what}")
    values = {}
    for key, value in raw.items():
        try:
            values[key] = schema[key](value)
        except ControlError as exc:
            raise error(f"the {kind} frame's {key} {exc}") from None
    return _KINDS[kind](**values)


def encode(value: Known) -> bytes:
    """The frame's bytes: `ctl`, `v`, then its keys (a pake frame only those it carries)."""
    out: dict[str, Any] = {"ctl": value.kind, "v": SESSION_VERSION}
    for field in fields(value):
        item = getattr(value, field.name)
        optional = isinstance(value, Pake) or field.name in _OPTIONAL.get(value.kind, ())
        if not (optional and item is None):
            out[field.name] = list(item) if isinstance(item, tuple) else item
    data: bytes = msgpack.packb(out, use_bin_type=True)
    return data
