"""The command line's doors into the terminal game, when there is no terminal to open."""

from __future__ import annotations

import pytest

from p2pgotg.cli import main


@pytest.mark.parametrize("argv, says", [
    (["play"], "needs a terminal"),
    (["start"], "needs a terminal"),
    (["host"], "add --bot"),
    (["join", "gg1-aaaa"], "bad invite code"),
])
def test_without_a_terminal_the_screen_says_what_to_do(argv, says, capsys) -> None:
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_no_command_without_a_terminal_prints_the_help(capsys) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "play" in out and "start" in out and "host" in out
