"""The `?` overlay: every key and command, so a player needs nothing else to read."""

from __future__ import annotations

from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState

_KEYS = """\
 Keys and commands                                      (? or Esc closes this)

 Setup   arrows      move over your home squares (the bottom three rows)
         Enter       place the next piece / pick a piece up / drop it (swaps)
         Tab  [ ]    choose which rank to place next
         x           take the piece under the cursor back to the tray
         r  c        a random formation / clear the board
         l  w        load / save a named formation
         u           undo the last change (a random formation too)
         d           ready: commit this setup (it cannot change after)
 Play    arrows, Enter on a piece, then Enter on a + square: move it
         c3 c4       typed at the move> line, then Enter (c3-c4 works too)
         draw        offer a draw with your next move, or accept an offer
         decline     decline a draw offer        resign    give up (asks first)
         chat TEXT   send a message              help      this list
 End     s c v       setups / the challenges (PgDn: more) / review move by move
 Always  Ctrl-C      quit (asks first while a game is on; the game is saved)
 Board   [ ] cursor   > < picked up   + may go there   ? a hidden enemy piece
"""

_COLOUR = (" Colours: blue yours, red theirs, under any mark; underlined yellow the last\n"
           " move, orange the last challenge; green where the picked-up piece may go.\n")
_ASCII = (" (cpt) ( ? ) an enemy piece: it always ends in ), whatever marks it (: ? ) \n"
          " : : the last move   ! ! the last challenge   CPT upper case: yours\n")


def help_text(state: AppState) -> Fragments:
    return [("class:help", _KEYS + (_ASCII if state.ascii else _COLOUR))]
