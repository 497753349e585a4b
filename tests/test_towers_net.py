"""Towers over real TLS on loopback (SPEC 4.11, 3.4): a host of Towers says so in its `ok`,
the joiner plays the game the host plays, both files give one verdict, and a killed player
resumes its Towers game with the same command."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from test_net_resume import SAFETY, Player, assert_same_clean_files, free_port, unfinished

from p2pgotg.games import replay
from p2pgotg.games.towers.flow import TowersFlow
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol import HOST, JOINER, parse
from p2pgotg.selfplay import play_one


@pytest.mark.parametrize("options", [RuleOptions(), RuleOptions(seats=4, teams=True)],
                         ids=["two colours", "two colours each"])
async def test_a_towers_game_between_two_bots_over_tls(tmp_path: Path,
                                                       options: RuleOptions) -> None:
    with trio.fail_after(SAFETY):
        result = await play_one(options, tmp_path, seed=3)
    assert result.agreed and result.verdict is not None and result.verdict.clean
    flows = [s.peer.flow for s in (result.host, result.joiner)]
    assert all(isinstance(flow, TowersFlow) for flow in flows)
    assert flows[0].options == options == flows[1].options
    for session in (result.host, result.joiner):
        report = replay(parse(session.path.read_bytes()))
        assert int(report.finding) == 0 and report.verdict == result.verdict


async def _towers_players(tmp_path: Path, nursery: trio.Nursery) -> tuple[Player, Player]:
    host = Player(tmp_path / "host-home", "host", "--game", "towers", "--bot", "--bind",
                  "127.0.0.1", "--port", str(free_port()), "--seed", "1", "--bot-delay",
                  "0.02")
    await host.start(nursery)
    code = await host.line_starting("invite:")
    joiner = Player(tmp_path / "joiner-home", "join", code, "--bot", "--seed", "2",
                    "--bot-delay", "0.02")
    await joiner.start(nursery)
    return host, joiner


@pytest.mark.slow
@pytest.mark.parametrize("victim", [JOINER, HOST])
async def test_a_killed_towers_player_resumes_with_the_same_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], victim: str) -> None:
    async with trio.open_nursery() as nursery:
        with trio.fail_after(SAFETY):
            host, joiner = await _towers_players(tmp_path, nursery)
            player = host if victim == HOST else joiner
            saved = await player.wait_for_messages(12)
            await player.kill()
        assert unfinished(saved), "the game ended before the kill: make it slower"
        with trio.fail_after(SAFETY):
            await player.start(nursery)
            host_exit, joiner_exit = await host.exit_code(), await joiner.exit_code()
    assert (host_exit, joiner_exit) == (0, 0), host.log() + joiner.log()
    assert f"resuming the unfinished game saved in {saved.name}" in player.err.decode()
    for p in (host, joiner):
        assert "game over:" in p.out.decode() and "nothing hidden" in p.out.decode(), p.log()
        assert "Traceback" not in p.err.decode(), p.log()
    host_file, = host.games.glob("*.gtr")
    joiner_file, = joiner.games.glob("*.gtr")
    assert_same_clean_files(host_file, joiner_file, capsys)
