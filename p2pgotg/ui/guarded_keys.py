"""Key bindings whose handlers cannot crash the screen: a bug in one becomes a status
message (`explain` logs it), never a traceback that ends the game."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from p2pgotg.ui.errors import explain

Handler = Callable[[KeyPressEvent], None]


class Warns(Protocol):
    """A screen's state that can say what went wrong in its status line."""

    def warn(self, text: str) -> None: ...


S = TypeVar("S", bound=Warns)


class GuardedKeys(Generic[S]):
    """`kb.add` for the screens' groups of keys, each handler guarded."""

    def __init__(self, kb: KeyBindings, state: S) -> None:
        self.kb, self.state = kb, state

    def add(self, *keys: str, **options: Any) -> Callable[[Handler], Handler]:
        """`kb.add`, but a bug in a handler becomes a status message, not a traceback."""

        def register(handler: Handler) -> Handler:
            @functools.wraps(handler)
            def guarded(event: KeyPressEvent) -> None:
                try:
                    handler(event)
                except Exception as exc:  # noqa: BLE001  (logged by explain)
                    self.state.warn(explain(exc))

            self.kb.add(*keys, **options)(guarded)
            return handler

        return register
