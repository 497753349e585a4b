"""The transcript file format (sans-IO: bytes in, bytes out; the net layer writes files).

A transcript is a sequence of records, each a 4-byte big-endian length then a msgpack map:
  header  {"k": "header", "format": 1, "role": "host"|"joiner", "key": bytes[32]}  (first)
  secrets {"k": "secrets", ...}   the owner's own secrets (and the host's port), so it can
                                  finish after a crash; and both players' names
  msg     {"k": "msg", "from": "host"|"joiner", "env": bytes}   exact signed messages
Appending one record is one write; a torn last record (a crash mid-write) is reported.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from p2pgotg.protocol.flow import ROLES
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.wire import WireError, pack, unpack

FORMAT = 1
MAX_RECORD = 128 * 1024
_SECRET_FIELDS = {"join": 16, "port": 2, "coin": 32, "squares": 21, "ranks": 21,
                  "salts": 21 * 32, "seed": 32}
#: Display labels, not secrets: the owner's name and the name the other side gave (SPEC
#: 3.4), UTF-8 of 1..MAX_NAME_BYTES bytes. Nothing commits to them and nothing checks them.
NAME_FIELDS = ("name", "peer_name")
MAX_NAME_BYTES = 256


def _field_ok(name: str, value: object) -> bool:
    if name in NAME_FIELDS:
        if not isinstance(value, bytes) or not 0 < len(value) <= MAX_NAME_BYTES:
            return False
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    return _SECRET_FIELDS.get(name) == (len(value) if isinstance(value, bytes) else -1)


class TranscriptError(ValueError):
    """The file is not a readable p2pgotg transcript; the message says where and why."""


def _frame(value: dict[str, Any]) -> bytes:
    data = pack(value)
    return struct.pack(">I", len(data)) + data


def encode_header(role: str, key: bytes) -> bytes:
    return _frame({"k": "header", "format": FORMAT, "role": role, "key": key})


def encode_record(record: Record) -> bytes:
    if record[0] == "secrets":
        return _frame({"k": "secrets", **record[1]})
    _, role, data = record
    return _frame({"k": "msg", "from": role, "env": data})


@dataclass
class Transcript:
    role: str
    key: bytes
    records: list[Record] = field(default_factory=list)
    torn_tail: bool = False  # the last record was cut short (a crash while writing)

    @property
    def messages(self) -> list[tuple[str, bytes]]:
        return [(r[1], r[2]) for r in self.records if r[0] == "msg"]

    @property
    def secrets(self) -> dict[str, bytes]:
        return merged_secrets(self.records)


def merged_secrets(records: Iterable[tuple[Any, ...]]) -> dict[str, bytes]:
    """A file's `secrets` records together, a later value over an earlier one (a game of
    two's file or a table seat's, SPEC 2.8 and 5.9)."""
    merged: dict[str, bytes] = {}
    for r in records:
        if r[0] == "secrets":
            merged.update(r[1])
    return merged


class RecordReader:
    """Records from a transcript's bytes as they arrive, in any pieces (sans-IO: the caller
    reads the file). Holds at most one record's bytes, so a file of any size is read in
    bounded memory; `verify` streams files with it. Raises TranscriptError saying what is
    wrong and where."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._offset = 0  # the file offset of the buffer's first byte
        self._index = 0  # records read so far, the header included
        self.role: str | None = None  # the header's, once read
        self.key: bytes | None = None

    @property
    def offset(self) -> int:
        """Bytes read as whole records so far: where a torn tail begins."""
        return self._offset

    def feed(self, data: bytes) -> list[Record]:
        """The records that `data` completes (the header is checked and kept, not returned)."""
        self._buffer += data
        out: list[Record] = []
        pos = 0
        buffer = self._buffer
        while len(buffer) - pos >= 4:
            (length,) = struct.unpack_from(">I", buffer, pos)
            at = self._offset + pos
            if length > MAX_RECORD:
                raise TranscriptError(f"record at byte {at} claims {length} bytes: damaged file")
            if len(buffer) - pos - 4 < length:
                break
            try:
                value = unpack(bytes(buffer[pos + 4:pos + 4 + length]))
            except WireError as exc:
                raise TranscriptError(f"record at byte {at}: {exc}") from None
            if not isinstance(value, dict) or "k" not in value:
                raise TranscriptError(f"record at byte {at} is not a transcript record")
            record = self._record(value)
            if record is not None:
                out.append(record)
            pos += 4 + length
        del buffer[:pos]
        self._offset += pos
        return out

    def finish(self) -> bool:
        """The end of the file: True when its last record is torn (cut short by a crash while
        it was written). Raises TranscriptError when there was no header."""
        if self.role is None:
            raise TranscriptError("the file holds no transcript header")
        return bool(self._buffer)

    def _record(self, rec: dict[str, Any]) -> Record | None:
        i = self._index
        self._index += 1
        if i == 0:
            if (rec.get("k") != "header" or set(rec) != {"k", "format", "role", "key"}
                    or rec["format"] != FORMAT or rec["role"] not in ROLES
                    or not isinstance(rec["key"], bytes) or len(rec["key"]) != 32):
                raise TranscriptError("the first record is not a format-1 transcript header")
            self.role, self.key = rec["role"], rec["key"]
            return None
        kind = rec["k"]
        if kind == "msg":
            if (set(rec) != {"k", "from", "env"} or rec["from"] not in ROLES
                    or not isinstance(rec["env"], bytes)):
                raise TranscriptError(f"record {i}: malformed message record")
            return ("msg", rec["from"], rec["env"])
        if kind == "secrets":
            values = {k: v for k, v in rec.items() if k != "k"}
            for name, value in values.items():
                if not _field_ok(name, value):
                    raise TranscriptError(f"record {i}: malformed secret {name!r}")
            return ("secrets", values)
        raise TranscriptError(f"record {i}: unknown record kind {kind!r}")


def parse(data: bytes) -> Transcript:
    """Read a whole transcript file; raises TranscriptError saying what is wrong."""
    reader = RecordReader()
    records = reader.feed(data)
    torn = reader.finish()
    assert reader.role is not None and reader.key is not None
    return Transcript(reader.role, reader.key, records, torn_tail=torn)
