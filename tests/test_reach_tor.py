"""The pure codecs of reaching a host through Tor: version 3 onion addresses (Tor's
rend-spec-v3), the onion candidate of an invite (SPEC 3.3.1), SOCKS5 (RFC 1928, with tor's
extended errors) and the control protocol's replies (Tor's control-spec). Expected bytes
are built here from those texts, field by field, and published onion addresses serve as
outside examples."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import struct
import zlib
from pathlib import Path

import nacl.bindings
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.net.reaching.invite import NAT_SYMMETRIC, Invite
from p2pgotg.net.transport.errors import BadInviteError
from p2pgotg.reach import tor_control, tor_socks
from p2pgotg.reach.candidates import LAN, ONION, PUNCH, Candidate, CodeError
from p2pgotg.reach.tor_control import ControlError, Reply, ReplyParser
from p2pgotg.reach.tor_onion import (
    OnionError,
    expanded_key,
    game_seed,
    onion_address,
    onion_key,
    public_key_of,
)

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors-reach.json")
                     .read_text())
PIN, SECRET = bytes(range(32)), bytes(range(100, 116))
# Onion addresses their owners publish: the Tor Project's and DuckDuckGo's.
PUBLISHED = ["2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion",
             "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion"]


def spec_address(public_key: bytes) -> str:
    """rend-spec-v3: base32(PUBKEY | CHECKSUM | VERSION), CHECKSUM = SHA3-256(".onion
    checksum" | PUBKEY | VERSION)[:2], VERSION = 3."""
    checksum = hashlib.sha3_256(b".onion checksum" + public_key + b"\x03").digest()[:2]
    return base64.b32encode(public_key + checksum + b"\x03").decode().lower() + ".onion"


# -- onion addresses ---------------------------------------------------------------------

@pytest.mark.parametrize("address", PUBLISHED)
def test_published_onion_addresses_are_read(address):
    key = onion_key(address)
    assert spec_address(key) == address
    assert onion_key(address.upper()) == key


@pytest.mark.parametrize(("address", "complaint"), [
    (PUBLISHED[0][:10] + ("a" if PUBLISHED[0][10] != "a" else "b") + PUBLISHED[0][11:],
     "checksum does not match"),
    ("expyuzz4wqqyqhjn.onion", "56 letters"),  # a version 2 address: gone from Tor
    ("2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.com", "does not end in"),
    ("2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wi1.onion", "a-z and digits"),
])
def test_a_wrong_onion_address_says_what_is_wrong(address, complaint):
    with pytest.raises(OnionError, match=complaint):
        onion_key(address)


def test_an_address_of_another_version_is_refused():
    key = bytes(32)
    checksum = hashlib.sha3_256(b".onion checksum" + key + b"\x04").digest()[:2]
    text = base64.b32encode(key + checksum + b"\x04").decode().lower() + ".onion"
    with pytest.raises(OnionError, match="version 4"):
        onion_key(text)


def test_the_onion_vector_is_the_key_its_seed_makes():
    """The public key is libsodium's for the seed; the expanded key's first half is the
    secret scalar of that public key (its base point multiple) and its second half the
    second half of SHA-512(seed) (RFC 8032 5.1.5); the address is rend-spec-v3's."""
    for case in VECTORS["onion"]:
        seed = bytes.fromhex(case["seed"])
        public, _secret = nacl.bindings.crypto_sign_seed_keypair(seed)
        expanded = bytes.fromhex(case["expanded_key"])
        assert case["public_key"] == public.hex() == public_key_of(seed).hex()
        assert nacl.bindings.crypto_scalarmult_ed25519_base_noclamp(expanded[:32]) == public
        assert expanded[32:] == hashlib.sha512(seed).digest()[32:]
        assert expanded_key(seed) == expanded
        assert case["address"] == spec_address(public) == onion_address(public)


def test_a_games_service_key_is_the_hosts_alone_and_the_games_own():
    """SPEC 3.8: HMAC-SHA256(identity seed, tag || join secret): the same game gives the
    same address when the host runs again, another game or another host another one."""
    identity, other = bytes(32), bytes([1]) * 32
    seed = game_seed(identity, SECRET)
    assert seed == hmac.new(identity, b"p2pgotg/onion-key/v1" + SECRET, "sha256").digest()
    assert game_seed(identity, SECRET) == seed
    assert game_seed(identity, bytes(16)) != seed
    assert game_seed(other, SECRET) != seed


# -- the onion candidate (SPEC 3.3.1) ------------------------------------------------------

def _v2(nat: int, candidates: list[bytes]) -> str:
    body = bytes([nat, len(candidates)]) + b"".join(candidates) + PIN + SECRET
    raw = body + struct.pack("<I", zlib.crc32(body, zlib.crc32(b"p2pgotg/invite/v2")))
    return "gg2-" + base64.b32encode(raw).decode().rstrip("=").lower()


def _onion_bytes(kind: int, address: str, port: int) -> bytes:
    name = address.encode()
    return bytes([kind, 0x00, len(name)]) + name + port.to_bytes(2, "big")


def test_an_onion_candidate_layout_is_the_spec_one():
    lan = bytes([1, 4, 10, 14, 2, 2]) + (4000).to_bytes(2, "big")
    onion = _onion_bytes(4, PUBLISHED[0], 4000)
    assert len(onion) == 67
    text = _v2(NAT_SYMMETRIC, [lan, onion])
    invite = Invite.v2([Candidate(LAN, "10.14.2.2", 4000), Candidate(ONION, PUBLISHED[0], 4000)],
                       PIN, SECRET, NAT_SYMMETRIC)
    assert invite.encode() == text
    assert Invite.decode(text) == invite
    assert len(text) - len("gg2-") == 207  # SPEC 3.3.1's size for this invite


def test_the_onion_invite_vector_decodes_as_stated():
    case = next(c for c in VECTORS["invite_v2"] if any(k == ONION for k, _, _ in c["candidates"]))
    invite = Invite.decode(case["code"])
    assert [[c.kind, c.address, c.port] for c in invite.candidates] == case["candidates"]
    assert invite.nat == case["nat"] == NAT_SYMMETRIC
    onion = [c for c in invite.candidates if c.kind == ONION]
    assert onion and not onion[0].direct
    assert onion[0].address == VECTORS["onion"][0]["address"]


@pytest.mark.parametrize(("candidate", "complaint"), [
    (_onion_bytes(4, PUBLISHED[0][:5] + "zzz" + PUBLISHED[0][8:], 4000), "checksum"),
    (_onion_bytes(4, "gg.example", 4000), "does not end in .onion"),
    (bytes([4, 4, 11, 0, 14, 12, 0x0F, 0xA0]), "does not end in .onion"),
    (_onion_bytes(1, PUBLISHED[0], 4000), "only through Tor"),
    (_onion_bytes(3, PUBLISHED[0], 4000), "only through Tor"),
    (_onion_bytes(5, PUBLISHED[0], 4000), "unknown candidate kind 5 .*update p2pgotg"),
])
def test_a_wrong_onion_candidate_says_what_is_wrong(candidate, complaint):
    with pytest.raises(BadInviteError, match=complaint):
        Invite.decode(_v2(0, [candidate]))


def test_an_onion_candidate_is_neither_direct_nor_punched():
    onion = Candidate(ONION, PUBLISHED[1], 443)
    assert not onion.direct and onion.kind not in (LAN, PUNCH)
    assert str(onion) == f"{PUBLISHED[1]}:443 (onion)"
    with pytest.raises(CodeError, match="only through Tor"):
        Candidate(LAN, PUBLISHED[1], 443)


# -- SOCKS5 (RFC 1928) ---------------------------------------------------------------------

def test_the_socks_greeting_password_and_connect_are_rfc_1928s_and_1929s():
    # VER, NMETHODS, NO AUTHENTICATION, USERNAME/PASSWORD
    assert bytes([5, 2, 0, 2]) == tor_socks.GREETING
    assert tor_socks.credentials("p2pgotg", "secret") == \
        bytes([1, 7]) + b"p2pgotg" + bytes([6]) + b"secret"
    name = PUBLISHED[0].encode()
    assert tor_socks.connect_request(PUBLISHED[0], 4000) == \
        bytes([5, 1, 0, 3, len(name)]) + name + bytes([0x0F, 0xA0])
    assert tor_socks.chosen_method(bytes([5, 2])) == tor_socks.USERNAME_PASSWORD
    assert tor_socks.chosen_method(bytes([5, 0])) == tor_socks.NO_AUTHENTICATION
    tor_socks.check_credentials_reply(bytes([1, 0]))
    with pytest.raises(tor_socks.SocksError, match="refused our user name and password"):
        tor_socks.check_credentials_reply(bytes([1, 1]))


def test_a_socks_success_reply_is_read_whatever_its_address_type():
    ipv4 = bytes([5, 0, 0, 1, 0, 0, 0, 0, 0, 0])  # tor's: 0.0.0.0:0
    assert tor_socks.reply_size(ipv4[:5]) == 10
    assert tor_socks.parse_reply(ipv4) == tor_socks.Bound("0.0.0.0", 0)
    ipv6 = bytes([5, 0, 0, 4]) + bytes(15) + b"\x01" + bytes([0, 80])
    assert tor_socks.parse_reply(ipv6) == tor_socks.Bound("::1", 80)
    domain = bytes([5, 0, 0, 3, 2]) + b"ab" + bytes([1, 0])
    assert tor_socks.reply_size(domain[:5]) == 9
    assert tor_socks.parse_reply(domain) == tor_socks.Bound("ab", 256)


@pytest.mark.parametrize(("code", "words", "final"), [
    (0xF0, "descriptor cannot be found", False),  # not published yet: ask again
    (0xF2, "introduction to the onion service failed", False),
    (0xF7, "introduction to the onion service timed out", False),
    (0x04, "host unreachable", False),
    (0xF6, "onion address is invalid", True),
    (0xF4, "client authorization", True),
    (0x07, "command not supported", True),
    (0x99, "unknown reply code 0x99", False),
])
def test_a_socks_refusal_names_tors_reason_and_whether_to_try_again(code, words, final):
    with pytest.raises(tor_socks.SocksError, match=words) as info:
        tor_socks.parse_reply(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
    assert info.value.code == code and info.value.final is final


@pytest.mark.parametrize(("reply", "complaint"), [
    (b"HT", "not a SOCKS5 server"),
    (bytes([5, 0xFF]), "takes neither no authentication nor a user name"),
    (bytes([5, 1]), "chose method 1, which was not offered"),
])
def test_a_method_reply_that_is_neither_offered_method_is_refused(reply, complaint):
    with pytest.raises(tor_socks.SocksError, match=complaint) as info:
        tor_socks.chosen_method(reply)
    assert info.value.final


@pytest.mark.parametrize(("head", "complaint"), [
    (b"HTTP/", "not a SOCKS5 reply"),
    (bytes([5, 0, 0, 9, 0]), "unknown address type 9"),
])
def test_a_reply_head_that_is_not_socks5_is_refused(head, complaint):
    with pytest.raises(tor_socks.SocksError, match=complaint):
        tor_socks.reply_size(head)


# -- the control protocol ------------------------------------------------------------------

def test_replies_come_whole_with_events_and_data_blocks_apart():
    parser = ReplyParser()
    stream = (b"650 HS_DESC UPLOADED abc UNKNOWN $AA~relay\r\n"
              b"250-version=0.4.9.11\r\n"
              b"250+config-text=\r\nSocksPort 9050\r\n..dot\r\n.\r\n"
              b"250 OK\r\n")
    got: list[Reply] = []
    for i in range(len(stream)):  # a byte at a time: lines may come cut anywhere
        got += parser.feed(stream[i:i + 1])
    assert got == [Reply(650, ("HS_DESC UPLOADED abc UNKNOWN $AA~relay",)),
                   Reply(250, ("version=0.4.9.11", "config-text=", "OK"),
                         ("SocksPort 9050\n.dot",))]
    assert tor_control.hs_desc_uploaded(got[0]) == "abc"
    assert tor_control.getinfo(got[1], "config-text") == "SocksPort 9050\n.dot"
    assert tor_control.getinfo(got[1], "version") == "0.4.9.11"


@pytest.mark.parametrize(("data", "complaint"), [
    (b"HTTP/1.0 400 Bad Request\r\n", "not a control-port reply line"),
    (b"250-a\r\n550 b\r\n", "codes 250 and 550"),
    (b"2\xff0 OK\r\n", "not ASCII"),
    (b"250-" + b"x" * 9000, "more than 8192 bytes"),
    (b"250-x\r\n" * 10000, "longer than any tor gives"),
])
def test_what_is_not_tor_on_a_control_port_is_named(data, complaint):
    with pytest.raises(ControlError, match=complaint):
        ReplyParser().feed(data)


@settings(deadline=None)
@given(st.binary(max_size=300))
def test_the_reply_parser_takes_any_bytes_without_crashing(data):
    with contextlib.suppress(ControlError):
        ReplyParser().feed(data)


def test_protocolinfo_names_the_ways_to_authenticate():
    reply = Reply(250, ("PROTOCOLINFO 1",
                        'AUTH METHODS=COOKIE,SAFECOOKIE COOKIEFILE="/run/tor/control.authcookie"',
                        'VERSION Tor="0.4.9.11"', "OK"))
    info = tor_control.protocol_info(reply)
    assert info.methods == {"COOKIE", "SAFECOOKIE"}
    assert info.cookie_file == "/run/tor/control.authcookie" and info.version == "0.4.9.11"
    quoted = Reply(250, ("PROTOCOLINFO 1", r'AUTH METHODS=NULL COOKIEFILE="/a \"b\"\\c"', "OK"))
    assert tor_control.protocol_info(quoted).cookie_file == '/a "b"\\c'
    with pytest.raises(ControlError, match="not tor"):
        tor_control.protocol_info(Reply(250, ("OK",)))
    with pytest.raises(ControlError, match="refused PROTOCOLINFO: 514 Authentication"):
        tor_control.protocol_info(Reply(514, ("Authentication required.",)))


def test_safecookie_hashes_are_the_control_specs():
    """control-spec 3.24: HMAC-SHA256 keyed with the fixed strings, over cookie, client
    nonce and server nonce."""
    cookie, ours, theirs = bytes(32), bytes([1]) * 32, bytes([2]) * 32
    server, client = tor_control.safecookie(cookie, ours, theirs)
    assert server == hmac.new(b"Tor safe cookie authentication server-to-controller hash",
                              cookie + ours + theirs, "sha256").digest()
    assert client == hmac.new(b"Tor safe cookie authentication controller-to-server hash",
                              cookie + ours + theirs, "sha256").digest()
    reply = Reply(250, (f"AUTHCHALLENGE SERVERHASH={server.hex().upper()} "
                        f"SERVERNONCE={theirs.hex().upper()}",))
    assert tor_control.auth_challenge(reply) == (server, theirs)
    with pytest.raises(ControlError, match="lacks its hash"):
        tor_control.auth_challenge(Reply(250, ("AUTHCHALLENGE SERVERHASH=00",)))


def test_add_onion_carries_the_expanded_key_and_the_port():
    key = bytes(range(64))
    line = tor_control.add_onion(key, 4000, "127.0.0.1:4001")
    assert line == ("ADD_ONION ED25519-V3:" + base64.b64encode(key).decode()
                    + " Flags=DiscardPK Port=4000,127.0.0.1:4001")
    assert tor_control.service_id(Reply(250, ("ServiceID=abc", "OK"))) == "abc"
    with pytest.raises(ControlError, match=r"refused to publish the onion service .*512"):
        tor_control.service_id(Reply(512, ("Bad arguments to ADD_ONION",)))
    with pytest.raises(ControlError, match="no ServiceID"):
        tor_control.service_id(Reply(250, ("OK",)))


def test_bootstrap_and_listeners_are_read():
    done = tor_control.bootstrap('NOTICE BOOTSTRAP PROGRESS=100 TAG=done SUMMARY="Done"')
    assert done.done and str(done) == "100%: Done"
    stuck = tor_control.bootstrap(
        'WARN BOOTSTRAP PROGRESS=10 TAG=conn_done SUMMARY="Connected to a relay" '
        'WARNING="Connection refused" REASON=CONNECTREFUSED COUNT=3')
    assert not stuck.done and str(stuck) == "10%: Connected to a relay; Connection refused"
    with pytest.raises(ControlError, match="no progress"):
        tor_control.bootstrap("NOTICE BOOTSTRAP TAG=done")
    with pytest.raises(ControlError, match="not a percentage"):
        tor_control.bootstrap("NOTICE BOOTSTRAP PROGRESS=300")
    assert tor_control.listeners('"127.0.0.1:9050" "[::1]:9051" "unix:/run/tor/socks"') == \
        [("127.0.0.1", 9050), ("::1", 9051)]
    assert tor_control.listeners("") == []

