"""The net layer: TLS with a pinned key, invite codes, frames, and the player's key files.

It moves opaque byte frames and knows nothing of the game protocol.
"""

from p2pgotg.net.errors import (
    BadInviteError,
    ConnectFailedError,
    ConnectionClosedError,
    FrameTooLargeError,
    HandshakeTimeoutError,
    IdentityFileError,
    ListenError,
    NetError,
    PeerSilentError,
    PinMismatchError,
    TLSHandshakeError,
    TruncatedFrameError,
)
from p2pgotg.net.framing import MAX_FRAME, FramedChannel, FrameDecoder, encode_frame
from p2pgotg.net.invite import Invite, reachable_addresses
from p2pgotg.net.paths import (
    config_dir,
    data_dir,
    load_or_create_identity,
    load_or_create_tls_identity,
)
from p2pgotg.net.tls import (
    certificate_fingerprint,
    client_context,
    listening_port,
    make_certificate,
    open_pinned_connection,
    public_key_pin,
    serve_tls,
    server_context,
)

__all__ = [
    "MAX_FRAME",
    "BadInviteError",
    "ConnectFailedError",
    "ConnectionClosedError",
    "FrameDecoder",
    "FrameTooLargeError",
    "FramedChannel",
    "HandshakeTimeoutError",
    "IdentityFileError",
    "Invite",
    "ListenError",
    "NetError",
    "PeerSilentError",
    "PinMismatchError",
    "TLSHandshakeError",
    "TruncatedFrameError",
    "certificate_fingerprint",
    "client_context",
    "config_dir",
    "data_dir",
    "encode_frame",
    "listening_port",
    "load_or_create_identity",
    "load_or_create_tls_identity",
    "make_certificate",
    "open_pinned_connection",
    "public_key_pin",
    "reachable_addresses",
    "serve_tls",
    "server_context",
]
