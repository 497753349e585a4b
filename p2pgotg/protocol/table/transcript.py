"""A table seat's file (SPEC 5.9): chapter 2.8's records and framing, with a header that
says `table`, a `seat` record once the roster gives one, and `msg` records whose `from` is
the author's seat (nil for a joiner's hello taken before the roster seated it).

Sans-IO like `p2pgotg.protocol.transcript`, whose framing and record reader this reuses.
"""

from __future__ import annotations

import struct
from typing import Any, cast

from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.table.seat import TableRecord
from p2pgotg.protocol.transcript import (
    FORMAT,
    MAX_RECORD,
    RecordReader,
    TranscriptError,
    _field_ok,
    _frame,
)
from p2pgotg.protocol.wire import WireError, unpack

ROLES = ("host", "joiner")


def encode_table_header(role: str, key: bytes) -> bytes:
    return _frame({"k": "header", "format": FORMAT, "role": role, "key": key, "table": True})


def encode_table_record(record: TableRecord) -> bytes:
    if record[0] == "secrets":
        return _frame({"k": "secrets", **record[1]})
    if record[0] == "seat":
        return _frame({"k": "seat", "seat": record[1]})
    _, seat, data = record
    return _frame({"k": "msg", "from": seat, "env": data})


def is_table_file(head: bytes) -> bool:
    """Whether a file's first bytes hold a table's header (False for a two-party file, and
    for anything unreadable, which the two-party reader then explains)."""
    if len(head) < 4:
        return False
    (length,) = struct.unpack_from(">I", head)
    if length > MAX_RECORD or len(head) < 4 + length:
        return False
    try:
        value = unpack(head[4:4 + length])
    except WireError:
        return False
    return isinstance(value, dict) and value.get("table") is True


class TableRecordReader(RecordReader):
    """Records of a table file as its bytes arrive (`RecordReader`'s framing and bounds)."""

    def __init__(self) -> None:
        super().__init__()
        self.seat: int | None = None

    def feed_table(self, data: bytes) -> list[TableRecord]:
        """The records `data` completes, as a table's."""
        return cast(list[TableRecord], self.feed(data))

    def _record(self, rec: dict[str, Any]) -> Record | None:
        i = self._index
        self._index += 1
        if i == 0:
            if (rec.get("k") != "header" or set(rec) != {"k", "format", "role", "key", "table"}
                    or rec["format"] != FORMAT or rec["role"] not in ROLES
                    or rec["table"] is not True
                    or not isinstance(rec["key"], bytes) or len(rec["key"]) != 32):
                raise TranscriptError("the first record is not a table's transcript header")
            self.role, self.key = rec["role"], rec["key"]
            return None
        kind = rec["k"]
        if kind == "msg":
            seat = rec.get("from")
            if (set(rec) != {"k", "from", "env"} or not isinstance(rec["env"], bytes)
                    or not (seat is None or (isinstance(seat, int) and 0 <= seat < 4))):
                raise TranscriptError(f"record {i}: malformed message record")
            # (a table's record: its `from` is a seat; `feed_table` gives it its own type)
            return ("msg", seat, rec["env"])  # type: ignore[return-value]
        if kind == "seat":
            seat = rec.get("seat")
            if set(rec) != {"k", "seat"} or not isinstance(seat, int) or not 0 <= seat < 4:
                raise TranscriptError(f"record {i}: malformed seat record")
            self.seat = seat
            return ("seat", seat)  # type: ignore[return-value]  # (as above)
        if kind == "secrets":
            values = {k: v for k, v in rec.items() if k != "k"}
            for name, value in values.items():
                if not _field_ok(name, value):
                    raise TranscriptError(f"record {i}: malformed secret {name!r}")
            return ("secrets", values)
        raise TranscriptError(f"record {i}: unknown record kind {kind!r}")
