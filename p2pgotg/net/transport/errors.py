"""The net layer's errors (magic-wormhole style).

Each class docstring is the message shown to the player; the optional ``detail`` given when
raising says what exactly happened (addresses, pins, sizes). trio, ssl and OS errors are
translated into these at the net layer's boundary, so callers catch ``NetError`` only.
"""

from __future__ import annotations

import inspect


class NetError(Exception):
    """Something went wrong with the connection to the other player."""

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        super().__init__(detail or self.summary())

    @classmethod
    def summary(cls) -> str:
        """The class docstring as one paragraph: the user-facing message."""
        return " ".join((inspect.getdoc(cls) or cls.__name__).split())

    @property
    def user_message(self) -> str:
        """Docstring, then the detail on its own line when there is one."""
        return f"{self.summary()}\n{self.detail}" if self.detail else self.summary()


class BadInviteError(NetError):
    """That invite code is not valid. Check that you copied the whole code, exactly as the
    host gave it to you."""


class ConnectFailedError(NetError):
    """Could not reach the host. Check the address in the invite, that the host is still
    waiting, and that no firewall blocks the port."""


class ListenError(NetError):
    """Could not start waiting for the other player. Another program may be using the
    port: try another one."""


class HandshakeTimeoutError(NetError):
    """The secure connection could not be set up in time. The network may be too slow, or
    the other side is not a p2pgotg player."""


class TLSHandshakeError(NetError):
    """The secure connection could not be set up. The other side may not be a p2pgotg
    player, or its version is too old."""


class PinMismatchError(NetError):
    """The host's key does not match the one in the invite code. Either the code is wrong or
    stale, or someone between you and the host is pretending to be the host. Nothing was
    sent to them."""

    def __init__(self, expected: bytes, got: bytes) -> None:
        self.expected = expected
        self.got = got
        super().__init__(f"expected pin {expected.hex()}, got {got.hex()}")


class ConnectionClosedError(NetError):
    """The connection to the other player was closed."""


class TruncatedFrameError(ConnectionClosedError):
    """The connection was cut in the middle of a message from the other player."""


class FrameTooLargeError(NetError):
    """The other player sent a message larger than the protocol allows, so the connection
    was dropped."""


class PeerSilentError(NetError):
    """Nothing was heard from the other player for too long; the connection seems dead."""


class IdentityFileError(NetError):
    """A key file of yours could not be read. It was left untouched: move it away only if
    you are sure you want a new identity."""
