"""Time from `p2pgotg join` to the first board, in the simulated internet of tests/netbed.py.

Three ways in, each run several times with a fresh host:

- lan:    `join 7-word-word` on the host's LAN (multicast DNS, then the PAKE);
- mapped: `join gg2-...` from behind a symmetric NAT to a host whose router mapped a port;
- punch:  `join gg2-...` from one easy NAT to a host behind another; the reply code is
          carried back at once by `p2pgotg host --reply CODE` (a person would take longer).
- nats:   every combination of a NAT kind (easy, symmetric) and a router behaviour (drop
          unsolicited packets, or answer them with a TCP reset) on each side, host without
          port mapping: how many joins reached the first board, in what time, and, for
          those that cannot, what the joiner was told and how soon.

"First board" is the moment the joiner's game has its id, i.e. both hellos are exchanged
and the setup board can be drawn; the joiner writes its transcript file then, and that is
what is watched. The clock starts when the join command is launched, so Python's start-up
is counted, as a person would count it. The WAN adds 80 ms round trips. The joiner starts
once the host says it is waiting; a host shows its short code only once the game is
announced on the LAN, so a LAN joiner never races the host's multicast DNS probing.

Run as root (namespaces): `python bench/connect.py [--runs 7] [--modes lan,mapped,punch,nats]`.
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


# (NAT kind, home) of each side in the `nats` mode: the host's homes and the joiner's
NAT_HOMES = {"host": {"easy": "hC", "symmetric": "hB"},
             "joiner": {"easy": "hA", "symmetric": "hE"}}


def nat_run(bed: Bed, host_ns: str, join_ns: str, home: Path) -> tuple[bool, float, str]:
    """One join across the NATs: (reached the first board, seconds from the join command
    to the board or to the joiner's exit, the joiner's last words when it stopped)."""
    host_lines: list[str] = []
    host = bed.python(host_ns, "host", "--bot", "--bot-delay", "0.2", "--no-port-map",
                      *STUN_ARGS, home=home / "host", stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=_lines, args=(host, host_lines), daemon=True).start()
    joiner: subprocess.Popen | None = None
    try:
        invite = _wait(host_lines, "invite: ").split()[1]
        _wait(host_lines, "waiting for the other player")
        games = home / "joiner" / "data" / "games"
        join_lines: list[str] = []
        start = time.monotonic()
        joiner = bed.python(join_ns, "join", invite, "--bot", "--bot-delay", "0.2",
                            *STUN_ARGS, home=home / "joiner", stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=_lines, args=(joiner, join_lines), daemon=True).start()
        relayed = False
        while time.monotonic() - start < TIMEOUT:
            if games.is_dir() and any(games.glob("*.gtr")):
                return True, time.monotonic() - start, ""
            if joiner.poll() is not None:
                time.sleep(0.2)  # (its last lines)
                said = next((line for line in reversed(join_lines)
                             if line.startswith("error:")), join_lines[-1:] or [""])
                return False, time.monotonic() - start, str(said)
            reply = next((line for line in join_lines if line.startswith("reply: ")), None)
            if reply and not relayed:
                relayed = True
                bed.python(host_ns, "host", "--reply", reply.split()[1], home=home / "host",
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.005)
        return False, TIMEOUT, "no first board within the bench's limit"
    finally:
        if joiner is not None:
            _stop(joiner)
        _stop(host)


def nat_table(bed: Bed, runs: int) -> None:
    """The `nats` mode: one row per combination, as a README table."""
    print("| host NAT, router | joiner NAT, router | connected | median | p90 | the joiner "
          "was told (when it could not) |")
    print("|---|---|---|---|---|---|")
    for host_kind in ("easy", "symmetric"):
        for host_router in ("drop", "reset"):
            for join_kind in ("easy", "symmetric"):
                for join_router in ("drop", "reset"):
                    host_ns = NAT_HOMES["host"][host_kind]
                    join_ns = NAT_HOMES["joiner"][join_kind]
                    results = []
                    with bed.behaving({"r" + host_ns[1:]: host_router,
                                       "r" + join_ns[1:]: join_router}):
                        for n in range(runs):
                            with tempfile.TemporaryDirectory(dir=bed.tmp) as tmp:
                                results.append(nat_run(bed, host_ns, join_ns,
                                                       Path(tmp) / str(n)))
                    times = [t for _ok, t, _said in results]
                    ok = sum(1 for good, _t, _said in results if good)
                    said = next((w for good, _t, w in results if not good), "")
                    said = said.removeprefix("error: ").split(", and the host did not")[0]
                    print(f"| {host_kind}, {host_router} | {join_kind}, {join_router} | "
                          f"{ok} of {runs} | {statistics.median(times):.2f} s | "
                          f"{p90(times):.2f} s | {said[:110]} |", flush=True)


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--modes", default="lan,mapped,punch,nats")
    args = parser.parse_args()
    bed = Bed().build()
    try:
        modes = args.modes.split(",")
        if "nats" in modes:
            nat_table(bed, args.runs)
            modes.remove("nats")
        if modes:
            print(f"{'way in':<8} {'runs':>4} {'median s':>9} {'p90 s':>7}  all (s)")
        for mode in modes:
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
