"""`p2pgotg verify` of a table's files (SPEC 5.9): read each seat's file as a stream of
records, judge them together, print the verdict; the exit codes are 2.8's."""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: How much of a file is read at a time.
CHUNK = 1 << 16


def is_table(path: str) -> bool:
    """Whether `path` starts with a table's header (unreadable: no; the caller explains)."""
    from p2pgotg.protocol.table.transcript import is_table_file

    try:
        with open(path, "rb") as f:
            return is_table_file(f.read(CHUNK))
    except OSError:
        return False


def verify_tables(paths: Sequence[str]) -> int:
    """Judge the files of one table together; print what verify prints; the exit code."""
    from p2pgotg.games.towers.table import TOWERS_TABLE
    from p2pgotg.protocol.table.transcript import TableRecordReader
    from p2pgotg.protocol.table.verify import TableFile, judge_table
    from p2pgotg.protocol.transcript import TranscriptError

    files = []
    for path in paths:
        reader = TableRecordReader()
        records = []
        try:
            with open(path, "rb") as f:
                while chunk := f.read(CHUNK):
                    records += reader.feed_table(chunk)
            torn = reader.finish()
        except OSError as exc:
            print(f"cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        except TranscriptError as exc:
            print(f"{path} is not a readable table transcript: {exc}", file=sys.stderr)
            return 2
        assert reader.role is not None and reader.key is not None
        files.append(TableFile(path, reader.role, reader.key, records, torn))
        seat = "" if reader.seat is None else f", seat {reader.seat}"
        messages = sum(1 for r in records if r[0] == "msg")
        print(f"transcript: {path}  (the {reader.role}{seat}; {messages} signed messages)")
    report = judge_table(TOWERS_TABLE, files)
    for line in report.lines:
        print(line)
    from p2pgotg.cli import _FINDINGS

    print(f"exit {int(report.finding)}:     {_FINDINGS[int(report.finding)]}")
    return int(report.finding)
