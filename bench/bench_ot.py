"""CPU cost of one blind challenge's oblivious transfer (p2pgotg.crypto.ot).

    python bench/bench_ot.py [runs]

Times each side of one challenge, median over `runs` (default 200), both as wall time
(perf_counter) and as CPU time of this process (process_time):

- sender (defender): 5 outcome tokens, their 5 commitments, 15 ciphertexts;
- receiver (attacker): choose R, decrypt its slot, find the commitment the token opens;
- both: the two sides back to back, what one challenge costs the two machines together.

The target is under 5 ms for both sides together. Timing is reported, never asserted.
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    from p2pgotg.crypto import ot
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from p2pgotg.crypto import ot

SEED_D = hashlib.sha256(b"bench sender seed").digest()
SEED_A = hashlib.sha256(b"bench receiver seed").digest()
GAME = hashlib.sha256(b"bench game id").digest()
CHOICE = 9


def measure(fn: Callable[[int], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of fn(n) for n = 0..runs-1 (a fresh challenge each)."""
    wall, cpu = [], []
    fn(runs)  # warm up
    for n in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn(n)
        c1, w1 = time.process_time(), time.perf_counter()
        wall.append(w1 - w0)
        cpu.append(c1 - c0)
    return statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3


def main(runs: int = 200) -> None:
    y, S = ot.sender_keypair(SEED_D)
    # what each side received from the other, made outside the timed part
    sent_R: dict[int, bytes] = {}
    sent_D: dict[int, tuple[list[bytes], list[bytes]]] = {}

    def sender(n: int) -> tuple[list[bytes], list[bytes]]:
        tokens = ot.outcome_tokens(SEED_D, n)
        commitments = [ot.token_commitment(GAME, n, o, t) for o, t in enumerate(tokens)]
        messages = [tokens[i % ot.OUTCOMES] for i in range(1, ot.SLOTS + 1)]
        return commitments, ot.sender_ciphertexts(y, S, sent_R[n], GAME, n, messages)

    def receiver(n: int) -> int | None:
        x, R = ot.receiver_choose(SEED_A, n, S, CHOICE)
        commitments, e = sent_D[n]
        token = ot.receiver_decrypt(x, S, R, GAME, n, CHOICE, e)
        return ot.find_outcome(GAME, n, token, commitments)

    def both(n: int) -> int | None:
        x, R = ot.receiver_choose(SEED_A, n, S, CHOICE)
        tokens = ot.outcome_tokens(SEED_D, n)
        commitments = [ot.token_commitment(GAME, n, o, t) for o, t in enumerate(tokens)]
        messages = [tokens[i % ot.OUTCOMES] for i in range(1, ot.SLOTS + 1)]
        e = ot.sender_ciphertexts(y, S, R, GAME, n, messages)
        return ot.find_outcome(GAME, n, ot.receiver_decrypt(x, S, R, GAME, n, CHOICE, e),
                               commitments)

    for n in range(runs + 1):
        sent_R[n] = ot.receiver_choose(SEED_A, n, S, CHOICE)[1]
        sent_D[n] = sender(n)
        assert receiver(n) == CHOICE % ot.OUTCOMES

    rows = [
        ("setup: sender key pair (once a game)",
         measure(lambda n: ot.sender_keypair(SEED_D), runs)),
        ("sender: 5 tokens + 5 commitments + 15 ciphertexts", measure(sender, runs)),
        ("receiver: choose + decrypt + match 1 of 5 commitments", measure(receiver, runs)),
        ("both sides of one challenge", measure(both, runs)),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"oblivious transfer, 1 of {ot.SLOTS}, median of {runs} runs")
    print(f"{'':{width}}  {'wall ms':>8}  {'cpu ms':>8}")
    for name, (wall, cpu) in rows:
        print(f"{name:{width}}  {wall:8.3f}  {cpu:8.3f}")
    total = rows[-1][1][1]
    print(f"target: both sides under 5 ms of CPU -> {'met' if total < 5 else 'NOT met'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
