"""The runner's machinery: the implementation under test as a host process, one TLS
connection to it, and a scripted joiner that plays honestly until its case says otherwise.

Everything the runner learns about the implementation comes from three places: the bytes
on the connection (game messages, `error` and `bye` control frames, the connection
closing), the host's standard output (the `invite:` line; later lines are kept for the
report), and its exit status. Nothing here reads the implementation's files.

The scripted joiner is p2pgotg's own sans-IO peer of the game the case plays (`GotgPeer` for
Game of the Generals, `TowersPeer` for Towers, SPEC 4.11), driven by p2pgotg's bot for that
game, with hooks to replace one of its messages (`intercept`), to send a forged one
(`send_cheat`), or to stay silent. Once it has cheated its own state no longer matches what
it sent, so it stops feeding the host's messages to its peer and only watches the wire.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import os
import random
import re
import shlex
import signal
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import msgpack
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import sign
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.gotg.peer import GotgPeer, _OwnSetup
from p2pgotg.games.towers.bot_seat import TowersBotSeat
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules.game import Game as TowersGame
from p2pgotg.games.towers.rules.options import RuleOptions as TowersRuleOptions
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.errors import FrameTooLargeError, NetError
from p2pgotg.net.transport.framing import KEEPALIVE, MAX_FRAME, FrameDecoder, encode_frame
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    open_pinned_connection,
    peer_certificate,
)
from p2pgotg.players.bot_seat import BotSeat
from p2pgotg.protocol import HOST, JOINER, Phase, RemoteProtocolError
from p2pgotg.protocol.envelope import Envelope, seal
from p2pgotg.protocol.messages import Body
from p2pgotg.protocol.peer import Peer
from p2pgotg.protocol.wire import WireError
from p2pgotg.rules import Game, Move, Rank, RuleOptions, Side
from p2pgotg.testing.forging import forge, next_body

SESSION_VERSION = 1
LOOPBACK = "127.0.0.1"
KEEPALIVE_EVERY = 2.0  # seconds; the spec's default is at least every 5 s


# -- outcomes of a step --------------------------------------------------------------------

class Fail(Exception):
    """The implementation did not do what the case requires; `str()` says what it did."""


class Missed(Exception):
    """The game never reached the case's moment (e.g. it ended first): run the case again."""


class Refused(Exception):
    """The host sent an `error` control frame."""

    def __init__(self, reason: str, frame: dict) -> None:
        super().__init__(reason)
        self.reason = reason
        self.frame = frame


class Closed(Exception):
    """The host closed the connection (or it broke)."""


# -- session control frames (SPEC 3.4) -----------------------------------------------------

def control(kind: str, version: int = SESSION_VERSION, **fields: Any) -> bytes:
    return msgpack.packb({"ctl": kind, "v": version, **fields}, use_bin_type=True)


def parse_control(frame: bytes) -> dict | None:
    """The control frame's map, or None when the frame is a game message."""
    try:
        value = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 - any undecodable frame is simply not a control frame
        return None
    if isinstance(value, dict) and isinstance(value.get("ctl"), str):
        return value
    return None


def names_rule(reason: str, rule: str) -> bool:
    """True when `reason` mentions `rule` as a whole word (rule names contain `-`)."""
    return re.search(rf"(?<![\w-]){re.escape(rule)}(?![\w-])", reason) is not None


def message_type(data: bytes) -> str | None:
    """The `t` of a signed game message, without checking anything else."""
    try:
        return Envelope.decode(data).body().type
    except (WireError, ValueError):
        return None


def body_of(data: bytes) -> Body:
    """The body of a message known to be well formed (one of ours, or a checked one)."""
    return Envelope.decode(data).body()


def free_port() -> int:
    """A TCP port free on loopback right now (the host binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


# -- the implementation under test ---------------------------------------------------------

_INVITE = re.compile(r"^\s*invite:\s*(\S+)")


class HostProcess:
    """The implementation under test, started from the command template; its output is
    collected as it comes. Always `stop()` it: it runs in its own process group, which is
    killed as a whole."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.argv = argv
        self.env = env
        self.proc: trio.Process | None = None
        self.stdout_lines: list[str] = []
        self.stderr = bytearray()
        self.invites: list[str] = []
        self._invite_seen = trio.Event()
        self._stdout_done = trio.Event()
        self.exit_time: float | None = None

    async def start(self, nursery: trio.Nursery) -> None:
        try:
            self.proc = await trio.lowlevel.open_process(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=self.env, start_new_session=True)
        except OSError as exc:
            raise Fail(f"cannot start the host command {shlex.join(self.argv)}: {exc}") from None
        nursery.start_soon(self._read_stdout)
        nursery.start_soon(self._read_stderr)

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        pending = b""
        try:
            while True:
                chunk = await self.proc.stdout.receive_some(65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    self._line(raw.decode("utf-8", "replace").rstrip("\r"))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        if pending:
            self._line(pending.decode("utf-8", "replace"))
        self._stdout_done.set()
        self._invite_seen.set()  # wake a waiter: there will be no invite now

    def _line(self, line: str) -> None:
        self.stdout_lines.append(line)
        found = _INVITE.match(line)
        if found:
            self.invites.append(found.group(1))
            self._invite_seen.set()

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        try:
            while chunk := await self.proc.stderr.receive_some(65536):
                if len(self.stderr) < 1 << 20:
                    self.stderr += chunk
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def invite(self, timeout: float) -> Invite:
        """The first invite the host printed that points at loopback (any invite's pin and
        secret otherwise; the runner connects to loopback only)."""
        with trio.move_on_after(timeout):
            await self._invite_seen.wait()
        if not self.invites:
            status = self.returncode
            if status is None and self._stdout_done.is_set():
                status = await self.wait_exit(2.0)
            if status is not None or self._stdout_done.is_set():
                raise Fail(f"the host exited (status {status}) before printing an invite"
                           f"{self._stderr_hint()}")
            raise Fail(f"the host printed no `invite:` line within {timeout:g} s")
        await trio.sleep(0.05)  # the other codes are printed together
        decoded: list[Invite] = []
        for code in self.invites:
            try:
                decoded.append(Invite.decode(code))
            except NetError as exc:
                raise Fail(f"the host printed an invite code that does not decode "
                           f"(SPEC 3.3): {code!r}: {exc}") from None
        for invite in decoded:
            try:
                if ipaddress.ip_address(invite.address).is_loopback:
                    return invite
            except ValueError:
                continue
        return decoded[0]

    def _stderr_hint(self) -> str:
        text = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return f": {text[-1]}" if text else ""

    @property
    def returncode(self) -> int | None:
        if self.proc is None:
            return None
        return self.proc.poll()

    async def wait_exit(self, timeout: float) -> int | None:
        """The exit status, or None if the host is still running after `timeout`."""
        if self.proc is None:
            return None
        with trio.move_on_after(timeout):
            await self.proc.wait()
        return self.proc.returncode

    async def stop(self) -> None:
        """Kill the host's process group (whatever state it is in) and reap it."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with trio.move_on_after(10) as scope:
            scope.shield = True
            await self.proc.wait()

    def output_tail(self, n: int = 12) -> list[str]:
        return self.stdout_lines[-n:]

    def stderr_tail(self, n: int = 12) -> list[str]:
        return self.stderr.decode("utf-8", "replace").splitlines()[-n:]


# -- one connection ------------------------------------------------------------------------

class Conn:
    """A pinned TLS connection to the host, framed as SPEC 3.2 says, with keepalives. A
    reader task queues what arrives: ("frame", bytes), ("closed", why), ("oversized", why)."""

    def __init__(self, stream: trio.SSLStream) -> None:
        self.stream = stream
        self.fingerprint = certificate_fingerprint(peer_certificate(stream))
        self._decoder = FrameDecoder(MAX_FRAME)
        self._lock = trio.Lock()
        self._in, self._out = trio.open_memory_channel[tuple[str, Any]](math.inf)
        self._scope = trio.CancelScope()
        self._last_sent = trio.current_time()
        self.closed = False

    @classmethod
    async def open(cls, nursery: trio.Nursery, address: str, port: int, pin: bytes) -> Conn:
        try:
            stream = await open_pinned_connection(address, port, pin, connect_timeout=5.0,
                                                  handshake_timeout=5.0)
        except NetError as exc:
            raise Fail(f"cannot connect to the host: {exc.user_message}") from None
        conn = cls(stream)
        nursery.start_soon(conn._run)
        return conn

    async def _run(self) -> None:
        with self._scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._keepalive)
                await self._reader()
                nursery.cancel_scope.cancel()

    async def _reader(self) -> None:
        try:
            while True:
                data = await self.stream.receive_some(MAX_FRAME + 4)
                if not data:
                    self._in.send_nowait(("closed", "the host closed the connection"))
                    return
                self._decoder.receive_data(data)
                while (frame := self._decoder.next_frame()) is not None:
                    if frame:  # b"" is a keepalive
                        self._in.send_nowait(("frame", frame))
        except FrameTooLargeError as exc:
            self._in.send_nowait(("oversized", f"the host sent an oversized frame: {exc}"))
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self._in.send_nowait(("closed", f"the connection broke ({type(exc).__name__})"))

    async def _keepalive(self) -> None:
        while True:
            await trio.sleep_until(self._last_sent + KEEPALIVE_EVERY)
            if trio.current_time() >= self._last_sent + KEEPALIVE_EVERY:
                try:
                    await self.send_raw(KEEPALIVE)
                except Closed:
                    return

    async def send_raw(self, data: bytes) -> None:
        async with self._lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise Closed(f"sending failed: the connection is closed ({exc})") from None
            self._last_sent = trio.current_time()

    async def send(self, payload: bytes) -> None:
        await self.send_raw(encode_frame(payload))

    async def receive(self, timeout: float) -> bytes | None:
        """The next frame; None after `timeout`; raises Closed when the host closed."""
        with trio.move_on_after(max(0.0, timeout)):
            kind, value = await self._out.receive()
            if kind == "frame":
                return value
            self.closed = True
            self._in.send_nowait((kind, value))  # stays closed for later calls
            raise Closed(value)
        return None

    async def close(self) -> None:
        """Close from our side, at once (no goodbye)."""
        self._scope.cancel()
        await trio.aclose_forcefully(self.stream)


async def expect_refusal(conn: Conn, within: float = 5.0) -> dict:
    """An `error` control frame, then the connection closed: the frame."""
    deadline = trio.current_time() + within
    while True:
        try:
            frame = await conn.receive(deadline - trio.current_time())
        except Closed as exc:
            raise Fail(f"the connection closed without an error frame ({exc})") from None
        if frame is None:
            raise Fail(f"no error frame within {within:g} s")
        ctl = parse_control(frame)
        if ctl is None:
            raise Fail("a game message came where an error frame was due")
        if ctl["ctl"] == "error":
            if ctl.get("v") != SESSION_VERSION:
                raise Fail(f"the error frame is not session version 1: {ctl!r}")
            break
        raise Fail(f"a `{ctl['ctl']}` frame came where an error frame was due")
    await expect_closed(conn, within=3.0, after="its error frame")
    return ctl


async def expect_closed(conn: Conn, within: float, after: str) -> None:
    deadline = trio.current_time() + within
    while True:
        try:
            frame = await conn.receive(deadline - trio.current_time())
        except Closed:
            return
        if frame is None:
            raise Fail(f"the host did not close the connection within {within:g} s "
                       f"after {after}")


# -- the scripted joiner -------------------------------------------------------------------

T = TypeVar("T")


def present(value: T | None, missing: str) -> T:
    """`value`, which a case script reads only once it exists (else a bug in the script)."""
    if value is None:
        raise RuntimeError(missing)
    return value


Until = Callable[[Any], Any]  # takes the case's joiner (a BaseJoiner subclass)
Policy = Callable[[Any], Any]  # takes the joiner's peer
Interceptor = Callable[[Any, bytes], list[bytes]]


def silent(peer: Peer) -> None:
    """A policy that never acts (automatic duties still go out)."""


@dataclass
class BaseJoiner:
    """A joiner that plays honestly (p2pgotg's peer and bot of one game) until its case
    cheats: what every game's joiner does with the connection and the chain. A game's
    joiner (`Joiner`, `TowersJoiner`) adds how it sits down and what its case scripts read.
    """

    #: The `rules` the host's `ok` must name (SPEC 3.4): None for Game of the Generals,
    #: whose `ok` leaves it out.
    RULES: ClassVar[str | None] = None

    conn: Conn
    key: Ed25519PrivateKey
    peer: Any  # the game's Peer subclass
    seat: Any  # the game's bot seat: `step(peer)` gives its next action, or None
    expected: Any  # the rule options the host must propose
    host_messages: list[bytes] = field(default_factory=list)  # every game message received
    host_byes: list[int] = field(default_factory=list)  # the `have` of each bye received
    sent: list[bytes] = field(default_factory=list)  # game messages sent, resends excluded
    cheated: bool = False
    bye_sent: int | None = None
    _intercepts: dict[str, Interceptor] = field(default_factory=dict)

    @classmethod
    def seated(cls, conn: Conn, key: Ed25519PrivateKey, rng: random.Random,
               expected: Any) -> BaseJoiner:
        """A new joiner of this game on `conn`, with `key` and its bot drawing from `rng`."""
        raise NotImplementedError

    def admitted(self, ok: dict) -> None:
        """Check the host's `ok` for a new game: it names the game the host plays (3.4)."""
        if self.RULES is not None and ok.get("rules") != self.RULES:
            raise Fail(f"the host's `ok` does not name the game it hosts ({self.RULES!r}, "
                       f"SPEC 3.4): {ok!r}")

    # -- reading the state --------------------------------------------------------------

    @property
    def flow(self) -> Any:
        return self.peer.flow

    @property
    def game_id(self) -> bytes | None:
        return self.peer.flow.game_id

    @property
    def gid(self) -> bytes:
        return present(self.peer.flow.game_id, "no game id yet")

    # -- sending ------------------------------------------------------------------------

    def intercept(self, type_: str, replace: Interceptor) -> None:
        """The next message of `type_` our peer wants to send is replaced by what
        `replace(joiner, data)` returns (nothing: withheld). That is the cheat."""
        self._intercepts[type_] = replace

    async def flush(self) -> None:
        """Send what our peer has to send (unless we cheated: then it is frozen)."""
        for data in self.peer.data_to_send():
            if self.cheated:
                continue
            replace = self._intercepts.pop(message_type(data) or "", None)
            if replace is not None:
                self.cheated = True
                for forged in replace(self, data):
                    await self._send(forged)
                continue
            await self._send(data)

    async def _send(self, data: bytes) -> None:
        await self.conn.send(data)
        self.sent.append(data)

    async def send_honest(self, datas: list[bytes]) -> None:
        for data in datas:
            await self._send(data)

    async def send_cheat(self, *datas: bytes) -> None:
        """Send forged messages; from now on our peer is frozen."""
        self.cheated = True
        for data in datas:
            await self._send(data)

    def produce(self, action: Callable[[Any], Any]) -> list[bytes]:
        """Run an action on our peer and hand back its messages without sending them."""
        action(self.peer)
        return self.peer.data_to_send()

    def forge(self, type_: str, fields: dict, key: Ed25519PrivateKey | None = None,
              **chain: Any) -> bytes:
        """A message signed with our key saying whatever the case wants (`forging.forge`:
        `record=True` counts it as sent by our peer), or with another `key`: then it
        proves nothing about us (SPEC 2.3), and only its chain fields are our next
        message's (`forging.next_body`)."""
        if key is None:
            return forge(self.peer, type_, fields, **chain)
        return seal(key, next_body(self.peer, type_, fields, **chain)).encode()

    def resign_body(self, data: bytes, type_: str | None = None, drop: tuple[str, ...] = (),
                    **changes: Any) -> bytes:
        """One of our messages re-signed with its type or fields changed, same chain."""
        body = Envelope.decode(data).body()
        fields = {k: v for k, v in body.fields.items() if k not in drop}
        fields.update(changes)
        return seal(self.key, Body(type_ or body.type, body.seq, body.prev, body.ack,
                                   body.game, fields)).encode()

    def sign_raw(self, body: dict) -> bytes:
        """An envelope around any msgpack body, correctly signed (schema not checked)."""
        raw = msgpack.packb(body, use_bin_type=True)
        return msgpack.packb({"body": raw, "sig": sign(self.key, raw)}, use_bin_type=True)

    def forge_next(self, type_: str, fields: dict) -> bytes:
        """After a cheat: a message that follows what we really sent (not what our frozen
        peer believes), acknowledging the host's last message."""
        prev = Envelope.decode(self.sent[-1]).hash if self.sent else bytes(32)
        ack = Envelope.decode(self.host_messages[-1]).hash if self.host_messages else bytes(32)
        return forge(self.peer, type_, fields, seq=len(self.sent), prev=prev, ack=ack)

    def chain_fields(self) -> dict:
        """seq, prev, ack and game as our next honest message would carry them."""
        flow = self.flow
        hashes = flow.senders[HOST].hashes
        return {"seq": flow.next_seq(JOINER), "prev": flow.last_hash(JOINER),
                "ack": hashes[-1] if hashes else bytes(32), "game": flow.game_id}

    def held(self) -> int:
        """How many of the host's messages we hold (all we received, once we cheated)."""
        if self.cheated:
            return len(dict.fromkeys(self.host_messages))
        return len(self.flow.senders[HOST].hashes)

    async def say_bye(self) -> None:
        have = self.held()
        await self.conn.send(control("bye", have=have))
        self.bye_sent = have

    # -- receiving ----------------------------------------------------------------------

    async def pump(self, timeout: float, waiting_for: str) -> bytes | None:
        """Take one frame from the host and act on it. Returns a game message's bytes
        (None for a control frame); raises Refused, Closed, or Fail on a timeout."""
        frame = await self.conn.receive(timeout)
        if frame is None:
            raise Fail(f"nothing came within the time allowed while waiting for {waiting_for}")
        ctl = parse_control(frame)
        if ctl is not None:
            if ctl["ctl"] == "error":
                raise Refused(str(ctl.get("reason", "")), ctl)
            if ctl["ctl"] == "bye":
                have = ctl.get("have")
                if isinstance(have, int) and not isinstance(have, bool):
                    self.host_byes.append(have)
            return None
        self.host_messages.append(frame)
        if self.cheated:
            return frame
        try:
            self.peer.receive(frame)
        except RemoteProtocolError as exc:
            raise Fail(f"the implementation's message broke the protocol: {exc}") from None
        self._check_host_hello()
        await self.flush()
        return frame

    def _check_host_hello(self) -> None:
        hello = self.flow.hellos.get(HOST)
        if hello is None or self.flow.hellos.get(JOINER) is not None \
                or self.flow.options is None:
            return
        if hello["tls"] != self.conn.fingerprint:
            raise Fail("the host's hello carries a `tls` fingerprint that is not the one of "
                       "the certificate it showed (SPEC 3.1)")
        if self.flow.options != self.expected:
            raise Fail(f"the host proposed {self.flow.options.describe()}, not the rule "
                       f"options the runner asked for ({self.expected.describe()})")

    async def play(self, until: Until, *, timeout: float = 20.0, waiting_for: str = "",
                   policy: Policy | None = None, allow_end: bool = False) -> Any:
        """Play (our bot, or `policy`) until `until(self)` is truthy; return that value.
        Raises Missed when the game ends first (unless `allow_end`)."""
        deadline = trio.current_time() + timeout
        act = self.seat.step if policy is None else policy
        what = waiting_for or getattr(until, "__doc__", None) or "the case's moment"
        while True:
            await self.flush()
            found = until(self)
            if found:
                return found
            if self.flow.is_over and not allow_end and not self.cheated:
                raise Missed(f"the game ended before {what}")
            action = None if self.cheated or self.peer.failed else act(self.peer)
            if action is not None:
                action(self.peer)
                continue
            await self.pump(deadline - trio.current_time(), what)

    async def next_game_message(self, timeout: float, waiting_for: str) -> bytes:
        deadline = trio.current_time() + timeout
        while True:
            frame = await self.pump(deadline - trio.current_time(), waiting_for)
            if frame is not None:
                return frame

    async def send_unattributable(self, data: bytes) -> None:
        """Send input that proves nothing about us (garbage, another key's signature, a gap
        in our sequence...): not part of our chain, and our peer stays as it was."""
        await self.conn.send(data)

    async def expect_drop(self, rule: str, within: float = 5.0) -> str:
        """After input that proves nothing about us: an `error` frame naming `rule`, then
        the connection closed, and the game not over (we resume it: `Ctx.rejoin`)."""
        return await self.expect_rejection(rule, within, freeze=False)

    async def expect_rejection(self, rule: str, within: float = 5.0, freeze: bool = True
                               ) -> str:
        """After a cheat: an `error` frame whose reason names `rule`, then the connection
        closed. Game messages the host sent meanwhile are only recorded (with `freeze`;
        otherwise our peer takes them: the game goes on after a resume)."""
        if freeze:
            self.cheated = True
        deadline = trio.current_time() + within
        before = len(self.host_messages)
        try:
            while True:
                await self.pump(deadline - trio.current_time(),
                                f"an error frame naming rule `{rule}`")
        except Fail:
            after = len(self.host_messages) - before
            went_on = (f"; it went on and sent {after} game message(s)" if after
                       else "; it said nothing")
            raise Fail(f"no error frame naming `{rule}` within {within:g} s{went_on}") from None
        except Refused as exc:
            refused, reason = exc, exc.reason
        except Closed as exc:
            raise Fail(f"the connection closed without an error frame naming `{rule}` "
                       f"({exc})") from None
        if not names_rule(reason, rule):
            raise Fail(f"error frame does not name `{rule}`: {reason!r}")
        if refused.frame.get("v") != SESSION_VERSION:
            raise Fail(f"the error frame is not session version 1: {refused.frame!r}")
        await expect_closed(self.conn, within=3.0, after="its error frame")
        return reason

    async def finish(self, timeout: float = 40.0) -> Any:
        """Play honestly to the verdict: both audits exchanged, then goodbyes both ways,
        then the host closes. Returns our verdict (which must be clean and complete)."""
        await self.play(lambda j: j.flow.verdict is not None or j.peer.failed is not None,
                        timeout=timeout, waiting_for="the end of the game and both audits",
                        allow_end=True)
        verdict = self.flow.verdict
        if verdict is None:
            raise Fail(f"the game stopped without a verdict: {self.peer.failed}")
        if not verdict.clean or not verdict.audit_complete:
            raise Fail(f"the audit of the game did not come out clean: {verdict.describe()}")
        await self.settle()
        return verdict

    async def settle(self, within: float = 10.0) -> None:
        """Goodbyes: ours (holding all of the host's messages), the host's (holding all of
        ours); then the host closes the connection."""
        deadline = trio.current_time() + within
        mine = len(self.flow.senders[JOINER].envelopes) if not self.cheated else len(self.sent)
        while not (self.host_byes and self.host_byes[-1] >= mine):
            if self.bye_sent != self.held():
                await self.say_bye()
            try:
                await self.pump(deadline - trio.current_time(),
                                f"the host's `bye` holding all {mine} of our messages")
            except Closed:
                raise Fail(f"the host closed the connection before a `bye` holding all "
                           f"{mine} of our messages (got {self.host_byes})") from None
        if self.bye_sent != self.held():
            await self.say_bye()
        await expect_closed(self.conn, within=max(1.0, deadline - trio.current_time()),
                            after="both goodbyes")


class Joiner(BaseJoiner):
    """The joiner of a Game of the Generals (p2pgotg's GotgPeer and BotSeat)."""

    @classmethod
    def seated(cls, conn: Conn, key: Ed25519PrivateKey, rng: random.Random,
               expected: Any) -> Joiner:
        return cls(conn, key, GotgPeer(JOINER, key, conn.fingerprint), BotSeat(rng), expected)

    @property
    def flow(self) -> GotgFlow:
        return self.peer.flow

    @property
    def view(self) -> Game:
        return present(self.peer.view, "no game in play yet")

    @property
    def side(self) -> Side:
        return present(self.peer.side, "no side yet")

    @property
    def own(self) -> _OwnSetup:
        """Our committed setup with its salts and seed (the GotgPeer's secrets)."""
        return present(self.peer._own, "no setup committed yet")


class TowersJoiner(BaseJoiner):
    """The joiner of a Towers game (SPEC 4.11: p2pgotg's TowersPeer and Towers bot seat)."""

    RULES = "towers"

    @classmethod
    def seated(cls, conn: Conn, key: Ed25519PrivateKey, rng: random.Random,
               expected: Any) -> TowersJoiner:
        return cls(conn, key, TowersPeer(JOINER, key, conn.fingerprint), TowersBotSeat(rng),
                   expected)

    @property
    def view(self) -> TowersGame:
        """The whole board (Towers hides nothing), once the coin is open."""
        return present(self.peer.view, "no game under way yet")


#: The joiner of each game, by the type of its rule options (what a case's `rules` is).
JOINERS: dict[type, type[BaseJoiner]] = {RuleOptions: Joiner, TowersRuleOptions: TowersJoiner}


# -- predicates for `Joiner.play` ----------------------------------------------------------

def in_phase(phase: Phase) -> Until:
    def until(j: Joiner) -> bool:
        return j.peer.phase is phase
    until.__doc__ = f"the {phase.value} phase"
    return until


def my_turn(j: Joiner) -> bool:
    """our turn"""
    return j.peer.my_turn


def hosts_turn(j: Joiner) -> bool:
    """the host's turn"""
    view = j.peer.view
    return (view is not None and not j.flow.is_over and j.flow.pending is None
            and not j.peer.my_turn)


def plies(n: int) -> Until:
    def until(j: Joiner) -> bool:
        view = j.peer.view
        return view is not None and view.ply >= n and j.peer.my_turn
    until.__doc__ = f"ply {n} on our turn"
    return until


def a_challenge(j: Joiner) -> Move | None:
    """our turn with a challenge to make (not with our flag)"""
    if not j.peer.my_turn:
        return None
    view = j.view
    for move in view.legal_moves:
        if view.is_challenge(move):
            piece = view.piece_at(move.from_square)
            if piece is not None and view.rank_of(piece) is not Rank.FLAG:
                return move
    return None


def plain_moves(j: Joiner) -> list[Move]:
    view = j.view
    return [m for m in view.legal_moves if not view.is_challenge(m)]


def challenging(j: Joiner) -> Policy:
    """A policy: challenge whenever we can (not with the flag), else the bot's move."""
    def policy(peer: GotgPeer) -> Any:
        move = a_challenge(j)
        if move is not None:
            return lambda p: p.move(move)
        return j.seat.step(peer)
    return policy


# -- one case's world ----------------------------------------------------------------------

@dataclass
class Ctx:
    """What a case script works with: the host under test, its invite, a nursery for
    connections, and the runner's seed for this attempt."""

    host: HostProcess
    invite: Invite
    nursery: trio.Nursery
    expected: Any  # the rule options the host must propose (their type names the game)
    seed: int
    notes: list[str] = field(default_factory=list)

    async def connect(self) -> Conn:
        """A new connection to the host: to the invite's address when it is a loopback
        address, else to 127.0.0.1 (the runner never leaves this machine)."""
        address = self.invite.address
        try:
            loopback = ipaddress.ip_address(address).is_loopback
        except ValueError:
            loopback = False
        return await Conn.open(self.nursery, address if loopback else LOOPBACK,
                               self.invite.port, self.invite.pin)

    async def greet(self, conn: Conn, *, secret: bytes | None = None, game: bytes | None = None,
                    have: int = 0) -> dict:
        """`hi` with the invite's secret (or `secret`); the host's `ok`."""
        await conn.send(control("hi", secret=self.invite.secret if secret is None else secret,
                                game=game, have=have, first=None))
        try:
            frame = await conn.receive(5.0)
        except Closed as exc:
            raise Fail(f"the host closed the connection instead of admitting us ({exc})") \
                from None
        if frame is None:
            raise Fail("no `ok` within 5 s of our `hi`")
        ctl = parse_control(frame)
        if ctl is None:
            raise Fail("the host sent a game message before admitting us with `ok`")
        if ctl["ctl"] == "error":
            raise Fail(f"the host refused a valid `hi`: {ctl.get('reason')!r}")
        if ctl["ctl"] != "ok" or ctl.get("v") != SESSION_VERSION:
            raise Fail(f"expected `ok` (session version 1), got {ctl!r}")
        have_ = ctl.get("have")
        if not isinstance(have_, int) or isinstance(have_, bool) or have_ < 0:
            raise Fail(f"the host's `ok` has no valid `have`: {ctl!r}")
        return ctl

    async def join(self, seed_offset: int = 0) -> Any:
        """A new joiner of the case's game (`JOINERS`, by its rule options), admitted to a
        new game (nothing sent beyond `hi` yet)."""
        conn = await self.connect()
        ok = await self.greet(conn)
        joiner = JOINERS[type(self.expected)].seated(
            conn, Ed25519PrivateKey.generate(), random.Random(self.seed + seed_offset),
            self.expected)
        joiner.admitted(ok)
        return joiner

    async def rejoin(self, joiner: BaseJoiner, have: int | None = None, as_sent: bool = False
                     ) -> dict:
        """A new connection for `joiner`'s game: `hi` with its game id and how many of the
        host's messages it holds (or says it holds); then it resends what the host lacks
        (`as_sent`: from what it really sent, when it held a message back)."""
        conn = await self.connect()
        held = joiner.held() if have is None else have
        ok = await self.greet(conn, game=joiner.game_id, have=held)
        if ok.get("game") != joiner.game_id:
            raise Fail(f"the host answered a resume of our game with another game id: "
                       f"{ok.get('game')!r}")
        joiner.conn = conn
        ours = joiner.sent if as_sent else joiner.flow.senders[JOINER].envelopes
        if ok["have"] > len(ours):
            raise Fail(f"the host says it holds {ok['have']} of our messages; we sent "
                       f"{len(ours)}")
        for data in ours[ok["have"]:]:
            await conn.send(data)
        return ok
