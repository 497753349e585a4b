"""msgpack in and out, strictly: bounded sizes, no extension types, string keys, no key
twice in a map.

Decoding never trusts the peer: every limit is set, and any oddity is a `WireError`. A
repeated key matters most: msgpack does not forbid it, and two decoders that keep the first
or the last value would read different messages from the same signed bytes.
"""

from __future__ import annotations

from typing import Any

import msgpack

MAX_MESSAGE = 64 * 1024  # a signed message never exceeds the frame limit


class WireError(ValueError):
    """Bytes that are not a well-formed message."""


def pack(value: Any) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def _map_once(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A map from msgpack's key-value pairs, refusing a key that comes twice."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise WireError("a map repeats a key")
    return mapping


def unpack(data: bytes) -> Any:
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes exceeds the {MAX_MESSAGE}-byte limit")
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=MAX_MESSAGE,
            max_bin_len=MAX_MESSAGE,
            max_array_len=1024,
            max_map_len=64,
            max_ext_len=0,
            object_pairs_hook=_map_once,
        )
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError, UnicodeDecodeError) as exc:
        raise WireError(f"not a msgpack message: {exc}") from None
