"""A private Tor network in the test bed of netbed.py, where homes B and E (each behind a
symmetric NAT) have no direct path between them and can play through Tor.

    Tor     11.0.14.21-25 in inet 3 directory authorities and 2 relays, TestingTorNetwork
                                  (chutney's way: short voting intervals, every relay a
                                  guard and an onion service directory, reachability
                                  assumed)

Every tor started here knows only these authorities (its DirAuthority lines, no fallback
directories: UseDefaultFallbackDirs 0; tor refuses TestingTorNetwork with the default
authorities anyway) and runs in a namespace of the bed, which has no route out: nothing
ever tries to reach an address outside this machine. ``torrc()`` is what a player's own
tor needs to join this network (p2pgotg reads it from its home's ``config/torrc``);
``client(ns)`` starts a tor in a home, as a system tor with a control port would be.

The relays sit together in one namespace: between them there is no delay, and a home
reaches any of them across the WAN hub (40 ms each way).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from netbed import WAN_NET, Bed

TOR_NET = [f"{WAN_NET}.{21 + i}" for i in range(5)]
AUTHORITIES = 3
OR_PORT, DIR_PORT = 5000, 7000
CONTROL_PORT, SOCKS_PORT = 9051, 9050  # where a home's own tor listens (client())

_COMMON = """TestingTorNetwork 1
UseDefaultFallbackDirs 0
PathsNeededToBuildCircuits 0.67
TestingDirAuthVoteExit *
TestingDirAuthVoteHSDir *
TestingDirAuthVoteGuard *
TestingMinExitFlagThreshold 0
V3AuthNIntervalsValid 2
GeoIPFile {tmp}/no-geoip
GeoIPv6File {tmp}/no-geoip6
SafeLogging 0
ShutdownWaitLength 0
"""
_AUTHORITY = """AuthoritativeDirectory 1
V3AuthoritativeDirectory 1
DirPort {ip}:7000
TestingV3AuthInitialVotingInterval 5
TestingV3AuthInitialVoteDelay 2
TestingV3AuthInitialDistDelay 2
V3AuthVotingInterval 10
V3AuthVoteDelay 2
V3AuthDistDelay 2
"""


class TorNetworkDown(Exception):
    """The private Tor network did not come up; the text says how far it got."""


class TorBed(Bed):
    """netbed's Bed with home E and the private Tor network (``start_tor``)."""

    def __init__(self, tag: str | None = None) -> None:
        super().__init__(tag)
        self.authority_lines: list[str] = []
        self.tor_dirs: list[Path] = []

    # -- building: the Tor network's addresses on the internet's side of the hub ---------

    def _start_hub(self, ports: list[str]) -> None:
        for ip in TOR_NET:
            self._addr("inet", "eth0", f"{ip}/24")
        super()._start_hub(ports)

    # -- the Tor network ------------------------------------------------------------------

    def torrc(self) -> str:
        """What a tor needs to use this network (and only it)."""
        return _COMMON.format(tmp=self.tmp) + "\n".join(self.authority_lines) + "\n"

    def start_tor(self, timeout: float = 120.0) -> float:
        """Keys, then the authorities and relays; returns once the authorities publish a
        consensus with every relay running (seconds taken), else TorNetworkDown."""
        start = time.monotonic()
        self.tor_dirs = [self.tmp / f"tor{i}" for i in range(len(TOR_NET))]
        for folder in self.tor_dirs:
            (folder / "keys").mkdir(parents=True)
            os.chmod(folder, 0o700)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:  # (RSA keys: the slow part)
            lines = list(pool.map(self._authority_keys, range(AUTHORITIES)))
            list(pool.map(self._relay_keys, range(AUTHORITIES, len(TOR_NET))))
        self.authority_lines = lines
        for i, (ip, folder) in enumerate(zip(TOR_NET, self.tor_dirs, strict=True)):
            conf = self.torrc() + f"""DataDirectory {folder}
Nickname node{i}
Address {ip}
ORPort {ip}:{OR_PORT}
SocksPort 0
ExitRelay 0
AssumeReachable 1
ContactInfo node{i}@test.invalid
Log notice file {folder}/notice.log
"""
            if i < AUTHORITIES:
                conf += _AUTHORITY.format(ip=ip)
            (folder / "torrc").write_text(conf)
            self._spawn_tor("inet", folder)
        deadline = start + timeout
        while time.monotonic() < deadline:
            if self._running_relays() >= len(TOR_NET):
                return time.monotonic() - start
            time.sleep(0.5)
        raise TorNetworkDown(
            f"no consensus with all {len(TOR_NET)} relays running within {timeout:g} s "
            f"({self._running_relays()} running); the first authority's log ends: "
            + self.tail(self.tor_dirs[0] / "notice.log"))

    def client(self, ns: str, name: str) -> Path:
        """A tor in home ``ns`` with its control port at 127.0.0.1:9051 there (cookie
        authentication) and its SOCKS port at 9050; its folder."""
        folder = self.tmp / f"client-{name}"
        folder.mkdir()
        os.chmod(folder, 0o700)
        (folder / "torrc").write_text(self.torrc() + f"""DataDirectory {folder}
SocksPort 127.0.0.1:{SOCKS_PORT}
ControlPort 127.0.0.1:{CONTROL_PORT}
CookieAuthentication 1
Log notice file {folder}/notice.log
""")
        self._spawn_tor(ns, folder)
        return folder

    def _spawn_tor(self, ns: str, folder: Path) -> None:
        out = (folder / "output.log").open("w")  # (closed with the process)
        self.spawn(ns, ["tor", "-f", str(folder / "torrc"), "--defaults-torrc", os.devnull],
                   stdout=out, stderr=subprocess.STDOUT)

    def _authority_keys(self, i: int) -> str:
        folder, ip = self.tor_dirs[i], TOR_NET[i]
        keys = folder / "keys"
        subprocess.run(["tor-gencert", "--create-identity-key", "--passphrase-fd", "0",
                        "-i", str(keys / "authority_identity_key"),
                        "-s", str(keys / "authority_signing_key"),
                        "-c", str(keys / "authority_certificate"),
                        "-m", "12", "-a", f"{ip}:{DIR_PORT}"],
                       input="\n", capture_output=True, text=True, check=True)
        certificate = (keys / "authority_certificate").read_text()
        v3ident = re.search(r"^fingerprint (\S+)", certificate, re.M)
        assert v3ident is not None, certificate
        return (f"DirAuthority node{i} orport={OR_PORT} no-v2 v3ident={v3ident.group(1)} "
                f"{ip}:{DIR_PORT} {self._relay_keys(i)}")

    def _relay_keys(self, i: int) -> str:
        """Make relay i's keys now (tor would at start); its fingerprint."""
        out = subprocess.run(
            ["tor", "--ignore-missing-torrc", "-f", os.devnull, "--defaults-torrc", os.devnull,
             "--DataDirectory", str(self.tor_dirs[i]), "--ORPort", str(OR_PORT),
             "--list-fingerprint"], capture_output=True, text=True, check=False).stdout
        found = re.search(r"^\S+ ((?:[0-9A-F]{4} ?){10})$", out, re.M)
        if found is None:
            raise TorNetworkDown(f"tor --list-fingerprint said: {out[-500:]}")
        return found.group(1).replace(" ", "")

    def _running_relays(self) -> int:
        try:
            text = (self.tor_dirs[0] / "cached-consensus").read_text()
        except OSError:
            return 0
        return sum(1 for line in text.splitlines()
                   if line.startswith("s ") and "Running" in line.split())

    @staticmethod
    def tail(log: Path, lines: int = 5) -> str:
        with contextlib.suppress(OSError):
            return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def tor_processes(self) -> list[tuple[str, str]]:
        """(namespace, configuration text, included files too) of every tor running in
        the bed's namespaces."""
        found = []
        for ns in self.namespaces:
            for pid in self.sh("ip", "netns", "pids", ns, check=False).stdout.split():
                with contextlib.suppress(OSError):
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if Path(argv[0].decode()).name == "tor":
                        config = argv[argv.index(b"-f") + 1].decode() if b"-f" in argv \
                            else "(none)"
                        found.append((ns, _configuration(Path(config))))
        return found

    def strays(self) -> list[str]:
        """The tors running in the bed that could know another network than this one: any
        whose configuration lacks UseDefaultFallbackDirs 0 or names other authorities."""
        ours = set(self.authority_lines)
        bad = []
        for ns, text in self.tor_processes():
            named = {line for line in text.splitlines() if line.startswith("DirAuthority")}
            if named != ours or "UseDefaultFallbackDirs 0" not in text.splitlines():
                bad.append(f"{ns}: {text[:300]}")
        return bad


def _configuration(path: Path) -> str:
    """A torrc with the files it %includes in place (one level, as p2pgotg writes it)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return ""
    out = []
    for line in lines:
        if line.startswith("%include "):
            with contextlib.suppress(OSError):
                out += Path(line.split(None, 1)[1]).read_text().splitlines()
        else:
            out.append(line)
    return "\n".join(out)


def tools_missing() -> list[str]:
    return [t for t in ("tor", "tor-gencert") if shutil.which(t) is None]
