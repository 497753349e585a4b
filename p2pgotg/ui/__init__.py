"""The terminal game: prompt_toolkit screens over a networked `GameSession`.

The interface is a seat like the bot: it reads its own `Peer`'s view and asks the session to
perform actions; it never touches sockets. prompt_toolkit runs on asyncio, the network on
trio in guest mode on the same loop (see `runner`).
"""

from p2pgotg.ui.state import AppState, Mode, Screen

__all__ = ["AppState", "Mode", "Screen"]
