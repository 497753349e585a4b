"""A small internet on one machine, for the tests and bench/connect.py.

Network namespaces joined by veth links: a WAN with a real STUN server (coturn) on two
addresses, where every frame waits 40 ms (so 80 ms round trip between two homes; netem is
the usual tool, but kernels without it exist, so wan_hub.py delays the frames), and home
networks behind nftables NAT routers that drop unsolicited inbound packets, as real ones
do:

    home A  10.14.1.0/24  hA, hA2 on one bridge   easy NAT (port-preserving masquerade)
                                                  + miniupnpd (PCP, NAT-PMP, UPnP-IGD)
    home B  10.14.2.0/24  hB                      symmetric NAT (masquerade fully-random)
    home C  10.14.3.0/24  hC                      easy NAT, no port mapping
    home D  10.14.4.0/24  hD                      easy NAT + miniupnpd, behind a carrier
                                                  NAT (its WAN address is 100.64.0.2)
    home E  10.14.5.0/24  hE                      symmetric NAT, a second one (so that a
                                                  host and a joiner can each have one)

Each home router drops what comes from the internet unasked, until ``behave(router,
"reset")`` makes it answer with a TCP reset instead, as OpenWrt does (``behaving`` for
a while); ``reboot(router)`` does what a router's restart can do to its mappings
(a new public address, nothing tracked).

The WAN uses 11.0.14.0/24, which miniupnpd counts as public (it refuses documentation
ranges); no namespace has a route out of the bed, so nothing leaves the machine.

``build_lan`` makes only one network instead, 10.15.1.0/24 on a bridge, for what happens
among the devices of one LAN (multicast DNS, whatever answers as the router); the tests
run the hostile devices of lan_fakes.py there.

Every name is prefixed with the test run's pid and xdist worker, so parallel runs never
collide; ``close()`` kills every daemon and deletes every namespace, and it runs even when
a test fails (the fixtures call it in ``finally``, and an atexit hook backs them up).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

WAN_NET = "11.0.14"
STUN_A = f"{WAN_NET}.2"
STUN_B = f"{WAN_NET}.3"
STUN_PORT = 3478
STUN_ARGS = ["--stun", f"{STUN_A}:{STUN_PORT}", "--stun", f"{STUN_B}:{STUN_PORT}"]
ONE_WAY_MS = 40  # the WAN hub's delay: 80 ms round trip between homes (and to STUN)

# home: (router WAN address, LAN prefix, hosts, symmetric NAT?, miniupnpd?, upstream)
HOMES = {
    "A": (f"{WAN_NET}.11", "10.14.1", ["hA", "hA2"], False, True, "wan"),
    "B": (f"{WAN_NET}.12", "10.14.2", ["hB"], True, False, "wan"),
    "C": (f"{WAN_NET}.13", "10.14.3", ["hC"], False, False, "wan"),
    "D": ("100.64.0.2", "10.14.4", ["hD"], False, True, "cgn"),
    "E": (f"{WAN_NET}.15", "10.14.5", ["hE"], True, False, "wan"),
}
CGN_WAN = f"{WAN_NET}.14"
# The LAN alone (build_lan): a router namespace "lr" at LAN_NET.1 that runs nothing of its
# own (the tests start fake routers there) and hosts "l1".."lN" at LAN_NET.2 and up.
LAN_NET = "10.15.1"
TOOLS = ("ip", "nft", "ss", "ethtool", "turnserver", "miniupnpd", "conntrack")


_OURS = re.compile(r"^p2g(\d+)gw\d*-")


def sweep_stale() -> None:
    """Remove the namespaces (and their processes) of earlier runs that died before they
    could clean up (killed outright): any of ours whose test process is gone."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                             check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        found = _OURS.match(name)
        if not found or Path(f"/proc/{found.group(1)}").exists():
            continue
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True,
                              check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def _router_rules(symmetric: bool, upnp: bool) -> str:
    """Forward only what the LAN started (and, with miniupnpd, what it mapped); NAT out.
    Whatever else comes in from the WAN goes to the chain `unsolicited`: empty, the
    policy drops it; a router that resets answers it (``ROUTER_BEHAVIOURS``)."""
    upnp_jump = "jump miniupnpd" if upnp else ""
    return f"""
table inet filter {{
  chain forward {{ type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "lan" accept
    {upnp_jump}
    iifname "wan" jump unsolicited
  }}
  chain miniupnpd {{ }}
  chain unsolicited {{ }}
  chain input {{ type filter hook input priority 0; policy drop;
    ct state established,related accept
    iifname != "wan" accept
    iifname "wan" jump unsolicited
  }}
}}
table inet nat {{
  chain prerouting {{ type nat hook prerouting priority -100; policy accept;
    {"jump prerouting_miniupnpd" if upnp else ""}
  }}
  chain postrouting {{ type nat hook postrouting priority 100; policy accept;
    {"jump postrouting_miniupnpd" if upnp else ""}
    {_masquerade(symmetric)}
  }}
  chain prerouting_miniupnpd {{ }}
  chain postrouting_miniupnpd {{ }}
}}
"""


def _masquerade(symmetric: bool) -> str:
    return f'oifname "wan" masquerade{" fully-random" if symmetric else ""}'


# What a home router does with a packet from the internet that nothing inside asked for:
# drop it in silence, or refuse it, a TCP reset for TCP and "port unreachable" for the
# rest, as OpenWrt's firewall does by default (its wan zone REJECTs) and many home
# routers do. Hole punching behaves differently against each (SPEC 3.8).
ROUTER_BEHAVIOURS = {
    "drop": "",
    "reset": "meta l4proto tcp reject with tcp reset\n    reject with icmpx port-unreachable",
}


class Bed:
    """The namespaces, links and daemons of one test run; see the module docstring."""

    def __init__(self, tag: str | None = None) -> None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
        self.tag = tag or f"p2g{os.getpid()}{worker}"
        sweep_stale()
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.namespaces: list[str] = []
        self.processes: list[subprocess.Popen] = []
        self._closed = False
        atexit.register(self.close)

    # -- names and commands -----------------------------------------------------------

    def ns(self, short: str) -> str:
        return f"{self.tag}-{short}"

    def sh(self, *argv: str, ns: str | None = None, check: bool = True,
           input: str | None = None) -> subprocess.CompletedProcess:
        cmd = (["ip", "netns", "exec", self.ns(ns)] if ns else []) + list(argv)
        result = subprocess.run(cmd, capture_output=True, text=True, input=input,
                                check=False)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {result.stderr.strip()}")
        return result

    def spawn(self, ns: str, argv: list[str], **popen) -> subprocess.Popen:
        """A process inside namespace ``ns``, in its own process group; killed by close()."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(ns), *argv],
                                start_new_session=True, **popen)
        self.processes.append(proc)
        return proc

    def python(self, ns: str, *args: str, home: Path, **popen) -> subprocess.Popen:
        """``python -m p2pgotg ARGS`` inside ``ns``, with its own home directory."""
        env = {**os.environ, "P2PGOTG_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        return self.spawn(ns, [sys.executable, "-m", "p2pgotg", *args], env=env, **popen)

    def terminal_line(self, ns: str, home: Path, args: str) -> str:
        """The shell line a terminal (tmux) runs for ``p2pgotg ARGS --ascii`` inside
        ``ns``, asking the bed's STUN servers, with its own home directory and the player
        named after it; then ``EXITED`` and its exit code, kept on the screen a while."""
        return (f"ip netns exec {self.ns(ns)} env P2PGOTG_NAME={shlex.quote(home.name)} "
                f"P2PGOTG_HOME={shlex.quote(str(home))} {shlex.quote(sys.executable)} -m "
                f"p2pgotg {args} --ascii {' '.join(STUN_ARGS)}; echo EXITED $?; sleep 30")

    # -- building ------------------------------------------------------------------------

    def _add_ns(self, short: str) -> None:
        self.sh("ip", "netns", "add", self.ns(short))
        self.namespaces.append(self.ns(short))
        self.sh("ip", "-n", self.ns(short), "link", "set", "lo", "up")

    def _link(self, a: str, a_if: str, b: str, b_if: str) -> None:
        self.sh("ip", "link", "add", "name", a_if, "netns", self.ns(a), "type", "veth",
                "peer", "name", b_if, "netns", self.ns(b))
        self.sh("ip", "-n", self.ns(a), "link", "set", a_if, "up")
        self.sh("ip", "-n", self.ns(b), "link", "set", b_if, "up")

    def _full_checksums(self, ns: str, ifname: str) -> None:
        """The hub copies frames from one veth to another as they are; a veth leaves the
        checksum to be filled in later (offload), which no one would do: fill it now."""
        self.sh("ethtool", "-K", ifname, "tx", "off", ns=ns)

    def _addr(self, ns: str, ifname: str, cidr: str) -> None:
        self.sh("ip", "-n", self.ns(ns), "addr", "add", cidr, "dev", ifname)

    def build(self) -> Bed:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self) -> None:
        # The WAN: a hub (wan_hub.py) in namespace "wan" joins one port per router and
        # the port of "inet", which holds the STUN server's two addresses.
        self._add_ns("wan")
        self._add_ns("inet")
        self._link("inet", "eth0", "wan", "pS")
        self._full_checksums("inet", "eth0")
        for host in ("1", "2", "3"):
            self._addr("inet", "eth0", f"{WAN_NET}.{host}/24")
        ports = ["pS"]
        # The carrier's NAT: a router on the WAN whose "LAN" is 100.64.0.0/24
        self._add_ns("cgn")
        self._link("cgn", "wan", "wan", "pcgn")
        self._full_checksums("cgn", "wan")
        ports.append("pcgn")
        self._addr("cgn", "wan", f"{CGN_WAN}/24")
        self.sh("ip", "-n", self.ns("cgn"), "link", "add", "name", "lan", "type", "bridge")
        self.sh("ip", "-n", self.ns("cgn"), "link", "set", "lan", "up")
        self._addr("cgn", "lan", "100.64.0.1/24")
        self.sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns="cgn")
        self.sh("nft", "-f", "-", ns="cgn", input=_router_rules(False, False))
        for name, (wan_ip, lan, hosts, symmetric, upnp, upstream) in HOMES.items():
            router = f"r{name}"
            self._add_ns(router)
            port = f"p{name}"
            self._link(router, "wan", upstream, port)
            if upstream == "wan":
                ports.append(port)
                self._full_checksums(router, "wan")
            else:
                self.sh("ip", "-n", self.ns(upstream), "link", "set", port, "master", "lan")
            prefix = "24"
            self._addr(router, "wan", f"{wan_ip}/{prefix}")
            gateway = f"{WAN_NET}.1" if upstream == "wan" else "100.64.0.1"
            self.sh("ip", "-n", self.ns(router), "route", "add", "default", "via", gateway)
            self.sh("ip", "-n", self.ns(router), "link", "add", "name", "lan", "type", "bridge")
            self.sh("ip", "-n", self.ns(router), "link", "set", "lan", "up")
            self._addr(router, "lan", f"{lan}.1/24")
            self.sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=router)
            self.sh("nft", "-f", "-", ns=router, input=_router_rules(symmetric, upnp))
            for i, host in enumerate(hosts, start=2):
                self._add_ns(host)
                self._link(host, "eth0", router, f"l{i}")
                self.sh("ip", "-n", self.ns(router), "link", "set", f"l{i}", "master", "lan")
                self._addr(host, "eth0", f"{lan}.{i}/24")
                self.sh("ip", "-n", self.ns(host), "route", "add", "default", "via",
                        f"{lan}.1")
            if upnp:
                self._start_miniupnpd(router, lan)
        self._start_hub(ports)
        self._start_coturn()
        self._wait_listening("inet", "tcp", STUN_PORT)
        for name, (*_rest, upnp, _up) in HOMES.items():
            if upnp:
                self._wait_listening(f"r{name}", "udp", 5351)

    def build_lan(self, hosts: int = 3) -> Bed:
        """Only a LAN: one bridge in the router namespace "lr" (LAN_NET.1, the hosts'
        default gateway; no NAT, no WAN, no daemon) and ``hosts`` host namespaces "l1",
        "l2", ... at LAN_NET.2, LAN_NET.3, ... For what happens on one network: multicast
        DNS, and whatever answers as the router."""
        try:
            self._add_ns("lr")
            self.sh("ip", "-n", self.ns("lr"), "link", "add", "name", "lan", "type", "bridge")
            self.sh("ip", "-n", self.ns("lr"), "link", "set", "lan", "up")
            self._addr("lr", "lan", f"{LAN_NET}.1/24")
            for i in range(1, hosts + 1):
                host = f"l{i}"
                self._add_ns(host)
                self._link(host, "eth0", "lr", f"p{i}")
                self.sh("ip", "-n", self.ns("lr"), "link", "set", f"p{i}", "master", "lan")
                self._addr(host, "eth0", f"{LAN_NET}.{i + 1}/24")
                self.sh("ip", "-n", self.ns(host), "route", "add", "default", "via",
                        f"{LAN_NET}.1")
        except BaseException:
            self.close()
            raise
        return self

    def lan_address(self, host: str) -> str:
        """The first address of a build_lan host ("l1" -> LAN_NET.2)."""
        return f"{LAN_NET}.{int(host[1:]) + 1}"

    def _start_hub(self, ports: list[str]) -> None:
        hub = self.spawn("wan", [sys.executable, str(Path(__file__).with_name("wan_hub.py")),
                                 str(ONE_WAY_MS), *ports],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert hub.stdout is not None
        line = hub.stdout.readline()
        if "ready" not in line:
            raise RuntimeError(f"the WAN hub did not start: {line}{hub.stdout.read()}")

    def _start_coturn(self) -> None:
        log = open(self.tmp / "coturn.log", "w")  # noqa: SIM115 (closed with the process)
        self.spawn("inet", [
            "turnserver", "-n", "--stun-only", "--no-cli", "--no-tls", "--no-dtls",
            "--listening-ip", STUN_A, "--listening-ip", STUN_B,
            "--listening-port", str(STUN_PORT), "--log-file", "stdout", "--simple-log",
            "--pidfile", str(self.tmp / "coturn.pid"), "--db", str(self.tmp / "turndb"),
        ], stdout=log, stderr=subprocess.STDOUT)

    def _start_miniupnpd(self, router: str, lan: str) -> None:
        conf = self.tmp / f"miniupnpd-{router}.conf"
        conf.write_text(
            "ext_ifname=wan\nlistening_ip=lan\nenable_natpmp=yes\nenable_upnp=yes\n"
            "secure_mode=yes\nupnp_table_name=filter\nupnp_nat_table_name=nat\n"
            f"lease_file={self.tmp / f'leases-{router}'}\n"
            "uuid=3f4c1d52-1e0c-4c1a-9a3e-6a1b2c3d4e5f\n"
            f"allow 1024-65535 {lan}.0/24 1024-65535\ndeny 0-65535 0.0.0.0/0 0-65535\n")
        log = open(self.tmp / f"miniupnpd-{router}.log", "w")  # noqa: SIM115
        self.spawn(router, ["miniupnpd", "-d", "-4", "-f", str(conf),
                            "-P", str(self.tmp / f"miniupnpd-{router}.pid")],
                   stdout=log, stderr=subprocess.STDOUT)

    def _wait_listening(self, ns: str, proto: str, port: int, timeout: float = 10) -> None:
        flag = "-ltnH" if proto == "tcp" else "-lunH"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.sh("ss", flag, f"sport = :{port}", ns=ns, check=False).stdout
            if out.strip():
                return
            time.sleep(0.05)
        raise RuntimeError(f"nothing listens on {proto} port {port} in {ns}")

    # -- looking inside ------------------------------------------------------------------

    def behave(self, router: str, behaviour: str) -> None:
        """Make a home router ("rA"...) drop or refuse ("reset") unsolicited packets."""
        rules = ROUTER_BEHAVIOURS[behaviour]
        self.sh("nft", "-f", "-", ns=router, input="flush chain inet filter unsolicited\n"
                + (f"add rule inet filter unsolicited {rules}\n".replace(
                    "\n    ", "\nadd rule inet filter unsolicited ") if rules else ""))

    @contextlib.contextmanager
    def behaving(self, behaviours: dict[str, str]) -> Iterator[None]:
        """Routers ({"rA": "reset", ...}) behaving so for a while, then dropping again."""
        try:
            for router, behaviour in behaviours.items():
                self.behave(router, behaviour)
            yield
        finally:
            for router in behaviours:
                self.behave(router, "drop")

    def reboot(self, router: str) -> None:
        """What a home router's restart can do: every connection it tracked is forgotten,
        and the provider hands it another public address, so that no mapping made before
        holds. The NAT stays of its kind (an easy one still keeps a local port's number,
        the same whatever the destination).

        A new address rather than new ports: Linux's NAT keeps one local port's public
        port for every destination only while it tracks a connection from that port, so
        a port range would turn an easy NAT symmetric between two tries."""
        self._readdress(router, rebooted=True)

    def restore(self, router: str) -> None:
        """Undo ``reboot``: the router's public address as the bed built it, with no
        connection kept."""
        self._readdress(router, rebooted=False)

    def public_address(self, router: str, rebooted: bool = False) -> str:
        """The WAN address of ``router`` ("rA"...), as built or after ``reboot``."""
        address = HOMES[router.removeprefix("r")][0]
        if not rebooted:
            return address
        prefix, last = address.rsplit(".", 1)
        return f"{prefix}.{int(last) + 100}"

    def _readdress(self, router: str, rebooted: bool) -> None:
        upstream = HOMES[router.removeprefix("r")][5]
        gateway = f"{WAN_NET}.1" if upstream == "wan" else "100.64.0.1"
        self.sh("ip", "addr", "flush", "dev", "wan", ns=router)
        self.sh("ip", "addr", "add", f"{self.public_address(router, rebooted)}/24", "dev",
                "wan", ns=router)
        self.sh("ip", "route", "replace", "default", "via", gateway, ns=router)
        self.sh("conntrack", "-F", ns=router, check=False)  # (exit 1 when it had none)

    def mapped_ports(self, router: str) -> str:
        """The router's miniupnpd forwarding rules, as nft lists them."""
        return self.sh("nft", "list", "chain", "inet", "nat", "prerouting_miniupnpd",
                       ns=router).stdout

    # -- tearing down --------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for proc in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.processes:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=3)
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)
