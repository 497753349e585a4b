"""Where files live, and the identity and TLS key files kept there."""

from __future__ import annotations

import datetime
import os
import stat
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

from p2pgotg.net.transport import paths
from p2pgotg.net.transport.errors import IdentityFileError
from p2pgotg.net.transport.paths import (
    config_dir,
    data_dir,
    load_or_create_identity,
    load_or_create_tls_identity,
)
from p2pgotg.net.transport.tls import make_certificate, public_key_pin, server_context

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("P2PGOTG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def open_umask():
    """Prove the modes do not depend on a careful umask."""
    old = os.umask(0)
    yield
    os.umask(old)


def raw_private(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- directories -------------------------------------------------------------------------


def test_p2pgotg_home_holds_config_and_data(home):
    assert config_dir() == home / "config"
    assert data_dir() == home / "data"


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="XDG defaults are for Linux")
def test_xdg_defaults_and_overrides(tmp_path, monkeypatch):
    monkeypatch.delenv("P2PGOTG_HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_dir() == tmp_path / ".config" / "p2pgotg"
    assert data_dir() == tmp_path / ".local" / "share" / "p2pgotg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "dat"))
    assert config_dir() == tmp_path / "cfg" / "p2pgotg"
    assert data_dir() == tmp_path / "dat" / "p2pgotg"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/path")  # the spec says: ignore it
    assert config_dir() == tmp_path / ".config" / "p2pgotg"


# -- identity key ------------------------------------------------------------------------


@posix_only
def test_identity_created_private_and_reloaded(home, open_umask):
    key = load_or_create_identity()
    path = home / "config" / "identity.pem"
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert raw_private(load_or_create_identity()) == raw_private(key)
    assert raw_private(load_or_create_identity(path)) == raw_private(key)
    assert os.listdir(path.parent) == ["identity.pem"]  # no temporary file left behind


def test_identity_at_an_explicit_path(tmp_path):
    path = tmp_path / "deep" / "me.pem"
    key = load_or_create_identity(path)
    assert raw_private(load_or_create_identity(str(path))) == raw_private(key)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a key at all",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    ],
    ids=["empty", "text", "bad-base64", "wrong-key-type"],
)
def test_corrupt_identity_is_an_error_naming_the_file(home, content):
    path = home / "config" / "identity.pem"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(IdentityFileError) as info:
        load_or_create_identity()
    assert str(path) in str(info.value)
    assert "left untouched" in info.value.user_message
    assert path.read_bytes() == content  # never silently replaced


def test_an_existing_file_is_never_overwritten_on_create(tmp_path):
    path = tmp_path / "identity.pem"
    path.write_bytes(b"theirs")
    assert paths._write_private_file(path, b"mine", replace=False) is False
    assert path.read_bytes() == b"theirs"
    assert os.listdir(tmp_path) == ["identity.pem"]


# -- TLS identity --------------------------------------------------------------------------


@posix_only
def test_tls_identity_created_private_and_keeps_its_pin(home, open_umask):
    cert_pem, key_pem = load_or_create_tls_identity()
    path = home / "config" / "tls.pem"
    assert mode(path) == 0o600
    again = load_or_create_tls_identity()
    assert again == (cert_pem, key_pem)
    assert public_key_pin(again[0]) == public_key_pin(cert_pem)
    server_context(*again)  # loads into ssl as it is


def test_tls_identity_close_to_expiry_is_renewed_with_the_same_pin(home):
    key = Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2pgotg")])
    now = datetime.datetime.now(datetime.UTC)
    old = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=3640))
        .not_valid_after(now + datetime.timedelta(days=10))
        .sign(key, None)
        .public_bytes(serialization.Encoding.PEM)
    )
    _, key_pem = make_certificate(key)
    path = home / "config" / "tls.pem"
    path.parent.mkdir(parents=True)
    path.write_bytes(key_pem + old)
    path.chmod(0o600)
    cert_pem, got_key = load_or_create_tls_identity()
    assert got_key == key_pem
    assert cert_pem != old
    assert public_key_pin(cert_pem) == public_key_pin(old)
    renewed = x509.load_pem_x509_certificate(cert_pem)
    assert renewed.not_valid_after_utc > now + datetime.timedelta(days=3000)
    assert load_or_create_tls_identity() == (cert_pem, key_pem)  # stored


@pytest.mark.parametrize("damage", ["garbage", "no-cert", "two-keys", "other-key", "bad-cert"])
def test_corrupt_tls_identity_is_an_error_naming_the_file(home, damage):
    cert_pem, key_pem = make_certificate()
    other_cert, other_key = make_certificate()
    content = {
        "garbage": b"\x00\x01 nonsense",
        "no-cert": key_pem,
        "two-keys": key_pem + other_key + cert_pem,
        "other-key": key_pem + other_cert,
        "bad-cert": key_pem + b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    }[damage]
    path = home / "config" / "tls.pem"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(IdentityFileError) as info:
        load_or_create_tls_identity()
    assert str(path) in str(info.value)
    assert path.read_bytes() == content


# -- key files others may read or change (issue 13, finding 11) ------------------------------


@posix_only
@pytest.mark.parametrize("loader, name", [
    (load_or_create_identity, "identity.pem"),
    (load_or_create_tls_identity, "tls.pem"),
])
@pytest.mark.parametrize("loose", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o666])
def test_a_key_file_others_may_read_or_write_is_refused_saying_how_to_fix_it(
        home, loader, name, loose):
    loader()  # made owner-only by the program itself
    path = home / "config" / name
    before = path.read_bytes()
    path.chmod(loose)
    with pytest.raises(IdentityFileError) as info:
        loader()
    assert f"chmod 600 {path}" in info.value.user_message
    assert f"{loose:04o}" in info.value.user_message
    assert path.read_bytes() == before and mode(path) == loose  # left as it was
    path.chmod(0o600)  # the fix the message gives
    loader()


@posix_only
def test_the_bots_key_and_a_second_seat_key_are_checked_too(tmp_path):
    """Every key goes through the same loader: the bot's own key (ui.runner) and the second
    seat's are refused alike."""
    path = tmp_path / "bot-seat" / "identity.pem"
    load_or_create_identity(path)
    path.chmod(0o644)
    with pytest.raises(IdentityFileError, match="chmod 600"):
        load_or_create_identity(path)


@posix_only
def test_an_owner_only_key_with_other_owner_bits_still_loads(home):
    """Only the group's and others' bits matter (as for ssh): 0400 and 0700 are private."""
    load_or_create_identity()
    path = home / "config" / "identity.pem"
    for private in (0o400, 0o700):
        path.chmod(private)
        load_or_create_identity()
