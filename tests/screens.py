"""The screens as drawn, without a terminal, and codes read back from them: for the tests
of what a person sees (tmux captures give the same lines from a real terminal)."""

from __future__ import annotations

import asyncio

from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.output import DummyOutput

from p2pgotg.ui.app import create_application
from p2pgotg.ui.state import AppState


def rendered(state: AppState, columns: int = 80, rows: int = 24) -> list[str]:
    """The whole window as the application draws it (its layout, windows and floats), read
    back as lines of text: prompt_toolkit's own drawing, at this size."""

    class Window(DummyOutput):
        def get_size(self) -> Size:
            return Size(rows=rows, columns=columns)

    async def draw() -> list[str]:  # (an input line's history loads on a running loop)
        with create_pipe_input() as keys:
            app = create_application(state, input=keys, output=Window())
            with set_app(app):
                drawn = Screen()
                app.layout.container.write_to_screen(
                    drawn, MouseHandlers(), WritePosition(0, 0, columns, rows), "",
                    erase_bg=False, z_index=None)
                drawn.draw_all_floats()
        return ["".join(drawn.data_buffer[y][x].char for x in range(columns)).rstrip()
                for y in range(rows)]

    return asyncio.run(draw())


def code_on_lines_of_its_own(lines: list[str], code: str, columns: int = 80) -> list[str]:
    """The lines that hold `code` (SPEC 3.8: on lines of its own across the whole width):
    each a piece of it and nothing else, every one but the last as wide as the window less
    its last column, the pieces in order making the code whole. Fails otherwise."""
    starts = [n for n, line in enumerate(lines) if line and code.startswith(line.rstrip())]
    assert starts, f"no line starts {code}:\n" + "\n".join(lines)
    first = starts[0]
    pieces: list[str] = []
    while "".join(pieces) != code:
        line = lines[first + len(pieces)].rstrip() if first + len(pieces) < len(lines) else ""
        assert line and code.startswith("".join(pieces) + line), \
            f"{code} is not whole on lines of its own:\n" + "\n".join(lines)
        pieces.append(line)
    assert all(len(piece) == columns - 1 for piece in pieces[:-1]), pieces
    return pieces
