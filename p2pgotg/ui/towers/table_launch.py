"""A person's seat at a table, on the table screen (SPEC chapter 5): hosting a table whose
other seats are joiners and the bot, or joining one (or coming back to our seat, from its
file). The command line picks these when the seat is not the bot's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from p2pgotg.crypto import public_bytes
from p2pgotg.net.play.hosting import HostConfig
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.table_joiner import TableRunner
from p2pgotg.ui.towers.table_app import TableApp, run_table_terminal
from p2pgotg.ui.towers.table_model import TableScreen


def host_on_screen(config: HostConfig, bot_seats: int, bot: Callable[[int], TableRunner],
                   ascii: bool = False, session: Any = None) -> tuple[int, Any]:
    """Host the table (or, with `session`, our seat resumed from its file: the same table
    goes on), our seat played on the screen; (exit status, our session or None)."""
    from p2pgotg.net.play.table_host import bot_key, host_table

    screen = TableScreen(seats=int(config.options.seats), role="host", ascii=ascii)

    def label_bots(session: Any) -> None:
        for k in range(1, bot_seats + 1):
            key = bot_key(config.key, session.join_secret, k)
            screen.labels[public_bytes(key)] = "bot"

    async def main(app: TableApp) -> Any:
        async with trio.open_nursery() as nursery:
            async def serve(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                await host_table(config, app.runner(on_seat=label_bots),
                                 bot_seats=bot_seats, bot=bot, on_status=app.note,
                                 on_short_code=_short_code_shown(screen, app),
                                 on_invite=lambda code: None, session=session,
                                 task_status=task_status)

            hosting = await nursery.start(serve)
            screen.invites = list(hosting.invites)
            screen.short_code = hosting.short_code or screen.short_code
            app.note(f"rules: {config.options.describe()}; share the invite code")
        return screen.session

    code, _ = run_table_terminal(screen, main)
    return code, screen.session


def _short_code_shown(screen: TableScreen, app: TableApp) -> Callable[[str], None]:
    def shown(code: str) -> None:
        screen.short_code = code
        app.wake()

    return shown


def join_on_screen(config: JoinConfig, ascii: bool = False) -> tuple[int, Any]:
    """Join the invite's table (or come back to our seat there), our seat played on the
    screen; (exit status, our session or None)."""
    from p2pgotg.net.play.table_joiner import join_table

    screen = TableScreen(seats=0, role="joiner", ascii=ascii)

    async def main(app: TableApp) -> Any:
        app.note(f"connecting to {config.invite.address} port {config.invite.port}")
        return await join_table(config, app.runner(), on_status=app.note)

    code, _ = run_table_terminal(screen, main)
    return code, screen.session
