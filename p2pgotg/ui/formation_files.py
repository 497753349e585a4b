"""Named formations: the shipped ones and the player's own, kept as text files under
`config_dir()/formations` and written atomically (a crash never leaves half a file)."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path

from p2pgotg.net.transport.paths import config_dir
from p2pgotg.rules import formation_names as shipped_names
from p2pgotg.rules import formation_text as shipped_text

_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


class FormationFileError(Exception):
    """A formation could not be read or written; `str()` is for the player."""


def user_dir() -> Path:
    return config_dir() / "formations"


def names() -> list[str]:
    """Every formation name: the player's own first, then the shipped ones not shadowed."""
    own = []
    folder = user_dir()
    if folder.is_dir():
        own = sorted(p.stem for p in folder.glob("*.txt") if _NAME.fullmatch(p.stem))
    return own + [n for n in shipped_names() if n not in own]


def read(name: str) -> str:
    """A formation's text: the player's file of that name, else the shipped one."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise FormationFileError(f"{name!r} is not a formation name (letters, digits, - and _)")
    path = user_dir() / f"{name}.txt"
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise FormationFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if name in shipped_names():
        return shipped_text(name)
    raise FormationFileError(f"no formation named {name!r}; there are: {', '.join(names())}")


def write(name: str, text: str) -> Path:
    """Save a formation under `name`, replacing one of that name; returns the path."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise FormationFileError(
            f"{name!r} cannot be a formation name: use 1-40 letters, digits, - or _"
        )
    folder = user_dir()
    path = folder / f"{name}.txt"
    tmp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"# {name}: saved by p2pgotg; rows as you see them, front row first\n")
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise FormationFileError(f"cannot save {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return path
