"""How to play, in a screenful: the ranks in order, who beats whom, the Spy and the
Private, the Flag and how to win, the keys. Written once (`primer.txt`, from SPEC chapter 1
and the seeds `000_0cbbf7c1c412fd5e.txt`, `001_452ae2ba76ddf93f.txt` and
`004_313110f16dee76d8.txt`), and shown by `p2pgotg rules`, by `?` in the game and in the
README, which must hold it verbatim (tests/test_primer.py).

>>> primer().splitlines()[0].startswith("Two armies of 21 pieces")
True
"""

from __future__ import annotations

from importlib import resources

TITLE = "How to play Game of the Generals"


def primer() -> str:
    """The primer's text: lines of at most 78 characters, for any terminal."""
    return (resources.files("p2pgotg.rules") / "primer.txt").read_text("utf-8")


__all__ = ["TITLE", "primer"]
