"""A seat's file of a table (SPEC 5.9) read from disk without touching it: what `verify`
and `show` judge, and what a seat resumes from (SPEC 3.5). One reader for both, streamed a
chunk at a time, so a file of any size is read in bounded memory beyond its records.
"""

from __future__ import annotations

import os

from p2pgotg.protocol.table.seat import TableRecord
from p2pgotg.protocol.table.transcript import TableRecordReader
from p2pgotg.protocol.table.verify import TableFile

#: How much of a file is read at a time.
CHUNK = 1 << 16


def read_table_file(path: str | os.PathLike[str]) -> TableFile:
    """One seat's file, named as `path` is given. Raises OSError, or TranscriptError (a
    ValueError) saying what is wrong with it; a torn last record is only noted."""
    reader = TableRecordReader()
    records: list[TableRecord] = []
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            records += reader.feed_table(chunk)
    torn = reader.finish()
    assert reader.role is not None and reader.key is not None  # (finish: no header raises)
    return TableFile(os.fspath(path), reader.role, reader.key, records, torn, reader.seat)
