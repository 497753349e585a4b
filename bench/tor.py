"""Playing through Tor in the test bed: time to the first board, and the round trip of a move,
between two homes behind symmetric NATs on the private Tor network of tests/torbed.py.

- connect, tor running: the joiner's home already runs tor (`join CODE --tor
  127.0.0.1:9051`), as with a system tor; the host's onion service is published. From the
  launch of `p2pgotg join --bot` to its first board (its transcript file appears), Python's
  start-up included, as bench/connect.py counts it.
- connect, tor started: `join CODE` in a fresh home, so p2pgotg starts its own tor, which
  first reaches the (private) Tor network.
- publish: from the launch of `p2pgotg host --bot` to its line saying the onion service is
  published (p2pgotg starts its tor, which reaches the network, then publishes).
- move round trip: a joiner in home E playing through the running tor (bench/load.py's
  seat: it thinks 0.2 to 0.4 s, then times from just before its move until the host's
  answering move is received and applied; the host's bot answers at once, `--bot-delay
  0`); and the same over a direct path for comparison (`direct`: a host in home A whose
  router maps its port, no tor on either side).

The bed's relays sit in one namespace with no delay between them; each home reaches them
across the WAN hub (40 ms each way), so a message from home to home crosses the hub twice,
as a direct one does once each way: compare with the 80 ms round trip of a direct path.

Run as root (namespaces): `python bench/tor.py [--runs 5] [--moves 40]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from connect import _lines, _stop, _wait, p90  # noqa: E402  (bench/ is on sys.path)
from netbed import STUN_ARGS  # noqa: E402
from torbed import CONTROL_PORT, TorBed  # noqa: E402

TIMEOUT = 300.0


def _host(bed: TorBed, home: Path, direct: bool = False,
          ) -> tuple[subprocess.Popen, list[str], float]:
    """A host in home B with its own tor (or in home A, port-mapped and without tor); its
    lines, and seconds until it was published (until its invite, without tor)."""
    (home / "config").mkdir(parents=True)
    (home / "config" / "torrc").write_text(bed.torrc())
    lines: list[str] = []
    start = time.monotonic()
    where = ("hA", "--tor", "off") if direct else ("hB", "--no-port-map", "--tor", "auto")
    host = bed.python(where[0], "host", "--bot", "--bot-delay", "0", *STUN_ARGS, *where[1:],
                      home=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=_lines, args=(host, lines), daemon=True).start()
    _wait(lines, "waiting for the other player" if direct else "tor: the onion service",
          TIMEOUT)
    return host, lines, time.monotonic() - start


def connect_once(bed: TorBed, base: Path, own_tor: bool) -> tuple[float, float]:
    """(seconds to publish, seconds from `join` to the first board)."""
    host, host_lines, published = _host(bed, base / "host")
    joiner: subprocess.Popen | None = None
    try:
        code = _wait(host_lines, "invite: ").split()[1]
        home = base / "joiner"
        tor = ["--tor", "auto" if own_tor else f"127.0.0.1:{CONTROL_PORT}"]
        if own_tor:
            (home / "config").mkdir(parents=True)
            (home / "config" / "torrc").write_text(bed.torrc())
        join_lines: list[str] = []
        games = home / "data" / "games"
        start = time.monotonic()
        joiner = bed.python("hE", "join", code, "--bot", *STUN_ARGS, *tor, home=home,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=_lines, args=(joiner, join_lines), daemon=True).start()
        while not (games.is_dir() and any(games.glob("*.gtr"))):
            if time.monotonic() - start > TIMEOUT or joiner.poll() is not None:
                raise RuntimeError(f"no first board; the joiner said {join_lines}")
            time.sleep(0.005)
        return published, time.monotonic() - start
    finally:
        if joiner is not None:
            _stop(joiner)
        _stop(host)


ROUND_TRIPS = """
import json, random, sys, trio
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from load import Tally, load_seat
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.reaching.racing import prepare_join
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.reaching.tor import TorChoice

async def main():
    limits, tally, stop = Timeouts(), Tally(), trio.Event()
    invite, opener = await prepare_join(sys.argv[2], [], limits, print, print,
                                        TorChoice.parse(sys.argv[4]))
    config = JoinConfig(Ed25519PrivateKey.generate(), invite, Path(sys.argv[3]), limits,
                        opener=opener)
    async def enough():
        while len(tally.latencies) < int(sys.argv[5]):
            await trio.sleep(0.2)
        stop.set()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(enough)
        await join_game(config, load_seat(random.Random(1), (0.2, 0.4), stop, tally,
                                          "normal"))
        nursery.cancel_scope.cancel()
    print("LATENCIES", json.dumps(tally.latencies), flush=True)

trio.run(main)
"""


def round_trips(bed: TorBed, base: Path, moves: int, direct: bool) -> list[float]:
    """Seconds from each of the joiner's moves to the host's answer, through Tor or not."""
    host, host_lines, _published = _host(bed, base / "host", direct)
    tor = "off" if direct else f"127.0.0.1:{CONTROL_PORT}"
    try:
        code = _wait(host_lines, "invite: ").split()[1]
        out = bed.spawn("hE", [sys.executable, "-c", ROUND_TRIPS, str(ROOT / "bench"), code,
                               str(base / "joiner"), tor, str(moves)],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        text, _ = out.communicate(timeout=TIMEOUT + moves * 5)
        for line in text.splitlines():
            if line.startswith("LATENCIES "):
                return list(json.loads(line.split(" ", 1)[1]))
        raise RuntimeError(f"the timing joiner said: {text[-2000:]}")
    finally:
        _stop(host)


def _row(what: str, values: list[float]) -> None:
    shown = " ".join(f"{v:.2f}" for v in values[:12]) + (" ..." if len(values) > 12 else "")
    print(f"{what:<22} {len(values):>4} {statistics.median(values):>9.2f} "
          f"{p90(values):>7.2f}  {shown}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args()
    bed = TorBed().build()
    try:
        took = bed.start_tor()
        print(f"the private Tor network: a consensus with every relay after {took:.1f} s",
              flush=True)
        bed.client("hE", "joiner")
        rows: dict[str, list[float]] = {"publish": [], "connect, tor running": [],
                                        "connect, tor started": []}
        for n in range(args.runs):
            for own in (False, True):
                with tempfile.TemporaryDirectory(dir=bed.tmp) as tmp:
                    published, joined = connect_once(bed, Path(tmp) / str(n), own)
                rows["publish"].append(published)
                rows["connect, tor started" if own else "connect, tor running"].append(joined)
        print(f"{'what':<22} {'n':>4} {'median s':>9} {'p90 s':>7}  all (s)")
        for what, values in rows.items():
            if values:
                _row(what, values)
        for direct in (False, True):
            with tempfile.TemporaryDirectory(dir=bed.tmp) as tmp:
                _row("move round trip" + (", direct" if direct else ""),
                     round_trips(bed, Path(tmp), args.moves, direct))
    finally:
        bed.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
