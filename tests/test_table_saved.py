"""`p2pgotg games` lists a seat's file of a table (SPEC 5.9) as what it is: the table's size,
our colour and seat, how its game ended for us (expected values from the recorded tables'
expected.json), or that it is unfinished with the command that resumes it; never as a
damaged file."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

from p2pgotg.testing.table_relay import make_table, write_files

TRANSCRIPTS = Path(__file__).parent.parent / "protocol" / "transcripts"


def games_listed(home: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "p2pgotg", "games"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "P2PGOTG_HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def games_folder(home: Path) -> Path:
    folder = home / "data" / "games"
    folder.mkdir(parents=True)
    return folder


def test_a_finished_table_is_listed_with_how_it_ended_for_us(tmp_path: Path) -> None:
    expected = json.loads((TRANSCRIPTS / "expected.json").read_text())
    folder = games_folder(tmp_path)
    for name in ("table-honest-3-seat-0.gtr", "table-honest-3-seat-1.gtr"):
        kept = name.replace("table-honest-3-", "x").replace("-", "")  # (one game id each)
        shutil.copy(TRANSCRIPTS / name, folder / kept)
    out = games_listed(tmp_path)
    assert "cannot be read" not in out and out.count("Towers at a table of 3") == 2, out
    for name in ("table-honest-3-seat-0.gtr", "table-honest-3-seat-1.gtr"):
        e = expected[name]
        mine = e["owner"] == e["winner"]
        line = next(x for x in out.splitlines() if f"seat {e['owner'].split()[1]})" in x)
        assert ("you won" if mine else "you lost") in line, out
        assert e["termination"].replace("_", " ") in line, out


def test_an_unfinished_seat_is_listed_with_the_command_that_resumes_it(tmp_path: Path) -> None:
    rng = random.Random(3)
    table = make_table(3, rng)
    table.settle(rng)
    folder = games_folder(tmp_path)
    for path in write_files(table, tmp_path):
        path.rename(folder / path.name.replace("seat-", "t"))
    out = games_listed(tmp_path)
    assert out.count("unfinished (0 actions made)") == 3, out
    assert out.count("resume: p2pgotg join CODE") == 2, out
    assert out.count("resume: p2pgotg host --game towers --seats 3") == 1, out
