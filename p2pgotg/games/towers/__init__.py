"""Towers (seed `002_836edfe2f167b267.txt`), the second game of the seeds: a 5x5 board of
towers built from a shared pool of 50 layers, pawns that take the high ground, flags that
hold territory. Its rules engine is `rules` (pure), its bot `players` (SPEC chapter 4)."""
