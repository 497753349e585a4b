"""msgpack in and out, strictly: bounded sizes, no extension types, string keys.

Decoding never trusts the peer: every limit is set, and any oddity is a `WireError`.
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
        )
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError, UnicodeDecodeError) as exc:
        raise WireError(f"not a msgpack message: {exc}") from None
