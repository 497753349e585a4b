"""The joiner's side of reaching a host: every candidate of the invite at once, and the
first connection whose pin checks out wins (the losers are cancelled).

Direct candidates (LAN addresses, the router's mapped port) are tried at once, a quarter
second apart in the invite's order, as Happy Eyeballs does (RFC 8305). In parallel the
joiner asks STUN what its own NAT does. If every direct attempt fails and both NATs allow
it, the joiner shows a reply code for the host and punches (punch.py); if they do not, it
says so at once, with what to do instead, rather than leave anyone waiting. When the
invite lists the host's onion service, the joiner also tries it through its own tor once
the direct candidates have had their head start (tor.py); TLS and the pin run inside as
over any TCP connection.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from p2pgotg.net.reaching import stun_client
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import NAT_EASY, NAT_NAMES, NAT_NONE, NAT_SYMMETRIC, Invite
from p2pgotg.net.reaching.punch import PunchFailed, PunchPort, punch_port
from p2pgotg.net.reaching.rendezvous import stable_port
from p2pgotg.net.reaching.tor import OFF, TorChoice, TorFailed, TorUse
from p2pgotg.net.reaching.tor_link import connect_through
from p2pgotg.net.transport._stream import abort_on_close, close_quietly
from p2pgotg.net.transport.errors import ConnectFailedError, NetError, PinMismatchError
from p2pgotg.net.transport.tls import (
    client_context,
    handshake,
    open_pinned_connection,
    peer_certificate,
    public_key_pin,
)
from p2pgotg.protocol import JOINER
from p2pgotg.reach.candidates import ONION, PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode
from p2pgotg.reach.shortcode import ShortCode, looks_like_short_code
from p2pgotg.reach.tor_socks import SocksError

DIRECT_TIMEOUT = 3.0  # seconds for one direct candidate's TCP connect
STAGGER = 0.25
REPLY_WAIT = 120.0  # how long the joiner punches after showing its reply code
REPLY_AFTER = 0.5  # show the reply code once direct attempts have had this long
#: On a game held, the host punches back to where we were: a reply code is shown only
#: when that has not connected within this long (our mapping may have moved).
REPUNCH_WAIT = 4.0
ONION_WAIT = 120.0  # how long the joiner keeps asking tor for the host's onion service
ONION_RETRY = 3.0  # seconds between two tries while the service is not (yet) published
ONION_ATTEMPT = 30.0  # seconds one try may take (tor can leave a rendezvous hanging)

Opener = Callable[[], Awaitable[trio.SSLStream]]


class HandshakeLimit(Protocol):
    """What a race needs of the driver's timeouts (play's `Timeouts`): how long a
    connection may take to its finished TLS handshake."""

    @property
    def handshake(self) -> float: ...


class NoPathError(SessionError):
    """No path to the host can be made from here, whatever anyone does now (a NAT that
    rules punching out: SPEC 3.8). Final for a new game, so the person hears it at once;
    for a game already held, a host to wait for (join_game keeps trying)."""


@dataclass
class JoinReach:
    """The joiner's means beyond a direct connect: STUN servers and where the reply code
    goes (the screen or standard output)."""

    stun_servers: list[tuple[str, int]] = field(default_factory=list)
    on_reply_code: Callable[[str], None] = lambda code: None
    reply_wait: float = REPLY_WAIT
    tor: TorUse | None = None  # the joiner's tor, for an invite's onion candidate
    onion_wait: float = ONION_WAIT


async def pinned_tls(tcp: trio.SocketStream, pin: bytes, timeout: float,
                     where: str) -> trio.SSLStream:
    """TLS client over an existing TCP stream, checking the pin before any byte is sent."""
    stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
    try:
        await handshake(stream, timeout, where)
        got = public_key_pin(peer_certificate(stream))
        if got != pin:
            raise PinMismatchError(expected=pin, got=got)
    except BaseException:
        await close_quietly(stream)
        raise
    return stream


class RaceOpener:
    """An opener for join_game: each call races the invite's candidates afresh. Only the
    first connection of a new game may fail for good (a NAT that rules punching out); once
    a game is held (connected before, or resumed from its file: ``resuming``), a failure
    is a dropped host to wait for, as join_game does, and the host may be punching back
    to us, so a reply code is shown only after it had a chance (SPEC 3.8)."""

    def __init__(self, invite: Invite, reach: JoinReach | None, limits: HandshakeLimit,
                 on_status: Callable[[str], None]) -> None:
        self.invite, self.reach, self.limits, self.on_status = invite, reach, limits, on_status
        self.held = False

    def resuming(self) -> None:
        """join_game resumed a saved game of this invite."""
        self.held = True

    async def __call__(self) -> trio.SSLStream:
        stream = await race(self.invite, self.reach, self.limits, self.on_status,
                            first=not self.held)
        self.held = True
        return stream


def race_opener(invite: Invite, reach: JoinReach | None, limits: HandshakeLimit,
                on_status: Callable[[str], None] = lambda s: None) -> RaceOpener:
    """The joiner's opener for a v2 invite (RaceOpener)."""
    return RaceOpener(invite, reach, limits, on_status)


async def race(invite: Invite, reach: JoinReach | None, limits: HandshakeLimit,
               on_status: Callable[[str], None], first: bool = True) -> trio.SSLStream:
    """The first pinned TLS stream to the host. NoPathError when ``first`` and the NATs
    rule punching out, so the person hears it at once; ConnectFailedError (retried by
    join_game) for anything else, with words that say why and what would help."""
    return await _Race(invite, reach, limits, on_status, first).run()


class _Race:
    """One race to the host: its candidates, and what each attempt found (the winner,
    failures, pin mismatches, why punching did not connect, what no one can change)."""

    def __init__(self, invite: Invite, reach: JoinReach | None, limits: HandshakeLimit,
                 on_status: Callable[[str], None], first: bool) -> None:
        self.invite = invite
        self.reach = reach
        self.limits = limits
        self.on_status = on_status
        self.first = first
        self.candidates = self.invite.all_candidates()
        self.direct = [c for c in self.candidates if c.direct]
        self.targets = [c for c in self.candidates if c.kind == PUNCH]
        self.onions = [c for c in self.candidates if c.kind == ONION]
        self.tor_problem: list[str] = []  # why this joiner cannot go through Tor to the host
        self.winner: list[trio.SSLStream] = []
        self.failures: list[str] = []
        self.mismatches: list[PinMismatchError] = []
        self.direct_done = trio.Event()
        self.punch_reason: list[str] = []  # why punching did not connect
        self.verdict: list[str] = []  # why it cannot, whatever anyone does now (a NAT)

    async def run(self) -> trio.SSLStream:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.all_direct, nursery)
            if self.reach is not None and self.targets:
                nursery.start_soon(self.try_punch, nursery)
            for onion in self.onions:
                nursery.start_soon(self.try_onion, onion, nursery)
        if self.winner:
            return self.winner[0]
        raise self.no_stream()

    def no_stream(self) -> NetError | NoPathError:
        """Why no candidate gave a stream, with what would help."""
        if self.mismatches and len(self.mismatches) == len(self.failures) \
                and not self.punch_reason:
            return self.mismatches[0]
        tried = "; ".join(self.failures) or "no direct address"
        if not self.targets and self.invite.nat == NAT_SYMMETRIC and self.invite.candidates:
            self.verdict.append(_host_cannot(self.invite.nat))
        if self.first and self.verdict:
            instead = ("ask the host to forward a TCP port on their router (their invite will "
                       "then work), or host the game yourself if your router maps ports")
            if self.tor_problem:
                instead = (f"the host can be reached through Tor, but {self.tor_problem[0]}; "
                           f"then run the same command again. Or {instead}")
            return NoPathError(
                f"{self.verdict[0][:1].upper()}{self.verdict[0][1:]}, and the host did not "
                f"answer directly either ({tried}). What to do: {instead}")
        through = f"; through Tor: {self.tor_problem[0]}" if self.tor_problem else ""
        if self.punch_reason:  # (the reason that matters first: a LAN address of the host's
            # that does not answer from elsewhere is no news)
            return ConnectFailedError(
                f"{self.punch_reason[0]} (tried directly: {tried}){through}")
        return ConnectFailedError(tried + through)

    def won(self, stream: trio.SSLStream, nursery: trio.Nursery) -> bool:
        if self.winner:
            return False
        self.winner.append(stream)
        nursery.cancel_scope.cancel()
        return True

    async def take(self, coming: Awaitable[trio.SSLStream], candidate: Candidate,
                   nursery: trio.Nursery) -> bool:
        """Whether the pinned stream to ``candidate`` came and won the race."""
        try:
            stream = await coming
        except PinMismatchError as exc:
            self.mismatches.append(exc)
            self.failures.append(f"{candidate}: another program answered (wrong pin)")
            return False
        except NetError as exc:
            self.failures.append(f"{candidate}: {exc.detail or exc}")
            return False
        if self.won(stream, nursery):
            return True
        await close_quietly(stream)
        return False

    async def try_direct(self, candidate: Candidate, nursery: trio.Nursery) -> None:
        await self.take(open_pinned_connection(
            candidate.address, candidate.port, self.invite.pin,
            connect_timeout=DIRECT_TIMEOUT, handshake_timeout=self.limits.handshake),
            candidate, nursery)

    async def all_direct(self, nursery: trio.Nursery) -> None:
        async with trio.open_nursery() as inner:
            for i, candidate in enumerate(self.direct):
                inner.start_soon(self.try_direct, candidate, nursery)
                if i + 1 < len(self.direct):
                    await trio.sleep(STAGGER)
        self.direct_done.set()

    async def try_punch(self, nursery: trio.Nursery) -> None:
        assert self.reach is not None
        if self.invite.nat != NAT_EASY:
            self.punch_reason.append(_host_cannot(self.invite.nat))
            if self.invite.nat == NAT_SYMMETRIC:
                self.verdict.append(_host_cannot(self.invite.nat))
            return
        async with punch_port(stable_port(self.invite.secret, JOINER)) as port:
            tcp = await self._punch(port)
        if tcp is None:
            return
        self.on_status("connected through the NATs")
        where = f"{self.targets[0].address}:{self.targets[0].port}"
        abort_on_close(tcp)  # (should TLS fail, the next punch needs these addresses)
        try:
            stream = await pinned_tls(tcp, self.invite.pin, self.limits.handshake, where)
            abort_on_close(tcp, abort=False)
        except PinMismatchError as exc:
            self.mismatches.append(exc)
            return
        except NetError as exc:
            self.punch_reason.append(f"the punched connection failed: {exc}")
            return
        if not self.won(stream, nursery):
            await close_quietly(stream)

    async def _punch(self, port: PunchPort) -> trio.SocketStream | None:
        """Punch to the host from our stable port; show a fresh reply code for the host
        (at once on a new game; on a game held, once punching back has had its chance)."""
        assert self.reach is not None
        probe = await stun_client.probe(self.reach.stun_servers, port.port, [])
        with trio.move_on_after(REPLY_AFTER):
            await self.direct_done.wait()  # a LAN address answers at once: no reply code
        if probe.nat == NAT_SYMMETRIC:
            self.verdict.append("your NAT is symmetric (it gives each destination a new "
                                "public port), so hole punching cannot work")
            return None
        if probe.mapped is None or probe.nat not in (NAT_EASY, NAT_NONE):
            self.punch_reason.append(no_stun_words(probe.notes, bool(self.reach.stun_servers)))
            if self.first:  # (no reply code can be made, and the host knows nothing of us)
                return None
            reply = None
        else:
            reply = ReplyCode.make([Candidate(PUNCH, probe.mapped[0], probe.mapped[1])],
                                   int(time.time()), secrets.token_bytes(8), self.invite.secret)

        async def show_reply(delay: float) -> None:
            assert self.reach is not None and reply is not None
            await trio.sleep(delay)
            self.on_status("the host cannot be reached directly: send this reply code to "
                           "the host, who takes it on their screen (key r) or with `p2pgotg "
                           f"host --reply CODE` (waiting up to {self.reach.reply_wait:g} s)")
            self.reach.on_reply_code(reply.encode())

        tcp: trio.SocketStream | None = None
        async with trio.open_nursery() as showing:
            if reply is not None:
                showing.start_soon(show_reply, 0 if self.first else REPUNCH_WAIT)
            with contextlib.suppress(PunchFailed):  # (said below)
                tcp = await port.punch(self.targets, trio.current_time() + self.reach.reply_wait)
            showing.cancel_scope.cancel()
        if tcp is None:
            self.punch_reason.append(
                f"the host did not punch through within {self.reach.reply_wait:g} s. Next: "
                "send the host a fresh reply code (they take it with key r or `p2pgotg host "
                "--reply CODE`) as soon as it shows")
        return tcp

    async def try_onion(self, candidate: Candidate, nursery: trio.Nursery) -> None:
        with trio.move_on_after(REPLY_AFTER):
            await self.direct_done.wait()  # (the direct candidates go first, undisturbed)
        tor = self.reach.tor if self.reach is not None else None
        why = tor.missing() if tor is not None else "tor is turned off (--tor off)"
        if self.reach is None or tor is None or why is not None:
            self.tor_problem.append(why or "")
            self.on_status(f"the host can also be reached through Tor, but {why}")
            return
        try:
            socks = await tor.ready(self.on_status)
            self.on_status(f"tor: connecting to the host's onion service {candidate.address}")
            tcp = await through_tor(socks, candidate, self.reach.onion_wait, self.on_status)
        except TorFailed as exc:
            self.failures.append(f"{candidate}: {exc}")
            return
        if await self.take(pinned_tls(tcp, self.invite.pin, self.limits.handshake, str(candidate)),
                      candidate, nursery):
            self.on_status("connected through Tor")


def no_stun_words(notes: tuple[str, ...], asked: bool) -> str:
    """Why the joiner could make no reply code, and what would help."""
    if not asked:
        return ("no reply code could be made: no STUN server was asked (--stun off), so "
                "your public address is unknown. Leave out --stun off, or pass a STUN "
                "server you can reach: --stun HOST:PORT")
    why = f" ({notes[0]})" if notes else ""
    return ("no reply code could be made: no STUN server answered you, so your public "
            f"address is unknown{why}. Pass a STUN server you can reach: --stun HOST:PORT")


async def through_tor(socks: tuple[str, int], candidate: Candidate, wait: float,
                      on_status: Callable[[str], None], retry: float = ONION_RETRY,
                      attempt: float = ONION_ATTEMPT) -> trio.SocketStream:
    """A connection to the onion candidate through tor, asked again every ``retry``
    seconds while tor says the service is not there yet (its host may still be publishing
    it, or is publishing it anew after a restart), for ``wait`` seconds; each try on new
    circuits, and given up after ``attempt`` seconds."""
    deadline = trio.current_time() + wait
    said = ""
    while True:
        try:
            return await connect_through(socks, candidate.address, candidate.port,
                                         max(1.0, min(attempt,
                                                      deadline - trio.current_time())))
        except SocksError as exc:
            if exc.final or trio.current_time() + retry >= deadline:
                raise TorFailed(f"tor could not reach the host's onion service: {exc}") \
                    from None
            if str(exc) != said:
                said = str(exc)
                on_status(f"tor: {exc}; trying again for up to "
                          f"{max(0, deadline - trio.current_time()):.0f} s")
        await trio.sleep(retry)


def _host_cannot(nat: int) -> str:
    if nat == NAT_SYMMETRIC:
        return "the host is behind a symmetric NAT, so hole punching cannot work"
    if nat == NAT_EASY:
        return "the host's NAT allows punching"
    kind = NAT_NAMES.get(nat, "unknown")
    return f"the host's NAT is {kind}: it found no public address to punch to"


def first_then(stream: trio.SSLStream, invite: Invite, limits: HandshakeLimit) -> Opener:
    """An opener that hands out an already open stream first (the one a short code
    authenticated), then reconnects to the invite as usual."""
    pending = [stream]

    async def open_one() -> trio.SSLStream:
        if pending:
            return pending.pop()
        return await open_pinned_connection(invite.address, invite.port, invite.pin,
                                            handshake_timeout=limits.handshake)

    return open_one


async def prepare_join(code: str, servers: list[tuple[str, int]], limits: HandshakeLimit,
                       status: Callable[[str], None],
                       show_reply: Callable[[str], None],
                       tor: TorChoice = OFF) -> tuple[Invite, Opener | None]:
    """(invite, opener) for `join CODE` (checked by check_join_code first): a short code is
    found on the LAN and its PAKE run; a long v2 code races its candidates (its onion
    candidate through the tor ``tor`` chooses)."""
    from p2pgotg.net.reaching.lan import find
    from p2pgotg.net.reaching.pake_link import join_by_short_code

    if looks_like_short_code(code):
        short = ShortCode.parse(code)
        status(f"looking for game {short.number} on this network...")
        games = await find(short.number)
        invite, stream = await join_by_short_code(short, games, limits.handshake, status)
        return invite, first_then(stream, invite, limits)
    invite = Invite.decode(code)
    if not invite.candidates:
        return invite, None
    from p2pgotg.net.transport.paths import config_dir, data_dir

    reach = JoinReach(servers, show_reply, tor=TorUse(tor, data_dir(), config_dir()))
    return invite, race_opener(invite, reach, limits, status)


def typed_code(text: str) -> str:
    """The code in what a person typed or pasted: a short code said with spaces
    (`7 crossover clockwork`) as one, or a long code pasted as it came."""
    from p2pgotg.net.reaching.invite import pasted_code

    spoken = text.strip().strip("'\"")
    if looks_like_short_code(spoken):
        return "-".join(spoken.lower().replace("-", " ").split())
    return pasted_code(text)


def code_problem(code: str) -> str | None:
    """What is wrong with a code to join with (None when it can be tried): the same check
    for `p2pgotg join CODE` and the start screen's join prompt."""
    from p2pgotg.reach.reply_code import PREFIX as REPLY_PREFIX
    from p2pgotg.reach.shortcode import ShortCodeError

    if re.match(r"gr\d*-", code.lower().removeprefix("reply:")):
        return (f"this is a reply code ({REPLY_PREFIX}...), which goes the other way: send it "
                "to the host, who presses r on their screen and pastes it (or runs p2pgotg "
                "host --reply CODE). To join, use the code the host gave you: a short code "
                "such as 7-crossover-clockwork, or an invite code starting gg2-")
    if looks_like_short_code(code):
        try:
            ShortCode.parse(code)
        except ShortCodeError as exc:
            return f"bad short code: {exc}"
        return None
    try:
        Invite.decode(code)
    except NetError as exc:
        return f"bad invite code: {exc.user_message}"
    return None
