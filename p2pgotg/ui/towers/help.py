"""The `?` overlay on the Towers screens: their keys, how to read the board, then how to
play Towers (`primer`). The overlay itself (scrolling, closing) is the interface's."""

from __future__ import annotations

from p2pgotg.ui.state import AppState, Screen
from p2pgotg.ui.towers.primer import PRIMER, TITLE

_PLAY = """\
 arrows      move the cursor
 Space       list the actions on the cursor's square, numbered: 1..9 makes one
 Enter       pick up your pawn under the cursor; Enter on a + moves it there
             (on any other square, Enter lists its actions, as Space does)
 Shift+arrow move the pawn under the cursor one square that way
 + Enter     build under your pawn there (in the setup: place a layer there)
 * Enter     spawn a pawn there          @ Enter   claim it as your start
 c3-c4 +c3   typed at the action> line, then Enter: a move, a layer or build,
 *c3 @a1     a spawn, a claim
 draw        offer a draw with your next action, or accept an offer
 decline     decline a draw offer        resign    give up (asks first)
 chat TEXT   send a message              help      this help"""

_END = """\
 v           review the game action by action
 n           a new game against the bot (after a game against it)"""

_REVIEW = """\
 Right Left  one action on / back (also n p, Space)
 PgDn PgUp   ten actions (also Down Up)
 Home End    the empty board / the end
 q  Esc      back"""

_ALWAYS = " Ctrl-C      quit (asks first while a game is on; the game is saved)"

_BOARD = """\
 Board: each square is its height, then its pawn and its flag by colour letter:
 3 Rr a Red pawn on its flag, 3 layers up; 0 .b a Blue flag alone; 1 .. empty.
 [ ] cursor   > < picked up   + may move there   : : the last action
 Table: pool = layers left; pawns, flags = in each colour's reserve; took =
 pawns it captured; points = its flags on the board + pawns it took."""

_COLOUR = " Colours: each letter in its colour; taller towers stand on lighter ground."


def help_lines(state: AppState) -> list[tuple[str, str]]:
    """Every line of the overlay, as (style, text)."""
    keys = {Screen.PLAY: _PLAY, Screen.END: _END, Screen.REVIEW: _REVIEW}.get(state.screen, "")
    out = [("class:heading", " Keys on this screen"), ("", "")]
    out += [("", line) for line in keys.splitlines()]
    out.append(("", _ALWAYS))
    out += [("", ""), *(("", line) for line in _BOARD.splitlines())]
    if not state.ascii:
        out.append(("", _COLOUR))
    out += [("", ""), ("class:heading", f" {TITLE}"), ("", "")]
    out += [("", f" {line}" if line else "") for line in PRIMER.splitlines()]
    return out


_TABLE = """\
 arrows      move the cursor
 Space       list the actions on the cursor's square, numbered: 1..9 makes one
 Enter       pick up your pawn under the cursor; Enter on a + moves it there
 Shift+arrow move the pawn under the cursor one square that way
 c3-c4 +c3   typed at the action> line, then Enter: a move, a layer or build,
 *c3 @a1     a spawn, a claim (your colour's, on your turn)
 chat TEXT   a line to the whole table
 w 2 TEXT    a whisper to seat 2 alone (also w Blue TEXT, /w 2 TEXT); only that
             seat can read it; one it cannot open shows as unreadable
 resign      leave the table (asks first): the others play on
 dispute     dispute the last claim against you (it stays in every file)
 help  ?     this help             q   leave the end screen
 Claims: a seat that owes past its time is claimed by the next seat still in
 (automatically); the log says who claimed against whom (SPEC 5.7)."""


def table_help_lines(ascii: bool) -> list[tuple[str, str]]:
    """The table screen's `?` overlay: its keys and commands, the board, the primer."""
    out = [("class:heading", " Keys at a table"), ("", "")]
    out += [("", line) for line in _TABLE.splitlines()]
    out.append(("", _ALWAYS))
    out += [("", ""), *(("", line) for line in _BOARD.splitlines())]
    if not ascii:
        out.append(("", _COLOUR))
    out += [("", ""), ("class:heading", f" {TITLE}"), ("", "")]
    out += [("", f" {line}" if line else "") for line in PRIMER.splitlines()]
    return out
