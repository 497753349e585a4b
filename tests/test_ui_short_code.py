"""The host's lobby shows the LAN short code large, beside the long invite code."""

from __future__ import annotations

from p2pgotg.net.reaching.invite import Invite
from p2pgotg.reach.candidates import LAN, Candidate
from p2pgotg.ui import lobby_screen
from p2pgotg.ui.board import fragments_text
from p2pgotg.ui.state import AppState, Mode


def test_the_host_lobby_shows_the_short_code_large_and_the_long_code():
    state = AppState(Mode.HOST)
    code = Invite.v2([Candidate(LAN, "192.168.1.20", 4000)], bytes(32), bytes(16)).encode()
    state.invites = [code]
    state.short_code = "7-crossover-clockwork"
    text = fragments_text(lobby_screen.body(state))
    assert "|   7  CROSSOVER  CLOCKWORK   |" in text
    assert text.index("CROSSOVER") < text.index("gg2-")
    assert code[:40] in text.replace("\n", "")


def test_without_a_short_code_no_box_is_drawn():
    state = AppState(Mode.HOST)
    state.invites = [Invite("127.0.0.1", 4000, bytes(32), bytes(16)).encode()]
    assert "CLOCKWORK" not in fragments_text(lobby_screen.body(state))
