"""Invite codes: round trips, the documented byte layout, and every kind of damage."""

from __future__ import annotations

import base64
import ipaddress
import socket
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.net.reaching.invite import Invite, reachable_addresses
from p2pgotg.net.transport.errors import BadInviteError

ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
PIN = bytes(range(32))
SECRET = bytes(range(100, 116))


def layout_to_code(layout: bytes) -> str:
    """Add the check and the text form exactly as INVITE_FORMAT.md describes them."""
    check = struct.pack("<I", zlib.crc32(b"p2pgotg/invite/v1" + layout))
    return "gg1-" + base64.b32encode(layout + check).decode().rstrip("=").lower()


def ipv4_layout(port: int = 4000) -> bytes:
    return b"\x04" + bytes([192, 0, 2, 7]) + struct.pack(">H", port) + PIN + SECRET


labels = st.from_regex(r"[a-z0-9]([a-z0-9_-]{0,20}[a-z0-9])?", fullmatch=True)
hostnames = (
    st.lists(labels, min_size=1, max_size=4)
    .map(".".join)
    .filter(lambda name: not name.split(".")[-1].isdigit())
)
addresses = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    hostnames,
)
invites = st.builds(
    Invite,
    address=addresses,
    port=st.integers(1, 65535),
    pin=st.binary(min_size=32, max_size=32),
    secret=st.binary(min_size=16, max_size=16),
)


# -- round trips and the layout ----------------------------------------------------------


@given(invites)
def test_round_trip(invite):
    code = invite.encode()
    assert Invite.decode(code) == invite
    assert code.startswith("gg1-")
    assert set(code[4:]) <= set(ALPHABET)


def test_layout_is_as_documented():
    assert Invite("192.0.2.7", 4000, PIN, SECRET).encode() == layout_to_code(ipv4_layout())
    v6 = b"\x06" + ipaddress.IPv6Address("2001:db8::1").packed + b"\x00\x50" + PIN + SECRET
    assert Invite("2001:db8::1", 80, PIN, SECRET).encode() == layout_to_code(v6)
    host = b"\x00\x0bexample.com" + b"\xff\xff" + PIN + SECRET
    assert Invite("example.com", 65535, PIN, SECRET).encode() == layout_to_code(host)


def test_known_vector():
    # A frozen code for other implementations (same values as test_layout_is_as_documented).
    code = (
        "gg1-ataaaaqhb6qaaaicamcakbqhbaequcymbuha6earcijrifiwc4mbsgq3dqor4h3emvtgo2djnjvwy3lon5yhc"
        "4ttzy2ggzi"
    )
    assert Invite.decode(code) == Invite("192.0.2.7", 4000, PIN, SECRET)
    assert Invite("192.0.2.7", 4000, PIN, SECRET).encode() == code


def test_case_and_whitespace_are_ignored():
    invite = Invite("198.51.100.20", 7777, PIN, SECRET)
    code = invite.encode()
    mangled = "  " + code[:30].upper() + "\n" + code[30:60] + " " + code[60:] + "\n"
    assert Invite.decode(mangled) == invite


def test_addresses_are_normalized():
    assert Invite("2001:DB8:0:0::1", 1, PIN, SECRET).address == "2001:db8::1"
    assert Invite("Example.COM", 1, PIN, SECRET).address == "example.com"


def test_secret_stays_out_of_repr():
    assert SECRET.hex() not in repr(Invite("192.0.2.7", 1, PIN, SECRET))
    assert repr(SECRET) not in repr(Invite("192.0.2.7", 1, PIN, SECRET))


def test_new_invites_have_fresh_secrets():
    first, second = Invite.new("192.0.2.7", 1, PIN), Invite.new("192.0.2.7", 1, PIN)
    assert len(first.secret) == 16 and first.secret != second.secret


@pytest.mark.parametrize(
    ("address", "port", "pin", "secret", "complaint"),
    [
        ("192.0.2.7", 0, PIN, SECRET, "port"),
        ("192.0.2.7", 65536, PIN, SECRET, "port"),
        ("192.0.2.7", 1, PIN[:31], SECRET, "pin"),
        ("192.0.2.7", 1, PIN, SECRET + b"x", "secret"),
        ("fe80::1%eth0", 1, PIN, SECRET, "scope"),
        ("1.2.3", 1, PIN, SECRET, "neither"),
        ("bad..name", 1, PIN, SECRET, "hostname"),
        ("-dash.example", 1, PIN, SECRET, "hostname"),
        ("a" * 254, 1, PIN, SECRET, "hostname"),
        ("", 1, PIN, SECRET, "hostname"),
    ],
)
def test_constructor_refuses_bad_fields(address, port, pin, secret, complaint):
    with pytest.raises(ValueError, match=complaint):
        Invite(address, port, pin, secret)


# -- damage ------------------------------------------------------------------------------

GOOD = Invite("192.0.2.7", 4000, PIN, SECRET).encode()


@pytest.mark.parametrize(
    ("code", "complaint"),
    [
        ("", r"starts with 'gg2-' \(or 'gg1-'"),
        ("hello", r"starts with 'gg2-' \(or 'gg1-'"),
        ("gx1-" + GOOD[4:], r"starts with 'gg2-' \(or 'gg1-'"),
        ("gg3-" + GOOD[4:], "'gg3-'.*update p2pgotg"),
        ("gg2-" + GOOD[4:], "too short"),  # 59 bytes: below a v2 code's 60, before its check
        (GOOD[:10] + "0" + GOOD[11:], "'0' at position 11"),
        (GOOD[:20] + "!" + GOOD[21:], "'!' at position 21"),
        (GOOD[:5] + "é" + GOOD[6:], "'é' at position 6"),
        (GOOD[:-1], "missing or extra"),  # 94 characters: impossible base32 length
        (GOOD[:40], "too short"),
        (GOOD[:-8], "too short"),
        (GOOD[:-2], "missing or extra|check"),
        (GOOD + "a", "missing or extra|check"),
        (GOOD[:30] + ("b" if GOOD[30] != "b" else "c") + GOOD[31:], "check does not match"),
        (layout_to_code(ipv4_layout(port=0)), "port 0"),
        (layout_to_code(b"\x07" + ipv4_layout()[1:]), "unknown address kind 7"),
        (layout_to_code(ipv4_layout() + b"\x00"), "truncated or padded"),
        (layout_to_code(b"\x06" + ipv4_layout()[1:]), "truncated or padded"),
        (layout_to_code(b"\x00\x09bad..name" + ipv4_layout()[5:]), "hostname"),
        (layout_to_code(b"\x00\x021." + b"\x80" + ipv4_layout()[5:]), "truncated or padded"),
        (layout_to_code(b"\x00\x02\xff\xfe" + ipv4_layout()[5:]), "not ASCII"),
    ],
)
def test_each_kind_of_damage_says_what_is_wrong(code, complaint):
    with pytest.raises(BadInviteError, match=complaint) as info:
        Invite.decode(code)
    assert "invite code is not valid" in info.value.user_message


def test_spare_bits_of_the_last_character_must_be_zero():
    # 59 bytes use 472 of the last 95 characters' 475 bits; a typo in the 3 spare bits
    # would give the same bytes, so it has to be caught on its own.
    last = ALPHABET.index(GOOD[-1])
    twin = GOOD[:-1] + ALPHABET[last ^ 0b001]
    with pytest.raises(BadInviteError, match="last character"):
        Invite.decode(twin)


@settings(max_examples=8, deadline=None)
@given(invites)
def test_every_single_character_typo_is_caught(invite):
    code = invite.encode()
    for i, original in enumerate(code):
        for typo in ALPHABET + "gg1-":
            if typo == original:
                continue
            with pytest.raises(BadInviteError):
                Invite.decode(code[:i] + typo + code[i + 1 :])


@settings(max_examples=8, deadline=None)
@given(invites)
def test_swaps_losses_and_doubles_are_caught(invite):
    code = invite.encode()
    for i in range(len(code)):
        damaged = [code[:i] + code[i + 1 :], code[:i] + code[i] + code[i:]]
        if i + 1 < len(code) and code[i] != code[i + 1]:
            damaged.append(code[:i] + code[i + 1] + code[i] + code[i + 2 :])
        for text in damaged:
            with pytest.raises(BadInviteError):
                Invite.decode(text)


# -- reachable addresses -----------------------------------------------------------------


def test_a_specific_bound_host_is_the_only_address():
    assert reachable_addresses("192.0.2.7") == ["192.0.2.7"]
    assert reachable_addresses("::1") == ["::1"]


@pytest.fixture
def no_traffic(monkeypatch):
    """Fail if listing addresses tries to talk to the network."""

    def forbidden(*args, **kwargs):
        raise AssertionError("reachable_addresses must not send anything")

    for name in ("connect", "connect_ex", "send", "sendto", "sendall", "sendmsg"):
        monkeypatch.setattr(socket.socket, name, forbidden)


def test_wildcard_lists_usable_addresses_loopback_last(no_traffic):
    found = reachable_addresses(None)
    assert "127.0.0.1" in found
    assert len(found) == len(set(found))
    parsed = [ipaddress.ip_address(a) for a in found]
    assert not any(ip.is_link_local or ip.is_unspecified for ip in parsed)
    loopback = [ip.is_loopback for ip in parsed]
    assert loopback == sorted(loopback)  # non-loopback first
    for address in found:
        Invite(address, 1, PIN, SECRET)  # each one fits in an invite
    if socket.has_ipv6:
        assert "::1" in found


def test_family_wildcards_keep_to_their_family(no_traffic):
    assert all(ipaddress.ip_address(a).version == 4 for a in reachable_addresses("0.0.0.0"))
    assert all(ipaddress.ip_address(a).version == 6 for a in reachable_addresses("::"))


def test_one_invite_lists_every_address_of_a_hosts_v1_codes():
    from p2pgotg.net.reaching.invite import one_invite

    pin, secret = bytes(range(32)), bytes(range(16))
    codes = [Invite(a, 4000, pin, secret).encode() for a in ("192.168.1.20", "fd00::5",
                                                             "127.0.0.1")]
    combined = Invite.decode(one_invite(codes))
    assert [c.address for c in combined.all_candidates()] == ["192.168.1.20", "fd00::5",
                                                              "127.0.0.1"]
    assert (combined.address, combined.port) == ("192.168.1.20", 4000)
    assert combined.pin == pin and combined.secret == secret
    other = Invite("10.0.0.1", 4000, pin, bytes(16)).encode()
    with pytest.raises(ValueError, match="not from one host"):
        one_invite([codes[0], other])
