"""A table in real terminals (SPEC chapter 5): `p2pgotg host --game towers --seats 3
--bot-seats 1` in one tmux window, `p2pgotg join CODE` by a second person in another (the
interface finds the code is a table's and hands the seat to the table screen), the bot in
the third seat, over loopback TLS. The people read the screens only and type as a person
would; the waits are on screen text, with generous nets (no timing is asserted).

Rules relied on: seed 002 (a start is claimed on the outer border, so `@c3` is refused;
in the setup a layer may be placed on an empty square), SPEC 5.7 (a seat that resigns
leaves and the others play on; when one team is left it wins), 5.8 (a whisper is read by
its receiver alone), 5.9 (verify of a seat's file gives the verdict).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_ui_newcomer import invite_code
from test_ui_tmux import ROOT, Tmux, _command

BOARD_COLUMNS = 40  # the board's column and its rule: the right column starts after it


@pytest.fixture
def tmux(tmp_path: Path):
    terminal = Tmux(tmp_path / "tmux.sock")
    yield terminal
    terminal.close()


def right(screen: str) -> list[str]:
    """The column right of the board, line by line."""
    return [line[BOARD_COLUMNS:] for line in screen.splitlines()]


def said(screen: str) -> str:
    """The right column's text, its wrapped lines joined."""
    return " ".join(line.strip() for line in right(screen) if line.strip())


def seat_of(title: str) -> int:
    found = re.search(r"you: seat (\d)", title)
    assert found is not None, title
    return int(found.group(1))


def seat_line(screen: str, seat: int) -> str:
    """The seat list's line of `seat` (`>Red    0 Ana   3 pts`), or ``."""
    return next((line for line in right(screen)
                 if re.match(rf"^[> ](Red|Blue|Green) +{seat} ", line)), "")


def typed(tmux: Tmux, text: str, on: str) -> None:
    tmux.keys(text, literal=True, to=on)
    tmux.keys("Enter", to=on)


def saved_path(screen: str) -> Path:
    """The file's path the end screen shows, its pieces joined."""
    column = right(screen)
    start = next(i for i, line in enumerate(column) if line.startswith("Saved (check it"))
    path = ""
    for line in column[start + 1:]:
        path += line.strip()
        if path.endswith(".gtr"):
            return Path(path)
    raise AssertionError(f"no saved path on:\n{screen}")


def my_turn(screen: str) -> bool:
    return "YOUR TURN" in screen.splitlines()[0]


def wait_for_turn(tmux: Tmux) -> None:
    """Until the host's turn: the other person, on its own turn, places a layer on c3
    (typed; in the setup a layer may go on any square, seed 002)."""
    for _ in range(4):
        screen = tmux.wait_for("a person's turn", lambda s: my_turn(s) or my_turn(
            tmux.screen("joiner")), 90)
        if my_turn(screen):
            return
        typed(tmux, "+c3", "joiner")
        tmux.wait_for("the joiner's layer", lambda s: not my_turn(s), 30, on="joiner")
    raise AssertionError("the host's turn never came")


def resign(tmux: Tmux, on: str) -> None:
    typed(tmux, "resign", on)
    tmux.wait_for("the question", lambda s: "resign? You leave the table" in s, 20, on=on)
    tmux.keys("y", to=on)


@pytest.mark.slow
def test_a_person_hosts_a_table_of_three_with_a_person_and_a_bot(tmp_path: Path,
                                                                 tmux: Tmux) -> None:
    homes = {"game": tmp_path / "host", "joiner": tmp_path / "joiner"}
    tmux.start(_command(homes["game"], "host --game towers --seats 3 --bot-seats 1 "
                        "--bind 127.0.0.1 --ascii", name="Ana"), name="game")
    # the lobby: the host and its bot are seated, one seat to take
    lobby = tmux.wait_for("the lobby", lambda s: "waiting for seats: 2 of 3" in s, 30)
    assert "(a seat to take)" in lobby and "bot" in lobby
    code = invite_code(lobby)
    tmux.start(_command(homes["joiner"], f"join {code} --ascii", name="Bo"), name="joiner")
    host = tmux.wait_for("the seat list", lambda s: "Seats" in s and "Red" in s, 60)
    joiner = tmux.wait_for("the joiner's table screen", lambda s: "Seats" in s, 60,
                           on="joiner")
    me, them = seat_of(host.splitlines()[0]), seat_of(joiner.splitlines()[0])
    assert me == 0 and them in (1, 2)
    bot = 3 - me - them
    # every seat's name in both seat lists (SPEC 3.4 `names`): the joiner's from its `hi`,
    # the host's and its bot's as the host tells them, marked as the host's word
    host = tmux.wait_for("the joiner's name", lambda s: "Bo" in seat_line(s, them), 30)
    assert "you" in seat_line(host, me) and "bot" in seat_line(host, bot)
    joiner = tmux.wait_for("the host's name", lambda s: "Ana" in seat_line(s, 0), 30,
                           on="joiner")
    assert "you" in seat_line(joiner, them) and "bot" in seat_line(joiner, bot)
    assert "names: the host's word" in said(joiner)

    # the host's turn in the setup (the joiner places a layer when its turn comes first)
    wait_for_turn(tmux)
    # an illegal claim, refused in the rule's words
    typed(tmux, "@c3", "game")
    tmux.wait_for("the refusal", lambda s: "outer border" in s, 20)
    # a layer on the cursor's square (c3 at first) by keys: Space lists, 1 makes it
    tmux.keys("Space", to="game")
    listed = tmux.wait_for("the list", lambda s: "c3: 1 +c3 (layer)" in s, 20)
    assert "(a number does it)" in listed
    tmux.keys("1", to="game")
    tmux.wait_for("the layer in the log", lambda s: "you played +c3" in s
                  or any(re.search(r"\d (Red|Blue|Green) +\+c3", line) for line in right(s)),
                  30)

    # chat to the table, and a whisper to the other person alone
    typed(tmux, "chat hello table", "game")
    tmux.wait_for("the chat at the joiner", lambda s: "hello table" in s, 30, on="joiner")
    typed(tmux, f"w {them} meet at c3", "game")
    tmux.wait_for("the whisper sent", lambda s: "(private): meet at c3" in said(s), 20)
    whispered = tmux.wait_for("the whisper received", lambda s: "meet at c3" in said(s),
                              30, on="joiner")
    assert "Red (seat 0) (private): meet at c3" in said(whispered) \
        or "(seat 0) (private): meet at c3" in said(whispered)

    # both people resign: the bot's seat is the last still in and wins (SPEC 4.13, 5.7)
    resign(tmux, "game")
    tmux.wait_for("the host's leaving", lambda s: "you left: resigned" in s, 30)
    resign(tmux, "joiner")
    end = tmux.wait_for("the verdict", lambda s: "result:" in s and ".gtr" in s, 60)
    verdict = said(end).split("result:")[1]
    assert "wins (resignation)" in verdict
    assert f"(seat {bot}) wins" in verdict  # (the bot's seat)
    path = saved_path(end)
    assert path.is_file() and str(homes["game"]) in str(path)
    tmux.wait_for("the joiner's verdict", lambda s: "result:" in s, 60, on="joiner")

    tmux.keys("q", to="game")
    after = tmux.wait_for("the program to end", lambda s: "EXITED" in s, 30)
    assert "EXITED 0" in after and "Traceback" not in after
    checked = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(path)],
                             capture_output=True, text=True, timeout=60, cwd=ROOT,
                             env={"P2PGOTG_HOME": str(homes["game"]), "PATH": "/usr/bin:/bin",
                                  "PYTHONPATH": str(ROOT)})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = next(line for line in checked.stdout.splitlines() if line.startswith("result:"))
    assert " ".join(result.split()[1:])[:40] in " ".join(verdict.split())
    tmux.keys("q", to="joiner")
    tmux.wait_for("the joiner's program to end", lambda s: "EXITED 0" in s, 30, on="joiner")
