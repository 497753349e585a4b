"""`p2pgotg verify` of the longest game the limits allow, with both anti-stalling rules on:
`python bench/verify_rules.py [--runs 3] [--file FILE] [--repo DIR]`

SPEC 2.10 lets each side make moves up to `seq` 10,000, so a game can run to about 20,000
plies; with `--two-squares` and `--chasing` (SPEC 1.9) every move is checked against the
side's last moves and, for a chasing move, against every earlier position. The game is
played by two honest in-memory peers (random quiet moves, seeded), each side moving until
its next move would reach the message limit, then the side to move resigns and both audit:
its file verifies clean (exit 0). The file is written once (`--file`, kept when given) and
timed in a fresh child process per run: `python -m p2pgotg verify FILE`, wall time,
median of `--runs`. `--repo DIR` times another checkout's `verify` on the same file (the
code before a change, say), so that both figures come from one file and one machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from p2pgotg.protocol.limits import MAX_PLAY_MESSAGES  # noqa: E402
from p2pgotg.rules import RuleOptions  # noqa: E402
from p2pgotg.testing.pair import Pair  # noqa: E402
from protocol.scenarios import Result, transcript_bytes  # noqa: E402

BOTH_RULES = RuleOptions(two_squares=True, chasing=True)


def longest_game(seed: int = 1) -> tuple[bytes, int]:
    """The host's transcript of the longest game with both rules on, and its plies."""
    pair = Pair.new(BOTH_RULES, seed=f"verify-rules-{seed}")
    pair.handshake(rng=random.Random(seed))
    rng = random.Random(seed)
    while True:
        mover = pair.host if pair.host.my_turn else pair.joiner
        view = mover.view
        assert view is not None and not pair.host.flow.is_over, "the game ended early"
        if mover.flow.next_seq(mover.role) >= MAX_PLAY_MESSAGES - 1:
            break
        quiet = [m for m in view.legal_moves if not view.is_challenge(m)]
        mover.move(rng.choice(quiet or view.legal_moves))
        pair.deliver()
    plies = view.ply
    mover.resign()
    pair.deliver()
    pair.deliver()  # (both audits)
    verdict = pair.host.flow.verdict
    assert verdict is not None and verdict.clean and verdict.audit_complete, verdict
    return transcript_bytes(Result(pair.host, None)), plies


def time_verify(path: Path, repo: Path) -> tuple[int, float]:
    """(exit code, seconds) of `python -m p2pgotg verify FILE` run from `repo`."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    started = time.perf_counter()
    code = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(path)], cwd=repo,
                          env=env, stdout=subprocess.DEVNULL).returncode
    return code, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="verify runs (median; 3)")
    parser.add_argument("--file", type=Path, default=None,
                        help="the game's file: written when missing, kept (default: a "
                        "temporary file)")
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="the checkout whose verify is timed (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or Path(tmp) / "longest-both-rules.gtr"
        if not path.exists():
            started = time.perf_counter()
            data, plies = longest_game()
            path.write_bytes(data)
            print(f"wrote {path}: {plies} plies, {len(data) / 1e6:.1f} MB, "
                  f"in {time.perf_counter() - started:.1f} s")
        runs = [time_verify(path, args.repo.resolve()) for _ in range(args.runs)]
        codes = {code for code, _ in runs}
        print(f"verify ({args.repo.resolve()}): exit {sorted(codes)}, median "
              f"{statistics.median(t for _, t in runs):.2f} s over {args.runs} runs "
              f"({', '.join(f'{t:.2f}' for _, t in runs)})")


if __name__ == "__main__":
    main()
