"""Towers in a real terminal: `p2pgotg play --game towers`, `host --game towers`, `join`,
`show` and the start screen under tmux at 80x24, keys sent as a person would type them and
the screen read back with capture-pane (tests/test_ui_tmux.py's `Tmux`).

The player here reads the screen only: the board's squares (height, pawn, flag), the title,
the status line; what it may do on a square it learns as a person would, from the list
that Space shows. Rules the tests rely on are the seed's (SPEC chapter 4): a start on the
outer border with two border squares between it and another start (T5, T6), a move onto a
square without a flag of one's own plants a flag (T19), a pawn may move and then build
(T11), and a colour that has planted all its flags ends the game (T22).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from screens import code_on_lines_of_its_own
from test_ui_newcomer import invite_code, start_p2pgotg
from test_ui_tmux import ROOT, Tmux, _command

from p2pgotg.protocol import parse

#: SPEC 4.2: the outer border in ring order.
RING = ("a1", "a2", "a3", "a4", "a5", "b5", "c5", "d5", "e5", "e4", "e3", "e2", "e1", "d1", "c1",
        "b1")
FILES = "abcde"
CHOICE = re.compile(r"(\d) ([a-e][1-5]-[a-e][1-5]|[+*@][a-e][1-5])")


@pytest.fixture
def tmux(tmp_path: Path):
    terminal = Tmux(tmp_path / "tmux.sock")
    yield terminal
    terminal.close()


class Screen:
    """One capture of the Towers play screen, read as a person reads it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.title = self.lines[0]
        self.squares: dict[str, tuple[int, str, str]] = {}
        self.cursor: str | None = None
        for line in self.lines:
            if len(line) > 38 and line[0] == " " and line[1] in "12345" and line[2] == " ":
                for column, file in enumerate(FILES):
                    cell = line[3 + 7 * column: 10 + 7 * column]
                    name = f"{file}{line[1]}"
                    self.squares[name] = (int(cell[1:3]), cell[4], cell[5])
                    if cell[0] == "[":
                        self.cursor = name

    @property
    def mine(self) -> str:
        """Our colour's letter, from the title: `You, Red vs the bot, Blue`."""
        match = re.search(r"You, ([\w+]+) vs", self.title)
        assert match, self.title
        return match.group(1)[0]

    @property
    def my_turn(self) -> bool:
        return "YOUR TURN" in self.title

    @property
    def over(self) -> bool:
        return self.title.startswith(" Towers - game over")

    @property
    def status(self) -> str:
        """The status line (one or two lines above the input line)."""
        at = next(i for i, line in enumerate(self.lines) if line.startswith(" action>"))
        above = [self.lines[at - 2], self.lines[at - 1]]
        if "|" in above[0]:
            above = above[1:]
        return " ".join(line.strip() for line in above)

    def pawns(self, letter: str) -> list[str]:
        return [sq for sq, (_, pawn, _) in self.squares.items() if pawn == letter]

    def flags(self, letter: str) -> list[str]:
        return [sq for sq, (_, _, flag) in self.squares.items() if flag == letter.lower()]

    def actions_left(self) -> int:
        match = re.search(r"to act: (\d) action", self.text)
        return int(match.group(1)) if match else 0

    def in_setup(self) -> bool:
        return "setup: place a layer" in self.text


def read(tmux: Tmux, on: str = "game") -> Screen:
    return Screen(tmux.screen(on))


def neighbours(sq: str) -> list[str]:
    f, r = FILES.index(sq[0]), int(sq[1])
    out = []
    for df, dr in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        if 0 <= f + df < 5 and 1 <= r + dr <= 5:
            out.append(f"{FILES[f + df]}{r + dr}")
    return out


def cursor_to(tmux: Tmux, target: str, on: str = "game") -> None:
    """Arrow keys from where the cursor is to `target` (rank 5 is the top line)."""
    screen = read(tmux, on)
    assert screen.cursor is not None, screen.text
    dx = FILES.index(target[0]) - FILES.index(screen.cursor[0])
    dy = int(screen.cursor[1]) - int(target[1])
    keys = (["Right"] * dx if dx > 0 else ["Left"] * -dx) + \
        (["Down"] * dy if dy > 0 else ["Up"] * -dy)
    if keys:
        tmux.keys(*keys, to=on)
    tmux.wait_for(f"the cursor on {target}", lambda s: Screen(s).cursor == target, on=on)


def typed(tmux: Tmux, text: str, on: str = "game") -> None:
    tmux.keys(text, literal=True, to=on)
    tmux.keys("Enter", to=on)


def listed(tmux: Tmux, square: str, on: str = "game") -> list[tuple[str, str]]:
    """Space on `square`: the numbered actions the status line lists (empty: none)."""
    cursor_to(tmux, square, on)
    tmux.keys("Space", to=on)
    screen = tmux.wait_for(f"the actions on {square}",
                           lambda s: f"{square}:" in Screen(s).status
                           or "nothing to do" in Screen(s).status, on=on)
    return CHOICE.findall(Screen(screen).status)


def records(home: Path) -> int:
    """The records in the one saved game against the bot (a file read while it plays),
    once they stop changing (each is written as it goes out)."""
    files = list((home / "data" / "games" / "bot").glob("*.gtr"))
    assert len(files) == 1, files
    count = -1
    while True:
        now = len(parse(files[0].read_bytes()).records)
        if now == count:
            return now
        count = now
        time.sleep(0.3)


def wait_my_turn(tmux: Tmux, on: str = "game", timeout: float = 30) -> Screen:
    """The screen once it is our turn (drawn whole: the board, the table, the hints), or
    the end."""
    def ready(text: str) -> bool:
        screen = Screen(text)
        return screen.over or (screen.my_turn and len(screen.squares) == 25
                               and " colour " in text and text.rstrip().endswith("? keys"))

    return Screen(tmux.wait_for("our turn or the end", ready, timeout, on=on))


def claim_a_start(tmux: Tmux, on: str = "game") -> str:
    """In the setup: claim the border square farthest round the ring from the other
    colour's start, with the cursor and `@` Enter."""
    screen = read(tmux, on)
    theirs = [sq for sq in RING if screen.squares[sq][1] not in (".", screen.mine)]
    if theirs:
        at = RING.index(theirs[0])
        square = RING[(at + 8) % 16]  # (the opposite point of the ring: 8 steps either way)
    else:
        square = "a1"
    cursor_to(tmux, square, on)
    typed(tmux, "@", on)
    tmux.wait_for("our claim", lambda s: Screen(s).squares.get(square, (0, ""))[1]
                  == Screen(s).mine, on=on)
    return square


def play_a_turn(tmux: Tmux, on: str = "game") -> None:
    """Both actions of our turn: a move that plants a flag, chosen by Space and a digit,
    then a layer under that pawn with `+` Enter; with no pawn to move, a spawn typed in
    notation. Falls back to the first action listed anywhere of ours."""
    screen = read(tmux, on)
    me = screen.mine
    moved = None
    for sq in screen.pawns(me):
        fresh = [n for n in neighbours(sq) if screen.squares[n][2] != me.lower()
                 and screen.squares[n][1] == "."]
        if not fresh:
            continue
        choices = dict((text, number) for number, text in listed(tmux, sq, on))
        wanted = [f"{sq}-{n}" for n in fresh if f"{sq}-{n}" in choices]
        if wanted:
            tmux.keys(choices[wanted[0]], to=on)
            moved = wanted[0][-2:]
            break
    if moved is None:
        spawnable = [sq for sq in screen.flags(me) if screen.squares[sq][1] == "."]
        if not screen.pawns(me) and spawnable:
            typed(tmux, f"*{spawnable[0]}", on)  # (every pawn taken: a new one)
        else:
            _any_action(tmux, on)
    screen = Screen(tmux.wait_for("the first action made", lambda s: Screen(s).actions_left()
                                  != 2 or Screen(s).over, on=on))
    if screen.over or not screen.my_turn:
        return
    if moved is not None and screen.cursor == moved:
        typed(tmux, "+", on)  # a layer under the pawn just moved
    else:
        _any_action(tmux, on)
    tmux.wait_for("the turn done", lambda s: not Screen(s).my_turn or Screen(s).over, on=on)


def _any_action(tmux: Tmux, on: str) -> None:
    screen = read(tmux, on)
    me = screen.mine
    for sq in [*screen.pawns(me), *screen.flags(me)]:
        choices = listed(tmux, sq, on)
        if choices:
            tmux.keys(choices[0][0], to=on)
            return
    raise AssertionError(f"no action found on:\n{screen.text}")


@pytest.mark.slow
def test_a_whole_game_against_the_bot_by_keys_and_by_typed_actions(
        tmp_path: Path, tmux: Tmux) -> None:
    home = tmp_path / "home"
    tmux.start(_command(home, "play --game towers --ascii --level easy --think 0.05 "
                              "--seed 5"))
    screen = wait_my_turn(tmux)
    assert screen.title.startswith(" Towers | You, ") and "vs the bot, " in screen.title
    assert screen.in_setup()
    # a start off the border: the rule's words, and nothing sent
    before = records(home)
    typed(tmux, "@c3")
    screen = Screen(tmux.wait_for("the refusal", lambda s: "@c3:" in Screen(s).status))
    assert "border" in screen.status
    claim_a_start(tmux)
    assert records(home) >= before + 1  # the claim went out (the bot may have answered)
    turns = 0
    while True:
        screen = wait_my_turn(tmux)
        if screen.over:
            break
        if screen.in_setup():  # (the bot has not claimed yet: it is the last to)
            claim_a_start(tmux)
            continue
        if turns == 1:  # an illegal typed action: the rule's words, nothing sent
            before = records(home)
            free = next(sq for sq, (_, p, f) in screen.squares.items() if p == f == ".")
            typed(tmux, f"+{free}")
            said = Screen(tmux.wait_for("the refusal", lambda s, f=free: f"+{f}:" in
                                        Screen(s).status)).status
            assert "a layer is built only under one of your pawns" in said
            assert records(home) == before and read(tmux).actions_left() == 2
        play_a_turn(tmux)
        turns += 1
        assert turns < 60, "the game does not end"
    lines = screen.lines
    assert all(len(line) <= 80 for line in lines) and len(lines) == 24
    result = " ".join(lines[1:3])
    assert re.search(r"(You win|The bot wins|Draw): .* \(points: Red .*\d+, Blue .*\d+\)\.",
                     result), screen.text
    assert any(reason in result for reason in ("placed all its flags", "all 50 layers placed",
                                               "could not act"))
    assert "Nothing hidden: every action was checked as it came" in screen.text
    print(screen.text)  # for the record (pytest -s)
    tmux.keys("v")  # the review: the empty board, then the last action
    tmux.wait_for("the review", lambda s: "Towers review - action 0 of" in s)
    tmux.keys("End")
    screen = tmux.wait_for("the last action", lambda s: re.search(r"action (\d+) of \1", s))
    assert "points: Red" in " ".join(screen.split())
    tmux.keys("q")
    tmux.wait_for("the end screen", lambda s: s.startswith(" Towers - game over"))
    tmux.keys("q")
    screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
    assert "EXITED 0" in screen and "Traceback" not in screen


@pytest.mark.slow
def test_an_unfinished_game_against_the_bot_resumes(tmp_path: Path, tmux: Tmux) -> None:
    home = tmp_path / "home"
    command = _command(home, "play --game towers --ascii --level easy --think 0.05 --seed 2")
    tmux.start(command)
    wait_my_turn(tmux)
    claim_a_start(tmux)
    screen = wait_my_turn(tmux)
    if screen.in_setup():
        claim_a_start(tmux)
        screen = wait_my_turn(tmux)
    typed(tmux, "chat back soon")
    tmux.wait_for("the chat", lambda s: "you: back soon" in s)
    made = [line.split("|")[-1].split()[:3] for line in read(tmux).lines
            if re.match(r"\s+\d+ (Red|Blue) ", line.split("|")[-1])]
    tmux.keys("C-c")
    tmux.wait_for("the question", lambda s: "quit? The game is saved: p2pgotg play" in s)
    tmux.keys("y")
    screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
    assert "EXITED 0" in screen and "Traceback" not in screen
    tmux.start(command, name="again")  # the same command, in another terminal
    screen = tmux.wait_for("the offer", lambda s: "unfinished game against the bot" in s, 20,
                           on="again")
    assert "Towers, you, " in screen and "against the bot (easy)" in screen
    tmux.keys("r", to="again")
    screen = Screen(tmux.wait_for("the game again", lambda s: "Resumed." in s, 20, on="again"))
    assert screen.my_turn and "resumed: your turn: 2 actions left" in screen.status
    log = [line.split("|")[-1] for line in screen.lines]
    again = [line.split()[:3] for line in log if re.match(r"\s+\d+ (Red|Blue) ", line)]
    assert again == made and any("you: back soon" in line for line in log)
    typed(tmux, "resign", on="again")
    tmux.wait_for("the question", lambda s: "resign this game?" in s, on="again")
    tmux.keys("y", to="again")
    screen = tmux.wait_for("the end", lambda s: "The bot wins: you resigned" in s, on="again")
    assert "(points: Red" in " ".join(screen.split())


@pytest.mark.slow
def test_joining_a_towers_host_shows_the_towers_screen(tmp_path: Path, tmux: Tmux) -> None:
    """`p2pgotg join CODE` learns the game from the host: a Towers host (its bot seat)
    gets the Towers screen, not Game of the Generals'."""
    host = start_p2pgotg(tmp_path / "host", "host", "--game", "towers", "--teams", "--bot",
                         "--bind", "127.0.0.1", "--bot-delay", "0.05", "--level", "easy")
    try:
        assert host.stdout is not None
        code = next(line.split()[-1] for line in host.stdout if line.startswith("invite:"))
        tmux.start(_command(tmp_path / "joiner", f"join {code} --ascii"))
        screen = tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 20)
        assert "2 players, 2 colours each, 9 flags a colour" in " ".join(screen.split())
        tmux.keys("a")
        screen = wait_my_turn(tmux)
        assert re.search(r"You, (Red\+Green|Blue\+Yellow) vs ", screen.title), screen.title
        screen = Screen(tmux.wait_for("the four colours' rows", lambda s: all(
            re.search(rf"^[ >]{colour} \((you|opp)\)", s, re.M)
            for colour in ("Red", "Blue", "Green", "Yellow"))))
        assert "teams: Red+Green" in screen.text
        claim_a_start(tmux)
        typed(tmux, "resign")
        tmux.wait_for("the question", lambda s: "resign this game?" in s)
        tmux.keys("y")
        screen = tmux.wait_for("the end", lambda s: "wins: you resigned" in s)
        assert screen.startswith(" Towers - game over")
        tmux.keys("q")
        screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
        assert "EXITED 0" in screen and "Traceback" not in screen
    finally:
        host.kill()
        host.wait()


@pytest.mark.slow
def test_the_game_is_claimed_when_the_other_side_stays_away(tmp_path: Path,
                                                           tmux: Tmux) -> None:
    """The interface's claim (SPEC 3.6) in a Towers game: the bot's program goes away
    owing an action; the screen says so, counts down, and the game is claimed, as the
    claimant's word."""
    tmux.start(_command(tmp_path / "host", "host --game towers --bind 127.0.0.1 --ascii "
                                           "--abandon 5s"))
    code = invite_code(tmux.wait_for("the invite", lambda s: "gg1-" in s, 20))
    joiner = start_p2pgotg(tmp_path / "joiner", "join", code, "--bot", "--bot-delay", "4")
    try:
        wait_my_turn(tmux)
        claim_a_start(tmux)  # then the bot owes its choice, for 4 seconds at least
        tmux.wait_for("the bot's turn", lambda s: not Screen(s).my_turn)
    finally:
        joiner.kill()  # the other player's computer is gone
        joiner.wait()
    screen = tmux.wait_for("the countdown", lambda s: "is claimed for you" in " ".join(
        s.split()))
    assert "The connection dropped" in " ".join(screen.split())
    screen = tmux.wait_for("the claim", lambda s: "You win: they left the game" in s, 30)
    words = " ".join(screen.split())
    assert "(points: Red" in words and "a claim by you: your word" in words


@pytest.mark.slow
def test_an_away_hosts_invite_is_copied_whole_from_under_the_board(tmp_path: Path,
                                                                   tmux: Tmux) -> None:
    """SPEC 3.8: the code that brings the other side back "is shown on lines of its own
    across the whole width, nothing before or after it"; the column beside the board broke
    it into 40-column pieces beside the log. The joiner's program goes away: the invite
    the host's screen showed at first is read back whole from under the board, with the
    board and its counts whole above it."""
    tmux.start(_command(tmp_path / "host", "host --game towers --bind 127.0.0.1 --ascii"))
    code = invite_code(tmux.wait_for("the invite", lambda s: "gg1-" in s, 20))
    joiner = start_p2pgotg(tmp_path / "joiner", "join", code, "--bot", "--bot-delay", "1")
    try:
        tmux.wait_for("the game", lambda s: len(Screen(s).squares) == 25, 20)
    finally:
        joiner.kill()  # the other player's computer is gone
        joiner.wait()
    screen = Screen(tmux.wait_for("the away panel", lambda s: code[:40] in s, 30))
    assert len(code_on_lines_of_its_own(screen.lines, code)) == 2  # (79, then the rest)
    assert "They come back with the same command. Their invite code:" in screen.lines
    assert len(screen.squares) == 25 and " Blue (" in screen.text and ">" in screen.text
    print(screen.text)  # for the record (pytest -s)
    # this host listens on this computer only: a reply code is refused in one line
    typed(tmux, "reply gr1-aebagbafaaaqgaaaaaaaa")
    screen = Screen(tmux.wait_for("the refusal", lambda s: "no reply code can be taken" in
                                  " ".join(s.split())))
    assert "Traceback" not in screen.text and code[:40] in screen.text


@pytest.mark.slow
def test_across_two_nats_each_side_copies_its_code_whole_and_the_host_takes_it_in_game(
        tmp_path: Path, tmux: Tmux) -> None:
    """Two homes behind easy NATs (tests/netbed.py), the screens in real terminals: a Towers
    game punched through with the joiner's reply code; then the joiner's router restarts
    (its mapping moves). SPEC 3.8: the joiner shows a fresh reply code, and the host its
    invite, each on lines of its own across the width, read whole from the pane; the host
    types `reply CODE` on its action line (a mistyped one first: one line says why) and
    the game comes back."""
    from netbed import Bed, missing_tools

    assert not missing_tools(), "the test bed needs its tools (.ci/run installs them)"
    bed = Bed().build()
    try:
        tmux.start(bed.terminal_line("hC", tmp_path / "host",
                                     "host --game towers --no-port-map"), name="host")
        screen = tmux.wait_for("an invite that a reply code can answer", lambda s:
                               "allows hole punching" in s and "gg2-" in s, 60, on="host")
        invite = re.search(r"gg2-[a-z2-7]+", screen.replace("\n", "")).group(0)
        tmux.start(bed.terminal_line("hA", tmp_path / "joiner", f"join {invite}"),
                   name="join")
        screen = tmux.wait_for("the reply code", lambda s: "gr1-" in s, 60, on="join")
        first = re.search(r"gr1-[a-z2-7]+", screen).group(0)
        tmux.keys("r", to="host")
        tmux.wait_for("the reply prompt", lambda s: "reply code:" in s, on="host")
        typed(tmux, first, on="host")
        tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 60, on="join")
        tmux.keys("a", to="join")
        for name in ("host", "join"):
            tmux.wait_for("the game", lambda s: len(Screen(s).squares) == 25, 30, on=name)

        bed.reboot("rA")  # the joiner's router restarts: its public address moves
        screen = tmux.wait_for("a fresh reply code", lambda s: re.search(
            r"^gr1-", s, re.M) and first not in s, 120, on="join")
        fresh = re.search(r"^gr1-[a-z2-7]+", screen, re.M).group(0)
        joining = Screen(screen)
        assert code_on_lines_of_its_own(joining.lines, fresh) == [fresh]
        assert "send them this reply code (they press r, or run p2pgotg host --reply " \
            "CODE):" in " ".join(joining.lines)
        assert len(joining.squares) == 25
        hosting = Screen(tmux.wait_for("the away panel", lambda s: invite[:40] in s, 60,
                                       on="host"))
        assert len(code_on_lines_of_its_own(hosting.lines, invite)) >= 2
        assert "If they send you a reply code, type r and Enter (or paste it) to take it." \
            in " ".join(hosting.lines) and len(hosting.squares) == 25
        print(joining.text, hosting.text, sep="\n")  # for the record (pytest -s)

        mistyped = fresh[:10] + ("a" if fresh[10] != "a" else "b") + fresh[11:]
        typed(tmux, f"reply {mistyped}", on="host")
        said = Screen(tmux.wait_for("the refusal", lambda s: "bad reply code" in s,
                                    on="host")).status
        assert said.startswith("bad reply code") and "check does not match" in said
        typed(tmux, "r", on="host")  # `r` alone opens the reply prompt; Esc closes it
        tmux.wait_for("the reply prompt", lambda s: " reply code:" in s, on="host")
        tmux.keys("Escape", to="host")
        tmux.wait_for("the action line", lambda s: " action>" in s, on="host")
        typed(tmux, f"reply {fresh}", on="host")
        for name in ("host", "join"):
            screen = tmux.wait_for("the game again", lambda s: "reconnecting" not in
                                   s.splitlines()[0] and "dropped" not in s, 60, on=name)
            assert "Traceback" not in screen and "gr1-" not in screen and "gg2-" not in screen
    finally:
        tmux.close()
        bed.close()


@pytest.mark.slow
def test_the_start_screen_offers_towers_and_ascii_draws_without_colour(
        tmp_path: Path, tmux: Tmux) -> None:
    """`t` on the start screen chooses Towers, and 1 plays it against the bot; in colour
    each letter takes its colour, with --ascii the same letters come plain."""
    tmux.start(_command(tmp_path / "colour", "start --level easy"), name="colour")
    tmux.start(_command(tmp_path / "ascii", "play --game towers --ascii --level easy"),
               name="ascii")
    tmux.wait_for("the start screen", lambda s: "The game: Game of the Generals" in s,
                  on="colour")
    tmux.keys("t", to="colour")
    tmux.wait_for("Towers chosen", lambda s: "The game: Towers" in s, on="colour")
    tmux.keys("1", to="colour")
    shown = {}
    for name in ("colour", "ascii"):
        wait_my_turn(tmux, on=name)
        claim_a_start(tmux, on=name)
        tmux.wait_for("both starts", lambda s: {"R", "B"} <= {
            p for _, p, _ in Screen(s).squares.values()}, on=name)
        shown[name] = tmux.run("capture-pane", "-p", "-e", "-t", name)
    colours = re.compile(r"\x1b\[[0-9;]*(3[0-7]|38;[25];[0-9;]+|9[0-7])[;m]")
    assert not colours.search(shown["ascii"]), "colour codes in --ascii"
    for letter, code in (("R", "38;5;203|91|31"), ("B", "38;5;75|94|34")):
        painted = re.compile(rf"\x1b\[[0-9;]*({code})[0-9;]*m[^\x1b]*{letter}")
        assert painted.search(shown["colour"]), f"{letter} is not in its colour"


def test_rules_for_towers_say_how_to_play(tmp_path: Path) -> None:
    done = subprocess.run(_p2pgotg("rules", "--game", "towers"), capture_output=True,
                          text=True, env=_env(tmp_path), cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for words in ("5x5", "50 tower layers", "6 pawns and 13 flags", "outer border",
                  "two actions", "from a higher tower", "1 point for each of its flags",
                  "c3-c4, +c3, *c3, @a1", "chapter 4 of SPEC.md"):
        assert words in text, words
    assert all(len(line) <= 80 for line in done.stdout.splitlines())


@pytest.mark.slow
def test_show_and_games_tell_a_real_towers_game(tmp_path: Path, tmux: Tmux) -> None:
    """Transcripts from the real selfplay (two bots over TLS): `show --text` lists every
    action with its colour and the board after each, then the result; `games` lists the
    game with its opponent, colours, result and the command that shows it; `show` on the
    screen steps through it."""
    import trio

    from p2pgotg.games import replay
    from p2pgotg.games.towers.rules import RuleOptions
    from p2pgotg.selfplay import play_one

    result = trio.run(play_one, RuleOptions(), tmp_path / "selfplay", 7)
    host_file = result.host.path
    transcript = parse(host_file.read_bytes())
    flow = replay(transcript).flow
    game = flow.game
    outcome = game.outcome
    home = tmp_path / "home"
    games = home / "data" / "games"
    games.mkdir(parents=True)
    kept = games / host_file.name
    kept.write_bytes(host_file.read_bytes())
    shown = subprocess.run(_p2pgotg("show", str(kept), "--text"), capture_output=True,
                           text=True, env=_env(home), cwd=ROOT, timeout=60)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{kept}: Towers, 2 players, 13 flags each"
    steps = [line for line in lines if re.match(r"\d+\. (Red|Blue) ", line)]
    # every action message of the transcript, in order, by the colour to act (setup
    # choices alternate from Red; in play, two actions a colour)
    actions = [line.split()[2] for line in steps]
    assert actions == [a.text() for a in game.history]
    assert len(steps) == game.ply
    boards = [i for i, line in enumerate(lines) if line.strip().split() == list(FILES)]
    assert len(boards) == game.ply  # a board after each action
    last = {f"{FILES[c]}{line.split()[0]}": cell for line in lines[boards[-1] - 5:boards[-1]]
            for c, cell in enumerate(re.findall(r"\s*(\d+ \S\S)", line[5:]))}
    for sq, cell in last.items():  # the final board: every square as the game has it
        index = FILES.index(sq[0]) + 5 * (int(sq[1]) - 1)
        height, letters = cell.split()
        pawn, flag = game.pawn_at(index), game.flag_at(index)
        assert int(height) == game.height(index)
        assert letters == ("RBGY"[pawn] if pawn is not None else ".") + \
            ("rbgy"[flag] if flag is not None else ".")
    winner = ["Red", "Blue"][outcome.winners[0]] if len(outcome.winners) == 1 else None
    assert lines[-1].startswith(f"{winner} wins: " if winner else "Draw: ")
    assert f"(points: Red {outcome.scores[0]}, Blue {outcome.scores[1]})" in lines[-1]
    assert lines[-1].endswith("nothing hidden: every action checked as it came, clean")
    listed_games = subprocess.run(_p2pgotg("games"), capture_output=True, text=True,
                                  env=_env(home), cwd=ROOT, timeout=60)
    assert listed_games.returncode == 0, listed_games.stderr
    text = listed_games.stdout.splitlines()
    host_colour = "Red" if flow.first == "host" else "Blue"
    won = outcome.winners == (flow.seats_of("host")[0],)
    assert re.match(rf"\d{{4}}-\d\d-\d\d \d\d:\d\d  Towers, you, {host_colour} against key "
                    r"[0-9a-f]{12}, (Red|Blue): you (won|lost): ", text[1]), text
    assert ("you won" if won else "you lost") in text[1] and f"{game.ply} actions" in text[1]
    assert text[2].strip() == f"review: p2pgotg show {kept}"
    tmux.start(_command(home, f"show {kept} --ascii"))
    tmux.wait_for("the review", lambda s: f"Towers review - action 0 of {game.ply}" in s)
    tmux.keys("Right")
    screen = Screen(tmux.wait_for("the first action", lambda s: "action 1 of" in s))
    first = game.history[0]
    assert f">1. Red {first.text()}" in screen.text
    tmux.keys("End")
    screen = Screen(tmux.wait_for("the last action", lambda s: f"action {game.ply} of" in s))
    for name, (height, pawn, flag) in screen.squares.items():
        index = FILES.index(name[0]) + 5 * (int(name[1]) - 1)
        assert height == game.height(index)
        assert pawn == ("RBGY"[game.pawn_at(index)] if game.pawn_at(index) is not None
                        else ".")
        assert flag == ("rbgy"[game.flag_at(index)] if game.flag_at(index) is not None
                        else ".")
    assert lines[-1].split(";")[0].split(": ")[0] in screen.text  # `Blue wins`
    tmux.keys("q")
    screen = tmux.wait_for("the program to end", lambda s: "EXITED" in s)
    assert "EXITED 0" in screen and "Traceback" not in screen


def _p2pgotg(*args: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "p2pgotg", *args]


def _env(home: Path) -> dict[str, str]:
    return {"P2PGOTG_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
def test_two_terminals_play_a_whole_towers_game(tmp_path: Path, tmux: Tmux) -> None:
    """The README's way between two people: `p2pgotg host --game towers` in one terminal,
    `p2pgotg join CODE` in another; both play by keys to the end (T22: a colour that has
    planted all its flags ends it), both screens tell the same result, and `verify` of
    each player's file says the same."""
    homes = {"game": tmp_path / "host", "joiner": tmp_path / "joiner"}
    tmux.start(_command(homes["game"], "host --game towers --bind 127.0.0.1 --ascii"),
               name="game")
    code = invite_code(tmux.wait_for("the invite", lambda s: "gg1-" in s, 20))
    tmux.start(_command(homes["joiner"], f"join {code} --ascii", name="Joiner"),
               name="joiner")
    screen = tmux.wait_for("the host's rules", lambda s: "Press a to accept" in s, 20,
                           on="joiner")
    assert "Game: Towers" in " ".join(screen.split())
    tmux.keys("a", to="joiner")
    ends: dict[str, Screen] = {}
    turns = 0
    while len(ends) < 2:
        turns += 1
        assert turns < 150, "the game does not end"
        moved = False
        for side in ("game", "joiner"):
            if side in ends:
                continue
            screen = read(tmux, side)
            if screen.over:
                ends[side] = screen
            elif screen.my_turn and len(screen.squares) == 25:
                screen = wait_my_turn(tmux, side)
                if screen.over:
                    continue
                if screen.in_setup():
                    claim_a_start(tmux, side)
                else:
                    play_a_turn(tmux, side)
                moved = True
        if not moved:
            time.sleep(0.2)
    results = {side: " ".join(s.lines[1:3]) for side, s in ends.items()}
    for side, result in results.items():
        assert re.search(r"\(points: Red .*\d+, Blue .*\d+\)", result), ends[side].text
        assert "placed all its flags" in result or "all 50 layers placed" in result
    points = {side: re.findall(r"(Red|Blue)\b[^,.]*?(\d+)", r.split("points:")[1])
              for side, r in results.items()}  # (each names itself "you": the numbers)
    assert points["game"] == points["joiner"] and len(points["game"]) == 2, results
    for side in ends:
        tmux.keys("q", to=side)
        done = tmux.wait_for("the program to end", lambda s: "EXITED" in s, on=side)
        assert "EXITED 0" in done and "Traceback" not in done
    verdicts = []
    for home in homes.values():
        files = list((home / "data").rglob("*.gtr"))
        assert len(files) == 1, files
        run = subprocess.run([sys.executable, "-m", "p2pgotg", "verify", str(files[0])],
                             capture_output=True, text=True, cwd=ROOT, timeout=60,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert run.returncode == 0, run.stdout + run.stderr
        verdicts.append([line for line in run.stdout.splitlines()
                         if line.startswith(("game id:", "points:", "verdict:"))])
    assert len(verdicts[0]) == 3 and verdicts[0] == verdicts[1], verdicts
