"""Tor's control protocol (control-spec), the part p2pgotg uses: replies read line by line
into whole replies and events, authentication (none, COOKIE, SAFECOOKIE), ADD_ONION for
the host's service, and the few GETINFO answers it reads (SPEC 3.8).

A reply is lines ``CODE-text`` (more follows), ``CODE+text`` (a data block follows, ended
by a line with one dot) and one ``CODE text`` (the end). Code 650 is an asynchronous event
and may come between a command and its reply. Whatever answers on a control port may be
something else, so every line and reply is bounded and every answer checked.

>>> parser = ReplyParser()
>>> parser.feed(b'250-ServiceID=abc\\r\\n250 OK\\r\\n')
[Reply(code=250, lines=('ServiceID=abc', 'OK'), data=())]
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

MAX_LINE = 8192  # bytes: nothing p2pgotg asks for is longer
MAX_REPLY = 65536  # bytes in one reply, data blocks included
EVENT = 650
SERVER_TO_CONTROLLER = b"Tor safe cookie authentication server-to-controller hash"
CONTROLLER_TO_SERVER = b"Tor safe cookie authentication controller-to-server hash"
COOKIE_SIZE = 32
NONCE_SIZE = 32


class ControlError(Exception):
    """Tor refused a command, or what answered is not tor; the text says which."""


@dataclass(frozen=True)
class Reply:
    """One whole reply: its code, the text of each line, and each data block (in order)."""

    code: int
    lines: tuple[str, ...]
    data: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300

    def words(self) -> str:
        """The reply as tor said it, for a message: ``552 Unrecognized key``."""
        return f"{self.code} {' '.join(self.lines)}"


class ReplyParser:
    """Bytes from the control port in, whole replies out (events among them)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._lines: list[str] = []
        self._data: list[str] = []
        self._block: list[str] | None = None  # lines of a data block being read
        self._size = 0
        self._code: int | None = None

    def feed(self, data: bytes) -> list[Reply]:
        self._buffer += data
        replies = []
        while b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            reply = self._line(raw.rstrip(b"\r"))
            if reply is not None:
                replies.append(reply)
        if len(self._buffer) > MAX_LINE:
            raise ControlError(f"a line of more than {MAX_LINE} bytes: this is not tor")
        return replies

    def _line(self, raw: bytes) -> Reply | None:
        self._size += len(raw) + 2
        if len(raw) > MAX_LINE or self._size > MAX_REPLY:
            raise ControlError("an answer longer than any tor gives: this is not tor")
        try:
            line = raw.decode("ascii")
        except UnicodeDecodeError:
            raise ControlError("an answer that is not ASCII: this is not tor") from None
        if self._block is not None:
            if line == ".":
                self._data.append("\n".join(self._block))
                self._block = None
            else:
                self._block.append(line[1:] if line.startswith("..") else line)
            return None
        if len(line) < 4 or not line[:3].isdigit() or line[3] not in "- +":
            raise ControlError(f"{line[:60]!r} is not a control-port reply line: this is "
                               "not tor")
        code = int(line[:3])
        if self._code is not None and code != self._code:
            raise ControlError(f"a reply whose lines have codes {self._code} and {code}")
        self._code = code
        self._lines.append(line[4:])
        if line[3] == "+":
            self._block = []
            return None
        if line[3] == "-":
            return None
        reply = Reply(code, tuple(self._lines), tuple(self._data))
        self._lines, self._data, self._code, self._size = [], [], None, 0
        return reply


_TOKEN = re.compile(r'([A-Za-z0-9_/.-]+)=("(?:[^"\\]|\\.)*"|\S*)')


def _unquote(value: str) -> str:
    if not value.startswith('"'):
        return value
    return re.sub(r"\\(.)", r"\1", value[1:-1])


def keywords(text: str) -> dict[str, str]:
    """The ``KEY=VALUE`` and ``KEY="quoted"`` pairs of a reply line."""
    return {key: _unquote(value) for key, value in _TOKEN.findall(text)}


def checked(reply: Reply, what: str) -> Reply:
    """The reply if tor accepted the command, else ControlError naming it."""
    if not reply.ok:
        raise ControlError(f"tor refused {what}: {reply.words()}")
    return reply


# -- authentication ------------------------------------------------------------------------

@dataclass(frozen=True)
class ProtocolInfo:
    methods: frozenset[str]
    cookie_file: str | None
    version: str | None


def protocol_info(reply: Reply) -> ProtocolInfo:
    """PROTOCOLINFO's answer: how to authenticate, and tor's version."""
    checked(reply, "PROTOCOLINFO")
    if not reply.lines or not reply.lines[0].startswith("PROTOCOLINFO"):
        raise ControlError("the answer to PROTOCOLINFO is not tor's: this is not tor")
    methods: frozenset[str] = frozenset()
    cookie = version = None
    for line in reply.lines[1:]:
        if line.startswith("AUTH "):
            found = keywords(line)
            methods = frozenset(found.get("METHODS", "").split(","))
            cookie = found.get("COOKIEFILE")
        elif line.startswith("VERSION "):
            version = keywords(line).get("Tor")
    if not methods:
        raise ControlError("tor's PROTOCOLINFO names no way to authenticate")
    return ProtocolInfo(methods, cookie, version)


def safecookie(cookie: bytes, client_nonce: bytes, server_nonce: bytes) -> tuple[bytes, bytes]:
    """(the hash tor must show, the hash we answer with) of SAFECOOKIE authentication."""
    message = cookie + client_nonce + server_nonce
    return (hmac.new(SERVER_TO_CONTROLLER, message, hashlib.sha256).digest(),
            hmac.new(CONTROLLER_TO_SERVER, message, hashlib.sha256).digest())


def auth_challenge(reply: Reply) -> tuple[bytes, bytes]:
    """(server hash, server nonce) from AUTHCHALLENGE's answer."""
    checked(reply, "AUTHCHALLENGE")
    found = keywords(reply.lines[0]) if reply.lines else {}
    try:
        server_hash = bytes.fromhex(found["SERVERHASH"])
        server_nonce = bytes.fromhex(found["SERVERNONCE"])
    except (KeyError, ValueError):
        raise ControlError("tor's AUTHCHALLENGE answer lacks its hash or nonce") from None
    if len(server_hash) != 32 or len(server_nonce) != NONCE_SIZE:
        raise ControlError("tor's AUTHCHALLENGE answer has a hash or nonce of the wrong size")
    return server_hash, server_nonce


# -- the onion service ---------------------------------------------------------------------

def add_onion(expanded_key: bytes, virtual_port: int, target: str) -> str:
    """ADD_ONION with our own key, so the address is known before tor answers; the service
    lives as long as this control connection."""
    if len(expanded_key) != 64:
        raise ValueError("ADD_ONION's ED25519-V3 key is the 64-byte expanded secret key")
    blob = base64.b64encode(expanded_key).decode("ascii")
    return f"ADD_ONION ED25519-V3:{blob} Flags=DiscardPK Port={virtual_port},{target}"


def service_id(reply: Reply) -> str:
    """The address (without ``.onion``) in ADD_ONION's answer."""
    checked(reply, "to publish the onion service (ADD_ONION)")
    for line in reply.lines:
        if line.startswith("ServiceID="):
            return line.split("=", 1)[1]
    raise ControlError("tor's answer to ADD_ONION has no ServiceID")


def hs_desc_uploaded(event: Reply) -> str | None:
    """The address of an HS_DESC UPLOADED event (our descriptor reached a directory)."""
    parts = event.lines[0].split() if event.code == EVENT and event.lines else []
    if len(parts) >= 3 and parts[0] == "HS_DESC" and parts[1] == "UPLOADED":
        return parts[2]
    return None


# -- GETINFO -------------------------------------------------------------------------------

def getinfo(reply: Reply, key: str) -> str:
    """The value of ``key`` in a GETINFO answer (one line or a data block)."""
    checked(reply, f"GETINFO {key}")
    blocks = iter(reply.data)
    for line in reply.lines:
        if line.startswith(key + "="):
            value = line[len(key) + 1:]
            return next(blocks, "") if value == "" and reply.data else value
    raise ControlError(f"tor's GETINFO answer has no {key}")


@dataclass(frozen=True)
class Bootstrap:
    """How far tor is in reaching the Tor network (GETINFO status/bootstrap-phase)."""

    progress: int
    tag: str
    summary: str
    warning: str | None = None

    @property
    def done(self) -> bool:
        return self.progress >= 100

    def __str__(self) -> str:
        text = f"{self.progress}%: {self.summary or self.tag}"
        return f"{text}; {self.warning}" if self.warning else text


def bootstrap(value: str) -> Bootstrap:
    found = keywords(value)
    try:
        progress = int(found["PROGRESS"])
    except (KeyError, ValueError):
        raise ControlError(f"tor's bootstrap status {value[:80]!r} has no progress") from None
    if not 0 <= progress <= 100:
        raise ControlError(f"tor's bootstrap progress {progress} is not a percentage")
    warning = found.get("WARNING") if value.startswith("WARN") else None
    return Bootstrap(progress, found.get("TAG", ""), found.get("SUMMARY", ""), warning)


def listeners(value: str) -> list[tuple[str, int]]:
    """The addresses of GETINFO net/listeners/socks: ``"127.0.0.1:9050" "[::1]:9050"``."""
    found = []
    for item in re.findall(r'"((?:[^"\\]|\\.)*)"', value):
        host, _, port = item.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if port.isdigit() and 1 <= int(port) <= 0xFFFF and host:
            found.append((host, int(port)))
    return found
