"""Which tor p2pgotg uses, and getting it ready: the control port given with ``--tor``, or
a tor p2pgotg starts itself, with a data directory of its own, that lives as long as the
program (SPEC 3.8).

A tor p2pgotg starts reads nothing of the system's tor configuration: its own torrc (ports
chosen by tor, cookie authentication, logs in its folder) and then, when it exists, the
player's ``torrc`` in p2pgotg's config folder (bridges where Tor is blocked, or a private
Tor network's authorities, as the test bed does). It takes ownership of that tor (tor's
TAKEOWNERSHIP): when the program ends, however it ends, its control connection closes and
tor stops.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from p2pgotg.net.reaching.tor_link import TorControl, TorFailed
from p2pgotg.protocol.printable import printable
from p2pgotg.reach.tor_control import Bootstrap

START_TIMEOUT = 30.0  # seconds for a tor we start to open its control port
BOOTSTRAP_TIMEOUT = 180.0  # seconds for tor to reach the Tor network
USER_TORRC = "torrc"
INSTALL = ("install tor (Debian, Ubuntu: sudo apt install tor; Fedora: sudo dnf install tor; "
           "macOS: brew install tor)")


class TorMissing(TorFailed):
    """Tor is not installed (or is turned off); the text says what to install."""


@dataclass(frozen=True)
class TorChoice:
    """``--tor``: ``auto`` (start our own tor when it is needed), ``off``, or the control
    port of a running tor (``HOST:PORT``, or the path of its control socket)."""

    mode: str = "auto"
    port: tuple[str, int] | None = None
    socket: Path | None = None

    @classmethod
    def parse(cls, text: str) -> TorChoice:
        """ValueError says what is wrong."""
        text = text.strip()
        if text.lower() in ("auto", "off"):
            return cls(text.lower())
        if text.startswith("/"):
            return cls("control", socket=Path(text))
        host, _, port = text.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit() or not 1 <= int(port) <= 0xFFFF:
            raise ValueError(f"{text!r} is not auto, off, HOST:PORT of a tor control port, "
                             "or the path of a control socket")
        return cls("control", port=(host, int(port)))

    def __str__(self) -> str:
        if self.port is not None:
            return f"{self.port[0]}:{self.port[1]}"
        return str(self.socket) if self.socket is not None else self.mode


OFF = TorChoice("off")


def tor_binary() -> str | None:
    """The tor program on PATH."""
    return shutil.which("tor")


class TorUse:
    """The tor this program uses, got ready on first need and kept for the program's life:
    ``missing`` says at once whether there can be one, ``control`` gives its authenticated
    control connection (starting tor, or connecting to the given one), ``ready`` waits
    until tor has reached the Tor network and gives its SOCKS address."""

    def __init__(self, choice: TorChoice, data_dir: Path, config_dir: Path) -> None:
        self.choice = choice
        self.data_dir = data_dir
        self.config_dir = config_dir
        self._control: TorControl | None = None
        self._process: trio.Process | None = None
        self._temporary: Path | None = None
        self._lock = trio.Lock()
        self._failed: TorFailed | None = None

    def missing(self) -> str | None:
        """Why no tor can be used (None when one can, or may, be): off, or not installed."""
        if self.choice.mode == "off":
            return "tor is turned off (--tor off)"
        if self.choice.mode == "auto" and tor_binary() is None:
            return f"tor is not installed: {INSTALL}"
        return None

    async def control(self, on_status: Callable[[str], None]) -> TorControl:
        async with self._lock:
            if self._control is not None:
                return self._control
            if self._failed is not None:
                raise self._failed
            why = self.missing()
            if why is not None:
                raise TorMissing(why)
            try:
                if self.choice.mode == "control":
                    where = self.choice.socket or self.choice.port
                    assert where is not None
                    control = await TorControl.open(where)
                    await control.authenticate()
                else:
                    control = await self._start(on_status)
            except TorFailed as exc:
                self._failed = exc
                raise
            self._control = control
            return control

    async def ready(self, on_status: Callable[[str], None],
                    timeout: float = BOOTSTRAP_TIMEOUT) -> tuple[str, int]:
        """tor's SOCKS address once it has reached the Tor network; TorFailed after
        ``timeout`` seconds, saying how far it got."""
        control = await self.control(on_status)
        deadline = trio.current_time() + timeout
        said = ""
        while True:
            state = await control.bootstrap()
            if state.done:
                return await control.socks_address()
            if str(state) != said:
                said = str(state)
                on_status(f"tor: reaching the Tor network ({printable(said, 120)})")
            if trio.current_time() >= deadline:
                raise TorFailed(self._stuck(state, timeout))
            await trio.sleep(0.5)

    def _stuck(self, state: Bootstrap, timeout: float) -> str:
        where = self.config_dir / USER_TORRC
        return (f"tor could not reach the Tor network within {timeout:g} s (it got to "
                f"{printable(str(state), 120)}). If Tor is blocked where you are, add "
                f"bridges to {where} (https://bridges.torproject.org)")

    async def _start(self, on_status: Callable[[str], None]) -> TorControl:
        binary = tor_binary()
        assert binary is not None
        folder = self.data_dir / "tor"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if _in_use(folder):  # (another p2pgotg of this home runs its tor there)
            folder = self._temporary = Path(tempfile.mkdtemp(prefix="tor-", dir=self.data_dir))
        os.chmod(folder, 0o700)
        port_file = folder / "control-port"
        port_file.unlink(missing_ok=True)
        torrc = folder / "p2pgotg-torrc"
        lines = [f"DataDirectory {folder}",
                 "SocksPort auto ExtendedErrors",
                 "ControlPort auto",
                 f"ControlPortWriteToFile {port_file}",
                 "CookieAuthentication 1",
                 f"__OwningControllerProcess {os.getpid()}",
                 f"Log notice file {folder / 'notice.log'}"]
        user = self.config_dir / USER_TORRC
        if user.is_file():
            lines.append(f"%include {user}")
        torrc.write_text("\n".join(lines) + "\n")
        on_status("tor: starting tor")
        output = folder / "output.log"  # (before its log is set up, tor writes here)
        try:
            with output.open("wb") as out:
                self._process = await trio.lowlevel.open_process(
                    [binary, "-f", str(torrc), "--defaults-torrc", os.devnull],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise TorFailed(f"tor could not be started ({exc.strerror or exc})") from None
        try:
            port = await self._control_port(port_file, [folder / "notice.log", output])
            control = await TorControl.open(port)
            await control.authenticate()
            await control.checked("TAKEOWNERSHIP", "to stop when p2pgotg stops")
        except BaseException:
            await self._stop()
            raise
        return control

    async def _control_port(self, port_file: Path, logs: list[Path]) -> tuple[str, int]:
        """The address tor wrote once its control port is open (``PORT=HOST:PORT``)."""
        assert self._process is not None
        deadline = trio.current_time() + START_TIMEOUT
        while trio.current_time() < deadline:
            with contextlib.suppress(OSError):
                text = port_file.read_text()
                if text.endswith("\n") and text.startswith("PORT="):
                    host, _, port = text.strip()[5:].rpartition(":")
                    return host, int(port)
            if self._process.poll() is not None:
                raise TorFailed(f"tor stopped at once: {_last_words(logs)}")
            await trio.sleep(0.05)
        raise TorFailed(f"tor did not open its control port within {START_TIMEOUT:g} s: "
                        f"{_last_words(logs)}")

    async def _stop(self) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
            with trio.move_on_after(5):
                await self._process.wait()
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._process = None
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    async def aclose(self) -> None:
        """Stop using tor: a tor we started stops too."""
        with trio.CancelScope(shield=True):
            if self._control is not None:
                await self._control.aclose()
                self._control = None
            await self._stop()


def _in_use(folder: Path) -> bool:
    """Whether a running tor holds this data directory (tor's own lock on ``lock``)."""
    if sys.platform == "win32":
        return False
    import fcntl

    try:
        fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing releases our lock)
    return False


def _last_words(logs: list[Path]) -> str:
    """The last warning in tor's logs (else its last error, or line), escaped, without
    the time, for a message."""
    lines: list[str] = []
    for log in logs:
        with contextlib.suppress(OSError):
            lines += log.read_text(errors="replace").splitlines()
    warned = [line for line in lines if "[warn]" in line] or \
        [line for line in lines if "[err]" in line] or lines or ["it wrote nothing"]
    last = warned[-1]
    return printable(last[last.find("["):] if "[" in last else last, 300)
