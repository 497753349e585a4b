"""The command line as a new user meets it: help that explains every option, ports and
addresses checked before anything starts, and the `show` and `games` commands on games
saved by real play (bot against bot over TLS, `selfplay`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from p2pgotg.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, P2PGOTG_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "p2pgotg", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_says_what_it_does() -> None:
    """Item 13: no option without help text, selfplay's and demo's included."""
    for name, sub in _subparsers().items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_the_rule_options_and_the_start_screen_are_explained(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["host", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("safe_or_survive (default) at once if no enemy piece stands beside it",
                  "always_survive only once it has survived", "immediate at once",
                  "same two squares more than three turns in a row", "forbid chasing"):
        assert words in text
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "start screen" in text and "P2PGOTG_HOME" in text
    assert "show" in text and "games" in text


def test_the_readme_says_how_to_install_and_every_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "Python 3.11" in readme and "venv" in readme and "pipx" in readme
    for command in ("p2pgotg demo", "p2pgotg show", "p2pgotg games", "P2PGOTG_HOME",
                    "start screen"):
        assert command in readme, command


@pytest.mark.parametrize("argv, says", [
    (["host", "--port", "99999"], "'99999' is not a port: use a number from 1 to 65535"),
    (["host", "--port", "-1", "--bot"], "is not a port"),
    (["host", "--bind", "192.0.2.77", "--bot"], "this computer has no address 192.0.2.77"),
    (["host", "--bind", "no-such-host.invalid"], "is not an address of this computer"),
])
def test_ports_and_addresses_are_checked_before_anything_starts(argv, says, tmp_path) -> None:
    """Item 9: refused at once, saying what was wrong; nothing listens, nothing is saved."""
    done = _run(*argv, home=tmp_path / "home", timeout=30)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "home").exists()


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """Two finished games saved by real play (selfplay: bot against bot over TLS)."""
    home = tmp_path_factory.mktemp("games")
    done = _run("selfplay", "--games", "1", "--seed", "5", "--save-dir", str(home),
                home=home, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return home


def test_show_prints_a_finished_game_with_both_armies_and_each_challenge(saved) -> None:
    """`show FILE` (without a terminal: printed) works for either player's transcript."""
    for seat in ("host", "joiner"):
        path = next((saved / "game-1" / seat).glob("*.gtr"))
        done = _run("show", str(path), home=saved)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith(str(path)) and "challenges open" in lines[0]
        assert lines[1].startswith("players: key ") and lines[2].startswith("1. White ")
        challenges = [line for line in lines[2:-1] if " challenges " in line]
        assert challenges and all("eliminated" in line for line in challenges)
        assert "audit clean" in lines[-1]
        assert " wins: " in lines[-1] or "Draw: " in lines[-1]
        assert "host" not in done.stdout.replace(str(path), "")


def test_show_says_why_it_cannot_show_a_file(tmp_path) -> None:
    junk = tmp_path / "junk.gtr"
    junk.write_bytes(b"not a game")
    for path, says in ((junk, "is not a saved game of p2pgotg"),
                       (tmp_path / "missing.gtr", "cannot read")):
        done = _run("show", str(path), home=tmp_path)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_games_lists_unfinished_games_first_with_the_command_to_resume(saved,
                                                                       tmp_path) -> None:
    home = tmp_path / "home"
    games = home / "data" / "games"
    (games / "bot").mkdir(parents=True)
    finished = next((saved / "game-1" / "host").glob("*.gtr"))
    (games / finished.name).write_bytes(finished.read_bytes())
    # an unfinished game against the bot: the first messages of a real one
    data = finished.read_bytes()
    cut = _records_prefix(data, 8)
    (games / "bot" / "unfinished.gtr").write_bytes(cut)
    done = _run("games", home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "2 saved games" in lines[0] and "1 unfinished" in lines[0]
    assert "against the bot, " in lines[1] and ": unfinished" in lines[1]
    assert "resume: p2pgotg play" in lines[2]
    assert "you won" in lines[3] or "you lost" in lines[3] or "draw" in lines[3]
    assert f"review: p2pgotg show {games / finished.name}" in lines[4]
    empty = _run("games", home=tmp_path / "nobody")
    assert empty.returncode == 0 and "no saved games yet" in empty.stdout


def _records_prefix(data: bytes, records: int) -> bytes:
    """The file's first `records` length-prefixed records (a game cut short)."""
    pos = 0
    for _ in range(records):
        pos += 4 + int.from_bytes(data[pos:pos + 4], "big")
    return data[:pos]
