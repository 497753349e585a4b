"""The screens' doors to reaching the other player: the host's reply-code prompt, the start
screen's join prompt taking short codes, and the start screen joining and hosting with the
same STUN servers and port mapping as `p2pgotg join` and `p2pgotg host` (SPEC 3.7-3.8).
The whole path, punching included, runs in real terminals in test_net_internet.py."""

from __future__ import annotations

import os
import time

import pytest

from p2pgotg import cli
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.reaching.offer import ReachOptions
from p2pgotg.net.reaching.stun_client import DEFAULT_SERVERS, parse_server
from p2pgotg.reach.candidates import LAN, PUNCH, Candidate
from p2pgotg.reach.reply_code import ReplyCode
from p2pgotg.ui import lobby_screen, start_screen
from p2pgotg.ui.runner import Launch
from p2pgotg.ui.state import AppState, Mode, Prompt


class Recorder:
    """A driver that records what the screens ask of the trio side."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.started: list[tuple[Mode, str | None]] = []

    def take_reply(self, code: str) -> None:
        self.replies.append(code)

    def start(self, mode: Mode, invite: str | None = None) -> None:
        self.started.append((mode, invite))


def waiting_host(invite_version: int = 2) -> tuple[AppState, Recorder]:
    state = AppState(Mode.HOST)
    state.driver = Recorder()  # type: ignore[assignment]
    if invite_version == 2:
        state.invites = [Invite.v2([Candidate(LAN, "192.168.1.20", 4000),
                                    Candidate(PUNCH, "203.0.113.5", 4000)],
                                   bytes(32), bytes(16)).encode()]
    else:
        state.invites = [Invite("127.0.0.1", 4000, bytes(32), bytes(16)).encode()]
    return state, state.driver  # type: ignore[return-value]


def a_reply_code() -> str:
    return ReplyCode.make([Candidate(PUNCH, "198.51.100.7", 40001)], int(time.time()),
                          os.urandom(8), os.urandom(16)).encode()


def test_a_waiting_host_opens_the_reply_prompt_and_hands_the_code_on() -> None:
    state, driver = waiting_host()
    assert "r take a reply code" in lobby_screen.hints(state)
    lobby_screen.ask_reply(state)
    assert state.prompt is Prompt.REPLY_CODE
    code = a_reply_code()
    pasted = f"reply: {code[:30]}\n{code[30:]}"  # with its label, broken over two lines
    lobby_screen.submit_reply(state, pasted)
    assert driver.replies == [code]
    assert state.prompt is None and not state.status_error


@pytest.mark.parametrize("pasted, says", [
    ("", "paste the reply code first"),
    ("gr1-aaaa", "bad reply code"),
    ("gg2-aebqicyabyfyw5lla4ss46duqb3xyxevxnbcby6vpp", "bad reply code"),
])
def test_a_bad_reply_code_is_refused_with_the_prompt_kept_open(pasted, says) -> None:
    state, driver = waiting_host()
    lobby_screen.ask_reply(state)
    lobby_screen.submit_reply(state, pasted)
    assert driver.replies == []
    assert state.prompt is Prompt.REPLY_CODE and state.status_error
    assert says in state.status


def test_a_mistyped_reply_code_is_caught_by_its_check() -> None:
    state, driver = waiting_host()
    code = a_reply_code()
    typo = code[:12] + ("a" if code[12] != "a" else "b") + code[13:]
    lobby_screen.ask_reply(state)
    lobby_screen.submit_reply(state, typo)
    assert driver.replies == [] and "check does not match" in state.status


def test_no_reply_prompt_where_no_reply_code_can_be_taken() -> None:
    loopback, _ = waiting_host(invite_version=1)
    lobby_screen.ask_reply(loopback)
    assert loopback.prompt is None and "not set up to punch" in loopback.status
    assert "reply code" not in lobby_screen.hints(loopback)
    joiner = AppState(Mode.JOIN)
    lobby_screen.ask_reply(joiner)
    assert joiner.prompt is None and "only the host takes reply codes" in joiner.status


@pytest.mark.parametrize("typed", ["7-crossover-clockwork", "7 Crossover Clockwork",
                                   "'7 crossover clockwork'"])
def test_the_start_screen_joins_by_short_code(typed) -> None:
    state = AppState(None)
    state.driver = Recorder()  # type: ignore[assignment]
    start_screen.choose(state, "3")
    start_screen.submit_code(state, typed)
    assert state.driver.started == [(Mode.JOIN, "7-crossover-clockwork")]  # type: ignore


def test_the_start_screen_says_what_is_wrong_with_a_short_code() -> None:
    state = AppState(None)
    state.driver = Recorder()  # type: ignore[assignment]
    start_screen.choose(state, "3")
    start_screen.submit_code(state, "7-crossover-clockwerk")
    assert state.driver.started == []  # type: ignore[attr-defined]
    assert state.status_error and "bad short code" in state.status
    assert "is not one of the code words" in state.status


def launched_by(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Launch:
    """What the command line hands the terminal interface (which is not opened)."""
    launched = []
    monkeypatch.setattr(cli, "_has_terminal", lambda: True)
    monkeypatch.setattr("p2pgotg.ui.runner.run_terminal",
                        lambda mode, launch, ascii=False: launched.append(launch) or 0)
    assert cli.main(argv) == 0
    (launch,) = launched
    return launch


@pytest.mark.parametrize("argv, servers", [
    ([], [parse_server(s) for s in DEFAULT_SERVERS]),
    (["start"], [parse_server(s) for s in DEFAULT_SERVERS]),
    (["start", "--stun", "203.0.113.9:3478"], [("203.0.113.9", 3478)]),
    (["start", "--stun", "off", "--no-port-map"], []),
    # the start screen's own command is no command at all (issue 27: this was refused)
    (["--stun", "203.0.113.9:3478", "--stun", "198.51.100.4"],
     [("203.0.113.9", 3478), ("198.51.100.4", 3478)]),
    (["--stun", "off", "--no-port-map"], []),
    (["--stun", "203.0.113.9:3478", "start"], [("203.0.113.9", 3478)]),
    (["join", "7-crossover-clockwork"], [parse_server(s) for s in DEFAULT_SERVERS]),
])
def test_the_start_screen_reaches_out_as_join_and_host_do(argv, servers, monkeypatch) -> None:
    monkeypatch.delenv("P2PGOTG_STUN", raising=False)  # (the tests' own default: off)
    launch = launched_by(argv, monkeypatch)
    assert launch.stun == servers
    if argv[:1] != ["join"]:  # hosting from the start screen: the same offer as `host`
        assert isinstance(launch.reach, ReachOptions)
        assert launch.reach.stun_servers == servers
        assert launch.reach.port_mapping is ("--no-port-map" not in argv)


def test_stun_before_a_command_other_than_the_start_screen_is_refused(capsys) -> None:
    assert cli.main(["--stun", "203.0.113.9:3478", "verify", "x.gtr"]) == 2
    assert "--stun before a command" in capsys.readouterr().err


def test_a_bad_stun_server_for_the_start_screen_is_refused(monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli, "_has_terminal", lambda: True)
    assert cli.main(["start", "--stun", "nowhere:notaport"]) == 2
    assert "bad --stun" in capsys.readouterr().err
