"""The `?` overlay: the keys of the screen it was opened on, then how to play (the primer,
`rules/primer.txt`), so a player needs nothing else to read. It belongs to that screen:
leaving the screen closes it (`AppState.help_visible`). Longer than the window, it
scrolls."""

from __future__ import annotations

from p2pgotg.rules.primer import TITLE, primer
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Mode, Screen

_SETUP = """\
 arrows      move over your home squares (the bottom three rows)
 Enter       place the next piece / pick a piece up / drop it (swaps)
 Tab  [ ]    choose which rank to place next
 x           take the piece under the cursor back to the tray
 r  c        a random army / clear the board
 l  w        load / save a named formation
 u           undo the last change (a random army too)
 d           ready: commit this setup (it cannot change after)"""

_PLAY = """\
 arrows, Enter on a piece, then Enter on a + square: move it
 c3 c4       typed at the move> line, then Enter (c3-c4 works too)
 draw        offer a draw with your next move, or accept an offer
 decline     decline a draw offer        resign    give up (asks first)
 chat TEXT   send a message              help      this help"""

_END = """\
 s           the starting setups / the final position
 c           every challenge with both ranks (PgDn/PgUp: more)
 v           review the game move by move"""

_REVIEW = """\
 Right Left  one move on / back (also n p, Space)
 PgDn PgUp   ten moves (also Down Up)
 Home End    the start / the end
 q  Esc      back"""

_START = """\
 1  b        play against the bot        l   the bot's level
 2  h        host a game                 3 j join a game (type its code)
 4  g        your saved games            q   quit"""

_GAMES = """\
 Up Down     choose a game (also k j)
 Enter       review a finished game, or resume an unfinished one
 q  Esc      back to the start screen"""

_RESUME = """\
 Up Down     choose an unfinished game (also k j)
 r  Enter    resume it
 n           start a new game (the unfinished ones stay saved)
 q           quit"""

_HOST = """\
 r           take a reply code the joiner sent you (when the screen offers it)
 q           stop hosting (a game in progress is saved)"""

_JOIN = """\
 a           accept the host's rules and start
 q           decline and quit"""

_ALWAYS = " Ctrl-C      quit (asks first while a game is on; the game is saved)"

_BOARD = """\
 Board: [ ] cursor   > < picked up   + may go there   ? a hidden enemy piece"""

_COLOUR = (" Colours: blue yours, red theirs, under any mark; underlined yellow the last\n"
           " move, orange the last challenge; green where the picked-up piece may go.")
_ASCII = (" (cpt) ( ? ) an enemy piece: it always ends in ), whatever marks it (: ? )\n"
          " : : the last move   ! ! the last challenge   CPT upper case: yours")


def screen_keys(state: AppState) -> str:
    """The keys of the screen the help was opened on (never another screen's)."""
    screen = state.screen
    if screen is Screen.LOBBY:
        return _HOST if state.mode is Mode.HOST else _JOIN if state.mode is Mode.JOIN else \
            " q           quit"
    return {
        Screen.START: _START, Screen.GAMES: _GAMES, Screen.REVIEW: _REVIEW,
        Screen.RESUME: _RESUME, Screen.SETUP: _SETUP, Screen.PLAY: _PLAY, Screen.END: _END,
        Screen.ERROR: " q           quit",
    }[screen]


def help_lines(state: AppState) -> list[tuple[str, str]]:
    """Every line of the overlay, as (style, text)."""
    out = [("class:heading", " Keys on this screen"), ("", "")]
    out += [("", line) for line in screen_keys(state).splitlines()]
    out.append(("", _ALWAYS))
    if state.screen in (Screen.SETUP, Screen.PLAY, Screen.END, Screen.REVIEW):
        out += [("", ""), *(("", line) for line in _BOARD.splitlines())]
        out += [("", line) for line in (_ASCII if state.ascii else _COLOUR).splitlines()]
    out += [("", ""), ("class:heading", f" {TITLE}"), ("", "")]
    out += [("", f" {line}" if line else "") for line in primer().splitlines()]
    return out


def help_text(state: AppState, height: int) -> Fragments:
    """The lines that fit in `height` rows from the scroll position, and a last line that
    says how to scroll and close."""
    lines = help_lines(state)
    room = max(1, height - 1)
    state.help_scroll = max(0, min(state.help_scroll, len(lines) - room))
    first = state.help_scroll
    shown = lines[first:first + room]
    out: Fragments = []
    for style, text in shown:
        out += [(f"class:help {style}".strip(), text), ("class:help", "\n")]
    out += [("class:help", "\n")] * (room - len(shown))
    more = len(lines) > room
    where = (f"lines {first + 1}-{first + len(shown)} of {len(lines)}; Up/Down PgUp/PgDn "
             "scroll; " if more else "")
    out.append(("class:help class:dim", f" ({where}? or Esc closes this)"))
    return out


def scroll(state: AppState, step: int) -> None:
    """Scroll the overlay (clamped when it is drawn)."""
    state.help_scroll = max(0, state.help_scroll + step)
