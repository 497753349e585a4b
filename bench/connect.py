"""Time from `p2pgotg join` to the first board, in the simulated internet of tests/netbed.py.

Three ways in, each run several times with a fresh host:

- lan:    `join 7-word-word` on the host's LAN (multicast DNS, then the PAKE);
- mapped: `join gg2-...` from behind a symmetric NAT to a host whose router mapped a port;
- punch:  `join gg2-...` from one easy NAT to a host behind another; the reply code is
          carried back at once by `p2pgotg host --reply CODE` (a person would take longer).

"First board" is the moment the joiner's game has its id, i.e. both hellos are exchanged
and the setup board can be drawn; the joiner writes its transcript file then, and that is
what is watched. The clock starts when the join command is launched, so Python's start-up
is counted, as a person would count it. The WAN adds 80 ms round trips. The joiner starts
once the host says it is waiting; a host shows its short code only once the game is
announced on the LAN, so a LAN joiner never races the host's multicast DNS probing.

Run as root (namespaces): `python bench/connect.py [--runs 7] [--modes lan,mapped,punch]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from netbed import STUN_ARGS, Bed

TIMEOUT = 60.0


def _lines(proc: subprocess.Popen, into: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        into.append(line.rstrip("\n"))


def _wait(lines: list[str], prefix: str, timeout: float = TIMEOUT) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(lines):
            if line.startswith(prefix):
                return line
        time.sleep(0.005)
    raise RuntimeError(f"no {prefix!r} line; got {lines}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)


def one_run(bed: Bed, mode: str, home: Path) -> float:
    host_ns, join_ns = {"lan": ("hA", "hA2"), "mapped": ("hA", "hB"),
                        "punch": ("hC", "hA")}[mode]
    extra = ["--stun", "off", "--no-port-map"] if mode == "lan" else STUN_ARGS
    extra = [*extra, "--tor", "off"]  # (no tor here knows the bed's own Tor network)
    host_lines: list[str] = []
    host = bed.python(host_ns, "host", "--bot", "--bot-delay", "0.2", *extra,
                      home=home / "host", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True)
    threading.Thread(target=_lines, args=(host, host_lines), daemon=True).start()
    joiner: subprocess.Popen | None = None
    try:
        invite = _wait(host_lines, "invite: ").split()[1]
        code = _wait(host_lines, "code: ").split()[1] if mode == "lan" else invite
        _wait(host_lines, "waiting for the other player")
        games = home / "joiner" / "data" / "games"
        join_lines: list[str] = []
        start = time.monotonic()
        joiner = bed.python(join_ns, "join", code, "--bot", "--bot-delay", "0.2",
                            *([] if mode == "lan" else STUN_ARGS), home=home / "joiner",
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=_lines, args=(joiner, join_lines), daemon=True).start()
        if mode == "punch":
            reply = _wait(join_lines, "reply: ").split()[1]
            bed.python(host_ns, "host", "--reply", reply, home=home / "host",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not (games.is_dir() and any(games.glob("*.gtr"))):
            if time.monotonic() - start > TIMEOUT or joiner.poll() is not None:
                raise RuntimeError(f"{mode}: no first board; joiner said {join_lines}")
            time.sleep(0.005)
        return time.monotonic() - start
    finally:
        if joiner is not None:
            _stop(joiner)
        _stop(host)


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--modes", default="lan,mapped,punch")
    args = parser.parse_args()
    bed = Bed().build()
    try:
        print(f"{'way in':<8} {'runs':>4} {'median s':>9} {'p90 s':>7}  all (s)")
        for mode in args.modes.split(","):
            times = []
            for n in range(args.runs):
                with tempfile.TemporaryDirectory(dir=bed.tmp) as tmp:
                    times.append(one_run(bed, mode, Path(tmp) / str(n)))
            shown = " ".join(f"{t:.2f}" for t in times)
            print(f"{mode:<8} {len(times):>4} {statistics.median(times):>9.2f} "
                  f"{p90(times):>7.2f}  {shown}", flush=True)
    finally:
        bed.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
