"""A whole game through Tor between two homes behind symmetric NATs, where no direct path
exists (SPEC 3.8), on the private Tor network of tests/torbed.py: the host's tor is one
p2pgotg starts itself (its home's torrc names the private authorities), the joiner's a tor
already running in its home, named with `--tor HOST:PORT`. TLS and the pin run inside as
over TCP; the host is killed in the middle and resumes, publishing the same onion address,
and the joiner, still running, finds it again. Bounded throughout: a private network that
does not come up skips the test saying why; a step that hangs fails it."""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path

import pytest
from netbed import STUN_ARGS, missing_tools
from test_net_internet import SAFETY, Run
from torbed import CONTROL_PORT, TorBed, TorNetworkDown, tools_missing

from p2pgotg.games import replay
from p2pgotg.net.reaching.invite import NAT_SYMMETRIC, NAT_UNKNOWN, Invite
from p2pgotg.protocol import Finding, parse
from p2pgotg.protocol.transcript import TranscriptError
from p2pgotg.reach.candidates import LAN, ONION, PUNCH

pytestmark = pytest.mark.slow
TOR_SAFETY = 240.0  # seconds for a step through Tor (a tor's bootstrap, a publication)


@pytest.fixture(scope="module")
def torbed():
    missing = missing_tools() + tools_missing()
    assert not missing, f"the test bed needs {missing} (.ci/run installs them) and root"
    bed = TorBed().build()
    try:
        try:
            bed.start_tor()
        except TorNetworkDown as exc:
            pytest.skip(f"the private Tor network did not come up: {exc}")
        yield bed
    finally:
        bed.close()


def home(path: Path, torrc: str) -> Path:
    (path / "config").mkdir(parents=True)
    (path / "config" / "torrc").write_text(torrc)
    return path


# The host is away for a while when it restarts (its tor publishes the service again, the
# joiner's tor finds it): limits long enough that no claim of time or absence ends the game
# meanwhile, so that both files must verify clean (what such a claim does is SPEC 3.6's,
# tested elsewhere).
PATIENT = ("--duty-timeout", "10m", "--abandon", "10m")


def start_host(bed: TorBed, host_home: Path) -> Run:
    return Run(bed, "hB", host_home, "host", "--bot", "--bot-delay", "0.05", *STUN_ARGS,
               "--no-port-map", "--tor", "auto", *PATIENT)


def wait_for_messages(folder: Path, count: int) -> None:
    """Wait until the game saved in ``folder`` holds ``count`` messages."""
    deadline = time.monotonic() + TOR_SAFETY
    while time.monotonic() < deadline:
        for path in folder.glob("*.gtr"):
            with contextlib.suppress(TranscriptError, OSError, AssertionError):
                if len(parse(path.read_bytes()).messages) >= count:
                    return
        time.sleep(0.2)
    raise AssertionError(f"the game in {folder} never reached {count} messages")


def test_two_homes_behind_symmetric_nats_play_a_whole_game_through_tor(torbed, tmp_path):
    bed = torbed
    host_home = home(tmp_path / "host", bed.torrc())
    hosting = start_host(bed, host_home)
    joiner = None
    try:
        code = hosting.wait_for(r"^invite: (\S+)").group(1)
        invite = Invite.decode(code)
        onion = [c for c in invite.candidates if c.kind == ONION]
        assert invite.nat == NAT_SYMMETRIC and len(onion) == 1
        assert not [c for c in invite.candidates if c.kind == PUNCH]
        hosting.wait_for(r"^network: behind a symmetric NAT, where a direct connection is "
                         r"unlikely")
        hosting.wait_for(rf"^network: through Tor: a joiner who cannot connect directly "
                         rf"reaches this host at {onion[0].address}")
        hosting.wait_for(rf"tor: the onion service {onion[0].address} is published",
                         TOR_SAFETY)

        client = bed.client("hE", "joiner")  # the joiner's home runs its own tor
        joiner = Run(bed, "hE", tmp_path / "joiner", "join", code, "--bot", "--bot-delay",
                     "0.05", *STUN_ARGS, *PATIENT, "--tor", f"127.0.0.1:{CONTROL_PORT}")
        joiner.wait_for("connected through Tor", TOR_SAFETY)
        joiner.wait_for("connected to the host")
        hosting.wait_for("the other player is connected")
        assert bed.strays() == [], "a tor that may know another network runs in the bed"
        assert len(bed.tor_processes()) == 7  # 5 of the network, the host's, the joiner's
        assert (client / "control_auth_cookie").exists()

        # The host dies in the middle of the game (no goodbye: its tor goes with it) ...
        wait_for_messages(host_home / "data" / "games", 40)
        hosting.proc.send_signal(signal.SIGKILL)
        hosting.finish()
        # ... and comes back with the same command: same game, same onion address.
        hosting = start_host(bed, host_home)
        hosting.wait_for(r"^resuming the unfinished game")
        again = Invite.decode(hosting.wait_for(r"^invite: (\S+)").group(1))
        assert [c for c in again.candidates if c.kind == ONION] == onion
        hosting.wait_for("the other player is connected", TOR_SAFETY)

        assert joiner.finish(TOR_SAFETY) == 0, joiner.text
        assert hosting.finish(SAFETY) == 0, hosting.text
    finally:
        if joiner is not None:
            joiner.stop()
            print("the joiner said:\n" + joiner.text)  # for the record (pytest -s)
        hosting.stop()
    assert "game over:" in joiner.text and "game over:" in hosting.text
    transcripts = sorted((tmp_path / "host").rglob("*.gtr")) + \
        sorted((tmp_path / "joiner").rglob("*.gtr"))
    assert len(transcripts) == 2
    for path in transcripts:
        assert replay(parse(path.read_bytes())).finding is Finding.CLEAN, path


def test_a_host_the_tests_start_without_flags_asks_no_public_server(torbed, tmp_path):
    """tests/conftest.py makes --stun and --tor default to off for everything the tests
    run: a host started with neither, in a home behind a symmetric NAT, asks no STUN
    server (the public ones are the product's default), lists no onion service and
    starts no tor (one would know the public Tor network)."""
    hosting = Run(torbed, "hB", home(tmp_path / "host", torbed.torrc()), "host", "--bot")
    try:
        invite = Invite.decode(hosting.wait_for(r"^invite: (\S+)").group(1))
        hosting.wait_for("^waiting for the other player")
        assert invite.nat == NAT_UNKNOWN  # (no STUN server was asked)
        assert [c.kind for c in invite.candidates] == [LAN]
        assert not [ns for ns, _config in torbed.tor_processes() if ns == torbed.ns("hB")]
    finally:
        hosting.stop()
