"""The command line's doors into the terminal game, when there is no terminal to open."""

from __future__ import annotations

import pytest

from p2pgotg.cli import build_parser, main


@pytest.mark.parametrize("argv, says", [
    (["play"], "needs a terminal"),
    (["start"], "needs a terminal"),
    (["host"], "add --bot"),
    (["host", "--game", "towers", "--seats", "3"], "needs a terminal"),
    (["join", "gg1-aaaa"], "bad invite code"),
])
def test_without_a_terminal_the_screen_says_what_to_do(argv, says, capsys) -> None:
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_no_command_without_a_terminal_prints_the_help(capsys) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "play" in out and "start" in out and "host" in out


@pytest.mark.parametrize("argv, default", [
    (["play"], "hard"),
    (["start"], "hard"),
    (["host", "--bot"], "normal"),
    (["join", "gg1-aaaa", "--bot"], "normal"),
    (["selfplay"], "normal"),
])
def test_every_bot_door_takes_a_level(argv, default) -> None:
    parser = build_parser()
    assert parser.parse_args(argv).level == default
    for level in ("easy", "normal", "hard"):
        assert parser.parse_args([*argv, "--level", level]).level == level


def test_an_unknown_level_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["play", "--level", "grandmaster"])
    assert exc.value.code == 2
    assert "easy" in capsys.readouterr().err
