"""The named formations shipped with the package (`formations/*.txt`)."""

from __future__ import annotations

from importlib import resources

from p2pgotg.rules.board import Side
from p2pgotg.rules.errors import InvalidNotationError
from p2pgotg.rules.setup import Setup


def formation_names() -> list[str]:
    root = resources.files("p2pgotg.rules") / "formations"
    return sorted(p.name[:-4] for p in root.iterdir() if p.name.endswith(".txt"))


def formation_text(name: str) -> str:
    if name not in formation_names():
        raise InvalidNotationError(
            f"no formation named {name!r}; shipped: {', '.join(formation_names())}"
        )
    return (resources.files("p2pgotg.rules") / "formations" / f"{name}.txt").read_text("utf-8")


def load_formation(name: str, side: Side) -> Setup:
    return Setup.from_formation(side, formation_text(name))
