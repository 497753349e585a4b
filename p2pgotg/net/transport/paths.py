"""Where the player's files live, and the long-lived keys kept there.

``P2PGOTG_HOME`` (if set) holds everything, in ``config/`` and ``data/``, so tests and
portable installs stay in one folder. Otherwise XDG on every platform when its variables
are set, else ``~/.config/p2pgotg`` and ``~/.local/share/p2pgotg`` (the XDG defaults),
``~/Library/Application Support/p2pgotg`` on macOS, ``%APPDATA%`` / ``%LOCALAPPDATA%`` on
Windows.

Key files (in the config dir, mode 0600, the dir 0700):

- ``identity.pem``: the Ed25519 identity key that signs games, as unencrypted PKCS#8 PEM
  (``-----BEGIN PRIVATE KEY-----``), readable by ``openssl pkey``.
- ``tls.pem``: the host's TLS key (PKCS#8 PEM) followed by its self-signed certificate
  (PEM), so that hosting again keeps the same pin and old invite codes stay valid.

A key file is written to a temporary file in the same folder, flushed, then moved into
place, so a crash never leaves half a key. A file that exists but cannot be parsed is an
error naming it, never silently replaced: that would throw away the player's identity.
On POSIX a key file that its group or others may read or write is refused, as ssh refuses
such a key: someone else may have read it, or may have swapped it for theirs, and a key
that is not the player's alone proves nothing about the player. The error says how to fix
it (``chmod 600 FILE``).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import re
import secrets
import stat
import sys
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.net.transport.errors import IdentityFileError
from p2pgotg.net.transport.tls import make_certificate, public_key_pin

APP = "p2pgotg"
HOME_ENV = "P2PGOTG_HOME"
IDENTITY_FILE = "identity.pem"
#: The identity of a second seat on this account: joining a game this account hosts.
SECOND_SEAT_FILE = "identity-second-seat.pem"
TLS_FILE = "tls.pem"
# Re-issue the TLS certificate (same key, same pin) when it has less than this left.
RENEW_BEFORE = datetime.timedelta(days=30)

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----\r?\n?", re.DOTALL)


def _base(xdg_var: str, xdg_default: str, mac: str, windows_var: str) -> Path:
    xdg = os.environ.get(xdg_var)
    if xdg and Path(xdg).is_absolute():  # the XDG spec says to ignore relative paths
        return Path(xdg) / APP
    if sys.platform == "darwin":
        return Path.home() / mac / APP
    if sys.platform == "win32" and os.environ.get(windows_var):
        return Path(os.environ[windows_var]) / APP
    return Path.home() / xdg_default / APP


def config_dir() -> Path:
    """Settings and keys."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "config"
    return _base("XDG_CONFIG_HOME", ".config", "Library/Application Support", "APPDATA")


def data_dir() -> Path:
    """Game records and transcripts."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "data"
    return _base("XDG_DATA_HOME", ".local/share", "Library/Application Support", "LOCALAPPDATA")


def load_or_create_identity(path: Path | str | None = None) -> Ed25519PrivateKey:
    """The player's Ed25519 identity key, created (0600) on first use."""
    path = Path(path) if path is not None else config_dir() / IDENTITY_FILE
    data = _read(path)
    if data is None:
        key = Ed25519PrivateKey.generate()
        if _write_private_file(path, _key_pem(key), replace=False):
            return key
        data = _read(path)  # another process created it first: use theirs
        if data is None:
            raise IdentityFileError(f"{path} vanished while it was being created")
    return _parse_key(path, data)


def own_public_keys() -> set[bytes]:
    """The public keys of this account's identities that exist (none is made), so that a
    saved game can say which side was the reader's ("you")."""
    from p2pgotg.crypto import public_bytes

    found = set()
    for name in (IDENTITY_FILE, SECOND_SEAT_FILE):
        path = config_dir() / name
        try:
            data = _read(path)
            if data is not None:
                found.add(public_bytes(_parse_key(path, data)))
        except IdentityFileError:
            continue  # (an unreadable key is said where it is loaded to play, not here)
    return found


def identity_for_joining(invite_pin: bytes) -> Ed25519PrivateKey:
    """The identity to join an invite with: the usual one, unless the invite's host is this
    account itself (its TLS pin is ours: two terminals, one account). Then a second key of
    its own, kept beside the first, because the two sides of a game must sign with two
    different keys; the same choice is made again on resume, so the saved game is found."""
    tls_path = config_dir() / TLS_FILE
    if _read(tls_path) is not None:
        cert_pem, _ = load_or_create_tls_identity(tls_path)
        if secrets.compare_digest(public_key_pin(cert_pem), invite_pin):
            return load_or_create_identity(config_dir() / SECOND_SEAT_FILE)
    return load_or_create_identity()


def load_or_create_tls_identity(path: Path | str | None = None) -> tuple[bytes, bytes]:
    """The host's ``(cert_pem, key_pem)``, created (0600) on first use.

    A certificate close to expiry is re-issued for the same key, so the pin never changes.
    """
    path = Path(path) if path is not None else config_dir() / TLS_FILE
    data = _read(path)
    if data is None:
        cert_pem, key_pem = make_certificate()
        if _write_private_file(path, key_pem + cert_pem, replace=False):
            return cert_pem, key_pem
        data = _read(path)
        if data is None:
            raise IdentityFileError(f"{path} vanished while it was being created")
    blocks: dict[bytes, list[bytes]] = {}
    for match in _PEM_BLOCK.finditer(data):
        blocks.setdefault(match.group(1), []).append(match.group(0))
    keys, certs = blocks.get(b"PRIVATE KEY", []), blocks.get(b"CERTIFICATE", [])
    if len(keys) != 1 or len(certs) != 1:
        raise IdentityFileError(
            f"{path} should hold one PRIVATE KEY and one CERTIFICATE in PEM,"
            f" found {len(keys)} and {len(certs)}"
        )
    key = _parse_key(path, keys[0])
    try:
        cert = x509.load_pem_x509_certificate(certs[0])
    except ValueError as exc:
        raise IdentityFileError(f"{path}: the certificate cannot be read ({exc})") from None
    raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
    if cert.public_key().public_bytes(*raw) != key.public_key().public_bytes(*raw):
        raise IdentityFileError(f"{path}: the certificate is not for the key stored with it")
    cert_pem, key_pem = certs[0], _key_pem(key)
    if cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC) < RENEW_BEFORE:
        cert_pem, _ = make_certificate(key)
        _write_private_file(path, key_pem + cert_pem, replace=True)
    return cert_pem, key_pem


def _key_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


#: Permission bits a key file must not have: any access by its group or by others.
TOO_OPEN = 0o077


def _read(path: Path) -> bytes | None:
    """A key file's bytes (None when it does not exist), refused when it is not private."""
    try:
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IdentityFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    check_private(path, mode)
    return data


def check_private(path: Path, mode: int) -> None:
    """Refuse a key file whose group or others may read or write it (POSIX only: Windows
    modes do not say who may read a file)."""
    if os.name != "posix" or not mode & TOO_OPEN:
        return
    raise IdentityFileError(
        f"{path} is a private key but its permissions ({stat.S_IMODE(mode):04o}) let "
        f"others read or change it, so it is not used. If only you can have used it, make it "
        f"private with:  chmod 600 {path}  (otherwise move it away to get a new key)"
    )


def _parse_key(path: Path, data: bytes) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise IdentityFileError(f"{path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def _write_private_file(path: Path, data: bytes, *, replace: bool) -> bool:
    """Write ``data`` to ``path`` (0600) all at once. With ``replace=False`` an existing
    file wins and False is returned, so two first runs never overwrite each other's key."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_BINARY", 0), 0o600)
    except OSError as exc:
        raise IdentityFileError(f"cannot create {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # unlike replace, fails if the file appeared meanwhile
            except FileExistsError:
                return False
            except OSError:  # no hard links on this file system
                os.replace(tmp, path)
        fsync_dir(path.parent)
        return True
    except OSError as exc:
        raise IdentityFileError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def fsync_dir(directory: Path) -> None:
    """Make a file's creation or rename durable (POSIX); a no-op where directories cannot
    be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
