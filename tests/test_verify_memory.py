"""`verify` streams its file: peak memory at most twice the file's size plus 30 MiB (issue
13, finding 8: a 7.5 MB file of 500,000 small records peaked at 231 MiB when every record
was kept). Measured as the peak resident set of a child process running `p2pgotg verify`
(`ru_maxrss` of the children of a wrapper that runs nothing else). `bench/verify_memory.py`
gives the figures for larger files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from p2pgotg.protocol.transcript import encode_header, encode_record

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20

_PEAK = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run([sys.executable, '-m', 'p2pgotg', 'verify', sys.argv[1]],"
    " stdout=subprocess.DEVNULL).returncode\n"
    "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def verify_peak(path: Path) -> tuple[int, float]:
    """(exit code, peak RSS in MiB) of `p2pgotg verify FILE` run in a child of its own."""
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True,
                         text=True, check=True, timeout=60, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.split()
    return int(out[0]), int(out[1]) / 1024  # (Linux gives ru_maxrss in KiB)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_verify_of_500000_small_records_stays_within_twice_the_file_plus_30_mib(tmp_path):
    path = tmp_path / "small-records.gtr"
    record = encode_record(("secrets", {}))  # the smallest record there is: 15 bytes
    with path.open("wb") as f:
        f.write(encode_header("host", bytes(32)))
        for _ in range(50):
            f.write(record * 10_000)
    size = path.stat().st_size
    assert size > 7_000_000
    code, peak = verify_peak(path)
    assert code == 3  # a header and secrets only: a game not begun, nothing proven
    assert peak <= 2 * size / MIB + 30, f"peak {peak:.1f} MiB for a {size / MIB:.1f} MiB file"
