"""What a new player ran into, each driven through the real interface with pipe input
against the built-in bot over real loopback TLS: confirmations, undo, the move clock,
quitting back to the start screen, resuming a game against the bot with its chat, the
80-column layout of the end screen, whose piece is whose without colour, and no talk of
"host" and "joiner" in a game against the bot."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.net.reaching.invite import Invite
from p2pgotg.rules import RuleOptions
from p2pgotg.ui import board, end_screen, lobby_screen, play_screen, setup_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import Mode, Screen
from tests.test_ui_game import CTRL_Q, ENTER, Driver, launch_for, pick_move, run_ui

ESC = "\x1b"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path / "home"))


async def _to_play(d: Driver) -> None:
    s = d.state
    await d.until("the setup screen", lambda: s.screen is Screen.SETUP and s.editor is not None)
    await d.keys("r", then=lambda: not s.editor.problems())
    await d.keys("d", then=lambda: s.screen is Screen.PLAY, what="the game to start")


async def _play_one_move(d: Driver, challenge: bool = False) -> None:
    s = d.state
    peer = s.peer
    await d.until("our turn", lambda: peer.my_turn or peer.flow.is_over)
    if peer.flow.is_over:
        return
    mine = sum(1 for r in peer.view.history if r.side is peer.side)
    move = pick_move(peer.view, peer.side, challenge=challenge)
    text = f"{move.text()}"
    await d.keys(*text, ENTER, then=lambda: peer.flow.is_over or sum(
        1 for r in peer.view.history if r.side is peer.side) == mine + 1,
        what=f"the move {text}")


def test_the_setup_editor_undoes_and_a_refused_name_keeps_its_prompt(tmp_path: Path) -> None:
    """Item 11: a rejected save name keeps the prompt (the retyped name never reaches the
    board as keys), `r` over hand-placed pieces asks first, and `u` undoes."""

    async def scenario(d: Driver) -> None:
        s = d.state
        await d.until("the setup screen", lambda: s.screen is Screen.SETUP and s.editor is not None)
        editor = s.editor
        await d.keys(ENTER, then=lambda: len(editor.placement) == 1)
        await d.keys("\x1b[D", ENTER, then=lambda: len(editor.placement) == 2)
        by_hand = dict(editor.placement)
        # a bad name: the prompt stays, and what is typed next goes on editing the name
        await d.keys("w", *"my formation", ENTER, then=lambda: s.status_error)
        assert "cannot be a formation name" in s.status and s.prompt is not None
        await d.keys("\x08" * 12, *"rr", ENTER, then=lambda: "saved as rr" in s.status)
        assert s.prompt is None and editor.placement == by_hand  # no `r` reached the board
        # `r` over pieces placed by hand asks; n keeps them
        await d.keys("r", then=lambda: s.confirm is not None)
        assert "replace the 2 pieces you placed" in s.status
        await d.keys("n", then=lambda: s.confirm is None)
        assert editor.placement == by_hand
        await d.keys("r", "y", then=lambda: len(editor.placement) == 21)
        # undo brings the hand-placed formation back, then each placement in turn
        await d.keys("u", then=lambda: editor.placement == by_hand)
        await d.keys("u", then=lambda: len(editor.placement) == 1)
        await d.keys("\x1b[C", "x", then=lambda: not editor.placement)
        await d.keys("u", then=lambda: len(editor.placement) == 1)
        assert "u undo" in setup_screen.hints(s)
        await d.keys(CTRL_Q, "y")

    run_ui(Mode.BOT, launch_for(tmp_path), scenario)


def test_resign_asks_first(tmp_path: Path) -> None:
    """Item 12: `resign` asks y/n; n keeps playing."""

    async def scenario(d: Driver) -> None:
        s = d.state
        await _to_play(d)
        await d.keys(*"resign", ENTER, then=lambda: s.confirm is not None)
        assert "resign this game?" in s.status and "y yes" in play_screen.hints(s)
        await d.keys("n", then=lambda: s.confirm is None)
        assert not s.peer.flow.is_over and s.screen is Screen.PLAY
        await d.keys(*"resign", ENTER, "y", then=lambda: s.screen is Screen.END)
        await d.keys(CTRL_Q, "y")

    run_ui(Mode.BOT, launch_for(tmp_path), scenario)


@pytest.mark.slow
def test_the_move_clock_shows_and_warns_before_it_runs_out(tmp_path: Path) -> None:
    """Item 3: with --move-time the title shows the move clock, and near its end the
    status line warns, before the game is lost on time."""
    seen: dict[str, str] = {}

    async def scenario(d: Driver) -> None:
        s = d.state
        await _to_play(d)
        await d.until("our turn", lambda: s.peer.my_turn)
        seen["title"] = play_screen.title(s)
        await d.until("the warning", lambda: bool(play_screen.clock_warning(s)), 15)
        seen["warning"] = play_screen.clock_warning(s)
        seen["title late"] = play_screen.title(s)
        await d.until("the end on time", lambda: s.screen is Screen.END, 15)
        seen["headline"] = fragments_text(end_screen.headline(s))
        await d.keys("q")

    options = RuleOptions(move_seconds=4)  # (under the 10 s warning from the start)
    run_ui(Mode.BOT, launch_for(tmp_path, options=options), scenario)
    assert "your move 0:0" in seen["title"]
    assert "left for this move: move now" in seen["warning"]
    assert "!" in seen["title late"]
    assert "you ran out of time" in seen["headline"]


def test_quitting_a_game_from_the_start_screen_goes_back_to_it(tmp_path: Path) -> None:
    """Item 14: a bot game begun on the start screen quits back to the start screen, and
    quitting during the setup says nothing of a saved game to verify."""

    async def scenario(d: Driver) -> None:
        s = d.state
        assert s.screen is Screen.START
        await d.keys("1", then=lambda: s.screen is Screen.SETUP, what="the setup")
        await d.keys(CTRL_Q, then=lambda: s.confirm is not None)
        assert "leave this game for the start screen?" in s.status
        await d.keys("y", then=lambda: s.screen is Screen.START, what="the start screen")
        assert s.session is None
        await d.keys("q")

    assert run_ui(None, launch_for(tmp_path), scenario) == ""

    async def quit_in_setup(d: Driver) -> None:
        s = d.state
        await d.until("the setup screen", lambda: s.screen is Screen.SETUP and s.editor is not None)
        await d.keys(CTRL_Q, "y")

    message = run_ui(Mode.BOT, launch_for(tmp_path), quit_in_setup)
    assert "verify" not in message and "saved game:" not in message


def test_play_offers_to_resume_an_unfinished_game_with_its_chat(tmp_path: Path) -> None:
    """Items 14 and 8: `play` after a quit (or a crash) offers the unfinished game; resumed,
    its log has the moves and the chat line again, where they were."""
    key = Ed25519PrivateKey.generate()
    launch = launch_for(tmp_path, identity=lambda: key)

    async def first(d: Driver) -> None:
        s = d.state
        await _to_play(d)
        await _play_one_move(d)
        await d.keys(*"chat hello bot", ENTER,
                     then=lambda: any("you: hello bot" in line.text for line in s.log))
        await _play_one_move(d)
        await d.until("the bot's answer", lambda: s.peer.my_turn)
        await d.keys(CTRL_Q, then=lambda: s.confirm is not None)
        assert "p2pgotg play offers to resume it" in s.status
        await d.keys("y")

    message = run_ui(Mode.BOT, launch, first)
    assert "p2pgotg play offers to resume it" in message
    seen: dict[str, list[str]] = {}

    async def second(d: Driver) -> None:
        s = d.state
        await d.until("the offer", lambda: s.screen is Screen.RESUME)
        await d.keys("r", then=lambda: s.screen is Screen.PLAY, what="the resumed game")
        await d.until("the bot back", lambda: s.session.link.value == "connected")
        seen["log"] = [line.text for line in s.log]
        await d.keys(*"resign", ENTER, "y", then=lambda: s.session.verdict is not None)
        await d.keys("q")

    message = run_ui(Mode.BOT, launch, second)
    log = seen["log"]
    assert log[0].startswith("Resumed")
    assert "  you: hello bot" in log
    # between the moves it came with: after our first move, before our second
    mine = [i for i, line in enumerate(log) if " you  " in line]
    assert mine[0] < log.index("  you: hello bot") < mine[1]
    assert "game over" in message


def _challenge_heavy_game(d: Driver, moves: int):
    async def go() -> None:
        s = d.state
        await _to_play(d)
        for _ in range(moves):
            await _play_one_move(d, challenge=True)
            if s.peer.flow.is_over:
                break
        if not s.peer.flow.is_over:
            await d.until("our turn", lambda: s.peer.my_turn or s.peer.flow.is_over)
            if not s.peer.flow.is_over:
                await d.keys(*"resign", ENTER, "y", then=lambda: s.screen is Screen.END)
        await d.until("the audit", lambda: s.session.verdict is not None)

    return go()


def test_the_end_screen_fits_80_columns_and_pages_every_challenge(tmp_path: Path) -> None:
    """Item 6 and 7: the challenge list wraps between words and pages to the first
    challenge; the saved path stands alone on its line; nothing says host or joiner."""
    seen: dict[str, object] = {}

    async def scenario(d: Driver) -> None:
        s = d.state
        await _challenge_heavy_game(d, 40)
        all_lines = end_screen.challenges_explained(s.peer)
        pages = []
        await d.keys("c", then=lambda: s.end_view_challenges)
        for _ in range(len(end_screen.challenge_pages(s.peer))):
            pages.append(fragments_text(end_screen.panel_text(s)))
            await d.keys("\x1b[6~")  # PgDn
        seen.update(lines=all_lines, pages=pages, audit=fragments_text(end_screen.audit_text(s)),
                    headline=fragments_text(end_screen.headline(s)),
                    hints=end_screen.hints(s), path=str(s.session.path),
                    log=fragments_text(play_screen.log_text(s, 30)))
        await d.keys("q")

    # The coin decides our colour, so a game may end before its challenges fill two pages
    # of the panel; then another game is played (each attempt in a folder of its own).
    for attempt in range(4):
        seen.clear()
        message = run_ui(Mode.BOT, launch_for(tmp_path / f"game-{attempt}", think=0.0,
                                              seed=11 + attempt), scenario)
        if len(seen["pages"]) >= 2:
            break
    lines, pages = seen["lines"], seen["pages"]
    assert len(pages) >= 2, "no game had challenges enough to need a second page"
    shown = " ".join(" ".join(pages).split())
    for line in lines:  # every challenge can be reached, and whole: words, not cut text
        assert " ".join(line.split()) in shown.replace(" " * 6, " "), line
    for page in pages:
        assert all(len(row) <= 30 for row in page.splitlines())
    assert all(len(row) <= 30 for row in str(seen["log"]).splitlines())
    assert f"\n{seen['path']}\n" in str(seen["audit"])  # alone, from the left edge
    assert len(str(seen["hints"])) <= 78
    for text in (seen["audit"], seen["headline"], message):
        assert "host" not in str(text) and "joiner" not in str(text)


def test_enemy_pieces_stay_recognisable_under_the_marks(tmp_path: Path) -> None:
    """Item 10: in ASCII the enemy piece that just moved keeps its lower-case label; in
    colour it keeps the enemy's colour (the last-move mark adds an underline)."""
    seen: dict[str, object] = {}

    async def scenario(d: Driver) -> None:
        s = d.state
        await _to_play(d)
        await _play_one_move(d)
        await d.until("the bot's move", lambda: s.peer.my_turn)
        last = s.view.history[-1]
        assert last.side is not s.side
        to = last.move.to_square
        seen["ascii"] = board._cell(to, board.game_content(s.view)(to), s.viewer,
                                    board.Marks(last=frozenset({to}), cursor=None), True)
        seen["colour"] = board._cell(to, board.game_content(s.view)(to), s.viewer,
                                     board.Marks(last=frozenset({to})), False)
        cells = fragments_text(play_screen.board_text(s))
        seen["row"] = cells
        await d.keys(CTRL_Q, "y")

    run_ui(Mode.BOT, launch_for(tmp_path), scenario)
    style, text = seen["ascii"]
    assert text.startswith(":") and text.endswith(")")  # marked, and still the enemy's
    label = text[1:4].strip()
    assert label == "?" or label == label.lower()
    style, text = seen["colour"]
    assert "class:board.their" in style and "board.last-piece" in style


def test_the_join_prompt_takes_a_code_as_people_paste_it(tmp_path: Path) -> None:
    """Item 5: the whole `p2pgotg join '...'` command broken over two lines, as the host
    screen shows it, is taken by the start screen's join prompt."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = Invite("127.0.0.1", port, bytes(32), bytes(16)).encode()
    lines = lobby_screen.code_lines(code, 80)
    assert len(lines) == 2 and all(len(line) <= 79 for line in lines)
    assert lines[0].startswith("  p2pgotg join '") and lines[1].endswith("'")
    pasted = "\n".join(lines)

    async def scenario(d: Driver) -> None:
        s = d.state
        await d.keys("3", then=lambda: s.prompt is not None)
        await d.keys(pasted, ENTER, then=lambda: s.screen is not Screen.START,
                     what="the join to begin")
        assert s.mode is Mode.JOIN
        # the code was read whole: its address and port are the ones being tried
        await d.until("the join under way", lambda: f"127.0.0.1:{port}" in s.net_note)
        await d.keys(CTRL_Q, then=lambda: s.screen is Screen.START, what="back at the start")
        await d.keys("q")

    run_ui(None, launch_for(tmp_path, join_give_up=1.0), scenario)


def test_joining_a_host_that_is_not_there_says_so_and_gives_up(tmp_path: Path) -> None:
    """Item 4: no host at the code's address: the screen says which address does not
    answer, counts down, then stops with advice."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = Invite("127.0.0.1", port, bytes(32), bytes(16)).encode()
    seen: dict[str, str] = {}

    async def scenario(d: Driver) -> None:
        s = d.state
        await d.until("the countdown", lambda: "giving up in" in s.net_note)
        seen["lobby"] = fragments_text(lobby_screen.body(s))
        await d.until("the error screen", lambda: s.screen is Screen.ERROR, 15)
        seen["error"] = fragments_text(lobby_screen.error_body(s))
        await d.keys("q")

    run_ui(Mode.JOIN, launch_for(tmp_path, invite=code, join_give_up=2.0), scenario)
    assert f"no host answers at 127.0.0.1:{port}" in seen["lobby"]
    assert "is it running?" in seen["lobby"] and "connection lost" not in seen["lobby"]
    error = " ".join(seen["error"].split())
    assert "gave up after 2 s" in error and "run the same command again" in error


def test_a_finished_game_is_reviewed_from_the_end_and_start_screens(tmp_path: Path) -> None:
    """New: the end screen's `v` steps through the game just played, both armies shown
    (no `?`), each challenge explained; the start screen's saved games open it too, and
    `p2pgotg show FILE` opens straight into it."""
    from p2pgotg.ui import games_screen, review_screen

    seen: dict[str, object] = {}

    async def play_then_review(d: Driver) -> None:
        s = d.state
        await d.keys("1", then=lambda: s.screen is Screen.SETUP, what="a game from the start")
        await _challenge_heavy_game(d, 6)
        await d.keys("v", then=lambda: s.screen is Screen.REVIEW, what="the review")
        review = s.review
        seen["total"] = review.total
        assert review.ply == 0 and "?" not in fragments_text(review_screen.board_text(s))
        challenge = next(st.number for st in review.steps if st.record.defender is not None)
        await d.keys(*["\x1b[C"] * challenge, then=lambda: review.ply == challenge)
        seen["explained"] = s.status
        seen["panel"] = fragments_text(review_screen.panel_text(s))
        await d.keys("\x1b[D", then=lambda: review.ply == challenge - 1)
        await d.keys("\x1b[F", then=lambda: review.ply == review.total)  # End
        seen["last board"] = fragments_text(review_screen.board_text(s))
        await d.keys("q", then=lambda: s.screen is Screen.END, what="back to the end screen")
        await d.keys("q", then=lambda: s.screen is Screen.START, what="back to the start")
        await d.keys("4", then=lambda: s.screen is Screen.GAMES)
        seen["games"] = fragments_text(games_screen.body(s))
        await d.keys(ENTER, then=lambda: s.screen is Screen.REVIEW, what="the review again")
        await d.keys("q", then=lambda: s.screen is Screen.GAMES)
        await d.keys("q", then=lambda: s.screen is Screen.START)
        await d.keys("q")

    run_ui(None, launch_for(tmp_path, think=0.0), play_then_review)
    assert seen["total"] > 0
    assert " challenges " in str(seen["explained"]) and "eliminated" in str(seen["explained"])
    assert ">" in str(seen["panel"]) and "?" not in str(seen["last board"])
    games = " ".join(str(seen["games"]).split())
    assert re.search(r"you, (White|Black) against the bot \(normal\), (White|Black): you ",
                     games) and "Enter: review it move by move" in games

    path = next((tmp_path / "games" / "bot").glob("*.gtr"))

    async def show(d: Driver) -> None:
        s = d.state
        assert s.screen is Screen.REVIEW and s.review is not None
        await d.keys("\x1b[C", then=lambda: s.review.ply == 1)
        await d.keys("q")

    from p2pgotg.ui.runner import Launch

    run_ui(None, Launch(review=path, save_dir=tmp_path / "games"), show)
