"""What a joiner makes of a multicast DNS announcement (SPEC 3.7): a game only when every
record is as SPEC says (version 1, a decimal number 1..99 that its name carries too, a
port, a usable IPv4 address), whatever else anyone on the LAN announces. The records are
real zeroconf ServiceInfo objects, as the browser hands them over."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zeroconf import ServiceInfo

from p2pgotg.net.reaching.lan import MAX_ADDRESSES, SERVICE, _game, _wanted


def announcement(name: str = "p2pgotg game 7 on alice", *, port: int = 4000,
                 addresses: tuple[str, ...] = ("192.168.1.20",),
                 properties: dict | None = None) -> ServiceInfo:
    props = {b"v": b"1", b"n": b"7", b"r": b"open mode"} if properties is None else properties
    return ServiceInfo(SERVICE, f"{name}.{SERVICE}", port=port,
                       addresses=[socket.inet_aton(a) for a in addresses], properties=props,
                       server="alice.local.")


def test_an_announcement_as_spec_says_is_a_game() -> None:
    info = announcement()
    game = _game(info.name, info)
    assert game is not None
    assert (game.number, game.name, game.addresses, game.port, game.rules) == (
        7, "p2pgotg game 7 on alice", ("192.168.1.20",), 4000, "open mode")


@pytest.mark.parametrize(("why", "info"), [
    ("a digit that is not ASCII", announcement(properties={b"v": b"1", b"n": "\u0667".encode()})),
    ("a leading zero", announcement(properties={b"v": b"1", b"n": b"07"})),
    ("number 0", announcement("p2pgotg game 0 on alice", properties={b"v": b"1", b"n": b"0"})),
    ("number 100", announcement("p2pgotg game 100 on a", properties={b"v": b"1", b"n": b"100"})),
    ("not the number of its name", announcement(properties={b"v": b"1", b"n": b"8"})),
    ("another version", announcement(properties={b"v": b"2", b"n": b"7"})),
    ("no version", announcement(properties={b"n": b"7"})),
    ("port 0", announcement(port=0)),
    ("address 0.0.0.0", announcement(addresses=("0.0.0.0",))),
    ("a multicast address", announcement(addresses=("224.0.0.251",))),
    ("the broadcast address", announcement(addresses=("255.255.255.255",))),
    ("loopback", announcement(addresses=("127.0.0.1",))),
    ("no address", announcement(addresses=())),
    ("a name not of ours", announcement("bogus 7")),
])
def test_a_wrong_announcement_is_no_game(why: str, info: ServiceInfo) -> None:
    assert _game(info.name, info) is None, why


def test_text_from_the_network_is_shown_escaped_and_addresses_are_bounded() -> None:
    many = tuple(f"10.0.0.{i}" for i in range(1, 40))
    info = announcement("p2pgotg game 7 on \u202eevil", addresses=("0.0.0.0", *many),
                        properties={b"v": b"1", b"n": b"7", b"r": b"\x1b[31mred\xff"})
    game = _game(info.name, info)
    assert game is not None
    assert "\x1b" not in game.rules and "\u202e" not in game.name
    assert len(game.addresses) == MAX_ADDRESSES and "0.0.0.0" not in game.addresses


def test_only_names_of_our_form_are_wanted() -> None:
    assert _wanted(f"p2pgotg game 7 on alice.{SERVICE}", 7) == 7
    assert _wanted(f"p2pgotg game 7 on alice.{SERVICE}", None) == 7
    assert _wanted(f"p2pgotg game 7 on alice.{SERVICE}", 8) is None
    assert _wanted(f"p2pgotg game 07 on alice.{SERVICE}", 7) is None
    assert _wanted(f"bogus.{SERVICE}", None) is None


names = st.one_of(st.text(max_size=40),
                  st.builds(lambda n, rest: f"p2pgotg game {n} on {rest}",
                            st.integers(-5, 150), st.text(max_size=20)))
values = st.one_of(st.none(), st.binary(max_size=20),
                   st.integers(-5, 150).map(lambda n: str(n).encode()))


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(name=names, port=st.integers(0, 0xFFFF),
       addresses=st.lists(st.binary(min_size=4, max_size=4), max_size=12),
       version=values, number=values, rules=values)
def test_no_announcement_makes_the_reader_crash_or_pass_a_bad_game(
        name: str, port: int, addresses: list[bytes], version: bytes | None,
        number: bytes | None, rules: bytes | None) -> None:
    try:
        info = ServiceInfo(SERVICE, f"{name}.{SERVICE}", port=port, addresses=addresses,
                           properties={b"v": version, b"n": number, b"r": rules},
                           server="x.local.")
    except Exception:  # noqa: BLE001 (zeroconf itself refuses such a name: never seen)
        return
    game = _game(info.name, info)
    if game is not None:
        assert 1 <= game.number <= 99 and 1 <= game.port <= 0xFFFF
        assert 1 <= len(game.addresses) <= MAX_ADDRESSES
        assert all(a != "0.0.0.0" and not a.startswith(("127.", "224.")) for a in game.addresses)
        assert game.name.isprintable() and game.rules.isprintable()
