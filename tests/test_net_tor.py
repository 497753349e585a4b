"""p2pgotg and its tor (SPEC 3.8): starting tor with a data directory of its own, the control
connection (authentication, the onion service of our key, ownership), SOCKS through it,
and what each side says when tor is missing or is not what answers. The real tor runs here
with DisableNetwork and only a made-up authority on loopback: it never tries to reach
anything (the whole game through a private Tor network is tests/test_net_tor_game.py)."""

from __future__ import annotations

import shutil
import stat
from functools import partial
from pathlib import Path

import pytest
import trio

from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import NAT_SYMMETRIC, NAT_UNKNOWN, Invite
from p2pgotg.net.reaching.offer import ReachOptions, offer
from p2pgotg.net.reaching.racing import JoinReach, race, through_tor
from p2pgotg.net.reaching.tor import INSTALL, TorChoice, TorFailed, TorMissing, TorUse
from p2pgotg.net.reaching.tor_link import TorControl
from p2pgotg.net.transport.errors import ConnectFailedError
from p2pgotg.net.transport.tls import make_certificate, public_key_pin, serve_tls, server_context
from p2pgotg.reach.candidates import LAN, ONION, Candidate
from p2pgotg.reach.tor_onion import game_seed, onion_address, public_key_of

TOR = shutil.which("tor")
SLEEP, TOUCH = shutil.which("sleep"), shutil.which("touch")  # (a fake tor's PATH has neither)
needs_tor = pytest.mark.skipif(TOR is None, reason="tor is not installed (.ci/run installs it)")
# What our tor's torrc includes from the player's config folder here: no network at all,
# and one made-up authority on loopback, so that not even a wrong setting could send a
# packet anywhere (tor refuses TestingTorNetwork with its default authorities).
OFFLINE_TORRC = """DisableNetwork 1
TestingTorNetwork 1
UseDefaultFallbackDirs 0
DirAuthority made-up orport=1 no-v2 v3ident=0000000000000000000000000000000000000000 \
127.0.0.2:1 0000000000000000000000000000000000000000
"""
PIN = bytes(32)
SECRET = bytes(range(16))
SEED = game_seed(bytes(32), SECRET)


def offline_home(tmp_path: Path) -> tuple[Path, Path]:
    data, config = tmp_path / "data", tmp_path / "config"
    config.mkdir(parents=True)
    (config / "torrc").write_text(OFFLINE_TORRC)
    return data, config


def fake_tor(folder: Path, script: str) -> Path:
    """A program named tor on a PATH of its own (the real one is then not found)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tor"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def hanging_tor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tor that never comes up, first on PATH; the file it makes once it is started."""
    marker = tmp_path / "tor-ran"
    folder = fake_tor(tmp_path / "bin", f"{TOUCH} {marker}\nexec {SLEEP} 60\n")
    monkeypatch.setenv("PATH", str(folder))
    return marker


def statuses() -> tuple[list[str], object]:
    said: list[str] = []
    return said, said.append


# -- choosing a tor ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "choice"), [
    ("auto", TorChoice("auto")),
    ("OFF", TorChoice("off")),
    ("127.0.0.1:9051", TorChoice("control", port=("127.0.0.1", 9051))),
    ("[::1]:9051", TorChoice("control", port=("::1", 9051))),
    ("/run/tor/control", TorChoice("control", socket=Path("/run/tor/control"))),
])
def test_tor_choices(text, choice):
    assert TorChoice.parse(text) == choice


@pytest.mark.parametrize("text", ["9051", "localhost:", "localhost:99999", "on"])
def test_a_bad_tor_choice_says_what_is_taken(text):
    with pytest.raises(ValueError, match="auto, off, HOST:PORT"):
        TorChoice.parse(text)


async def test_without_tor_installed_the_words_say_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    use = TorUse(TorChoice("auto"), tmp_path / "data", tmp_path / "config")
    assert use.missing() == f"tor is not installed: {INSTALL}"
    assert "sudo apt install tor" in INSTALL and "brew install tor" in INSTALL
    with pytest.raises(TorMissing, match="not installed: install tor"):
        await use.control(lambda s: None)
    assert TorUse(TorChoice("off"), tmp_path, tmp_path).missing() == \
        "tor is turned off (--tor off)"


# -- a tor we start ------------------------------------------------------------------------

@needs_tor
async def test_our_tor_publishes_our_key_knows_only_our_authority_and_stops_with_us(tmp_path):
    data, config = offline_home(tmp_path)
    use = TorUse(TorChoice("auto"), data, config)
    said, say = statuses()
    control = await use.control(say)
    assert said == ["tor: starting tor"]
    process = use._process
    assert process is not None and process.poll() is None
    address = await control.add_onion(SEED, 4000, "127.0.0.1:4001")
    assert address == onion_address(public_key_of(SEED))  # (and tor's ServiceID is it too)
    authorities = await control.checked("GETCONF DirAuthority")
    assert authorities.lines[0].startswith("DirAuthority=made-up ") and \
        "127.0.0.2:1" in authorities.lines[0]
    fallbacks = await control.checked("GETCONF UseDefaultFallbackDirs")
    assert fallbacks.lines == ("UseDefaultFallbackDirs=0",)
    state = await control.bootstrap()
    assert not state.done  # (DisableNetwork: it never reaches any network)
    with pytest.raises(TorFailed, match=r"tor could not reach the Tor network within 1 s "
                       r"\(it got to \d+%.*\)\. If Tor is blocked where you are, add bridges "
                       f"to {config / 'torrc'}"):
        await use.ready(say, timeout=1)
    assert any(s.startswith("tor: reaching the Tor network (") for s in said)
    assert (data / "tor" / "p2pgotg-torrc").read_text().endswith(
        f"%include {config / 'torrc'}\n")
    await use.aclose()
    assert process.poll() is not None


@needs_tor
async def test_our_tor_stops_when_its_control_connection_closes(tmp_path):
    """TAKEOWNERSHIP: a program that dies without a word (its sockets closed by the
    kernel) leaves no tor behind."""
    data, config = offline_home(tmp_path)
    use = TorUse(TorChoice("auto"), data, config)
    control = await use.control(lambda s: None)
    process = use._process
    assert process is not None
    await control.aclose()
    with trio.fail_after(20):
        await process.wait()
    use._process = None
    await use.aclose()


@needs_tor
async def test_a_second_program_of_one_home_runs_its_tor_in_a_folder_of_its_own(tmp_path):
    data, config = offline_home(tmp_path)
    first, second = (TorUse(TorChoice("auto"), data, config) for _ in range(2))
    try:
        await first.control(lambda s: None)
        await second.control(lambda s: None)
        assert second._temporary is not None and second._temporary.parent == data
        assert second._temporary.is_dir()
    finally:
        await first.aclose()
        await second.aclose()
    assert not any(p.name.startswith("tor-") for p in data.iterdir())  # (removed)


@needs_tor
async def test_a_tor_that_cannot_start_says_why(tmp_path):
    data, config = offline_home(tmp_path)
    (config / "torrc").write_text(OFFLINE_TORRC + "NoSuchOption 1\n")
    use = TorUse(TorChoice("auto"), data, config)
    with pytest.raises(TorFailed, match=r"tor stopped at once: .*NoSuchOption"):
        await use.control(lambda s: None)
    with pytest.raises(TorFailed, match="NoSuchOption"):  # (said once, not tried again)
        await use.control(lambda s: None)


async def test_a_tor_that_never_opens_its_control_port_is_given_up(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_tor(tmp_path / "bin", f"exec {SLEEP} 60\n")))
    monkeypatch.setattr("p2pgotg.net.reaching.tor.START_TIMEOUT", 0.5)
    use = TorUse(TorChoice("auto"), tmp_path / "data", tmp_path / "config")
    with pytest.raises(TorFailed, match=r"did not open its control port within 0.5 s"):
        await use.control(lambda s: None)
    assert use._process is None  # (stopped)


# -- a control port that is not what it should be -----------------------------------------

async def _fake_control(answers: dict[bytes, bytes], nursery: trio.Nursery) -> int:
    """A control port that answers each command's first word with a canned reply."""

    async def serve(stream: trio.SocketStream) -> None:
        buffer = b""
        while True:
            data = await stream.receive_some(4096)
            if not data:
                return
            buffer += data
            while b"\r\n" in buffer:
                line, buffer = buffer.split(b"\r\n", 1)
                await stream.send_all(answers.get(line.split()[0], b"510 Unrecognized\r\n"))

    listeners = await nursery.start(partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
    return int(listeners[0].socket.getsockname()[1])


@pytest.mark.parametrize(("answers", "complaint"), [
    ({b"PROTOCOLINFO": b"HTTP/1.0 400 Bad Request\r\n\r\n"}, "not a control-port reply"),
    ({b"PROTOCOLINFO": b"250-PROTOCOLINFO 1\r\n250-AUTH METHODS=HASHEDPASSWORD\r\n250 OK\r\n"},
     "asks for a password or a plain cookie, which p2pgotg does not give"),
    ({b"PROTOCOLINFO": b'250-PROTOCOLINFO 1\r\n250-AUTH METHODS=COOKIE COOKIEFILE="/etc/'
                       b'hostname"\r\n250 OK\r\n'},  # (it would have us send any file)
     "asks for a password or a plain cookie, which p2pgotg does not give"),
    ({b"PROTOCOLINFO": b'250-PROTOCOLINFO 1\r\n250-AUTH METHODS=SAFECOOKIE COOKIEFILE="'
                       b'/nonexistent/\x1b[2Jcookie"\r\n250 OK\r\n'},
     r"cookie file /nonexistent/\\x1b\[2Jcookie cannot be read"),
    ({b"PROTOCOLINFO": b"250-PROTOCOLINFO 1\r\n250-AUTH METHODS=NULL\r\n250 OK\r\n",
      b"AUTHENTICATE": b"515 Authentication failed: \x1b[31mred\r\n"}, r"515 .*\\x1b\[31mred"),
])
async def test_a_control_port_that_is_not_tor_or_wants_a_password_is_named(answers, complaint,
                                                                           nursery):
    port = await _fake_control(answers, nursery)
    use = TorUse(TorChoice("control", port=("127.0.0.1", port)), Path("/nonexistent"),
                 Path("/nonexistent"))
    with pytest.raises(TorFailed, match=complaint):
        await use.control(lambda s: None)


async def test_a_control_port_that_does_not_know_the_cookie_is_not_trusted(tmp_path, nursery):
    """SAFECOOKIE: what answers must prove it knows tor's cookie before we show ours."""
    cookie = tmp_path / "cookie"
    cookie.write_bytes(bytes(32))
    port = await _fake_control({
        b"PROTOCOLINFO": b'250-PROTOCOLINFO 1\r\n250-AUTH METHODS=SAFECOOKIE COOKIEFILE="'
                         + str(cookie).encode() + b'"\r\n250 OK\r\n',
        b"AUTHCHALLENGE": b"250 AUTHCHALLENGE SERVERHASH=" + b"00" * 32 + b" SERVERNONCE="
                          + b"11" * 32 + b"\r\n",
        b"AUTHENTICATE": b"250 OK\r\n"}, nursery)
    control = await TorControl.open(("127.0.0.1", port))
    with pytest.raises(TorFailed, match="does not know tor's cookie"):
        await control.authenticate()
    await control.aclose()


async def test_no_control_port_at_the_given_address_is_said_plainly():
    with trio.socket.socket() as probe:  # a port nothing listens on
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    use = TorUse(TorChoice("control", port=("127.0.0.1", port)), Path("/x"), Path("/x"))
    with pytest.raises(TorFailed, match=f"no tor control port answers at 127.0.0.1:{port}"):
        await use.control(lambda s: None)


# -- SOCKS to the onion service ------------------------------------------------------------

async def _exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = b""
    while len(data) < size:
        data += await stream.receive_some(size - len(data))
    return data


async def _fake_socks(codes: list[int], nursery: trio.Nursery,
                      passwords: list[bytes] | None = None) -> tuple[tuple[str, int],
                                                                     list[bytes]]:
    """A SOCKS5 server that takes a user name and password as tor does (RFC 1929) and
    answers each CONNECT with the next code (0: connected, then it echoes); what each
    CONNECT asked for is kept, and each password in ``passwords``."""
    asked: list[bytes] = []

    async def serve(stream: trio.SocketStream) -> None:
        assert await _exactly(stream, 4) == bytes([5, 2, 0, 2])
        await stream.send_all(bytes([5, 2]))
        _version, size = await _exactly(stream, 2)
        await _exactly(stream, size)
        password = await _exactly(stream, (await _exactly(stream, 1))[0])
        if passwords is not None:
            passwords.append(password)
        await stream.send_all(bytes([1, 0]))
        asked.append(await stream.receive_some(300))
        code = codes.pop(0) if codes else 0xF0
        await stream.send_all(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
        if code == 0:
            await stream.send_all(await stream.receive_some(100))

    listeners = await nursery.start(partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
    return ("127.0.0.1", int(listeners[0].socket.getsockname()[1])), asked


async def test_the_joiner_asks_again_while_the_service_is_not_published(nursery):
    passwords: list[bytes] = []
    socks, asked = await _fake_socks([0xF0, 0xF2, 0], nursery, passwords)
    onion = Candidate(ONION, onion_address(public_key_of(SEED)), 4000)
    said, say = statuses()
    stream = await through_tor(socks, onion, 30, say, retry=0.05)
    await stream.send_all(b"hello")
    assert await stream.receive_some(5) == b"hello"
    await stream.aclose()
    name = onion.address.encode()
    assert asked == [bytes([5, 1, 0, 3, len(name)]) + name + (4000).to_bytes(2, "big")] * 3
    assert any("descriptor cannot be found (not published yet, or gone); trying again for up to"
               in s for s in said)
    assert len(set(passwords)) == 3  # each try on circuits of its own (tor isolates by it)


async def test_a_try_that_tor_leaves_hanging_is_given_up_and_made_afresh(nursery):
    """A rendezvous tor never completes (its host restarted) holds one try, not the wait."""
    hanging = [True]

    async def serve(stream: trio.SocketStream) -> None:
        await _exactly(stream, 4)
        await stream.send_all(bytes([5, 0]))  # (a proxy may take no password: fine too)
        await stream.receive_some(300)
        if hanging.pop() if hanging else False:
            await trio.sleep_forever()
        await stream.send_all(bytes([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]))

    listeners = await nursery.start(partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
    socks = ("127.0.0.1", listeners[0].socket.getsockname()[1])
    onion = Candidate(ONION, onion_address(public_key_of(SEED)), 4000)
    said, say = statuses()
    stream = await through_tor(socks, onion, 30, say, retry=0.05, attempt=1.0)
    await stream.aclose()
    assert any("tor: no connection within 1 s; trying again" in s for s in said), said


async def test_a_final_socks_refusal_ends_the_attempt_at_once(nursery):
    socks, asked = await _fake_socks([0xF6], nursery)
    onion = Candidate(ONION, onion_address(public_key_of(SEED)), 4000)
    with pytest.raises(TorFailed, match="onion address is invalid"):
        await through_tor(socks, onion, 30, lambda s: None, retry=0.05)
    assert len(asked) == 1


async def test_a_service_never_published_is_given_up_at_the_deadline(nursery):
    socks, asked = await _fake_socks([], nursery)
    onion = Candidate(ONION, onion_address(public_key_of(SEED)), 4000)
    with pytest.raises(TorFailed, match="could not reach the host's onion service: the "
                       "onion service's descriptor cannot be found"):
        await through_tor(socks, onion, 0.5, lambda s: None, retry=0.05)
    assert len(asked) > 1


# -- the joiner: tor never slows the direct path, and a missing tor is said ----------------

@pytest.fixture
def tls_host():
    cert, key = make_certificate()
    return cert, key, public_key_pin(cert)


async def test_a_joiner_that_connects_directly_never_starts_tor(tmp_path, monkeypatch,
                                                               tls_host, nursery):
    cert, key, pin = tls_host
    listeners = await nursery.start(serve_tls, lambda stream: trio.sleep_forever(),
                                    server_context(cert, key), 0, "127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    marker = hanging_tor(tmp_path, monkeypatch)
    invite = Invite.v2([Candidate(LAN, "127.0.0.1", port),
                        Candidate(ONION, onion_address(public_key_of(SEED)), port)],
                       pin, SECRET, NAT_SYMMETRIC)
    reach = JoinReach(tor=TorUse(TorChoice("auto"), tmp_path / "data", tmp_path / "config"))
    said, say = statuses()
    stream = await race(invite, reach, Timeouts(), say)
    await stream.aclose()
    await trio.sleep(0.6)  # (past the onion attempt's head start, had it not been cancelled)
    assert not marker.exists() and not any("tor" in s for s in said)


async def test_a_joiner_without_tor_is_told_what_to_install_and_what_else_to_do(
        tmp_path, monkeypatch, nursery):
    monkeypatch.setenv("PATH", str(tmp_path))  # no tor here
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    onion = Candidate(ONION, onion_address(public_key_of(SEED)), closed)
    for nat, raised in ((NAT_SYMMETRIC, SessionError), (NAT_UNKNOWN, ConnectFailedError)):
        invite = Invite.v2([Candidate(LAN, "127.0.0.1", closed), onion], PIN, SECRET, nat)
        reach = JoinReach(tor=TorUse(TorChoice("auto"), tmp_path / "d", tmp_path / "c"))
        said, say = statuses()
        with pytest.raises(raised) as info:
            await race(invite, reach, Timeouts(), say)
        assert f"the host can also be reached through Tor, but tor is not installed: " \
               f"{INSTALL}" in said
        text = str(info.value)
        assert "tor is not installed: install tor (Debian, Ubuntu: sudo apt install tor" in text
        if nat == NAT_SYMMETRIC:
            assert "What to do: the host can be reached through Tor, but tor is not " \
                   "installed" in text and "then run the same command again" in text


# -- the host ------------------------------------------------------------------------------

async def _offer(tmp_path: Path, tor: TorChoice, say, nursery: trio.Nursery):
    opts = ReachOptions(tmp_path / "data", [], port_mapping=False, lan=False, tor=tor)
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)

    async def accept(stream: trio.SocketStream) -> None:
        await stream.aclose()

    return await nursery.start(lambda task_status: offer(
        opts, 4000, "127.0.0.1", PIN, SECRET, bytes(32), accept, onion_seed=SEED,
        on_status=say, task_status=task_status))


async def test_a_host_without_tor_says_what_to_install(tmp_path, monkeypatch, nursery):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path))
    found = await _offer(tmp_path, TorChoice("auto"), lambda s: None, nursery)
    invite = Invite.decode(found.invite)
    assert [c.kind for c in invite.candidates] == [LAN]
    assert f"through Tor any joiner could reach this host, but tor is not installed: " \
           f"{INSTALL}; then host again" in found.notes
    nursery.cancel_scope.cancel()


async def test_a_host_with_tor_off_offers_no_onion_and_says_nothing_of_tor(tmp_path, nursery):
    found = await _offer(tmp_path, TorChoice("off"), lambda s: None, nursery)
    assert [c.kind for c in Invite.decode(found.invite).candidates] == [LAN]
    assert not any("Tor" in note or "tor" in note for note in found.notes)
    nursery.cancel_scope.cancel()


async def test_the_hosts_invite_waits_for_no_tor(tmp_path, monkeypatch, nursery):
    """The onion address is the key's: the invite lists it at once, while tor (here one
    that never comes up) is still starting."""
    marker = hanging_tor(tmp_path, monkeypatch)
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path))
    said, say = statuses()
    found = await _offer(tmp_path, TorChoice("auto"), say, nursery)
    invite = Invite.decode(found.invite)
    assert invite.candidates[-1] == Candidate(ONION, onion_address(public_key_of(SEED)), 4000)
    assert any(f"reaches this host at {invite.candidates[-1].address}" in n for n in found.notes)
    with trio.fail_after(10):
        while not marker.exists():  # tor is started after the invite is made
            await trio.sleep(0.05)
    assert "tor: starting tor" in said
    nursery.cancel_scope.cancel()



# -- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "tor"), [
    (["start"], TorChoice("auto")),
    (["start", "--tor", "off"], TorChoice("off")),
    (["host", "--tor", "127.0.0.1:9051"], TorChoice("control", port=("127.0.0.1", 9051))),
    (["join", "7-crossover-clockwork", "--tor", "/run/tor/control"],
     TorChoice("control", socket=Path("/run/tor/control"))),
])
def test_tor_is_chosen_alike_by_host_join_and_the_start_screen(argv, tor, monkeypatch):
    from test_ui_reaching import launched_by

    monkeypatch.delenv("P2PGOTG_TOR", raising=False)  # (the tests' own default: off)
    launch = launched_by(argv, monkeypatch)
    assert launch.tor == tor  # the joiner's
    if argv[0] != "join":
        assert launch.reach.tor == tor  # the host's


@pytest.mark.parametrize("command", [["start"], ["host", "--bot"], ["join", "CODE", "--bot"]])
def test_a_bad_tor_choice_is_refused_by_every_command(command, tmp_path, monkeypatch, capsys):
    from p2pgotg import cli

    monkeypatch.setattr(cli, "_has_terminal", lambda: True)
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path))
    code = Invite("192.0.2.7", 4000, PIN, SECRET).encode()
    argv = [code if word == "CODE" else word for word in command]
    assert cli.main([*argv, "--tor", "somewhere"]) == 2
    assert "bad --tor: 'somewhere' is not auto, off" in capsys.readouterr().err


def test_the_environment_sets_the_defaults_of_tor_and_stun_and_a_flag_wins(monkeypatch,
                                                                            capsys):
    from test_ui_reaching import launched_by

    from p2pgotg import cli

    monkeypatch.setenv("P2PGOTG_TOR", "off")
    monkeypatch.setenv("P2PGOTG_STUN", "203.0.113.9:3478, 203.0.113.10")
    launch = launched_by(["start"], monkeypatch)
    assert launch.tor == TorChoice("off") and launch.reach.tor == TorChoice("off")
    assert launch.stun == [("203.0.113.9", 3478), ("203.0.113.10", 3478)]
    launch = launched_by(["start", "--tor", "auto", "--stun", "off"], monkeypatch)
    assert launch.tor == TorChoice("auto") and launch.stun == []
    monkeypatch.setenv("P2PGOTG_TOR", "sometimes")
    assert cli.main(["start"]) == 2
    assert "bad P2PGOTG_TOR: 'sometimes' is not auto, off" in capsys.readouterr().err
    monkeypatch.setenv("P2PGOTG_TOR", "off")
    monkeypatch.setenv("P2PGOTG_STUN", "nowhere:notaport")
    assert cli.main(["start"]) == 2
    assert "bad P2PGOTG_STUN: 'nowhere:notaport': the port must be a number" in \
        capsys.readouterr().err
