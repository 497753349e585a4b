"""Games on the LAN by multicast DNS (python-zeroconf): the host announces
``_p2pgotg._tcp`` with its short code's number; a joiner browses for it.

zeroconf runs its own thread and asyncio loop; its blocking calls are made here from trio
worker threads, so the trio side never blocks. The TXT record holds the session version
``v``, the game number ``n`` and the rules ``r`` (for the list a joiner sees): never the
words of the code, which only the two players know.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import trio

SERVICE = "_p2pgotg._tcp.local."
BROWSE_TIME = 1.5  # seconds to collect announcements when listing games
FIND_TIME = 3.0  # seconds to look for one game number before giving up


@dataclass(frozen=True)
class LanGame:
    number: int
    name: str
    addresses: tuple[str, ...]
    port: int
    rules: str


def _shown(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)[:80]


def _zeroconf() -> object:
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

    def register() -> object:
        zc = _zeroconf()
        try:
            zc.register_service(info, allow_name_change=True)  # type: ignore[attr-defined]
        except BaseException:
            zc.close()  # type: ignore[attr-defined]
            raise
        return zc

    def unregister(zc: object) -> None:
        with contextlib.suppress(Exception):
            zc.unregister_service(info)  # type: ignore[attr-defined]
        zc.close()  # type: ignore[attr-defined]

    zc: object | None = None
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


def _browse(seconds: float, number: int | None) -> list[LanGame]:
    """Blocking: collect announced games for ``seconds`` (less once ``number`` is found)."""
    from zeroconf import ServiceBrowser, ServiceStateChange

    names: list[str] = []
    changed = threading.Event()

    def on_change(zeroconf: object, service_type: str, name: str,
                  state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Added and name not in names:
            names.append(name)
            changed.set()

    zc = _zeroconf()
    found: dict[str, LanGame] = {}
    try:
        browser = ServiceBrowser(zc, SERVICE, handlers=[on_change])  # type: ignore[arg-type]
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            changed.wait(max(0.0, end - time.monotonic()))
            changed.clear()
            for name in list(names):
                if name in found:
                    continue
                info = zc.get_service_info(SERVICE, name, timeout=1000)  # type: ignore[attr-defined]
                game = _game(name, info)
                if game is not None:
                    found[name] = game
                    if number is not None and game.number == number:
                        return [game]
        browser.cancel()
    finally:
        zc.close()  # type: ignore[attr-defined]
    return sorted(found.values(), key=lambda g: g.number)


def _game(name: str, info: object) -> LanGame | None:
    if info is None:
        return None
    props = {k.decode("ascii", "replace") if isinstance(k, bytes) else str(k):
             (v or b"").decode("utf-8", "replace") if isinstance(v, bytes) else str(v or "")
             for k, v in (getattr(info, "properties", None) or {}).items()}
    try:
        number = int(props.get("n", ""))
    except ValueError:
        return None
    addresses = tuple(str(a) for a in info.parsed_addresses())  # type: ignore[attr-defined]
    port = getattr(info, "port", None)
    if props.get("v") != "1" or not addresses or not isinstance(port, int) or not port:
        return None
    shown = _shown(name.removesuffix("." + SERVICE))
    return LanGame(number, shown, addresses, port, _shown(props.get("r", "")))


def _browse_or_none(seconds: float, number: int | None) -> list[LanGame]:
    """_browse, with no game seen when this computer cannot do multicast at all."""
    try:
        return _browse(seconds, number)
    except OSError:
        return []


async def browse(seconds: float = BROWSE_TIME) -> list[LanGame]:
    """Every game announced on the LAN within ``seconds``."""
    return await trio.to_thread.run_sync(_browse_or_none, seconds, None,
                                         abandon_on_cancel=True)


async def find(number: int, seconds: float = FIND_TIME) -> list[LanGame]:
    """Looks at most ``seconds`` for the game announced with ``number``: stops as soon as
    it is seen. Returns every game seen, so the caller can say which numbers exist."""
    return await trio.to_thread.run_sync(_browse_or_none, seconds, number,
                                         abandon_on_cancel=True)
