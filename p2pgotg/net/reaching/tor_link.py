"""The two connections p2pgotg makes to its tor: the control connection (authenticate,
publish the host's onion service, read how far tor has got) and a SOCKS5 connection to an
onion address, over which the game's TLS runs unchanged (SPEC 3.8).

Whatever answers on the port may not be tor: every read is bounded in size and time, and
everything it says is escaped before anyone sees it.
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

import trio

from p2pgotg.net.transport._stream import STREAM_ERRORS, close_quietly
from p2pgotg.protocol.printable import printable
from p2pgotg.reach import tor_control, tor_socks
from p2pgotg.reach.tor_control import Bootstrap, ControlError, Reply
from p2pgotg.reach.tor_onion import SUFFIX, expanded_key, onion_address, public_key_of

COMMAND_TIMEOUT = 10.0  # seconds for tor to answer one control command
SOCKS_TIMEOUT = 120.0  # seconds for tor to open one connection to an onion service


class TorFailed(Exception):
    """Tor could not do what was asked; the text says what happened (shown to the user)."""


class TorControl:
    """An authenticated control connection. Commands run one at a time; the events that
    arrive meanwhile are kept for ``wait_event``."""

    def __init__(self, stream: trio.abc.Stream, where: str) -> None:
        self._stream = stream
        self.where = where
        self._parser = tor_control.ReplyParser()
        self._replies: list[Reply] = []
        self._events: list[Reply] = []
        self._lock = trio.Lock()

    @classmethod
    async def open(cls, where: tuple[str, int] | Path) -> TorControl:
        """Connect to a control port (host, port) or control socket (a path)."""
        shown = str(where) if isinstance(where, Path) else f"{where[0]}:{where[1]}"
        try:
            with trio.fail_after(COMMAND_TIMEOUT):
                if isinstance(where, Path):
                    stream: trio.abc.Stream = await trio.open_unix_socket(str(where))
                else:
                    stream = await trio.open_tcp_stream(*where)
        except trio.TooSlowError:
            raise TorFailed(f"no tor control port answers at {shown}") from None
        except OSError as exc:
            raise TorFailed(f"no tor control port answers at {shown} "
                            f"({exc.strerror or exc})") from None
        return cls(stream, shown)

    async def _next(self) -> Reply:
        while not self._replies:
            try:
                data = await self._stream.receive_some(4096)
            except STREAM_ERRORS as exc:
                raise TorFailed(f"the tor control connection broke ({exc})") from None
            if not data:
                raise TorFailed("tor closed its control connection")
            try:
                self._replies.extend(self._parser.feed(bytes(data)))
            except ControlError as exc:
                raise TorFailed(f"{self.where}: {printable(str(exc), 200)}") from None
        return self._replies.pop(0)

    async def command(self, line: str, what: str = "") -> Reply:
        """Send one command and return its reply (events meanwhile are kept)."""
        async with self._lock:
            try:
                with trio.fail_after(COMMAND_TIMEOUT):
                    await self._stream.send_all(line.encode("ascii") + b"\r\n")
                    while True:
                        reply = await self._next()
                        if reply.code != tor_control.EVENT:
                            return reply
                        self._events.append(reply)
            except trio.TooSlowError:
                name = what or line.split()[0]
                raise TorFailed(f"tor did not answer {name} within {COMMAND_TIMEOUT:g} s") \
                    from None
            except STREAM_ERRORS as exc:
                raise TorFailed(f"the tor control connection broke ({exc})") from None

    async def checked(self, line: str, what: str = "") -> Reply:
        """``command``, with tor's refusal raised as TorFailed in its own words."""
        reply = await self.command(line, what)
        try:
            return tor_control.checked(reply, what or line.split()[0])
        except ControlError as exc:
            raise TorFailed(printable(str(exc), 300)) from None

    async def wait_event(self, timeout: float) -> Reply | None:
        """The next asynchronous event, or None after ``timeout`` seconds."""
        async with self._lock:
            if self._events:
                return self._events.pop(0)
            with trio.move_on_after(timeout):
                while True:
                    reply = await self._next()
                    if reply.code == tor_control.EVENT:
                        return reply
                    raise TorFailed(f"tor sent a reply nobody asked for: "
                                    f"{printable(reply.words(), 100)}")
            return None

    async def authenticate(self) -> str | None:
        """Authenticate the way tor offers, none or SAFECOOKIE; tor's version. Never plain
        COOKIE: it would send the contents of whatever file the port names to whatever
        answers there, where SAFECOOKIE has it prove it knows the cookie first."""
        try:
            info = tor_control.protocol_info(await self.command("PROTOCOLINFO 1"))
        except ControlError as exc:
            raise TorFailed(f"{self.where}: {printable(str(exc), 200)}") from None
        if "NULL" in info.methods:
            await self.checked("AUTHENTICATE", "to let us in")
            return info.version
        if "SAFECOOKIE" not in info.methods or not info.cookie_file:
            raise TorFailed(
                f"the tor at {self.where} asks for a password or a plain cookie, which "
                "p2pgotg does not give: turn on CookieAuthentication in its torrc (tor "
                "then offers SAFECOOKIE), or let p2pgotg start its own tor (--tor auto)")
        cookie = _read_cookie(Path(info.cookie_file))
        ours = secrets.token_bytes(tor_control.NONCE_SIZE)
        try:
            server_hash, server_nonce = tor_control.auth_challenge(
                await self.command(f"AUTHCHALLENGE SAFECOOKIE {ours.hex()}"))
        except ControlError as exc:
            raise TorFailed(printable(str(exc), 200)) from None
        expected, answer = tor_control.safecookie(cookie, ours, server_nonce)
        if not hmac.compare_digest(expected, server_hash):
            raise TorFailed(f"what answers at {self.where} does not know tor's cookie: "
                            "it is not the tor that wrote it")
        await self.checked(f"AUTHENTICATE {answer.hex()}", "our cookie")
        return info.version

    async def bootstrap(self) -> Bootstrap:
        reply = await self.checked("GETINFO status/bootstrap-phase")
        try:
            return tor_control.bootstrap(tor_control.getinfo(reply, "status/bootstrap-phase"))
        except ControlError as exc:
            raise TorFailed(printable(str(exc), 200)) from None

    async def socks_address(self) -> tuple[str, int]:
        """Where tor takes SOCKS connections (its first TCP SocksPort)."""
        reply = await self.checked("GETINFO net/listeners/socks")
        try:
            found = tor_control.listeners(tor_control.getinfo(reply, "net/listeners/socks"))
        except ControlError as exc:
            raise TorFailed(printable(str(exc), 200)) from None
        if not found:
            raise TorFailed(f"the tor at {self.where} has no SocksPort: add `SocksPort 9050` "
                            "to its torrc")
        return found[0]

    async def add_onion(self, seed: bytes, virtual_port: int, target: str) -> str:
        """Publish the service of this 32-byte key seed, forwarding ``virtual_port`` to
        ``target`` (HOST:PORT); its address, checked against the key."""
        await self.checked("SETEVENTS HS_DESC", "to tell us when the service is published")
        reply = await self.command(tor_control.add_onion(expanded_key(seed), virtual_port,
                                                         target), "ADD_ONION")
        try:
            service = tor_control.service_id(reply)
        except ControlError as exc:
            raise TorFailed(printable(str(exc), 300)) from None
        address = onion_address(public_key_of(seed))
        if service + SUFFIX != address:
            raise TorFailed(f"tor published {printable(service, 80)}{SUFFIX}, not the address "
                            f"of our key ({address})")
        return address

    async def aclose(self) -> None:
        await close_quietly(self._stream)


def _read_cookie(path: Path) -> bytes:
    """The cookie in the file the control port named (the name is its word: escaped)."""
    shown = printable(str(path), 200)
    try:
        cookie = path.read_bytes()
    except PermissionError:
        raise TorFailed(
            f"tor's cookie file {shown} is not readable by you: add yourself to the group "
            "that may read it (Debian: sudo adduser $USER debian-tor, then log in again), "
            "or let p2pgotg start its own tor (--tor auto)") from None
    except OSError as exc:
        raise TorFailed(f"tor's cookie file {shown} cannot be read ({exc.strerror})") from None
    if len(cookie) != tor_control.COOKIE_SIZE:
        raise TorFailed(f"tor's cookie file {shown} is not a cookie "
                        f"({len(cookie)} bytes, not {tor_control.COOKIE_SIZE})")
    return cookie


async def _exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise tor_socks.SocksError("the SOCKS server closed the connection")
        data += chunk
    return data


async def connect_through(socks: tuple[str, int], host: str, port: int,
                          timeout: float = SOCKS_TIMEOUT) -> trio.SocketStream:
    """A TCP stream to ``host:port`` through the SOCKS5 proxy at ``socks`` (tor resolves
    the name), on circuits of its own: a fresh random password is tor's mark of isolation,
    so nothing of an earlier attempt (a rendezvous left hanging) is reused. SocksError
    says why not; ``final`` when trying again cannot help."""
    try:
        tcp = await trio.open_tcp_stream(*socks)
    except OSError as exc:
        raise tor_socks.SocksError(f"tor's SOCKS port {socks[0]}:{socks[1]} does not answer "
                                   f"({exc.strerror or exc})") from None
    try:
        with trio.fail_after(timeout):
            await tcp.send_all(tor_socks.GREETING)
            method = tor_socks.chosen_method(await _exactly(tcp, tor_socks.METHOD_REPLY_SIZE))
            if method == tor_socks.USERNAME_PASSWORD:
                await tcp.send_all(tor_socks.credentials("p2pgotg", secrets.token_hex(16)))
                tor_socks.check_credentials_reply(
                    await _exactly(tcp, tor_socks.AUTH_REPLY_SIZE))
            await tcp.send_all(tor_socks.connect_request(host, port))
            head = await _exactly(tcp, tor_socks.REPLY_HEAD_SIZE)
            rest = await _exactly(tcp, tor_socks.reply_size(head) - len(head))
            tor_socks.parse_reply(head + rest)
    except trio.TooSlowError:
        await close_quietly(tcp)
        raise tor_socks.SocksError(f"no connection within {timeout:g} s", 0x06) from None
    except STREAM_ERRORS as exc:
        await close_quietly(tcp)
        raise tor_socks.SocksError(f"the SOCKS connection broke ({exc})", 0x01) from None
    except BaseException:
        await close_quietly(tcp)
        raise
    return tcp
