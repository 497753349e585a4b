"""`p2pgotg verify` and `show` of a table's files (SPEC 5.9): read each seat's file as a
stream of records, judge them together, print the verdict (the exit codes are 2.8's), or
tell one file's game."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def is_table(path: str) -> bool:
    """Whether `path` starts with a table's header (unreadable: no; the caller explains)."""
    from p2pgotg.net.play.table_file import CHUNK
    from p2pgotg.protocol.table.transcript import is_table_file

    try:
        with open(path, "rb") as f:
            return is_table_file(f.read(CHUNK))
    except OSError:
        return False


def verify_tables(paths: Sequence[str]) -> int:
    """Judge the files of one table together; print what verify prints; the exit code."""
    from p2pgotg.games.towers.table import TOWERS_TABLE
    from p2pgotg.net.play.table_file import read_table_file
    from p2pgotg.protocol.table.verify import judge_table
    from p2pgotg.protocol.transcript import TranscriptError

    files = []
    for path in paths:
        try:
            file = read_table_file(path)
        except OSError as exc:
            print(f"cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        except TranscriptError as exc:
            print(f"{path} is not a readable table transcript: {exc}", file=sys.stderr)
            return 2
        files.append(file)
        seat = "" if file.seat is None else f", seat {file.seat}"
        messages = sum(1 for r in file.records if r[0] == "msg")
        print(f"transcript: {path}  (the {file.role}{seat}; {messages} signed messages)")
    report = judge_table(TOWERS_TABLE, files)
    for line in report.lines:
        print(line)
    from p2pgotg.cli import _FINDINGS

    print(f"exit {int(report.finding)}:     {_FINDINGS[int(report.finding)]}")
    return int(report.finding)


def show_table(path: str) -> int:
    """`p2pgotg show` of a table's file: its game printed action by action (SPEC 5.9); exit
    2, saying why, when it cannot be shown."""
    from p2pgotg.games.towers.table import TOWERS_TABLE
    from p2pgotg.net.play.table_file import read_table_file
    from p2pgotg.protocol.printable import controls_escaped
    from p2pgotg.protocol.table.verify import judge_table
    from p2pgotg.protocol.transcript import TranscriptError
    from p2pgotg.ui.review import ReviewError
    from p2pgotg.ui.towers.table_review import table_lines

    try:
        file = read_table_file(path)
        lines = table_lines(file, judge_table(TOWERS_TABLE, [file]))
    except OSError as exc:
        print(f"cannot show it: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (TranscriptError, ReviewError) as exc:
        print(f"cannot show it: {path}: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(controls_escaped(line))
    return 0
