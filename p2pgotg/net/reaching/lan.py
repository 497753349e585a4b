"""Games on the LAN by multicast DNS (python-zeroconf): the host announces
``_p2pgotg._tcp`` with its short code's number; a joiner browses for it.

zeroconf runs its own thread and asyncio loop; its blocking calls are made here from trio
worker threads, so the trio side never blocks, and a look for games runs as one coroutine
in zeroconf's loop (AsyncServiceBrowser, AsyncServiceInfo), bounded in time and in the
questions it asks: anyone on the LAN can announce anything, so names not of our form are
never looked up and an announcement whose records are not as SPEC 3.7 says is no game.
The TXT record holds the session version ``v``, the game number ``n`` and the rules ``r``
(for the list a joiner sees): never the words of the code, which only the two players know.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from p2pgotg.protocol.printable import printable
from p2pgotg.reach.candidates import address_problem

if TYPE_CHECKING:
    from zeroconf import ServiceStateChange, Zeroconf
    from zeroconf.asyncio import AsyncServiceInfo

SERVICE = "_p2pgotg._tcp.local."
BROWSE_TIME = 1.5  # seconds to collect announcements when listing games
FIND_TIME = 3.0  # seconds to look for one game number before giving up
# Once the number is found, how long to listen for another game announced with it:
# responders answer a shared question within 20 to 120 ms (RFC 6762 section 6).
SETTLE_TIME = 0.25
LOOKUP_TIME = 1.0  # seconds one name missing from the cache may be asked about
MAX_LOOKUPS = 8  # names asked about at once
MAX_ASKED = 32  # names asked about in one look, in all
MAX_ADDRESSES = 8  # addresses of one announcement that are kept
REGISTER_TIMEOUT = 5.0  # seconds for probing and taking the name (the host waits ANNOUNCE_WAIT)
_INSTANCE = re.compile(r"p2pgotg game ([1-9][0-9]?) on ", re.ASCII)
_NUMBER = re.compile(r"[1-9][0-9]?", re.ASCII)


@dataclass(frozen=True)
class LanGame:
    number: int
    name: str
    addresses: tuple[str, ...]
    port: int
    rules: str


def _zeroconf() -> Zeroconf:
    from zeroconf import InterfaceChoice, IPVersion, Zeroconf

    return Zeroconf(interfaces=InterfaceChoice.All, ip_version=IPVersion.V4Only)


@contextlib.asynccontextmanager
async def announced(number: int, port: int, addresses: list[str], rules: str,
                    ) -> AsyncIterator[bool]:
    """Announce the game while the block runs; yields False if announcing failed."""
    from zeroconf import ServiceInfo

    packed = [socket.inet_aton(a) for a in addresses
              if ipaddress.ip_address(a).version == 4 and not ipaddress.ip_address(a).is_loopback]
    host = socket.gethostname().split(".")[0] or "host"
    info = ServiceInfo(SERVICE, f"p2pgotg game {number} on {host}.{SERVICE}", port=port,
                       addresses=packed, properties={"v": "1", "n": str(number),
                                                     "r": rules[:100]},
                       server=f"{host}.local.")

    def register() -> Zeroconf:
        """Probe for the name (RFC 6762 8.1) and take it: from then on queries for it are
        answered. The three unsolicited announcements that follow go on in zeroconf's
        own loop; waiting for them, as `register_service` does, kept the short code off
        the host's screen about half a second longer for nothing."""
        zc = _zeroconf()
        try:
            assert zc.loop is not None
            asyncio.run_coroutine_threadsafe(
                zc.async_register_service(info, allow_name_change=True), zc.loop,
            ).result(REGISTER_TIMEOUT)
        except BaseException:
            zc.close()
            raise
        return zc

    def unregister(zc: Zeroconf) -> None:
        with contextlib.suppress(Exception):
            zc.unregister_service(info)
        zc.close()

    zc: Zeroconf | None = None
    if packed:
        try:
            zc = await trio.to_thread.run_sync(register, abandon_on_cancel=True)
        except Exception:  # noqa: BLE001 (no multicast here: play on with the long code)
            zc = None
    try:
        yield zc is not None
    finally:
        if zc is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(unregister, zc)


def _wanted(name: str, number: int | None) -> int | None:
    """The game number in an instance name of ours (SPEC 3.7), None for any other name:
    such a name is never looked up, whatever a flood announces."""
    found = _INSTANCE.match(name)
    if found is None:
        return None
    wanted = int(found.group(1))
    return wanted if number is None or wanted == number else None


async def _look(zc: Zeroconf, seconds: float, number: int | None) -> list[LanGame]:
    """In zeroconf's event loop: the games announced within ``seconds`` (less once
    ``number`` is found and SETTLE_TIME has passed, so that another announcement of the
    same number is heard too).

    A name is first read from the cache (a host's answer carries its records, so this is
    how every honest game is found, at once); only names of ours missing from it are asked
    about, MAX_LOOKUPS at a time and MAX_ASKED in all, each for at most LOOKUP_TIME: a
    flood of names no one answers for costs a bounded few questions, never the find time.
    """
    from zeroconf.asyncio import AsyncServiceBrowser

    look = _Look(zc, seconds, number)
    browser = AsyncServiceBrowser(zc, SERVICE, handlers=[look.on_change])
    try:
        await look.until_done()
    finally:
        await browser.async_cancel()
        for task in look.tasks:
            task.cancel()
    return sorted(look.found.values(), key=lambda g: (g.number, g.name))


class _Look:
    """One look-up's state, fed by zeroconf's browser (`on_change`) in its event loop."""

    def __init__(self, zc: Zeroconf, seconds: float, number: int | None) -> None:
        self.zc = zc
        self.number = number
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() + seconds
        self.found: dict[str, LanGame] = {}
        self.asked: set[str] = set()
        self.lookups = asyncio.Semaphore(MAX_LOOKUPS)
        self.tasks: set[asyncio.Task[None]] = set()
        self.matched = asyncio.Event()

    def left(self) -> float:
        return max(0.0, self.deadline - self.loop.time())

    async def until_done(self) -> None:
        """Until the deadline, or SETTLE_TIME after the wanted number was found."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.matched.wait(), self.left())
        if self.matched.is_set():
            await asyncio.sleep(min(SETTLE_TIME, self.left()))
        else:
            await asyncio.sleep(self.left())

    def take(self, name: str, info: AsyncServiceInfo) -> None:
        game = _game(name, info)
        if game is not None:
            self.found[name] = game
            if game.number == self.number:
                self.matched.set()

    def from_cache(self, name: str) -> AsyncServiceInfo | None:
        """Take the name's game from the cache when it is whole there; else the info to
        ask for (None when the name is not even a service zeroconf can take)."""
        from zeroconf.asyncio import AsyncServiceInfo

        try:
            info = AsyncServiceInfo(SERVICE, name)
            complete = info.load_from_cache(self.zc)
        except Exception:  # noqa: BLE001 (a name zeroconf itself cannot take: not a game)
            return None
        if complete:
            self.take(name, info)
            return None
        return info

    async def ask(self, name: str, info: AsyncServiceInfo) -> None:
        async with self.lookups:
            left = min(LOOKUP_TIME, self.deadline - self.loop.time())
            if left <= 0 or name in self.found:
                return
            with contextlib.suppress(Exception):  # (garbage records: not a game)
                if await info.async_request(self.zc, left * 1000):
                    self.take(name, info)

    def on_change(self, zeroconf: Zeroconf, service_type: str, name: str,
                  state_change: ServiceStateChange) -> None:
        from zeroconf import ServiceStateChange

        if state_change is ServiceStateChange.Removed or name in self.found:
            return
        wanted = _wanted(name, self.number)
        if wanted is None:
            if self.number is not None and _wanted(name, None) is not None:
                self.from_cache(name)  # (another game: listed in "games seen" if whole)
            return
        info = self.from_cache(name)
        if info is None or name in self.asked or len(self.asked) >= MAX_ASKED:
            return
        self.asked.add(name)
        task = self.loop.create_task(self.ask(name, info))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def _browse(seconds: float, number: int | None) -> list[LanGame]:
    """Blocking (a worker thread): _look in zeroconf's own loop, bounded in time; no game
    when this computer cannot do multicast at all."""
    try:
        zc = _zeroconf()
    except OSError:
        return []
    try:
        assert zc.loop is not None
        future = asyncio.run_coroutine_threadsafe(_look(zc, seconds, number), zc.loop)
        try:
            return future.result(seconds + LOOKUP_TIME)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return []
    finally:
        zc.close()


def _text(value: object) -> str | None:
    """A TXT value as ASCII text, None when absent or anything else."""
    if not isinstance(value, bytes):
        return None
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        return None


def _usable(address: str) -> bool:
    """An IPv4 address a joiner could connect to (not 0.0.0.0, multicast, loopback...)."""
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return address_problem(address) is None


def _game(name: str, info: object) -> LanGame | None:
    """The game an announcement describes, None unless every field is as SPEC 3.7 says:
    version 1, a decimal number 1..99 that is also the one in its name, a port, and at
    least one usable IPv4 address (at most MAX_ADDRESSES are kept)."""
    try:
        props = dict(getattr(info, "properties", None) or {})
        addresses = [str(a) for a in info.parsed_addresses()]  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (records zeroconf cannot read: not a game)
        return None
    number_text = _text(props.get(b"n")) or ""
    if _text(props.get(b"v")) != "1" or not _NUMBER.fullmatch(number_text):
        return None
    number = int(number_text)
    if _wanted(name, number) != number:
        return None
    port = getattr(info, "port", None)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 0xFFFF:
        return None
    usable = tuple(a for a in addresses if _usable(a))[:MAX_ADDRESSES]
    if not usable:
        return None
    rules = props.get(b"r")
    shown_rules = rules.decode("utf-8", "replace") if isinstance(rules, bytes) else ""
    return LanGame(number, printable(name.removesuffix("." + SERVICE), 80), usable, port,
                   printable(shown_rules, 100))


async def browse(seconds: float = BROWSE_TIME) -> list[LanGame]:
    """Every game announced on the LAN within ``seconds``."""
    return await trio.to_thread.run_sync(_browse, seconds, None,
                                         abandon_on_cancel=True)


async def find(number: int, seconds: float = FIND_TIME) -> list[LanGame]:
    """Looks at most ``seconds`` for the game announced with ``number``: stops SETTLE_TIME
    after it is seen (so that a second announcement of that number is seen too). Returns
    every game seen, so the caller can say which numbers exist."""
    return await trio.to_thread.run_sync(_browse, seconds, number,
                                         abandon_on_cancel=True)
