"""Item 15, through the real interface: a person's Flag reaches the far back rank beside an
enemy piece (so it must survive a turn), the opponent moves elsewhere, and the screen
claims the win at once, before asking for a move, without the person typing anything.

The person plays `p2pgotg host` with pipe input; the opponent is a scripted joiner over
real loopback TLS (in a thread of its own), who keeps the Flag's file open and only ever
shuffles one piece back and forth."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.net.play.joining import JoinConfig, join_game
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.protocol import JOINER, Phase
from p2pgotg.rules import Move, Rank, Side, Termination, parse_square
from p2pgotg.ui import end_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import Mode, Screen
from tests.test_ui_game import ENTER, Driver, launch_for, run_ui

#: The file the person's Flag runs up, and the opponent's shuffling piece, by colour.
RUN = {Side.WHITE: ["e3", "e4", "e5", "e6", "e7", "e8"],
       Side.BLACK: ["e6", "e5", "e4", "e3", "e2", "e1"]}
SHUFFLE = {Side.WHITE: ("i3", "i4"), Side.BLACK: ("i6", "i5")}


def scripted_opponent(setup_with):
    async def seat(session: GameSession) -> None:
        shuffles = 0
        while not session.done:
            peer = session.peer
            if peer.phase is Phase.HELLO and "host" in peer.flow.hellos \
                    and JOINER not in peer.flow.hellos:
                session.perform(lambda p: p.accept())
            elif peer.phase is Phase.SETUP and peer.side is not None \
                    and peer.own_setup is None:
                me = peer.side
                run = RUN[me.other]  # the person's Flag comes down this file at us
                home = [sq for sq in run if sq[1] in ("678" if me is Side.BLACK else "123")]
                setup = setup_with(me, {SHUFFLE[me][0]: Rank.PRIVATE}, empty=home)
                session.perform(lambda p, chosen=setup: p.commit_setup(chosen))
            elif peer.phase is Phase.PLAY and peer.my_turn and peer.flow.pending is None:
                a, b = SHUFFLE[peer.side]
                move = Move.parse(f"{a}-{b}" if shuffles % 2 == 0 else f"{b}-{a}")
                shuffles += 1
                session.perform(lambda p, m=move: p.move(m))
                continue
            await session.wait_changed()

    return seat


def test_a_flag_that_has_survived_is_claimed_for_the_player(tmp_path: Path,
                                                            setup_with) -> None:
    seen: dict[str, object] = {}
    threads: list[threading.Thread] = []

    def join(code: str) -> None:
        config = JoinConfig(Ed25519PrivateKey.generate(), Invite.decode(code),
                            tmp_path / "opponent", Timeouts(), resume=False)
        trio.run(join_game, config, scripted_opponent(setup_with))

    async def scenario(d: Driver) -> None:
        s = d.state
        await d.until("the invite", lambda: bool(s.invites))
        thread = threading.Thread(target=join, args=(s.invites[0],), daemon=True)
        thread.start()
        threads.append(thread)
        await d.until("the setup", lambda: s.screen is Screen.SETUP and s.editor is not None)
        editor, me = s.editor, s.side
        await d.keys("r", then=lambda: not editor.problems())
        flag = next(sq for sq, rank in editor.placement.items() if rank is Rank.FLAG)
        start = parse_square(RUN[me][0])
        if flag != start:  # the Flag to the front of the e-file (a swap)
            await d.move_cursor(flag)
            await d.keys(ENTER, then=lambda: editor.picked == flag)
            await d.move_cursor(start)
            await d.keys(ENTER, then=lambda: editor.placement[start] is Rank.FLAG)
        await d.keys("d", then=lambda: s.screen is Screen.PLAY, what="the game")
        peer = s.peer
        for a, b in zip(RUN[me], RUN[me][1:], strict=False):
            await d.until("our turn", lambda: peer.my_turn)
            before = peer.view.ply
            await d.keys(*f"{a} {b}", ENTER, then=lambda n=before: peer.view.ply > n,
                         what=f"the Flag to {b}")
        # on the back rank beside enemy pieces: no win yet; the opponent shuffles, and at
        # our turn the screen claims without a key pressed
        await d.until("the claim", lambda: peer.flow.is_over, 15)
        seen["result"] = peer.flow.result
        seen["role"] = peer.role
        seen["log"] = [line.text for line in s.log]
        seen["headline"] = fragments_text(end_screen.headline(s))
        await d.until("the audit", lambda: s.session.verdict is not None)
        await d.keys("q")

    launch = launch_for(tmp_path, bind="127.0.0.1", tls_identity=make_certificate)
    run_ui(Mode.HOST, launch, scenario)
    for thread in threads:
        thread.join(timeout=30)
    assert seen["result"] == (Termination.FLAG_REACHED_BACK_RANK, seen["role"])
    assert "You win: your flag reached the far back rank." in str(seen["headline"])
    log = seen["log"]
    last_mine = max(i for i, line in enumerate(log) if " you  " in line)
    assert any(" opp  " in line for line in log[last_mine:]), "no opponent move in between"


@pytest.fixture(autouse=True)
def _quiet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path / "home"))
