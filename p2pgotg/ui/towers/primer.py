"""How to play Towers, in a screenful: the board, the setup, the turn's three actions, when
a pawn takes another, how the game ends and who wins, and the keys. Written from seed
`002_836edfe2f167b267.txt` and SPEC chapter 4 (their readings, the defaults); shown by
`p2pgotg rules --game towers` and by `?` on the Towers screens.

>>> PRIMER.splitlines()[0].startswith("Two to four colours")
True
>>> max(len(line) for line in PRIMER.splitlines()) <= 78
True
"""

from __future__ import annotations

TITLE = "How to play Towers"

PRIMER = """\
Two to four colours (Red, Blue, Green, Yellow) share a board of 5x5 squares
and a pool of 50 tower layers; here two players meet, one colour each, or two
colours each with --teams. Each colour has 6 pawns and 13 flags (9 with
--teams). Build towers, take the high ground, and hold the most squares.

Setup, colour by colour, Red first: either place a layer from the pool on any
square (on top of others: towers grow), or claim your starting square, which
puts one of your pawns and one of your flags there. A start lies on the
outer border, with at least two border squares between it and any other
start. With two colours, the last to claim may first place one more layer.

Then, from the colour that claimed first, each turn is two actions:
  move    a pawn one square up, down, left or right (never diagonal), never
          onto your own pawn; onto an opponent's pawn only from a higher tower
          (more layers): that pawn is captured. A flag on the square goes back
          to its owner; then you plant one of your flags there.
  build   put a layer from the pool on a square where one of your pawns is.
  spawn   put a pawn from your reserve on one of your flags with no pawn.
The same action twice in one turn needs two different pawns; one pawn may
make two different actions. You must act if you can.

The game ends at once when all 50 layers are placed, when a colour has
planted all its flags, or when the colour to act cannot act. Each colour
scores 1 point for each of its flags on the board and 1 for each pawn it
captured; the most points win (a tie is a draw), with --teams both colours'
points together. A player may also resign, agree a draw, or lose on time or
by staying away. Options the host may propose: p2pgotg host --help.

Board: each square shows its height, then its pawn and its flag: 3 Rr is a
Red pawn on its Red flag three layers up, 0 .b a Blue flag alone.
Keys: arrows move the cursor; Space lists the actions on its square, numbered,
and a digit makes one; Enter picks a pawn up and Enter on a + moves it;
Shift+arrow steps the pawn under the cursor; + * @ then Enter build, spawn or
claim there. Or type an action: c3-c4, +c3, *c3, @a1. Type draw, decline,
resign or chat TEXT. ? shows the keys; Ctrl-C quits (a game is saved).
"""
