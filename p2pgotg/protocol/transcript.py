"""The transcript file format (sans-IO: bytes in, bytes out; the net layer writes files).

A transcript is a sequence of records, each a 4-byte big-endian length then a msgpack map:
  header  {"k": "header", "format": 1, "role": "host"|"joiner", "key": bytes[32]}  (first)
  secrets {"k": "secrets", ...}   the owner's own secrets (and the host's port), so it can
                                  finish after a crash
  msg     {"k": "msg", "from": "host"|"joiner", "env": bytes}   exact signed messages
Appending one record is one write; a torn last record (a crash mid-write) is reported.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from p2pgotg.protocol.flow import ROLES
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.wire import WireError, pack, unpack

FORMAT = 1
MAX_RECORD = 128 * 1024
_SECRET_FIELDS = {"join": 16, "port": 2, "coin": 32, "squares": 21, "ranks": 21,
                  "salts": 21 * 32, "seed": 32}


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
        merged: dict[str, bytes] = {}
        for r in self.records:
            if r[0] == "secrets":
                merged.update(r[1])
        return merged


def parse(data: bytes) -> Transcript:
    """Read a whole transcript file; raises TranscriptError saying what is wrong."""
    records: list[dict[str, Any]] = []
    pos, torn = 0, False
    while pos < len(data):
        if len(data) - pos < 4:
            torn = True
            break
        (length,) = struct.unpack_from(">I", data, pos)
        if length > MAX_RECORD:
            raise TranscriptError(f"record at byte {pos} claims {length} bytes: damaged file")
        if len(data) - pos - 4 < length:
            torn = True
            break
        try:
            value = unpack(data[pos + 4:pos + 4 + length])
        except WireError as exc:
            raise TranscriptError(f"record at byte {pos}: {exc}") from None
        if not isinstance(value, dict) or "k" not in value:
            raise TranscriptError(f"record at byte {pos} is not a transcript record")
        records.append(value)
        pos += 4 + length
    if not records:
        raise TranscriptError("the file holds no transcript header")
    head = records[0]
    if (head.get("k") != "header" or set(head) != {"k", "format", "role", "key"}
            or head["format"] != FORMAT or head["role"] not in ROLES
            or not isinstance(head["key"], bytes) or len(head["key"]) != 32):
        raise TranscriptError("the first record is not a format-1 transcript header")
    out = Transcript(head["role"], head["key"], torn_tail=torn)
    for i, rec in enumerate(records[1:], 1):
        kind = rec["k"]
        if kind == "msg":
            if (set(rec) != {"k", "from", "env"} or rec["from"] not in ROLES
                    or not isinstance(rec["env"], bytes)):
                raise TranscriptError(f"record {i}: malformed message record")
            out.records.append(("msg", rec["from"], rec["env"]))
        elif kind == "secrets":
            values = {k: v for k, v in rec.items() if k != "k"}
            for name, value in values.items():
                if _SECRET_FIELDS.get(name) != (len(value) if isinstance(value, bytes) else -1):
                    raise TranscriptError(f"record {i}: malformed secret {name!r}")
            out.records.append(("secrets", values))
        else:
            raise TranscriptError(f"record {i}: unknown record kind {kind!r}")
    return out
