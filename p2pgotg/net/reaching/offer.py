"""Everything a host does so that the other player can reach it, whatever the network:
LAN addresses, a port mapped on the router, the public mapping STUN sees (for hole
punching), the short code announced on the LAN, the inbox for reply codes, and, when no
one can be sure to reach it directly, an onion service through tor. The result is one v2
invite code and a few plain sentences saying what was found.

``offer`` runs beside the host's listener for the whole game: it keeps the mapping renewed,
the announcement and the onion service up, punches when a reply code comes, and undoes it
all at the end.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from p2pgotg.net.reaching import lan, portmap, stun_client
from p2pgotg.net.reaching.hostpunch import PUNCH_TIME, HostPuncher
from p2pgotg.net.reaching.invite import (
    NAT_EASY,
    NAT_NONE,
    NAT_SYMMETRIC,
    NAT_UNKNOWN,
    Invite,
    reachable_addresses,
)
from p2pgotg.net.reaching.pake_link import ShortCodeGate
from p2pgotg.net.reaching.punch import PunchFailed, PunchPort, punch_port
from p2pgotg.net.reaching.rendezvous import stable_port
from p2pgotg.net.reaching.reply_inbox import serve_inbox
from p2pgotg.net.reaching.tor import OFF, TorChoice, TorFailed, TorUse
from p2pgotg.net.transport.paths import config_dir
from p2pgotg.protocol import HOST
from p2pgotg.reach.candidates import LAN, MAPPED, MAX_CANDIDATES, ONION, PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode, ReplyCodeError
from p2pgotg.reach.shortcode import MAX_NUMBER, ShortCode
from p2pgotg.reach.tor_control import hs_desc_uploaded
from p2pgotg.reach.tor_onion import SUFFIX, onion_address, public_key_of

PUBLISH_WAIT = 120.0  # seconds to wait for tor to say the onion service is published


@dataclass
class ReachOptions:
    """How hard to try: which STUN servers, whether to map a port and announce on the LAN,
    which tor to publish an onion service with."""

    data_dir: Path
    stun_servers: list[tuple[str, int]] = field(default_factory=list)
    port_mapping: bool = True
    lan: bool = True
    rules: str = ""
    tor: TorChoice = OFF


@dataclass
class Offer:
    """What ``offer`` reports once it has gathered: the invite, the short code, the notes."""

    invite: str
    short_code: str | None
    notes: list[str]
    gate: ShortCodeGate | None = None


Accept = Callable[[trio.SocketStream], Awaitable[None]]


def _lan_candidates(bind: str | None, port: int) -> list[Candidate]:
    """Our own addresses; loopback only when there is nothing else (it only ever helps a
    joiner on this very computer, and the invite is for someone elsewhere)."""
    found = [Candidate(LAN, a, port) for a in reachable_addresses(bind)]
    outside = [c for c in found if not ipaddress.ip_address(c.address).is_loopback]
    return outside or found[:1]


def describe(nat: int, mapping: portmap.PortMapping | None,
             mapped: tuple[str, int] | None, port: int, router_private: bool,
             stun_asked: bool = True) -> list[str]:
    """The plain sentences of SPEC 3.8: reachable, punchable, or neither and what to do.
    ``stun_asked``: whether any STUN server was asked at all (`--stun off` asks none)."""
    if mapping is not None and mapping.public:
        return [f"reachable from the internet at {mapping.external_address}:"
                f"{mapping.external_port} (your router forwards it: {mapping.method})"]
    if nat == NAT_NONE and mapped is not None:
        return [f"reachable from the internet at {mapped[0]}:{port} (this computer has a "
                "public address; a firewall may still block the port)"]
    cgnat = router_private or (mapping is not None and not mapping.public)
    if cgnat:
        where = f" (your router's own internet address {mapping.external_address} is not " \
            "public)" if mapping is not None else ""
        return [f"behind a carrier-grade NAT{where}, where a direct connection is unlikely: "
                "no port mapping can make this computer reachable. "
                + ("A joiner behind an easy NAT may still punch through with a reply code; "
                   if nat == NAT_EASY else "")
                + "otherwise let the other player host, or use a VPN both of you join"]
    if nat == NAT_EASY and mapped is not None:
        return [f"behind a NAT that allows hole punching (public address {mapped[0]}): a "
                "joiner who cannot connect directly gets a reply code; take it on the host's "
                "screen (key r) or with `p2pgotg host --reply CODE`"]
    if nat == NAT_SYMMETRIC:
        return ["behind a symmetric NAT, where a direct connection is unlikely: hole "
                f"punching cannot work. Forward TCP port {port} on your router to this "
                "computer, or let the other player host"]
    if not stun_asked:
        return ["no STUN server was asked (--stun off), so this computer's internet address "
                "is unknown and only players on this network can join (with the short code "
                f"or the invite code); for the internet, forward TCP port {port} on your "
                "router, or leave out --stun off"]
    return ["no STUN server answered, so only players on this network can join (with the "
            "short code or the invite code); for the internet, forward TCP port "
            f"{port} on your router or pass --stun HOST:PORT"]


async def offer(opts: ReachOptions, port: int, bind: str | None, pin: bytes, secret: bytes,
                fingerprint: bytes, accept: Accept, *,
                onion_seed: bytes | None = None,
                on_status: Callable[[str], None] = lambda s: None,
                on_invite: Callable[[str], None] = lambda code: None,
                on_short_code: Callable[[str, ShortCodeGate], None] = lambda c, g: None,
                away: Callable[[], bool] = lambda: False,
                task_status: trio.TaskStatus[Offer] = trio.TASK_STATUS_IGNORED) -> None:
    """Gather the candidates, report the Offer, then serve until cancelled.

    When the host is not surely reachable from the internet (no mapping, no public
    address) and tor can be used, the invite lists the onion address of ``onion_seed``'s
    key (known before tor answers: the invite waits for nothing) and the service is
    published in the background.

    The short code is announced on the LAN while STUN and the router are asked, and it is
    reported (``on_short_code``, with the gate that checks it) the moment the announcement
    is up (multicast DNS probes for about a second first), without waiting for them: a
    code shown before that would send an early joiner away with "no game numbered N", and
    a code that could not be announced at all is not shown.

    ``away()`` says whether a joiner that came in is away now: the host then punches back
    to where a punched joiner was last (hostpunch.py). ``on_invite`` gets the new invite
    code when our public mapping moved meanwhile."""
    async with contextlib.AsyncExitStack() as stack:
        punching = await stack.enter_async_context(
            punch_port(stable_port(secret, HOST))) if opts.stun_servers else None
        await _serve(opts, port, bind, pin, secret, fingerprint, accept, punching, on_status,
                     on_invite, on_short_code, away, onion_seed, task_status)


async def _serve(opts: ReachOptions, port: int, bind: str | None, pin: bytes, secret: bytes,
                 fingerprint: bytes, accept: Accept, punching: PunchPort | None,
                 on_status: Callable[[str], None], on_invite: Callable[[str], None],
                 on_short_code: Callable[[str, ShortCodeGate], None],
                 away: Callable[[], bool], onion_seed: bytes | None,
                 task_status: trio.TaskStatus[Offer]) -> None:
    serving = _Serving(opts, port, bind, pin, secret, fingerprint, punching, on_status,
                       on_invite)
    async with trio.open_nursery() as nursery:
        gate = await serving.gather(nursery, on_short_code)
        candidates, public = serving.candidates(nursery, onion_seed)
        serving.invite = Invite.v2(candidates, pin, secret, serving.probe.nat)
        if serving.short is None:
            gate = None
        if punching is not None:
            serving.puncher = HostPuncher(punching, opts.data_dir, secret, opts.stun_servers,
                                          accept, nursery, on_status, public)
        inbox_problem = await nursery.start(serve_inbox, opts.data_dir, serving.take_reply)
        if inbox_problem is not None:
            serving.notes.append(f"reply codes cannot be taken here: {inbox_problem}")
        if serving.mapping is not None:
            nursery.start_soon(_keep_mapping, serving.mapping, on_status)
        if serving.puncher is not None and serving.punchable:
            nursery.start_soon(serving.puncher.punch_back, away, serving.moved)
        short = serving.short
        task_status.started(Offer(serving.invite.encode(), str(short) if short else None,
                                  serving.notes, gate))
        await trio.sleep_forever()


class _Serving:
    """What the host's offer found (STUN, the router, the short code) and serves from:
    the invite, reply codes to punch to, a public mapping that moved."""

    def __init__(self, opts: ReachOptions, port: int, bind: str | None, pin: bytes,
                 secret: bytes, fingerprint: bytes, punching: PunchPort | None,
                 on_status: Callable[[str], None], on_invite: Callable[[str], None]) -> None:
        self.opts, self.port, self.bind, self.pin = opts, port, bind, pin
        self.secret, self.fingerprint, self.punching = secret, fingerprint, punching
        self.on_status, self.on_invite = on_status, on_invite
        self.notes: list[str] = []
        self.lan_candidates = _lan_candidates(bind, port)
        self.probe = stun_client.NatProbe(NAT_UNKNOWN, None)
        self.mapping: portmap.PortMapping | None = None
        self.router_notes: list[str] = []
        self.short: ShortCode | None = None
        if opts.lan and any(not ipaddress.ip_address(c.address).is_loopback
                            for c in self.lan_candidates):
            self.short = ShortCode.random(1 + secrets.randbelow(MAX_NUMBER))
        self.invite: Invite | None = None
        self.puncher: HostPuncher | None = None
        self.used: set[bytes] = set()  # the reply codes' nonces taken

    @property
    def punchable(self) -> bool:
        return self.probe.nat == NAT_EASY and self.probe.mapped is not None

    async def do_probe(self) -> None:
        assert self.punching is not None
        self.probe = await stun_client.probe(self.opts.stun_servers, self.punching.port,
                                             [c.address for c in self.lan_candidates])

    async def do_map(self) -> None:
        self.mapping = await portmap.map_port(self.port, on_note=self.router_notes.append)

    async def gather(self, nursery: trio.Nursery,
                     on_short_code: Callable[[str, ShortCodeGate], None]
                     ) -> ShortCodeGate | None:
        """Ask STUN and the router, announcing the short code meanwhile (when there is
        one); the short code's gate, or None."""
        gathering: list[Callable[[], Awaitable[None]]] = []
        if self.punching is not None:
            gathering.append(self.do_probe)
        if self.opts.port_mapping:
            gathering.append(self.do_map)
        short = self.short
        gate = ShortCodeGate(short, self.fingerprint, self.secret, self.on_status) \
            if short else None
        announced = False
        if short is not None and gate is not None:
            code, ready = str(short), gate
            announced = await _start_announcing(
                nursery, short.number, self.port, [c.address for c in self.lan_candidates],
                self.opts.rules, gathering, lambda: on_short_code(code, ready))
        else:
            async with trio.open_nursery() as gather:
                for task in gathering:
                    gather.start_soon(task)
        if not announced:
            self.short = None
        return gate

    def candidates(self, nursery: trio.Nursery, onion_seed: bytes | None
                   ) -> tuple[list[Candidate], Candidate | None]:
        """The invite's candidates (and our public one for punching), with the notes that
        say what was found; the onion service is published when nothing else surely
        reaches us."""
        probe, mapping, port = self.probe, self.mapping, self.port
        candidates = list(self.lan_candidates)
        if mapping is not None and mapping.public:
            candidates.insert(0, Candidate(MAPPED, mapping.external_address,
                                           mapping.external_port))
        public = Candidate(PUNCH, *probe.mapped) if self.punchable and probe.mapped else None
        if public is not None:
            candidates.append(public)
        if not candidates:
            candidates = [Candidate(LAN, "127.0.0.1", port)]
        reachable = (mapping is not None and mapping.public) or (
            probe.nat == NAT_NONE and probe.mapped is not None)
        tor_notes: list[str] = []
        if not reachable and onion_seed is not None and self.opts.tor.mode != "off":
            tor_notes.append(self._onion(nursery, onion_seed, candidates))
        self.notes.extend(self.describe())
        self.notes.extend(tor_notes)
        if mapping is None and self.router_notes and self.opts.port_mapping:
            self.notes.append("port mapping: " + "; ".join(dict.fromkeys(self.router_notes)))
        self.notes.extend(probe.notes)
        return _keep(candidates), public

    def describe(self) -> list[str]:
        router_private = any("no public address" in n or "does not know its internet" in n
                             for n in self.router_notes)
        return describe(self.probe.nat, self.mapping, self.probe.mapped, self.port,
                        router_private, bool(self.opts.stun_servers))

    def _onion(self, nursery: trio.Nursery, onion_seed: bytes,
               candidates: list[Candidate]) -> str:
        """Add our onion address to `candidates` and publish it, when tor can be used; the
        note that says so, or why not."""
        tor = TorUse(self.opts.tor, self.opts.data_dir, config_dir())
        why = tor.missing()
        if why is not None:
            return f"through Tor any joiner could reach this host, but {why}; then host again"
        address = onion_address(public_key_of(onion_seed))
        candidates.append(Candidate(ONION, address, self.port))
        nursery.start_soon(_keep_onion, tor, onion_seed, self.port,
                           _onion_target(self.bind, self.port), self.on_status)
        return (f"through Tor: a joiner who cannot connect directly reaches this host at "
                f"{address} (the joiner needs tor installed; the service is being "
                "published)")

    async def take_reply(self, code: str, say: Callable[[str], None]) -> None:
        try:
            reply = ReplyCode.decode(code)
            reply.verify(self.secret, time.time())
            if reply.nonce in self.used:
                raise ReplyCodeError("this reply code was already used: ask for a fresh "
                                     "one")
            if not all(c.kind == PUNCH for c in reply.candidates):
                raise ReplyCodeError("this reply code lists no public address to punch to")
        except ReplyCodeError as exc:
            self.on_status(f"a reply code was refused: {exc}")
            say(f"error: {exc}")
            return
        self.used.add(reply.nonce)
        if not self.punchable or self.puncher is None:
            say(f"error: this host cannot punch through its NAT: it is {self.describe()[0]}")
            return
        shown = ", ".join(str(c) for c in reply.candidates)
        self.on_status(f"punching through the NATs to {shown}")
        say(f"punching through the NATs to {shown} (up to {PUNCH_TIME:g} s)")
        try:
            await self.puncher.to_reply(list(reply.candidates))
        except PunchFailed as exc:
            words = punch_failed_words(str(exc), self.port)
            self.on_status(words)
            say(f"error: {words}")
            return
        say("ok: connected through the NATs; the game goes on in the host's window")

    def moved(self, now: Candidate) -> None:
        assert self.invite is not None
        self.invite = Invite.v2(_keep([c for c in self.invite.candidates if c.kind != PUNCH]
                                      + [now]), self.pin, self.secret, NAT_EASY)
        self.on_status(f"your public address for hole punching is now {now.address}:"
                       f"{now.port} (your router restarted?): the other player's invite "
                       "code no longer reaches you. Give them the new one below: they stop "
                       "their program and join with it, and the game resumes")
        self.on_invite(self.invite.encode())


def punch_failed_words(why: str, port: int) -> str:
    """What the host says when punching to a reply code did not connect, and what next."""
    return (f"hole punching failed: {why} within {PUNCH_TIME:g} s. Next: ask the other "
            "player for a fresh reply code and take it at once (they may have stopped "
            "waiting); if that fails too, one of the two routers does not let punching "
            f"through: forward TCP port {port} on your router to this computer (the invite "
            "then works directly), or let the other player host")


def _keep(candidates: list[Candidate]) -> list[Candidate]:
    """At most MAX_CANDIDATES: the mapped, punch and onion ones always, then LAN ones in
    order (SPEC 3.3.1's order: mapped, LAN, punch, onion)."""
    special = [c for c in candidates if c.kind != LAN]
    lan_ones = [c for c in candidates if c.kind == LAN][:MAX_CANDIDATES - len(special)]
    return [c for c in special if c.kind == MAPPED] + lan_ones + \
        [c for c in special if c.kind == PUNCH] + [c for c in special if c.kind == ONION]


def _onion_target(bind: str | None, port: int) -> str:
    """Where tor hands the onion service's connections: the host's listener, on this
    computer's loopback when it listens on every address."""
    if bind in (None, "", "0.0.0.0"):
        return f"127.0.0.1:{port}"
    if bind == "::":
        return f"[::1]:{port}"
    assert bind is not None
    return f"[{bind}]:{port}" if ":" in bind else f"{bind}:{port}"


async def _keep_onion(tor: TorUse, seed: bytes, port: int, target: str,
                      on_status: Callable[[str], None]) -> None:
    """Publish the onion service and keep it up; say when it is published, or why not."""
    try:
        control = await tor.control(on_status)
        address = await control.add_onion(seed, port, target)
        await tor.ready(on_status)
        deadline = trio.current_time() + PUBLISH_WAIT
        while trio.current_time() < deadline:
            event = await control.wait_event(deadline - trio.current_time())
            uploaded = hs_desc_uploaded(event) if event is not None else None
            if uploaded is not None and uploaded + SUFFIX == address:
                on_status(f"tor: the onion service {address} is published: joiners reach "
                          "this host through Tor")
                break
        else:
            on_status(f"tor: the onion service {address} is not published after "
                      f"{PUBLISH_WAIT:g} s; tor keeps trying")
        await trio.sleep_forever()
    except TorFailed as exc:
        on_status(f"tor: {exc}; the invite's onion address will not answer")
    finally:
        await tor.aclose()


async def _keep_mapping(mapping: portmap.PortMapping, on_status: Callable[[str], None]) -> None:
    async with portmap.kept(mapping, on_status):
        await trio.sleep_forever()


ANNOUNCE_WAIT = 5.0  # seconds to wait for the LAN announcement before showing no short code


async def _start_announcing(nursery: trio.Nursery, number: int, port: int,
                            addresses: list[str], rules: str,
                            gathering: list[Callable[[], Awaitable[None]]],
                            on_up: Callable[[], None]) -> bool:
    """Announce the game in ``nursery`` (for as long as it runs) while ``gathering`` runs;
    ``on_up`` the moment the announcement is up (the short code can be shown then, before
    STUN and the router have answered); whether it is up once both are done."""
    up = trio.Event()
    result: list[bool] = []
    scope = trio.CancelScope()

    async def announce() -> None:
        with scope:
            async with lan.announced(number, port, addresses, rules) as ok:
                result.append(ok)
                up.set()
                if ok:
                    on_up()
                    await trio.sleep_forever()

    nursery.start_soon(announce)
    async with trio.open_nursery() as gather:
        for task in gathering:
            gather.start_soon(task)
        with trio.move_on_after(ANNOUNCE_WAIT):
            await up.wait()
    if not (result and result[0]):
        scope.cancel()  # (too slow: no short code is shown, so none may be announced)
        return False
    return True
