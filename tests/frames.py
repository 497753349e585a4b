"""Session control frames as the tests send and read them: valid ones through the product's
validator (`p2pgotg.protocol.control`), and raw maps for the frames a host must refuse or
print escaped, which the validator would never build."""

from __future__ import annotations

from typing import Any

import msgpack

from p2pgotg.protocol import control


def hi(secret: bytes, game: bytes | None = None, have: int = 0,
       first: bytes | None = None) -> bytes:
    """A joiner's `hi`, as SPEC 3.4 has it."""
    return control.encode(control.Hi(secret, game, have, first))


def raw(kind: str, **values: Any) -> bytes:
    """Any control-frame map (kind, session version 1, `values`), valid or not."""
    return msgpack.packb({"ctl": kind, "v": control.SESSION_VERSION, **values},
                         use_bin_type=True)


def fields(frame: bytes) -> dict[str, Any] | None:
    """The map of a control frame, unchecked (what a test asserts on); None for a game
    message."""
    try:
        value = msgpack.unpackb(frame, raw=False)
    except Exception:  # noqa: BLE001  (not msgpack: a game message to judge, not ours)
        return None
    return value if isinstance(value, dict) and "ctl" in value else None


def expect_kind(frame: bytes, kind: str) -> dict[str, Any]:
    """The frame's map, checked to be a valid control frame of `kind`."""
    value = control.decode(frame)
    assert value is not None and value.kind == kind, (kind, fields(frame))
    found = fields(frame)
    assert found is not None
    return found
