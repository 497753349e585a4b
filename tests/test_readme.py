"""The README's first two commands, run as a newcomer runs them: in a fresh copy of the
tree, with the distribution's own Python (Debian and Ubuntu refuse `pip install` into it,
PEP 668), the first under a real terminal. CI runs the second one verbatim."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_ui_tmux import Tmux

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON_DIRS = "/usr/bin:/bin"  # python3 as the distribution installed it


def readme_commands() -> list[str]:
    """The commands of the README's first code block, comments cut off."""
    text = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None, "the README opens no ```sh block"
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def fresh_copy(dest: Path) -> Path:
    """The tree as a new clone would have it: tracked files and new ones not ignored (no
    virtual environment, no caches), as .ci/run copies it."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], check=True, capture_output=True).stdout
        for name in filter(None, listed.decode().split("\0")):
            source = ROOT / name
            if source.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name)
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".venv", ".ci-venv", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"))
    return dest


def system_python() -> None:
    if not Path("/usr/bin/python3").exists():
        pytest.fail("no /usr/bin/python3: this test runs the README's commands with the "
                    "distribution's Python, as a new user would")


def test_the_readme_opens_with_the_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    play, tests = commands
    for command in commands:  # nothing is installed into the system's Python (PEP 668)
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install ")
        assert "--break-system-packages" not in command and "sudo" not in command
    assert play.endswith(".venv/bin/p2pgotg play") and tests.endswith(".venv/bin/pytest")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert readme_commands()[1] in ci


def test_the_readme_says_how_to_come_back_in_a_second_terminal() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert "second terminal" in text and ". .venv/bin/activate" in text


@pytest.mark.slow
def test_the_readme_play_command_sets_up_and_opens_the_game(tmp_path: Path) -> None:
    """The first command, verbatim, in a fresh copy, with the system's python3 first on the
    PATH: it must end on the game's setup screen."""
    system_python()
    tree = fresh_copy(tmp_path / "p2pgotg")
    tmux = Tmux(tmp_path / "tmux.sock")
    home = tmp_path / "home"
    command = (f"env PATH={SYSTEM_PYTHON_DIRS} P2PGOTG_HOME={shlex.quote(str(home))} "
               f"P2PGOTG_NAME=Newcomer sh -c {shlex.quote(readme_commands()[0])}; "
               "echo EXITED $?; sleep 60")
    try:
        tmux.start(command, cwd=tree)
        screen = tmux.wait_for("the setup screen",
                               lambda s: "Setup - you play" in s or "EXITED" in s, 240)
        assert "Setup - you play" in screen, screen
        tmux.keys("C-c")
        tmux.wait_for("the question", lambda s: "quit?" in s)
        tmux.keys("y")
        screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
        assert "EXITED 0" in screen and "Traceback" not in screen
    finally:
        tmux.close()


@pytest.mark.slow
def test_the_readme_test_command_sets_up_and_runs_pytest(tmp_path: Path) -> None:
    """The second command, verbatim, in a fresh copy: it installs the test tools and pytest
    starts (told only to collect, through its environment, not to run the suite again)."""
    system_python()
    tree = fresh_copy(tmp_path / "p2pgotg")
    env = {**os.environ, "PATH": SYSTEM_PYTHON_DIRS,
           "PYTEST_ADDOPTS": "--collect-only -p no:cacheprovider -n 0"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["sh", "-c", readme_commands()[1]], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"^\d+ tests collected", done.stdout, re.M), done.stdout[-2000:]
    assert "tests/test_readme.py::test_the_readme_opens_with_the_two_commands" in done.stdout
