"""Peak memory of `p2pgotg verify`: `python bench/verify_memory.py [--big-mib 100]`

`verify` streams its file (SPEC 2.8): peak memory must stay at most twice the file's size
plus 30 MiB, for any file up to 100 MB (issue 13, finding 8). Each file is verified by a
child process (`python -m p2pgotg verify FILE`) whose peak resident set size is read from
`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss` once it has exited, one child per file, so
each figure is that file's alone. Files:

- `small-records`: 500,000 of the smallest records (empty secrets records), 7.5 MB: the
  file of the issue, which peaked at 231 MiB when verify held every record;
- `real-game+padding`: a real game's transcript, then the owner's secrets record again and
  again up to about `--big-mib` MiB (what a file of that size can hold: a game's messages
  are bounded by SPEC 2.10, far below 100 MB);
- `message-limit`: a real game whose sides chat up to the message limit of SPEC 2.10 (the
  largest transcript an honest game can leave), then one chat too many: a conviction.

Figures are printed, never asserted (the test `tests/test_verify_memory.py` asserts the
bound on a smaller file).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from p2pgotg.protocol.transcript import encode_header, encode_record  # noqa: E402
from protocol.scenarios import honest_game, limit_filling_game, transcript_bytes  # noqa: E402

MIB = 1 << 20


def small_records(path: Path, count: int = 500_000) -> None:
    """A header, then `count` empty secrets records (15 bytes each)."""
    record = encode_record(("secrets", {}))
    with path.open("wb") as f:
        f.write(encode_header("host", bytes(32)))
        for _ in range(count // 10_000):
            f.write(record * 10_000)


def padded_game(path: Path, size: int) -> None:
    """A real game's transcript, then its owner's secrets record again up to `size`."""
    result = honest_game(1)
    records = result.honest.take_records()
    data = encode_header(result.honest.role, result.honest.public_key) + b"".join(
        encode_record(r) for r in records)
    secrets = next(r for r in records if r[0] == "secrets" and "salts" in r[1])
    pad = encode_record(secrets) * 1000
    with path.open("wb") as f:
        f.write(data)
        written = len(data)
        while written < size:
            f.write(pad)
            written += len(pad)


def limit_game(path: Path) -> None:
    path.write_bytes(transcript_bytes(limit_filling_game(over=True)))


def measure(path: Path) -> tuple[int, float, float]:
    """(exit code, peak RSS in MiB, seconds) of `p2pgotg verify FILE` in a fresh child."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.run([sys.executable, '-m', 'p2pgotg', 'verify', sys.argv[1]],"
        " stdout=subprocess.DEVNULL).returncode\n"
        "t = time.perf_counter() - t\n"
        "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.split()
    return int(out[0]), int(out[1]) / 1024, float(out[2])  # (ru_maxrss is KiB on Linux)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mib", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.gtr"
        empty.write_bytes(encode_header("host", bytes(32)))
        files = [("header only (the program's floor)", empty, None)]
        for name, make in (("small-records", small_records),
                           ("message-limit", limit_game),
                           ("real-game+padding",
                            lambda p: padded_game(p, args.big_mib * MIB))):
            path = Path(tmp) / f"{name}.gtr"
            started = time.perf_counter()
            make(path)
            print(f"made {name}: {path.stat().st_size / MIB:.1f} MiB in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
            files.append((name, path, None))
        print(f"{'file':<36} {'size':>10} {'exit':>4} {'peak RSS':>10} {'above floor':>11} "
              f"{'2x size + 30':>12} {'time':>7}")
        floor = 0.0
        for name, path, _ in files:
            size = path.stat().st_size
            rc, peak, seconds = measure(path)
            floor = floor or peak
            print(f"{name:<36} {size / MIB:>6.1f} MiB {rc:>4} {peak:>6.1f} MiB "
                  f"{peak - floor:>7.1f} MiB {2 * size / MIB + 30:>8.1f} MiB {seconds:>6.2f}s",
                  flush=True)


if __name__ == "__main__":
    main()
