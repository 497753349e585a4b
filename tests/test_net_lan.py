"""One network and whoever else is on it (SPEC 3.7, 3.8): real `p2pgotg` commands in the
namespaces of netbed's build_lan, against the hostile or broken devices of lan_fakes.py: a
joiner that guesses on many sessions at once, a fake host of the same game number with a
hundred addresses, a multicast DNS flood, routers whose answers are garbage, and another
user of the same computer."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from netbed import LAN_NET, Bed, missing_tools
from test_net_internet import SAFETY, Run, host

from p2pgotg.reach.candidates import PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode

pytestmark = pytest.mark.slow
FAKES = Path(__file__).with_name("lan_fakes.py")
OFFLINE = ("--stun", "off")  # nothing beyond the LAN to ask


@pytest.fixture(scope="module")
def lan():
    missing = missing_tools()
    assert not missing, f"the test bed needs {missing} (.ci/run installs them) and root"
    built = Bed().build_lan(3)
    try:
        yield built
    finally:
        built.close()


class Fake(Run):
    """A lan_fakes.py process in a namespace, its lines gathered as they come."""

    def __init__(self, bed: Bed, ns: str, *args: str, ready: bool = True) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                           os.environ.get("PYTHONPATH")]))}
        self.proc = bed.spawn(ns, [sys.executable, str(FAKES), *args], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if ready:
            self.wait_for("^ready$")

    def count(self, pattern: str) -> int:
        return sum(1 for line in list(self.lines) if re.search(pattern, line))


def short_code(hosting: Run) -> tuple[int, str, str]:
    number, first, second = hosting.wait_for(r"^code: (\d+)-([a-z]+)-([a-z]+)$").groups()
    return int(number), first, second


def assert_no_traceback(*runs: Run) -> None:
    for run in runs:
        assert "Traceback" not in run.text, run.text


# -- finding 6: three tries in all ----------------------------------------------------------

def test_a_short_code_gives_three_guesses_however_many_sessions_are_open_at_once(lan, tmp_path):
    """Eight sessions from one address, each sending its PAKE message before any confirms:
    the host answers three (each a guess), refuses the rest, and counts to 3 of 3."""
    hosting, invite = host(lan, "l1", tmp_path / "host", *OFFLINE, "--no-port-map")
    try:
        number, first, second = short_code(hosting)
        wrong = "aardvark" if second != "aardvark" else "absurd"
        guesser = Fake(lan, "l2", "guesser", lan.lan_address("l1"), str(invite.port),
                       f"{number}-{first}-{wrong}", "8", ready=False)
        guesser.wait_for("^done$")
        assert guesser.count("^answered$") == 3, guesser.text
        assert guesser.count("^refused ") == 5, guesser.text
        assert guesser.count("^confirmed$") == 0, guesser.text
        for tried in (1, 2, 3):
            hosting.wait_for(rf"a joiner gave a wrong short code \({tried} of 3 ")
        late = Run(lan, "l2", tmp_path / "late", "join", f"{number}-{first}-{second}", "--bot")
        assert late.finish() == 1
        assert "retired" in late.text, late.text
        assert not re.search(r"\b[4-9] of 3\b|-\d+ more", hosting.text), hosting.text
        assert_no_traceback(hosting, late)
    finally:
        hosting.stop()


# -- finding 7: one guess per join ----------------------------------------------------------

def _many_addresses(bed: Bed, ns: str, count: int) -> list[str]:
    """``count`` more addresses on the host's interface (gone with the namespace)."""
    addresses = [f"{LAN_NET}.{100 + i}" for i in range(count)]
    for address in addresses:
        bed.sh("ip", "addr", "add", f"{address}/24", "dev", "eth0", ns=ns, check=False)
    return addresses


def test_a_fake_host_with_a_hundred_addresses_gets_one_guess_per_join(lan, tmp_path):
    addresses = _many_addresses(lan, "l3", 100)
    fake = Fake(lan, "l3", "host", "42", "4242", *addresses)
    try:
        joiner = Run(lan, "l1", tmp_path / "joiner", "join", "42-adroitness-aardvark", "--bot")
        assert joiner.finish() == 1, joiner.text
        assert "wrong short code" in joiner.text or "does not match" in joiner.text, joiner.text
        assert fake.count("^guess ") == 1, fake.text
        assert fake.count("^pake ") == 1, fake.text
        assert_no_traceback(joiner)
    finally:
        fake.stop()


def test_two_games_announced_with_one_number_cost_no_guess(lan, tmp_path):
    """The real host and another announcement of its number: the joiner says so and makes
    no guess at either (an honest second host would lose a try to a joiner of the first)."""
    hosting, _invite = host(lan, "l1", tmp_path / "host", *OFFLINE, "--no-port-map")
    fake = None
    try:
        number, first, second = short_code(hosting)
        fake = Fake(lan, "l3", "host", str(number), "4243", lan.lan_address("l3"))
        joiner = Run(lan, "l2", tmp_path / "joiner", "join", f"{number}-{first}-{second}",
                     "--bot")
        assert joiner.finish() == 1, joiner.text
        assert f"2 games on this network are announced as number {number}" in joiner.text
        assert "invite code" in joiner.text  # what to do instead
        assert fake.count("^pake ") == 0, fake.text
        assert "wrong short code" not in hosting.text and "short code accepted" not in joiner.text
        assert_no_traceback(hosting, joiner)
    finally:
        if fake is not None:
            fake.stop()
        hosting.stop()


# -- finding 8: a multicast DNS flood -------------------------------------------------------

def test_a_multicast_dns_flood_neither_hangs_join_nor_hides_the_host(lan, tmp_path):
    hosting, _invite = host(lan, "l1", tmp_path / "host", *OFFLINE, "--no-port-map")
    flood = None
    try:
        number, first, second = short_code(hosting)
        flood = Fake(lan, "l3", "flood", str(number), lan.lan_address("l3"))
        time.sleep(1)  # (so that the flood is what a newcomer hears first)
        listing = Run(lan, "l2", tmp_path / "lister", "join")
        assert listing.finish(SAFETY) == 0, listing.text
        assert re.search(rf"^\s+{number}\s+p2pgotg game {number} on ", listing.text, re.M)
        assert len(re.findall(r"^\s+\d+\s+p2pgotg game", listing.text, re.M)) == 1, listing.text
        assert "\x1b" not in listing.text
        joiner = Run(lan, "l2", tmp_path / "joiner", "join", f"{number}-{first}-{second}",
                     "--bot")
        try:
            joiner.wait_for("short code accepted", SAFETY)
            assert_no_traceback(joiner)
        finally:
            joiner.stop()
        absent = number % 99 + 1
        nobody = Run(lan, "l2", tmp_path / "nobody", "join", f"{absent}-{first}-{second}",
                     "--bot")
        assert nobody.finish(SAFETY) == 1
        assert f"no game numbered {absent}" in nobody.text, nobody.text
        assert_no_traceback(hosting, listing, nobody)
    finally:
        if flood is not None:
            flood.stop()
        hosting.stop()


# -- finding 9: what routers answer ---------------------------------------------------------

@pytest.mark.parametrize(("scenario", "says"), [
    ("pcp-port0", r"PCP: .*port 0"),
    ("natpmp-port0", r"NAT-PMP: .*port 0"),
])
def test_a_router_granting_port_0_is_no_mapping(lan, tmp_path, scenario, says):
    router = Fake(lan, "lr", "router", scenario)
    try:
        hosting, invite = host(lan, "l1", tmp_path / "host", *OFFLINE)
        try:
            hosting.wait_for(rf"^network: port mapping: .*{says}")
            assert invite.candidates and all(c.port for c in invite.candidates)
            assert_no_traceback(hosting)
        finally:
            hosting.stop()
    finally:
        router.stop()


@pytest.mark.parametrize("where", ["l3", "lr"])
def test_an_igd_whose_address_is_not_an_ip_is_no_mapping(lan, tmp_path, where):
    """A device answering UPnP as a gateway whose external address is `not-an-ip`: another
    device of the LAN (whose answer is not taken at all), or the router itself."""
    address = lan.lan_address(where) if where != "lr" else f"{LAN_NET}.1"
    igd = Fake(lan, where, "igd", "not-an-ip", address)
    try:
        hosting, invite = host(lan, "l1", tmp_path / "host", *OFFLINE)
        try:
            if where == "lr":
                hosting.wait_for(r"^network: port mapping: .*UPnP-IGD: .*'not-an-ip'.* not an "
                                 r"IP address")
            else:
                hosting.wait_for(rf"^network: port mapping: .*UPnP-IGD: .*{address}.* not "
                                 r"your router")
            assert invite.candidates
            assert_no_traceback(hosting)
        finally:
            hosting.stop()
    finally:
        igd.stop()


MAPPING_SCRIPT = """
import json, socket, sys, trio
from p2pgotg.net.reaching import portmap

async def main():
    for scenario in sys.argv[2:]:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(b"scenario " + scenario.encode(), (sys.argv[1], 5351))
            assert s.recv(16) == b"ok"
        notes = []
        mapping = await portmap.map_port(45100, upnp=False, on_note=notes.append)
        got = None if mapping is None else [mapping.method, mapping.external_address,
                                            mapping.external_port, mapping.lifetime]
        print(json.dumps({"scenario": scenario, "mapping": got, "notes": notes}), flush=True)

trio.run(main)
"""
GOOD = {"pcp-ok": ["PCP", "11.0.15.1", 45100, 3600],
        "natpmp-ok": ["NAT-PMP", "11.0.15.1", 45100, 3600]}
BAD = ["pcp-port0", "pcp-lifetime0", "pcp-unspecified", "pcp-unspecified6", "pcp-multicast",
       "pcp-loopback", "pcp-other-internal", "pcp-udp", "pcp-other-nonce", "pcp-cut",
       "pcp-garbage", "natpmp-port0", "natpmp-lifetime0", "natpmp-other-internal",
       "natpmp-unspecified", "natpmp-broadcast", "natpmp-cut", "natpmp-map-cut",
       "natpmp-garbage", "silent"] + [f"random:{seed}" for seed in range(12)]


def test_every_garbage_router_answer_is_no_mapping_with_a_reason_over_udp(lan):
    router = Fake(lan, "lr", "router")
    try:
        proc = lan.spawn("l1", [sys.executable, "-c", MAPPING_SCRIPT, f"{LAN_NET}.1",
                                *GOOD, *BAD], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=SAFETY * 2)
        assert proc.returncode == 0, out
        results = {r["scenario"]: r for r in map(json.loads, out.splitlines())}
        for scenario, expected in GOOD.items():
            assert results[scenario]["mapping"] == expected, results[scenario]
        for scenario in BAD:
            result = results[scenario]
            assert result["mapping"] is None, result
            assert result["notes"] and all(re.match(r"(PCP|NAT-PMP): |no answer from|the "
                                                    r"router .* answers neither", n)
                                           for n in result["notes"]), result
            assert not any("\x1b" in n for n in result["notes"])
    finally:
        router.stop()


# -- finding 11: the reply inbox and another user -------------------------------------------

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
SQUATTER = r"""
import os, socket, sys, threading
names = sys.argv[1:]
socks = []
for name in names:
    try:
        if name.startswith("@"):
            address = b"\0" + name[1:].encode()
        else:
            os.makedirs(os.path.dirname(name), mode=0o777, exist_ok=True)
            address = name
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(address)
        s.listen(4)
        socks.append(s)
        print("squatting", name, flush=True)
    except OSError as exc:
        print("cannot squat", name, exc.strerror, flush=True)

def serve(s):
    while True:
        c, _ = s.accept()
        data = c.recv(4096)
        print("got", data.decode(errors="replace").strip(), flush=True)
        c.sendall(b"ok: \x1b]0;pwned\x07\x1b[31mthe code is mine\n")
        c.close()

for s in socks:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""


def _inbox_names(runtime: Path, data_dir: Path) -> list[str]:
    """Where an inbox could be, by SPEC 3.8: the abstract name of before, and the socket in
    the user's own folder of the runtime directory."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:24]
    return [f"@p2pgotg-reply-{digest}", str(runtime / f"p2pgotg-{os.getuid()}" /
                                             f"reply-{digest}")]


class Squatter(Fake):
    """SQUATTER run as another user (nobody) in namespace ``ns``."""

    def __init__(self, bed: Bed, ns: str, names: list[str]) -> None:
        self.proc = bed.spawn(ns, [*NOBODY, "/usr/bin/python3", "-c", SQUATTER, *names],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        self.wait_for("^ready$")


@pytest.fixture
def runtime_dirs():
    """Runtime directories other users can reach (pytest's own tmp_path is private)."""
    made: list[Path] = []

    def make(mode: int) -> Path:
        path = Path(tempfile.mkdtemp(prefix="p2pgotg-test-runtime-"))
        path.chmod(mode)
        made.append(path)
        return path

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def _reply_code() -> str:
    """A well-formed reply code of another game: the host answers that it is not its own."""
    return ReplyCode.make([Candidate(PUNCH, "11.0.14.11", 40001)], int(time.time()),
                          os.urandom(8), os.urandom(16)).encode()


@contextlib.contextmanager
def host_beside_a_squatter(lan: Bed, home: Path, runtime: Path, monkeypatch):
    """A squatter of another user takes every inbox name it can in ``runtime``, then the
    real host starts from ``home`` with ``runtime`` as its XDG_RUNTIME_DIR."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    squatter = Squatter(lan, "l1", _inbox_names(runtime, home / "data"))
    try:
        hosting, _invite = host(lan, "l1", home, *OFFLINE, "--no-port-map")
        try:
            yield hosting, squatter
        finally:
            hosting.stop()
    finally:
        squatter.stop()


def test_another_user_who_takes_the_inbox_folder_first_never_gets_the_code(
        lan, tmp_path, runtime_dirs, monkeypatch):
    """In a runtime directory every user may write to (as /tmp), another user makes our
    inbox's folder first: the host says it cannot take reply codes, `host --reply` refuses
    to hand the code over, and nothing the squatter says reaches the terminal raw."""
    home = tmp_path / "host"
    with host_beside_a_squatter(lan, home, runtime_dirs(0o1777), monkeypatch) as (
            hosting, squatter):
        hosting.wait_for(r"^network: reply codes cannot be taken here: .*another user")
        taker = Run(lan, "l1", home, "host", "--reply", _reply_code())
        assert taker.finish() == 2, taker.text
        assert "another user" in taker.text, taker.text
        assert "\x1b" not in taker.text
        assert squatter.count("^got ") == 0, squatter.text
        assert_no_traceback(hosting, taker)


def test_the_inbox_is_out_of_another_users_reach_and_the_code_goes_to_the_host(
        lan, tmp_path, runtime_dirs, monkeypatch):
    home = tmp_path / "host"
    with host_beside_a_squatter(lan, home, runtime_dirs(0o700), monkeypatch) as (
            hosting, squatter):
        taker = Run(lan, "l1", home, "host", "--reply", _reply_code())
        assert taker.finish() == 1, taker.text
        assert "belongs to another game" in taker.text, taker.text  # the host's answer
        hosting.wait_for("a reply code was refused: .*belongs to another game")
        assert squatter.count("^got ") == 0, squatter.text
        assert "\x1b" not in taker.text
        assert "reply codes cannot be taken" not in hosting.text
        assert_no_traceback(hosting, taker)
