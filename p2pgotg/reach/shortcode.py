"""Short codes a person can read aloud: ``7-crossover-clockwork``.

A number (which game on this network: the host announces it by multicast DNS) and two
words from the PGP word list: the first from its odd column, the second from its even
column, as magic-wormhole does, so a swapped or dropped word is noticed. The whole code is
the password of the PAKE (``p2pgotg.reach.pake``): the two words carry 16 bits, which
is plenty when each guess costs a connection and the host retires the code after a few
failures (SPEC 3.7).

>>> code = ShortCode.parse(" 7-Crossover-CLOCKWORK ")
>>> str(code), code.password
('7-crossover-clockwork', b'7-crossover-clockwork')
"""

from __future__ import annotations

import difflib
import secrets
from dataclasses import dataclass
from importlib import resources

MAX_NUMBER = 99


class ShortCodeError(ValueError):
    """A short code that cannot be right; the text says what to fix."""


def _load() -> tuple[tuple[str, ...], tuple[str, ...]]:
    text = resources.files("p2pgotg.reach").joinpath("pgp_words.txt").read_text("ascii")
    rows = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
    if len(rows) != 256 or any(len(row) != 2 for row in rows):
        raise RuntimeError("the PGP word list is damaged")
    return tuple(r[0] for r in rows), tuple(r[1] for r in rows)


EVEN_WORDS, ODD_WORDS = _load()
_EVEN = {w: i for i, w in enumerate(EVEN_WORDS)}
_ODD = {w: i for i, w in enumerate(ODD_WORDS)}


@dataclass(frozen=True)
class ShortCode:
    """A game number (1..99) and two words; ``str()`` is the canonical text."""

    number: int
    first: str  # from the odd column
    second: str  # from the even column

    def __post_init__(self) -> None:
        if not 1 <= self.number <= MAX_NUMBER:
            raise ShortCodeError(f"the number is 1 to {MAX_NUMBER}, not {self.number}")
        if self.first not in _ODD or self.second not in _EVEN:
            raise ShortCodeError("the words are not a first and a second word of the list")

    @classmethod
    def random(cls, number: int) -> ShortCode:
        return cls(number, ODD_WORDS[secrets.randbelow(256)], EVEN_WORDS[secrets.randbelow(256)])

    @property
    def password(self) -> bytes:
        """The PAKE password: the canonical text in ASCII."""
        return str(self).encode("ascii")

    def __str__(self) -> str:
        return f"{self.number}-{self.first}-{self.second}"

    @classmethod
    def parse(cls, text: str) -> ShortCode:
        """Read a code typed by a person (case and surrounding spaces ignored; spaces
        between the parts are taken as dashes); ShortCodeError says what is wrong."""
        parts = [p for p in text.strip().lower().replace(" ", "-").split("-") if p]
        if len(parts) != 3:
            raise ShortCodeError(
                f"a short code is a number and two words, like 7-crossover-clockwork; "
                f"{text.strip()!r} has {len(parts)} part{'s' if len(parts) != 1 else ''}")
        number_text, first, second = parts
        if not number_text.isdigit() or not 1 <= int(number_text) <= MAX_NUMBER:
            raise ShortCodeError(
                f"a short code starts with the game's number (1 to {MAX_NUMBER}), "
                f"not {number_text!r}")
        if first in _EVEN and second in _ODD:
            raise ShortCodeError(f"the two words are swapped: try {number_text}-{second}-{first}")
        _check_word(first, _ODD, "first")
        _check_word(second, _EVEN, "second")
        return cls(int(number_text), first, second)


def looks_like_short_code(text: str) -> bool:
    """True when ``text`` is shaped like a short code rather than a long invite code."""
    parts = text.strip().replace(" ", "-").split("-")
    return len(parts) == 3 and parts[0].strip().isdigit()


def _check_word(word: str, column: dict[str, int], position: str) -> None:
    if word in column:
        return
    other = _EVEN if column is _ODD else _ODD
    if word in other:
        raise ShortCodeError(f"{word!r} is a word of the list, but never the {position} word "
                             "of a code: check the code again")
    shown = "".join(c if c.isprintable() else "?" for c in word)[:40]
    close = difflib.get_close_matches(word, list(column), n=1, cutoff=0.7)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ShortCodeError(f"{shown!r} is not one of the code words{hint}")
