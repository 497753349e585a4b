"""The control frames a connection begins with (SPEC 3.4, 3.7): the one expected, or a
`SessionError` saying what came instead.

They sit below `play` because reaching a host speaks them before any game exists: a
short code's PAKE (`pake_link`) runs as control frames, and a race that finds no path
ends in a `SessionError` (`racing.NoPathError`). The session, the host and the joiner
raise the same error for everything that ends a game's connection.
"""

from __future__ import annotations

from typing import TypeVar

from p2pgotg.protocol import control
from p2pgotg.protocol.printable import controls_escaped, printable

#: The most characters of a peer's text (a reason, a frame kind) shown in one line.
SHOWN = 200

#: A control frame one side waits for.
Expected = TypeVar("Expected", control.Hi, control.Ok, control.Pake, control.Bye,
                   control.Prove)


class SessionError(Exception):
    """A reason this game cannot go on over this connection; `str()` is for the user.
    `fatal` errors (wrong pin, wrong secret, another protocol version, a busy host) are not
    retried."""

    def __init__(self, message: str, fatal: bool = True) -> None:
        super().__init__(message)
        self.fatal = fatal


def expect(frame: bytes, kind: type[Expected]) -> Expected:
    """The peer's control frame of `kind`, or a SessionError saying what came instead."""
    try:
        ctl = control.decode(frame)
    except control.ControlError as exc:  # (its words hold the peer's text escaped already)
        raise SessionError(controls_escaped(str(exc))) from None
    if ctl is None:
        raise SessionError("the other side does not speak the p2pgotg session protocol")
    if isinstance(ctl, control.Refusal):
        raise SessionError(printable(ctl.reason, SHOWN))
    if not isinstance(ctl, kind):
        got = ctl.name if isinstance(ctl, control.Unknown) else ctl.kind
        raise SessionError(f"expected {kind.kind}, got {printable(got, 40)}")
    return ctl

