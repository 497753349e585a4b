"""TLS 1.3 with a self-signed Ed25519 certificate, authenticated by a public-key pin.

There is no certificate authority between two players: the host's invite code carries the
SHA-256 of its certificate's SubjectPublicKeyInfo, and the joiner checks that pin right
after the handshake, before it sends a single application byte. So the client context
skips chain and hostname checks on purpose; the pin is the check.

The joiner presents no certificate: stdlib ``ssl`` cannot make a server accept a
self-signed client certificate (it always verifies it against a CA store), so the joiner
is authenticated later, by the join secret and the signed hello.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import hmac
import os
import ssl
import tempfile
from collections.abc import Awaitable, Callable

import trio
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

from p2pgotg.net.transport._stream import STREAM_ERRORS, close_quietly
from p2pgotg.net.transport.errors import (
    ConnectFailedError,
    HandshakeTimeoutError,
    ListenError,
    NetError,
    PinMismatchError,
    TLSHandshakeError,
)

PIN_SIZE = 32
COMMON_NAME = "p2pgotg"
VALIDITY = datetime.timedelta(days=3650)
# Start a day early so a peer whose clock is a little behind still sees a valid cert
# (nobody verifies the dates today, but a future client might).
BACKDATE = datetime.timedelta(days=1)

DEFAULT_CONNECT_TIMEOUT = 15.0
DEFAULT_HANDSHAKE_TIMEOUT = 10.0


def make_certificate(key: Ed25519PrivateKey | None = None) -> tuple[bytes, bytes]:
    """A fresh self-signed certificate for ``key`` (new key if None): ``(cert_pem, key_pem)``.

    The pin depends on the key only, so re-making the certificate for the same key keeps
    old invite codes valid.
    """
    if key is None:
        key = Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now - BACKDATE + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, None)  # Ed25519 signs without a separate digest
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def load_certificate(cert: bytes) -> x509.Certificate:
    """Parse a certificate given as DER or PEM."""
    if cert.lstrip().startswith(b"-----BEGIN"):
        return x509.load_pem_x509_certificate(cert)
    return x509.load_der_x509_certificate(cert)


def public_key_pin(cert: bytes) -> bytes:
    """SHA-256 of the certificate's SubjectPublicKeyInfo DER (32 bytes); DER or PEM input."""
    spki = (
        load_certificate(cert)
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return hashlib.sha256(spki).digest()


def certificate_fingerprint(cert: bytes) -> bytes:
    """SHA-256 of the whole DER certificate (PEM is converted first), for the signed hello."""
    if cert.lstrip().startswith(b"-----BEGIN"):
        cert = load_certificate(cert).public_bytes(serialization.Encoding.DER)
    return hashlib.sha256(cert).digest()


def _tls13_only(ctx: ssl.SSLContext) -> ssl.SSLContext:
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    return ctx


def server_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """Server side: TLS 1.3 only, our certificate, no client certificate, no session tickets.

    Tickets are off because a resumed session shows no certificate, so it could not be
    pinned; and a game never resumes a TLS session anyway.
    """
    ctx = _tls13_only(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    ctx.num_tickets = 0
    # load_cert_chain reads files only; use a private directory that is gone right after.
    with tempfile.TemporaryDirectory(prefix="p2pgotg-tls-") as tmp:
        cert_path = os.path.join(tmp, "cert.pem")
        key_path = os.path.join(tmp, "key.pem")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx


def client_context() -> ssl.SSLContext:
    """Client side: TLS 1.3 only, no CA or hostname check, because the pin is the check."""
    ctx = _tls13_only(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def peer_certificate(stream: trio.SSLStream) -> bytes:
    """The DER certificate the peer showed in the (completed) handshake."""
    der = stream.getpeercert(binary_form=True)
    if not der:
        raise TLSHandshakeError("the host showed no certificate")
    return der


async def handshake(stream: trio.SSLStream, timeout: float, who: str) -> None:
    """Finish the TLS handshake on ``stream`` within ``timeout``, with our errors naming
    ``who``: for callers that open the TCP stream themselves (a punched connection, a
    short-code joiner that checks the PAKE instead of a pin)."""
    try:
        with trio.fail_after(timeout):
            await stream.do_handshake()
    except trio.TooSlowError:
        raise HandshakeTimeoutError(f"no TLS handshake with {who} within {timeout:g} s") from None
    except STREAM_ERRORS as exc:
        cause = exc.__cause__ or exc
        raise TLSHandshakeError(f"TLS handshake with {who} failed: {cause}") from exc


async def open_pinned_connection(
    host: str,
    port: int,
    pin: bytes,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    context: ssl.SSLContext | None = None,
) -> trio.SSLStream:
    """Connect, handshake, and check the host's public-key pin before anything is sent.

    On a mismatch the stream is closed and PinMismatchError raised; the host has then
    received the TLS handshake and a close alert, and no application byte.
    """
    if len(pin) != PIN_SIZE:
        raise ValueError(f"a pin is {PIN_SIZE} bytes, not {len(pin)}")
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with trio.fail_after(connect_timeout):
            tcp = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise ConnectFailedError(f"no answer from {where} within {connect_timeout:g} s") from None
    except OSError as exc:
        raise ConnectFailedError(f"could not connect to {where}: {exc.strerror or exc}") from exc
    stream = trio.SSLStream(tcp, context or client_context(), https_compatible=False)
    try:
        await handshake(stream, handshake_timeout, where)
        try:
            got = public_key_pin(peer_certificate(stream))
        except ValueError as exc:
            raise TLSHandshakeError(f"the certificate of {where} cannot be read: {exc}") from exc
        if not hmac.compare_digest(got, pin):
            raise PinMismatchError(expected=pin, got=got)
    except BaseException:
        await close_quietly(stream)
        raise
    return stream


Handler = Callable[[trio.SSLStream], Awaitable[object]]


async def open_listeners(port: int = 0, host: str | None = None) -> list[trio.SocketListener]:
    """TCP listeners on ``host`` (None: every IPv4 and IPv6 address), all on ONE port.

    trio.open_tcp_listeners(0) would give IPv4 and IPv6 different random ports, but an
    invite carries one port; so we take the first family's port for the others, retrying
    if another program already holds it there. A family the machine lacks is skipped.
    """
    if host is not None:
        return await trio.open_tcp_listeners(port, host=host)
    infos = await trio.socket.getaddrinfo(
        None, port, type=trio.socket.SOCK_STREAM, flags=trio.socket.AI_PASSIVE
    )
    wildcards = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for _attempt in range(20):
        listeners: list[trio.SocketListener] = []
        chosen = port
        try:
            for i, address in enumerate(wildcards):
                try:
                    opened = await trio.open_tcp_listeners(chosen, host=address)
                except OSError as exc:
                    if i == 0 or exc.errno == errno.EADDRINUSE:
                        raise
                    continue  # e.g. IPv6 disabled: serve the families we have
                listeners.extend(opened)
                chosen = listening_port(listeners)
            return listeners
        except OSError as exc:
            for listener in listeners:
                await listener.aclose()
            if port != 0 or exc.errno != errno.EADDRINUSE:
                raise
    raise OSError(errno.EADDRINUSE, "could not find a port free on every address family")


def listening_port(listeners: list[trio.SocketListener]) -> int:
    """The port the listeners share (open_listeners guarantees there is one)."""
    return int(listeners[0].socket.getsockname()[1])


async def serve_tls(
    handler: Handler,
    ssl_context: ssl.SSLContext,
    port: int = 0,
    host: str | None = None,
    *,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    on_error: Callable[[NetError], object] | None = None,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept TLS connections forever, calling ``handler(stream)`` after each handshake.

    ``task_status.started`` gets the listeners (see ``listening_port``). A client that does
    not finish the handshake within ``handshake_timeout`` is dropped, so a silent one cannot
    hold a slot; failed handshakes never reach the handler. The stream is closed when the
    handler returns. Failed handshakes and NetErrors raised by the handler go to
    ``on_error`` (default: ignored), so one bad or vanished client never stops the server;
    any other exception from the handler is a bug and propagates, as in trio.serve_tcp.
    """
    try:
        listeners = await open_listeners(port, host)
    except OSError as exc:
        raise ListenError(f"could not listen on port {port}: {exc.strerror or exc}") from exc

    async def accept(tcp: trio.SocketStream) -> None:
        stream = trio.SSLStream(tcp, ssl_context, server_side=True, https_compatible=False)
        try:
            await handshake(stream, handshake_timeout, _peer_name(tcp))
            await handler(stream)
        except NetError as exc:
            if on_error is not None:
                on_error(exc)
        finally:
            await close_quietly(stream)

    await trio.serve_listeners(accept, listeners, task_status=task_status)


def _peer_name(tcp: trio.SocketStream) -> str:
    try:
        address = tcp.socket.getpeername()
    except OSError:
        return "a client"
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
