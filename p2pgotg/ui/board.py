"""The board as formatted text, drawn from one player's seat: pure and testable.

The player's own home rows are at the bottom: White sees rank 8 at the top and files a..i
left to right, Black sees the board turned round. Every mark a cell can carry is drawn as
text (`[ ]` cursor, `> <` picked up, `+` a legal destination) so it reads without colour;
the ASCII mode closes every opponent's piece with `)` (`( )` when unmarked, `: )` when it
just moved) and writes its rank in lower case, and adds `: :` / `! !` for the last move and
the last challenge, which colour shows otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prompt_toolkit.formatted_text import StyleAndTextTuples

from p2pgotg.rules import FILES, ROWS, Game, Side
from p2pgotg.rules.board import FILE_NAMES

CELL = 5  # characters per square: a mark, three for the label, a mark
LABEL = 3  # characters before the first square: " 8 "
WIDTH = LABEL + FILES * CELL

Fragments = StyleAndTextTuples
#: What stands on a square, as (owner, label), or None when it is empty.
Content = Callable[[int], "tuple[Side, str] | None"]


def square_at(viewer: Side, col: int, line: int) -> int:
    """The square shown at screen column `col` (0..8) and line `line` (0 = top)."""
    if viewer is Side.WHITE:
        return (ROWS - 1 - line) * FILES + col
    return line * FILES + (FILES - 1 - col)


def position_of(viewer: Side, sq: int) -> tuple[int, int]:
    """The inverse of `square_at`: (col, line) on screen."""
    file, row = sq % FILES, sq // FILES
    if viewer is Side.WHITE:
        return file, ROWS - 1 - row
    return FILES - 1 - file, row


def step(viewer: Side, sq: int, dx: int, dy: int, lines: range = range(ROWS)) -> int:
    """Move a cursor on screen (dx right, dy down), staying inside `lines`."""
    col, line = position_of(viewer, sq)
    col = min(max(col + dx, 0), FILES - 1)
    line = min(max(line + dy, lines.start), lines.stop - 1)
    return square_at(viewer, col, line)


@dataclass(frozen=True)
class Marks:
    """What to highlight: each is a square index or a set of them."""

    cursor: int | None = None
    selected: int | None = None
    targets: frozenset[int] = frozenset()
    last: frozenset[int] = frozenset()
    challenge: frozenset[int] = frozenset()
    dim: frozenset[int] = frozenset()


def game_content(game: Game) -> Content:
    """Pieces of a `Game`, labelled by rank code when the game knows the rank, else `?`."""

    def content(sq: int) -> tuple[Side, str] | None:
        piece = game.piece_at(sq)
        if piece is None:
            return None
        rank = game.rank_of(piece)
        return piece.side, rank.code if rank is not None else "?"

    return content


def board_fragments(content: Content, viewer: Side, marks: Marks = Marks(),
                    ascii: bool = False) -> Fragments:
    """Eight lines of squares and a line of file letters, each ending in a newline."""
    out: Fragments = []
    for line in range(ROWS):
        row = square_at(viewer, 0, line) // FILES
        out.append(("class:board.label", f" {row + 1} "))
        for col in range(FILES):
            sq = square_at(viewer, col, line)
            out.append(_cell(sq, content(sq), viewer, marks, ascii))
        out.append(("", "\n"))
    letters = "".join(
        f"{FILE_NAMES[square_at(viewer, col, 0) % FILES]:^{CELL}}" for col in range(FILES)
    )
    out.append(("class:board.label", " " * LABEL + letters + "\n"))
    return out


def _cell(sq: int, here: tuple[Side, str] | None, viewer: Side, marks: Marks,
          ascii: bool) -> tuple[str, str]:
    """One square: its style and five characters. Whose piece it is never hides behind a
    mark: in colour the owner's background stays and the marks add to it (the last move
    and challenge underline an occupied square); in ASCII an enemy piece's label is in
    lower case (`?` when its rank is hidden), in `( )` when no mark needs the brackets."""
    enemy = here is not None and here[0] is not viewer
    if here is None:
        label, style = ("+" if sq in marks.targets else "."), "class:board.empty"
    else:
        owner, label = here
        style = "class:board.own" if owner is viewer else "class:board.their"
        if ascii and enemy:
            label = label.lower()
    left = right = " "
    if ascii and enemy:
        left, right = "(", ")"
    extra = ""
    if sq in marks.dim:
        extra = " class:board.dim"
    if sq in marks.last:
        extra = " class:board.last" if here is None else " class:board.last-piece"
        if ascii:
            left, right = ":", ":"
    if sq in marks.challenge:
        extra = " class:board.challenge" if here is None else " class:board.challenge-piece"
        if ascii:
            left, right = "!", "!"
    if sq in marks.targets:
        extra = " class:board.target"
        if here is not None:  # a challenge: the empty squares already show a `+`
            left, right = "+", "+"
    if sq == marks.selected:
        extra = " class:board.selected"
        left, right = ">", "<"
    if sq == marks.cursor:
        extra = " class:board.cursor"
        left, right = "[", "]"
    if ascii and enemy:
        right = ")"  # whatever marks it, an enemy piece always closes with `)`
    return style + extra, f"{left}{label:^{LABEL}}{right}"


def fragments_text(fragments: Fragments) -> str:
    """The plain text of formatted text: for tests and logs."""
    return "".join(text for _, text, *_ in fragments)
