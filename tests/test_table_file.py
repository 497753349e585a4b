"""One reader of a table seat's file (SPEC 5.9) serves everything that reads one: `verify`
and `show`, and a seat that resumes (SPEC 3.5). What the file holds comes back as its
driver wrote it; a damaged file is passed over when looking for a table to resume, and
`verify` and `show` name what is wrong with it in one line."""

from __future__ import annotations

import contextlib
import io
import random
import re
import struct
from pathlib import Path

import pytest

from p2pgotg.cli import main
from p2pgotg.crypto import public_bytes
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_file import read_table_file
from p2pgotg.net.play.table_session import TableSession, unfinished_tables
from p2pgotg.protocol.table.transcript import encode_table_header, encode_table_record
from p2pgotg.protocol.transcript import MAX_RECORD
from p2pgotg.protocol.wire import pack
from p2pgotg.testing.table_relay import Table, keys, make_table

JOIN = bytes(range(16))  # the invite's 128-bit join secret (SPEC 3.3)
PORT = 40123


def _unfinished_table() -> Table:
    """Three seats, the roster and the order done, no action yet: a table to resume."""
    rng = random.Random(5)
    table = make_table(3, rng)
    table.settle(rng)
    table.collect()
    return table


def _host_file(folder: Path, table: Table, tail: bytes | None = None,
               secrets: bool = True) -> Path:
    """The host's file as its driver writes it (SPEC 5.9): the header, the secrets it comes
    back with, its records; `tail` in place of the records when given."""
    host = table.host
    records = b"".join(encode_table_record(r) for r in table.records[id(host)])
    saved = {"join": JOIN, "port": PORT.to_bytes(2, "big")}
    path = folder / f"host-{len(list(folder.iterdir()))}.gtr"
    path.write_bytes(encode_table_header("host", host.public_key)
                     + (encode_table_record(("secrets", saved)) if secrets else b"")
                     + (records if tail is None else tail))
    return path


def _cli(*argv: str) -> tuple[int, list[str]]:
    """A `p2pgotg` command run in this process: (exit code, the lines it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue().splitlines()


async def test_a_seats_file_reads_back_as_written_for_verify_and_for_resuming(
        tmp_path: Path) -> None:
    table = _unfinished_table()
    path = _host_file(tmp_path, table)
    [host_key] = [k for k in keys(3) if public_bytes(k) == table.host.public_key]

    file = read_table_file(path)
    assert (file.name, file.role, file.key, file.torn_tail) == (
        str(path), "host", table.host.public_key, False)
    assert list(file.records) == [("secrets", {"join": JOIN, "port": PORT.to_bytes(2, "big")}),
                                  *table.records[id(table.host)]]
    assert (file.join, file.port) == (JOIN, PORT)

    assert unfinished_tables(tmp_path, "host", host_key) == [path]
    assert unfinished_tables(tmp_path, "joiner", host_key) == []
    session = TableSession.resume(path, host_key, "host", Timeouts())
    try:
        assert (session.join_secret, session.port) == (JOIN, PORT)
    finally:
        session.close()
    code, lines = _cli("verify", str(path))
    assert code == 3, lines  # (SPEC 2.8: unfinished)


@pytest.mark.parametrize("tail,problem", [
    (struct.pack(">I", MAX_RECORD + 1), f"claims {MAX_RECORD + 1} bytes: damaged file"),
    (struct.pack(">I", 3) + b"\xc1\xc1\xc1", "record at byte"),
    (struct.pack(">I", 4) + pack({"k": "msg", "from": 9, "env": b""})[:4], "record at byte"),
])
async def test_a_damaged_file_is_passed_over_and_verify_and_show_say_why_in_one_line(
        tmp_path: Path, tail: bytes, problem: str) -> None:
    table = _unfinished_table()
    path = _host_file(tmp_path, table, tail=tail)
    [host_key] = [k for k in keys(3) if public_bytes(k) == table.host.public_key]

    assert unfinished_tables(tmp_path, "host", host_key) == []
    code, lines = _cli("verify", str(path))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{path} is not a readable table transcript: ") and \
        problem in lines[0], lines
    code, lines = _cli("show", str(path))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"cannot show it: {path}: ") and problem in lines[0], lines


def test_a_malformed_record_is_named_by_its_number(tmp_path: Path) -> None:
    table = _unfinished_table()
    record = pack({"k": "msg", "from": 9, "env": b""})
    path = _host_file(tmp_path, table, tail=struct.pack(">I", len(record)) + record)
    code, lines = _cli("verify", str(path))
    assert (code, lines) == (2, [f"{path} is not a readable table transcript: record 2: "
                                 "malformed message record"])


async def test_a_file_without_its_join_secret_is_no_seat_to_resume(tmp_path: Path) -> None:
    table = _unfinished_table()
    path = _host_file(tmp_path, table, secrets=False)
    [host_key] = [k for k in keys(3) if public_bytes(k) == table.host.public_key]

    assert read_table_file(path).join == b""
    assert unfinished_tables(tmp_path, "host", host_key) == []
    words = f"{path.name} is not a seat's file of a table"
    with pytest.raises(ValueError, match=f"^{re.escape(words)}$"):
        TableSession.resume(path, host_key, "host", Timeouts())
