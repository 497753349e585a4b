"""Where a game's punched connection met the other player, kept so that either side can
punch back after a drop without anyone relaying a code (SPEC 3.8, "Coming back").

Two things make a punched game findable again. Each side punches from the same local
port every time it runs for that game (``stable_port``, from the join secret), so that
its public mapping, on an easy NAT whose router kept its mappings, is the one the other
side saw. And each side remembers the other's public address and port from the last
punched connection, in a small file of its own (never the transcript, which holds only
what SPEC 2.8 lists), so that a host run again punches back to the joiner at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
from pathlib import Path

from p2pgotg.reach.candidates import PUNCH, Candidate

FOLDER = "rendezvous"
#: The stable punching ports lie below the ephemeral ranges of Linux (32768 and up),
#: Windows and macOS (49152 and up), so that no outgoing connection of this computer
#: takes one by chance.
PORT_LOW, PORT_HIGH = 20000, 32767


def stable_port(secret: bytes, role: str) -> int:
    """The local port ``role`` punches from in the game of ``secret``: the same on every
    run, different for the two seats (both may run on one computer)."""
    digest = hashlib.sha256(b"p2pgotg/punch-port/v1" + role.encode() + secret).digest()
    return PORT_LOW + int.from_bytes(digest[:4], "big") % (PORT_HIGH - PORT_LOW + 1)


def _path(data_dir: Path, secret: bytes, role: str) -> Path:
    name = hashlib.sha256(b"p2pgotg/rendezvous/v1" + role.encode() + secret).hexdigest()
    return data_dir / FOLDER / name[:24]


def remember(data_dir: Path, secret: bytes, role: str, where: Candidate) -> None:
    """Keep ``where`` (the other side's public address and port) for ``role``'s game of
    ``secret``; written whole or not at all, readable only by this user. A failure to
    write only loses the shortcut: it is not raised."""
    path = _path(data_dir, secret, role)
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_suffix(".new")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(f"{where.address} {where.port}\n")
        os.replace(temporary, path)


def recall(data_dir: Path, secret: bytes, role: str) -> Candidate | None:
    """The address kept by ``remember``, or None (none kept, or the file is not one of
    ours: anything but an IP address and a port 1..65535 is ignored)."""
    try:
        words = _path(data_dir, secret, role).read_text().split()
    except (OSError, UnicodeError):
        return None
    if len(words) != 2 or not words[1].isdigit():
        return None
    try:
        address = str(ipaddress.ip_address(words[0]))
    except ValueError:
        return None
    port = int(words[1])
    return Candidate(PUNCH, address, port) if 1 <= port <= 65535 else None


def forget(data_dir: Path, secret: bytes, role: str) -> None:
    """The game is over: nothing to punch back to."""
    with contextlib.suppress(OSError):
        _path(data_dir, secret, role).unlink()
