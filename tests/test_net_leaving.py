"""Leaving in words, on real loopback sockets: a joiner that declines the rules or quits
says so (the `leave` frame) and the host says it in words, never a library's error; a
joiner whose host is not there says which address does not answer and stops after a
bounded time; and two seats of one account (one games folder) play each other."""

from __future__ import annotations

import socket

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.net.play.hosting import HostConfig, host_game
from p2pgotg.net.play.joining import OWN_KEY_WORDS, JoinConfig, join_game
from p2pgotg.net.play.session import GameSession, Link, Timeouts
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.paths import identity_for_joining, load_or_create_identity
from p2pgotg.net.transport.tls import make_certificate, public_key_pin
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.rules import RuleOptions
from p2pgotg.selfplay import bot_runner
from tests.test_net_faults import SAFETY, Host, idle_seat, joiner_config


def leaving_seat(why: str, accept: bool):
    """A joiner's seat that (accepts the rules, then) says it leaves, and stops."""

    async def seat(session: GameSession) -> None:
        while HOST not in session.peer.flow.hellos or session.link is not Link.CONNECTED:
            await session.wait_changed()
        if accept:
            session.perform(lambda p: p.accept())
            while session.peer.flow.game_id is None:
                await session.wait_changed()
        await session.leave(why)
        raise SessionError(f"the test's joiner {why}")  # (it goes: the join ends here)

    return seat


@pytest.mark.parametrize("why, accept, says", [
    ("declined", False, "the other player declined the rules"),
    ("quit", True, "the other player quit"),
])
async def test_a_leaving_joiner_is_told_in_words(tmp_path, why, accept, says):
    host = Host(tmp_path / "host", Timeouts(), idle_seat)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        with trio.fail_after(SAFETY), pytest.raises(SessionError, match="the test's joiner"):
            await join_game(joiner_config(invite, tmp_path / "joiner", Timeouts()),
                            leaving_seat(why, accept))
        with trio.fail_after(SAFETY):
            await host.wait_status(says)
        nursery.cancel_scope.cancel()
    assert not any("SSL" in s or "EOF" in s or "_ssl" in s for s in host.statuses)


async def test_a_joiner_whose_host_is_not_there_counts_down_then_gives_up(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    invite = Invite("127.0.0.1", port, bytes(32), bytes(16))
    statuses: list[str] = []
    config = JoinConfig(Ed25519PrivateKey.generate(), invite, tmp_path, Timeouts(),
                        resume=False, give_up=1.5)
    with trio.fail_after(SAFETY), pytest.raises(SessionError) as caught:
        await join_game(config, idle_seat, on_status=statuses.append)
    said = str(caught.value)
    assert f"no host answers at 127.0.0.1:{port} (is it running?" in said
    assert "gave up after 1.5 s" in said
    assert any("trying again, giving up in 1 s" in s for s in statuses)
    assert not any("connection lost" in s for s in statuses)


async def test_a_host_signing_with_our_own_key_is_said_at_once(tmp_path):
    host = Host(tmp_path / "host", Timeouts(), idle_seat)
    async with trio.open_nursery() as nursery:
        invite = await host.start(nursery)
        config = JoinConfig(host.config.key, invite, tmp_path / "joiner", Timeouts(),
                            resume=False)
        with trio.fail_after(SAFETY), pytest.raises(SessionError) as caught:
            await join_game(config, bot_runner(1))
        nursery.cancel_scope.cancel()
    assert str(caught.value) == OWN_KEY_WORDS


async def test_two_seats_of_one_account_play_each_other(tmp_path, monkeypatch):
    """Item 1: one account's keys and one games folder: the joining seat finds the host is
    its own account (the pin is its own TLS key's) and joins with a second key; both
    transcripts are kept in the one folder."""
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path / "home"))
    from p2pgotg.net.play.saved_games import games_dir
    from p2pgotg.net.transport.paths import load_or_create_tls_identity

    key = load_or_create_identity()
    cert, tls_key = load_or_create_tls_identity()
    folder = games_dir()
    config = HostConfig(key, cert, tls_key, RuleOptions(), folder, port=0, bind="127.0.0.1")
    joining_key = identity_for_joining(public_key_pin(cert))
    assert joining_key.public_key() != key.public_key()
    assert identity_for_joining(public_key_pin(make_certificate()[0])).public_key() \
        == key.public_key()  # another host's invite: the usual key
    result: dict[str, GameSession] = {}
    async with trio.open_nursery() as nursery:
        async def run_host(task_status=trio.TASK_STATUS_IGNORED) -> None:
            result["host"] = await host_game(config, bot_runner(1), task_status=task_status)

        hosting = await nursery.start(run_host)
        invite = Invite.decode(hosting.invites[0])
        with trio.fail_after(SAFETY):
            result["joiner"] = await join_game(
                JoinConfig(joining_key, invite, folder, Timeouts()), bot_runner(2))
    for role in (HOST, JOINER):
        verdict = result[role].verdict
        assert verdict is not None and verdict.clean and verdict.audit_complete
    names = sorted(p.name for p in folder.glob("*.gtr"))
    gid = result[HOST].peer.flow.game_id.hex()
    assert len(names) == 2 and f"{gid}.gtr" in names and any(gid in n for n in names)
