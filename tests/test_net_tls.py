"""TLS 1.3 with a pinned self-signed Ed25519 certificate, on real loopback sockets."""

from __future__ import annotations

import datetime
import hashlib
import socket
import ssl
from functools import partial

import pytest
import trio
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pgotg.net.transport import tls
from p2pgotg.net.transport.errors import (
    ConnectFailedError,
    ConnectionClosedError,
    HandshakeTimeoutError,
    ListenError,
    NetError,
    PinMismatchError,
    TLSHandshakeError,
)
from p2pgotg.net.transport.framing import MAX_FRAME, FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    client_context,
    listening_port,
    make_certificate,
    open_pinned_connection,
    public_key_pin,
    serve_tls,
    server_context,
)

# RFC 8410: an Ed25519 SubjectPublicKeyInfo is this 12-byte DER prefix and the raw key.
ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not ipv6_loopback_available(), reason="no IPv6 loopback here")


@pytest.fixture(scope="module")
def identity() -> tuple[bytes, bytes, bytes]:
    cert_pem, key_pem = make_certificate()
    return cert_pem, key_pem, public_key_pin(cert_pem)


async def start_server(nursery, handler, identity, host="127.0.0.1", **kwargs) -> int:
    cert_pem, key_pem, _pin = identity
    context = server_context(cert_pem, key_pem)
    listeners = await nursery.start(partial(serve_tls, handler, context, 0, host, **kwargs))
    return listening_port(listeners)


# -- certificates and pins ---------------------------------------------------------------


def test_certificate_is_self_signed_ed25519_for_ten_years():
    cert_pem, key_pem = make_certificate()
    cert = x509.load_pem_x509_certificate(cert_pem)
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert isinstance(key, Ed25519PrivateKey)
    assert isinstance(cert.public_key(), Ed25519PublicKey)
    assert cert.subject == cert.issuer
    assert cert.subject.rfc4514_string() == "CN=p2pgotg"
    cert.verify_directly_issued_by(cert)  # signed by its own key
    now = datetime.datetime.now(datetime.UTC)
    assert cert.not_valid_before_utc < now - datetime.timedelta(hours=23)
    assert cert.not_valid_after_utc - cert.not_valid_before_utc >= datetime.timedelta(days=3650)


def test_pin_is_sha256_of_the_subject_public_key_info():
    key = Ed25519PrivateKey.generate()
    cert_pem, _ = make_certificate(key)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    expected = hashlib.sha256(ED25519_SPKI_PREFIX + raw).digest()
    der = x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)
    assert public_key_pin(cert_pem) == public_key_pin(der) == expected
    assert len(expected) == 32


def test_pin_follows_the_key_and_fingerprint_the_certificate():
    key = Ed25519PrivateKey.generate()
    first, _ = make_certificate(key)
    second, _ = make_certificate(key)
    assert public_key_pin(first) == public_key_pin(second)
    assert certificate_fingerprint(first) != certificate_fingerprint(second)
    assert public_key_pin(make_certificate()[0]) != public_key_pin(first)
    der = x509.load_pem_x509_certificate(first).public_bytes(serialization.Encoding.DER)
    assert certificate_fingerprint(der) == hashlib.sha256(der).digest()
    assert certificate_fingerprint(first) == certificate_fingerprint(der)


def test_contexts_allow_tls13_only(identity):
    cert_pem, key_pem, _ = identity
    for context in (server_context(cert_pem, key_pem), client_context()):
        assert context.minimum_version == ssl.TLSVersion.TLSv1_3
        assert context.maximum_version == ssl.TLSVersion.TLSv1_3
    client = client_context()
    assert client.verify_mode == ssl.CERT_NONE and not client.check_hostname


# -- real connections on loopback --------------------------------------------------------


async def exchange(host: str, identity) -> None:
    """Connect with the right pin and trade frames (one of them MAX_FRAME) both ways."""
    server_saw: dict[str, object] = {}
    done = trio.Event()

    async def handler(stream: trio.SSLStream) -> None:
        server_saw["version"] = stream.version()
        channel = FramedChannel(stream)
        try:
            request = await channel.receive()
            await channel.send(b"echo:" + request[:100])
            await channel.send(b"S" * MAX_FRAME)
            server_saw["big"] = await channel.receive()
            with pytest.raises(ConnectionClosedError):
                await channel.receive()
        finally:
            done.set()

    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, handler, identity, host=host)
        with trio.fail_after(10):
            stream = await open_pinned_connection(host, port, identity[2])
            assert stream.version() == "TLSv1.3"
            peer = x509.load_der_x509_certificate(tls.peer_certificate(stream))
            assert isinstance(peer.public_key(), Ed25519PublicKey)
            channel = FramedChannel(stream)
            await channel.send(b"hello")
            assert await channel.receive() == b"echo:hello"
            assert await channel.receive() == b"S" * MAX_FRAME
            await channel.send(b"C" * MAX_FRAME)
            await channel.aclose()
            await done.wait()
        nursery.cancel_scope.cancel()
    assert server_saw == {"version": "TLSv1.3", "big": b"C" * MAX_FRAME}


async def test_right_pin_exchanges_frames_ipv4(identity):
    await exchange("127.0.0.1", identity)


@needs_ipv6
async def test_right_pin_exchanges_frames_ipv6(identity):
    await exchange("::1", identity)


async def test_wrong_pin_is_refused_before_any_byte(identity):
    received: list[bytes] = []
    done = trio.Event()

    async def handler(stream: trio.SSLStream) -> None:
        data = b""
        try:
            while chunk := await stream.receive_some():
                data += chunk
        except trio.BrokenResourceError:
            pass
        received.append(data)
        done.set()

    wrong = hashlib.sha256(b"somebody else").digest()
    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, handler, identity)
        with trio.fail_after(10):
            with pytest.raises(PinMismatchError) as info:
                await open_pinned_connection("127.0.0.1", port, wrong)
            await done.wait()
        nursery.cancel_scope.cancel()
    assert received == [b""]  # the handshake finished, and then nothing came
    message = str(info.value)
    assert wrong.hex() in message and identity[2].hex() in message
    assert info.value.expected == wrong and info.value.got == identity[2]
    assert "invite" in info.value.user_message


async def test_pin_must_be_32_bytes():
    with pytest.raises(ValueError, match="32"):
        await open_pinned_connection("127.0.0.1", 1, b"short")


async def test_wildcard_host_serves_both_families_on_one_port(identity, monkeypatch):
    """host=None listens on every family, all on the port the invite names. (The wildcard
    addresses are swapped for loopback ones here so the test opens nothing to the LAN.)"""
    families = [("127.0.0.1", socket.AF_INET)]
    if ipv6_loopback_available():
        families.append(("::1", socket.AF_INET6))

    real_getaddrinfo = trio.socket.getaddrinfo

    async def loopback_getaddrinfo(host, port, *args, **kwargs):
        if host is None:
            return [(fam, socket.SOCK_STREAM, 6, "", (addr, port)) for addr, fam in families]
        return await real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(trio.socket, "getaddrinfo", loopback_getaddrinfo)
    listeners = await tls.open_listeners(0, None)
    try:
        ports = {listener.socket.getsockname()[1] for listener in listeners}
        assert len(listeners) == len(families) and len(ports) == 1
        assert {listener.socket.family for listener in listeners} == {f for _, f in families}
    finally:
        for listener in listeners:
            await listener.aclose()


async def test_silent_client_is_dropped_after_handshake_timeout(identity, autojump_clock):
    errors: list[NetError] = []
    handled = []

    async def handler(stream: trio.SSLStream) -> None:
        handled.append(stream)

    async with trio.open_nursery() as nursery:
        port = await start_server(
            nursery, handler, identity, handshake_timeout=5, on_error=errors.append
        )
        raw = await trio.open_tcp_stream("127.0.0.1", port)
        start = trio.current_time()
        with trio.fail_after(60):
            assert await raw.receive_some() == b""  # the server hung up on us
        assert trio.current_time() - start == pytest.approx(5, abs=0.5)
        await raw.aclose()
        nursery.cancel_scope.cancel()
    assert handled == []
    assert len(errors) == 1 and isinstance(errors[0], HandshakeTimeoutError)


async def test_non_tls_client_never_reaches_the_handler(identity):
    errors: list[NetError] = []
    handled = []

    async def handler(stream: trio.SSLStream) -> None:
        handled.append(stream)

    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, handler, identity, on_error=errors.append)
        raw = await trio.open_tcp_stream("127.0.0.1", port)
        await raw.send_all(b"GET / HTTP/1.0\r\n\r\n")
        with trio.fail_after(10):
            while await raw.receive_some():
                pass
        await raw.aclose()
        nursery.cancel_scope.cancel()
    assert handled == []
    assert len(errors) == 1 and isinstance(errors[0], TLSHandshakeError)


async def test_nobody_listening_is_connect_failed():
    with socket.socket() as holder:  # bound, not listening: the port is ours and refuses
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        with pytest.raises(ConnectFailedError, match=f"127.0.0.1:{port}"):
            await open_pinned_connection("127.0.0.1", port, bytes(32))


async def test_mute_server_is_handshake_timeout(autojump_clock):
    async def mute(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, mute, 0, host="127.0.0.1"))
        with pytest.raises(HandshakeTimeoutError):
            await open_pinned_connection(
                "127.0.0.1", listening_port(listeners), bytes(32), handshake_timeout=7
            )
        nursery.cancel_scope.cancel()


async def test_non_tls_server_is_handshake_error():
    async def http(stream: trio.SocketStream) -> None:
        await stream.send_all(b"HTTP/1.0 400 Bad Request\r\n\r\n")
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, http, 0, host="127.0.0.1"))
        with trio.fail_after(10), pytest.raises(TLSHandshakeError):
            await open_pinned_connection("127.0.0.1", listening_port(listeners), bytes(32))
        nursery.cancel_scope.cancel()


async def test_a_failing_client_does_not_stop_the_server(identity):
    errors: list[NetError] = []
    served: list[bytes] = []

    async def handler(stream: trio.SSLStream) -> None:
        channel = FramedChannel(stream)
        served.append(await channel.receive())  # the first client leaves without a frame
        await channel.send(b"welcome")

    async with trio.open_nursery() as nursery:
        port = await start_server(nursery, handler, identity, on_error=errors.append)
        with trio.fail_after(10):
            quitter = await open_pinned_connection("127.0.0.1", port, identity[2])
            await quitter.aclose()
            stream = await open_pinned_connection("127.0.0.1", port, identity[2])
            channel = FramedChannel(stream)
            await channel.send(b"hello")
            assert await channel.receive() == b"welcome"
            await channel.aclose()
        nursery.cancel_scope.cancel()
    assert served == [b"hello"]
    assert len(errors) == 1 and isinstance(errors[0], ConnectionClosedError)


async def test_port_in_use_is_listen_error(identity):
    async def handler(stream: trio.SSLStream) -> None:
        pass

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ListenError, match=str(port)):
            await serve_tls(handler, server_context(*identity[:2]), port, "127.0.0.1")
