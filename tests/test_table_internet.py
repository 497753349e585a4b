"""A table of four across the simulated internet of tests/netbed.py (SPEC 5.4, 5.9, 3.8):
four homes behind four NAT routers, the real `p2pgotg host --game towers --seats 4 --bot`
in one (its router forwards the port: miniupnpd) and three `p2pgotg join CODE --bot`
processes, one in each other home, joining with the one invite code; one joiner drops in
the middle of the game and comes back with the same command; every seat's file verifies
to one clean verdict, alone and all four together."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from netbed import STUN_ARGS, Bed, missing_tools
from test_net_internet import SAFETY, Run, wait_until

from p2pgotg.net.reaching.invite import Invite
from p2pgotg.reach.candidates import MAPPED

pytestmark = pytest.mark.slow

HOST_HOME = "hA"  # easy NAT + miniupnpd: the invite carries the router's mapped port
JOINER_HOMES = ("hB", "hC", "hE")  # symmetric, easy, symmetric: outbound only
DROPPED = "hC"
PACE = ("--bot-delay", "0.05")  # (a game long enough to drop a seat in, with 80 ms RTT)


@pytest.fixture(scope="module")
def bed():
    missing = missing_tools()
    assert not missing, f"the test bed needs {missing} (.ci/run installs them) and root"
    built = Bed().build()
    try:
        yield built
    finally:
        built.close()


def table_file(home: Path) -> Path | None:
    """The one table file a home's data directory holds (None before there is one)."""
    found = sorted((home / "data" / "games").glob("*.gtr"))
    assert len(found) <= 1, found
    return found[0] if found else None


def records(path: Path | None) -> int:
    from p2pgotg.protocol.table.transcript import TableRecordReader

    return 0 if path is None else len(TableRecordReader().feed_table(path.read_bytes()))


def verify(*paths: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", *map(str, paths)],
                          capture_output=True, text=True, timeout=SAFETY)
    return done.returncode, done.stdout + done.stderr


def results(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("result:")]


@pytest.mark.parametrize("drop", ["joiner killed", "joiner's router restarted"])
def test_four_homes_play_a_table_through_one_host_and_one_seat_comes_back(bed, tmp_path,
                                                                          drop):
    homes = {ns: tmp_path / ns for ns in (HOST_HOME, *JOINER_HOMES)}
    hosting = Run(bed, HOST_HOME, homes[HOST_HOME], "host", "--game", "towers", "--seats",
                  "4", "--bot", *PACE, *STUN_ARGS)
    joiners: dict[str, Run] = {}
    try:
        code = hosting.wait_for(r"^invite: (\S+)").group(1)
        hosting.wait_for("^waiting for 3 other players")
        invite = Invite.decode(code)
        assert [c.address for c in invite.candidates if c.kind == MAPPED] == ["11.0.14.11"]
        join_args = ("join", code, "--bot", *PACE, *STUN_ARGS)
        for ns in JOINER_HOMES:
            joiners[ns] = Run(bed, ns, homes[ns], *join_args)
        for ns in JOINER_HOMES:
            joiners[ns].wait_for("connected to the host")
        wait_until("the game to be well under way",
                   lambda: records(table_file(homes[DROPPED])) >= 60, SAFETY)
        assert all(run.proc.poll() is None for run in (hosting, *joiners.values())), (
            "the game ended before the drop: make it longer")
        if drop == "joiner killed":
            joiners[DROPPED].proc.kill()
            joiners[DROPPED].finish()
            joiners[DROPPED] = Run(bed, DROPPED, homes[DROPPED], *join_args)
            joiners[DROPPED].wait_for(r"resuming the unfinished table saved in \S+\.gtr")
        else:  # every connection the router tracked is forgotten, its address moves
            seen = joiners[DROPPED].text.count("connected to the host")
            bed.reboot("rC")
            wait_until("the joiner to connect again", lambda: joiners[DROPPED].text.count(
                "connected to the host") > seen, SAFETY * 2)
        for ns, run in joiners.items():
            assert run.finish(SAFETY * 3) == 0, f"{ns}:\n{run.text}\nhost:\n{hosting.text}"
        assert hosting.finish(SAFETY) == 0, hosting.text
    finally:
        for run in joiners.values():
            run.stop()
        hosting.stop()
        bed.restore("rC")
    for run in (hosting, *joiners.values()):
        assert "Traceback" not in run.text, run.text
        assert re.search(r"^game over: .*; won by ", run.text, re.M), run.text
    files = [table_file(home) for home in homes.values()]
    assert all(files), files
    alone = [verify(path) for path in files if path is not None]
    together = verify(*(path for path in files if path is not None))
    for code_, text in [*alone, together]:
        assert code_ == 0, text
        assert len(results(text)) == 1, text
    assert len({tuple(results(text)) for _, text in [*alone, together]}) == 1, (alone,
                                                                               together)
