"""Tools for tests, benchmarks and the conformance runner: never imported by the program.

- `pair`: two peers wired back to back in memory, deterministic keys and randomness;
- `forging`: messages a cheater signs with its own key (never another's: a message signed
  with someone else's key is made outside the package, in `protocol/scenarios.py` and the
  conformance runner);
- `faultproxy`: a TCP proxy that delays, cuts, stalls and half-closes connections;
- `raid`: a scripted opponent (the general raid) to measure the bot against.

The scripted cheats, the explorers of delivery orders and the vectors' maker live beside the
conformance runner, in the repository's `protocol/` directory.
"""
