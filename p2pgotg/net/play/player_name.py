"""Player names: a display label each player picks once, kept beside the keys, sent to the
other side in the session's `hi` and `ok` frames (SPEC 3.4) and saved in the transcript
(SPEC 2.8, 3.5); at a table the host tells every seat each seat's name (`names`, SPEC 3.4).
A name is unsigned and proves nothing: the other side shows it escaped, cut short, and
always with the key's short fingerprint, which is what identifies a player.

>>> clean_name("  Ana   Cruz ")
'Ana Cruz'
>>> shown_name("Bo\\x1b[2J"), shown_name(42), key_label(bytes(range(32)))
('Bo\\\\x1b[2J', None, 'key 000102030405')
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from p2pgotg.net.transport.paths import config_dir
from p2pgotg.protocol.printable import ELLIPSIS, controls_escaped, printable

NAME_FILE = "name"  # beside identity.pem
NAME_ENV = "P2PGOTG_NAME"  # a name for this run only (headless seats, tests)
MAX_NAME = 24  # characters a player may pick
SHOWN = 40  # characters of a peer's name shown (escapes included), the rest cut


class BadNameError(ValueError):
    """A name that cannot be used; `str()` says why, for the player."""


def clean_name(text: str) -> str:
    """The name as it is kept: spaces collapsed; refused (BadNameError) when empty, longer
    than MAX_NAME, or holding a character that does not print."""
    name = " ".join(text.split())
    if not name:
        raise BadNameError("a name needs at least one letter")
    if len(name) > MAX_NAME:
        raise BadNameError(f"a name has at most {MAX_NAME} characters ({len(name)} given)")
    if not name.isprintable():
        raise BadNameError("a name holds only characters that print (no control codes)")
    return name


def checked_name(value: object) -> str:
    """A name another side sent, judged as a name a player picks (`clean_name`); a value
    that is not text is refused too. BadNameError says why, never showing the value."""
    if not isinstance(value, str):
        raise BadNameError(f"a name is text, not {_what(value)}")
    return clean_name(value)


def _what(value: object) -> str:
    if value is None:
        return "nothing (nil)"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, bytes):
        return "bytes"
    return "an array" if isinstance(value, list | tuple) else "a map"


def name_path() -> Path:
    return config_dir() / NAME_FILE


def load_name() -> str | None:
    """The name picked on this account (None before one was picked, or when the file does
    not hold a usable one)."""
    try:
        return clean_name(name_path().read_text("utf-8"))
    except (OSError, UnicodeError, BadNameError):
        return None


def save_name(name: str) -> Path:
    """Keep `name` (cleaned; BadNameError when it cannot be one) beside the keys, replacing
    the file whole (a crash never leaves half a name)."""
    name = clean_name(name)
    path = name_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{NAME_FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(name + "\n", "utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return path


def shown_name(value: object) -> str | None:
    """A name the other side sent, made safe to show: a string, escaped and cut (SHOWN);
    None for anything else or an empty one. Never trusted."""
    if not isinstance(value, str) or not value.strip():
        return None
    return printable(" ".join(value.split()), SHOWN)


def saved_name(value: bytes | None) -> str | None:
    """A name as a transcript holds it: saved already escaped, and escaped once more
    against a file made by hand (escaping twice changes nothing), cut as `shown_name`."""
    if not value:
        return None
    text = controls_escaped(" ".join(value.decode("utf-8", "replace").split()))
    return text[:SHOWN] if len(text) <= SHOWN else text[:SHOWN - 1] + ELLIPSIS


def key_label(public_key: bytes) -> str:
    """A key's short fingerprint: `key ` and its first 12 hexadecimal digits (SPEC 3.5)."""
    return f"key {public_key.hex()[:12]}"


def saved_names(secrets: dict[str, bytes], owner: str, other: str) -> dict[str, str | None]:
    """Each role's name as a transcript's `secrets` records hold them (SPEC 2.8): the
    owner's `name` and the other side's `peer_name`, made safe to show."""
    return {owner: saved_name(secrets.get("name")), other: saved_name(secrets.get("peer_name"))}


def player_label(name: str | None, public_key: bytes | None, own_keys: set[bytes]) -> str:
    """`you` for a key of this account, else the name the side gave with its key's short
    fingerprint (`Ana (key 6f2b32fac51f)`)."""
    if public_key is not None and public_key in own_keys:
        return "you"
    return who(name, public_key)


def who(name: str | None, public_key: bytes | None) -> str:
    """`Ana (key 6f2b32fac51f)`, or the fingerprint alone when there is no name."""
    label = key_label(public_key) if public_key else None
    if name and label:
        return f"{name} ({label})"
    return name or label or "a player who never answered"
