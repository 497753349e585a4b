"""The pure codecs of reaching a host: STUN (RFC 8489, RFC 5769's vectors), NAT-PMP
(RFC 6886), PCP (RFC 6887), candidates, invite v2, short codes, the PAKE and reply codes.
Expected bytes are built here from the RFCs' and SPEC 3.3/3.7/3.8's layouts, field by
field, not taken from the encoders; protocol/vectors-reach.json holds the same cases for
other implementations and is checked against the code too."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.net.reaching.invite import NAT_EASY, NAT_SYMMETRIC, Invite
from p2pgotg.net.transport.errors import BadInviteError
from p2pgotg.reach import natpmp, pcp, stun
from p2pgotg.reach.candidates import (
    LAN,
    MAPPED,
    PUNCH,
    Candidate,
    CodeError,
    address_problem,
)
from p2pgotg.reach.pake import (
    CONFIRM_TAG,
    HOST_ROLE,
    JOINER_ROLE,
    PakeError,
    PakeSide,
    confirmation,
)
from p2pgotg.reach.reply_code import (
    ForeignReplyError,
    ReplyCode,
    ReplyCodeError,
    StaleReplyError,
)
from p2pgotg.reach.shortcode import EVEN_WORDS, ODD_WORDS, ShortCode, ShortCodeError

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors-reach.json")
                     .read_text())

# -- STUN ------------------------------------------------------------------------------

RFC5769_TXID = bytes.fromhex("b7e7a701bc34d686fa87dfae")
RFC5769_IPV4 = bytes.fromhex(
    "0101003c2112a442b7e7a701bc34d686fa87dfae"
    "8022000b7465737420766563746f7220"
    "002000080001a147e112a643"
    "000800142b91f599fd9e90c38c7489f92af9ba53f06be7d7"
    "80280004c07d4c96")
RFC5769_IPV6 = bytes.fromhex(
    "010100482112a442b7e7a701bc34d686fa87dfae"
    "8022000b7465737420766563746f7220"
    "002000140002a1470113a9faa5d3f179bc25f4b5bed2b9d9"
    "00080014a382954e4be67bf11784c97c8292c275bfe3ed41"
    "80280004c8fb0b4c")


def test_rfc5769_sample_responses_give_their_mapped_addresses():
    # RFC 5769 2.2 and 2.3: 192.0.2.1 port 32853, 2001:db8:1234:5678:11:2233:4455:6677
    assert stun.parse_binding_response(RFC5769_IPV4, RFC5769_TXID) == ("192.0.2.1", 32853)
    assert stun.parse_binding_response(RFC5769_IPV6, RFC5769_TXID) == (
        "2001:db8:1234:5678:11:2233:4455:6677", 32853)


def test_a_binding_request_is_header_plus_fingerprint():
    txid = bytes(range(12))
    request = stun.binding_request(txid)
    header = struct.pack(">HHI", 0x0001, 8, 0x2112A442) + txid
    crc = zlib.crc32(header) ^ 0x5354554E  # RFC 8489 14.7: over the message before it
    assert request == header + struct.pack(">HHI", 0x8028, 4, crc)
    assert stun.message_size(request[:20]) == len(request)


def _damaged(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + bytes([value]) + data[at + 1:]


@pytest.mark.parametrize(("answer", "complaint"), [
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "magic cookie|first two bits"),
    (RFC5769_IPV4[:19], "shorter than a STUN header"),
    (_damaged(RFC5769_IPV4, 5, 0), "magic cookie"),
    (_damaged(RFC5769_IPV4, 9, 0), "another request"),
    (_damaged(RFC5769_IPV4, 44, 0xE2), "FINGERPRINT does not match"),
    (RFC5769_IPV4[:-4], "header says"),
    (struct.pack(">HHI", 0x0112, 0, 0x2112A442) + RFC5769_TXID, "not a Binding response"),
    (struct.pack(">HHI", 0x0101, 0, 0x2112A442) + RFC5769_TXID, "no mapped address"),
    (_damaged(RFC5769_IPV4, 3, 0x3e), "multiple of 4"),
])
def test_a_garbage_answer_says_what_is_wrong(answer, complaint):
    with pytest.raises(stun.StunError, match=complaint):
        stun.parse_binding_response(answer, RFC5769_TXID)


def test_an_error_response_names_the_code_and_escapes_the_reason():
    txid = bytes(12)
    reason = b"Bad\x1b[31mRequest"  # a terminal escape must not reach the screen
    value = b"\x00\x00\x04\x00" + reason
    body = struct.pack(">HH", 0x0009, len(value)) + value + b"\x00" * (-len(value) % 4)
    message = struct.pack(">HHI", 0x0111, len(body), 0x2112A442) + txid + body
    with pytest.raises(stun.StunError, match=r"error 400 Bad\?\[31mRequest") as info:
        stun.parse_binding_response(message, txid)
    assert "\x1b" not in str(info.value)


@given(st.binary(max_size=120))
def test_no_input_makes_the_reader_crash(data):
    with contextlib.suppress(stun.StunError):
        stun.parse_binding_response(data, RFC5769_TXID)


# -- NAT-PMP and PCP ---------------------------------------------------------------------

def test_natpmp_messages_follow_rfc6886():
    assert natpmp.external_address_request() == b"\x00\x00"  # 3.2
    assert natpmp.map_tcp_request(4000, 4001, 7200) == (  # 3.3
        b"\x00\x02\x00\x00" + (4000).to_bytes(2, "big") + (4001).to_bytes(2, "big")
        + (7200).to_bytes(4, "big"))
    answer = b"\x00\x80\x00\x00" + (99).to_bytes(4, "big") + bytes([203, 0, 113, 5])
    assert natpmp.parse_external_address(answer).address == "203.0.113.5"
    mapped = b"\x00\x82\x00\x00" + (99).to_bytes(4, "big") + struct.pack(">HHI", 4000, 4444,
                                                                         3600)
    got = natpmp.parse_map_tcp(mapped)
    assert (got.internal_port, got.external_port, got.lifetime) == (4000, 4444, 3600)
    refused = b"\x00\x82\x00\x03" + bytes(12)
    with pytest.raises(natpmp.NatPmpError, match="no public address"):
        natpmp.parse_map_tcp(refused)


def test_pcp_map_request_follows_rfc6887():
    nonce = bytes(range(12))
    request = pcp.map_request("192.168.1.20", 4000, 4000, 3600, nonce)
    mapped_v4 = bytes(10) + b"\xff\xff"
    assert request == (
        b"\x02\x01\x00\x00" + (3600).to_bytes(4, "big") + mapped_v4 + bytes([192, 168, 1, 20])
        + nonce + b"\x06\x00\x00\x00" + struct.pack(">HH", 4000, 4000) + mapped_v4
        + bytes(4))
    assert len(request) == 60
    answer = (b"\x02\x81\x00\x00" + struct.pack(">II", 3600, 7) + bytes(12) + nonce
              + b"\x06\x00\x00\x00" + struct.pack(">HH", 4000, 40000) + mapped_v4
              + bytes([198, 51, 100, 9]))
    got = pcp.parse_map_response(answer, nonce)
    assert (got.external_address, got.external_port, got.lifetime) == ("198.51.100.9", 40000,
                                                                       3600)
    with pytest.raises(pcp.PcpError, match="another request"):
        pcp.parse_map_response(answer, bytes(12))
    refused = b"\x02\x81\x00\x07" + bytes(56)
    with pytest.raises(pcp.PcpError, match="network failure"):
        pcp.parse_map_response(refused, nonce)
    natpmp_only = b"\x00\x81\x00\x01" + bytes(4)  # RFC 6887 9: a NAT-PMP server's answer
    with pytest.raises(pcp.PcpError) as info:
        pcp.parse_map_response(natpmp_only, nonce)
    assert info.value.unsupported


# -- candidates and invite v2 (SPEC 3.3) --------------------------------------------------

PIN = bytes(range(32))
SECRET = bytes(range(100, 116))


def _spec_v2_bytes(nat: int, candidates: list[tuple[int, int, bytes, int]]) -> bytes:
    body = bytes([nat, len(candidates)])
    for kind, family, address, port in candidates:
        body += bytes([kind, family]) + address + port.to_bytes(2, "big")
    body += PIN + SECRET
    return body + struct.pack("<I", zlib.crc32(body, zlib.crc32(b"p2pgotg/invite/v2")))


def test_invite_v2_layout_is_the_spec_one():
    invite = Invite.v2([Candidate(LAN, "10.14.1.2", 4000), Candidate(MAPPED, "11.0.14.11", 4000),
                        Candidate(PUNCH, "11.0.14.11", 40001)], PIN, SECRET, NAT_EASY)
    raw = _spec_v2_bytes(2, [(1, 4, bytes([10, 14, 1, 2]), 4000),
                            (2, 4, bytes([11, 0, 14, 11]), 4000),
                            (3, 4, bytes([11, 0, 14, 11]), 40001)])
    text = "gg2-" + base64.b32encode(raw).decode().rstrip("=").lower()
    assert invite.encode() == text
    assert Invite.decode(text.upper()) == invite
    assert len(text) < 130  # one line


def test_both_invite_versions_are_read():
    v1 = Invite("192.0.2.7", 4000, PIN, SECRET)
    assert Invite.decode(v1.encode()).all_candidates() == [Candidate(LAN, "192.0.2.7", 4000)]
    v2 = Invite.v2([Candidate(LAN, "2001:db8::5", 4000)], PIN, SECRET)
    assert Invite.decode(v2.encode()) == v2


@pytest.mark.parametrize(("raw", "complaint"), [
    (_spec_v2_bytes(9, [(1, 4, bytes(4), 1)]), "unknown NAT kind"),
    (_spec_v2_bytes(0, [(7, 4, bytes(4), 1)]), "unknown candidate kind"),
    (_spec_v2_bytes(0, [(1, 5, bytes(4), 1)]), "unknown address family"),
    (_spec_v2_bytes(0, [(1, 4, bytes(4), 0)]), "port 0"),
])
def test_a_damaged_v2_invite_says_what_is_wrong(raw, complaint):
    with pytest.raises(BadInviteError, match=complaint):
        Invite.decode("gg2-" + base64.b32encode(raw).decode().rstrip("=").lower())


def test_a_mistyped_v2_invite_fails_its_check():
    text = Invite.v2([Candidate(LAN, "10.0.0.2", 4000)], PIN, SECRET).encode()
    typo = text[:20] + ("b" if text[20] != "b" else "c") + text[21:]
    with pytest.raises(BadInviteError, match="check does not match"):
        Invite.decode(typo)


def test_a_candidate_list_is_bounded():
    with pytest.raises(CodeError):
        Invite.v2([Candidate(LAN, f"10.0.0.{i}", 1) for i in range(1, 10)], PIN, SECRET,
                  NAT_SYMMETRIC).encode()


# -- short codes (SPEC 3.7) -------------------------------------------------------------

def test_the_pgp_word_list_is_whole():
    # PGP word list: byte 0x3B is "clockwork" (even), 0x3C "crossover" (odd); 256 each
    assert len(set(EVEN_WORDS)) == len(set(ODD_WORDS)) == 256
    assert EVEN_WORDS[0x3B] == "clockwork" and ODD_WORDS[0x3C] == "crossover"
    assert EVEN_WORDS[0] == "aardvark" and ODD_WORDS[255] == "yucatan"


@pytest.mark.parametrize(("text", "complaint"), [
    ("7-crossover-clockwerk", "did you mean 'clockwork'"),
    ("7-clockwork-crossover", "swapped: try 7-crossover-clockwork"),
    ("7-aardvark-clockwork", "never the first word"),
    ("0-crossover-clockwork", "number"),
    ("7-crossover", "a number and two words"),
])
def test_a_mistyped_short_code_says_what_to_fix(text, complaint):
    with pytest.raises(ShortCodeError, match=complaint):
        ShortCode.parse(text)


def test_a_short_code_reads_as_people_type_it():
    assert str(ShortCode.parse("  7 Crossover CLOCKWORK ")) == "7-crossover-clockwork"


# -- the PAKE --------------------------------------------------------------------------

def _pair(code_a: bytes, code_b: bytes, fp_a: bytes, fp_b: bytes) -> tuple[PakeSide, PakeSide]:
    host, joiner = PakeSide(code_a, fp_a, HOST_ROLE), PakeSide(code_b, fp_b, JOINER_ROLE)
    host.finish(joiner.message)
    joiner.finish(host.message)
    return host, joiner


def test_the_same_code_and_certificate_confirm_both_ways():
    host, joiner = _pair(b"7-crossover-clockwork", b"7-crossover-clockwork", PIN, PIN)
    host.check(joiner.confirm())
    joiner.check(host.confirm())
    assert joiner.confirm() == hmac.new(joiner.key, CONFIRM_TAG + b"j" + PIN,
                                        hashlib.sha256).digest()


def test_a_wrong_code_fails_the_confirmation():
    host, joiner = _pair(b"7-crossover-clockwork", b"7-crossover-cobra", PIN, PIN)
    with pytest.raises(PakeError):
        host.check(joiner.confirm())


def test_a_relay_that_ends_tls_on_both_sides_is_caught():
    """The joiner saw the relay's certificate, the host its own: the codes match but the
    confirmations do not (the PAKE is bound to the TLS channel)."""
    host, joiner = _pair(b"7-crossover-clockwork", b"7-crossover-clockwork", PIN, bytes(32))
    with pytest.raises(PakeError):
        host.check(joiner.confirm())


@pytest.mark.parametrize("bad", [None, b"", b"S" + bytes(31), b"S" + bytes(33), "text"])
def test_malformed_pake_messages_are_refused(bad):
    with pytest.raises(PakeError):
        PakeSide(b"7-crossover-clockwork", PIN, HOST_ROLE).finish(bad)


def test_our_own_message_echoed_back_is_refused():
    side = PakeSide(b"7-crossover-clockwork", PIN, HOST_ROLE)
    with pytest.raises(PakeError):
        side.finish(side.message)


def test_pake_vectors_reproduce():
    for case in VECTORS["pake"]:
        streams = {}
        for role in ("host", "joiner"):
            seed = bytes.fromhex(case[f"{role}_entropy"])
            streams[role] = PakeSide(case["code"].encode(), bytes.fromhex(case["fingerprint"]),
                                     HOST_ROLE if role == "host" else JOINER_ROLE,
                                     entropy=_fixed(seed))
            assert streams[role].message.hex() == case[f"{role}_message"]
        streams["host"].finish(streams["joiner"].message)
        streams["joiner"].finish(streams["host"].message)
        assert streams["host"].key.hex() == case["key"]
        assert confirmation(streams["host"].key, HOST_ROLE,
                            bytes.fromhex(case["fingerprint"])).hex() == case["host_confirm"]


def _fixed(seed: bytes):
    """The vectors' entropy: the first n bytes of SHAKE-256(seed)."""
    return lambda n: hashlib.shake_256(seed).digest(n)


# -- reply codes (SPEC 3.8) -------------------------------------------------------------

def test_reply_code_layout_and_checks():
    candidates = [Candidate(PUNCH, "11.0.14.11", 40001)]
    nonce = bytes(range(8))
    reply = ReplyCode.make(candidates, 1_800_000_000, nonce, SECRET)
    body = b"\x01\x03\x04" + bytes([11, 0, 14, 11]) + (40001).to_bytes(2, "big") \
        + (1_800_000_000).to_bytes(4, "big") + nonce
    mac = hmac.new(SECRET, b"p2pgotg/reply/v1" + body, hashlib.sha256).digest()[:8]
    raw = body + mac
    raw += struct.pack("<I", zlib.crc32(raw, zlib.crc32(b"p2pgotg/reply/v1")))
    assert reply.encode() == "gr1-" + base64.b32encode(raw).decode().rstrip("=").lower()
    back = ReplyCode.decode(reply.encode())
    back.verify(SECRET, 1_800_000_100)
    with pytest.raises(ForeignReplyError, match="another game"):
        back.verify(bytes(16), 1_800_000_100)
    with pytest.raises(StaleReplyError, match="stale"):
        back.verify(SECRET, 1_800_000_000 + 3600)
    typo = reply.encode()[:-3] + ("a" if reply.encode()[-3] != "a" else "b") + \
        reply.encode()[-2:]
    with pytest.raises(ReplyCodeError, match="check does not match"):
        ReplyCode.decode(typo)
    with pytest.raises(ReplyCodeError, match="starts with 'gr1-'"):
        ReplyCode.decode("gg2-" + reply.encode()[4:])


# -- the vector file ---------------------------------------------------------------------

def test_invite_and_reply_vectors_decode_as_stated():
    for case in VECTORS["invite_v2"]:
        invite = Invite.decode(case["code"])
        assert [[c.kind, c.address, c.port] for c in invite.candidates] == case["candidates"]
        assert invite.nat == case["nat"]
        assert invite.pin.hex() == case["pin"] and invite.secret.hex() == case["secret"]
    for case in VECTORS["reply"]:
        reply = ReplyCode.decode(case["code"])
        assert [[c.kind, c.address, c.port] for c in reply.candidates] == case["candidates"]
        reply.verify(bytes.fromhex(case["secret"]), case["issued"])
        assert reply.nonce.hex() == case["nonce"]
    for case in VECTORS["stun"]:
        assert list(stun.parse_binding_response(bytes.fromhex(case["response"]),
                                                bytes.fromhex(case["txid"]))) == case["mapped"]


# -- answers from the network are checked before use (SPEC 3.8) ---------------------------

def _stun_success(txid: bytes, family: int, port: int, address: bytes) -> bytes:
    """A Binding success with one XOR-MAPPED-ADDRESS, built from RFC 8489 14.2."""
    cookie = struct.pack(">I", 0x2112A442)
    mask = cookie + txid if family == 2 else cookie
    xored = bytes(a ^ b for a, b in zip(address, mask, strict=False))
    value = struct.pack(">BBH", 0, family, port ^ 0x2112) + xored
    body = struct.pack(">HH", 0x0020, len(value)) + value + bytes(-len(value) % 4)
    return struct.pack(">HHI", 0x0101, len(body), 0x2112A442) + txid + body


@pytest.mark.parametrize(("address", "complaint"), [
    (bytes(4), "unspecified"),
    (bytes([224, 0, 0, 1]), "multicast"),
    (bytes([255] * 4), "broadcast"),
    (bytes([127, 0, 0, 1]), "loopback"),
    (bytes(16), "unspecified"),
])
def test_a_stun_mapped_address_that_is_no_address_is_refused(address, complaint):
    answer = _stun_success(RFC5769_TXID, 1 if len(address) == 4 else 2, 40000, address)
    with pytest.raises(stun.StunError, match=complaint):
        stun.parse_binding_response(answer, RFC5769_TXID)


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(family=st.sampled_from([1, 2]), port=st.integers(0, 0xFFFF),
       address=st.binary(min_size=4, max_size=16))
def test_a_stun_answer_gives_a_usable_address_or_says_why_not(family, port, address):
    try:
        got = stun.parse_binding_response(_stun_success(RFC5769_TXID, family, port, address),
                                          RFC5769_TXID)
    except stun.StunError:
        return
    assert 1 <= got[1] <= 0xFFFF and address_problem(got[0]) is None


NONCE = bytes(range(12))


def _pcp_answer(*, result: int = 0, lifetime: int = 3600, nonce: bytes = NONCE,
                protocol: int = 6, internal: int = 4000, external: int = 4000,
                address: bytes = bytes(10) + b"\xff\xff" + bytes([198, 51, 100, 9])) -> bytes:
    """A MAP response laid out as RFC 6887 7.2 and 11.1 say."""
    return (struct.pack(">BBBBII", 2, 0x81, 0, result, lifetime, 7) + bytes(12) + nonce
            + struct.pack(">B3xHH", protocol, internal, external) + address)


@pytest.mark.parametrize(("answer", "complaint"), [
    (_pcp_answer(external=0), "external port 0"),
    (_pcp_answer(lifetime=0), "0 seconds"),
    (_pcp_answer(internal=4001), "not the 4000 asked for"),
    (_pcp_answer(address=bytes(16)), "unspecified"),
    (_pcp_answer(address=bytes(10) + b"\xff\xff" + bytes(4)), "unspecified"),
    (_pcp_answer(address=bytes(10) + b"\xff\xff" + bytes([224, 1, 2, 3])), "multicast"),
    (_pcp_answer(address=bytes(15) + b"\x01"), "loopback"),
])
def test_a_pcp_mapping_no_one_could_use_is_refused(answer, complaint):
    with pytest.raises(pcp.PcpError, match=complaint):
        pcp.parse_map_response(answer, NONCE, 4000)


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(result=st.sampled_from([0, 0, 0, 7, 200]), lifetime=st.integers(0, 2**32 - 1),
       nonce=st.sampled_from([NONCE, bytes(12)]), protocol=st.sampled_from([6, 6, 17, 0]),
       internal=st.integers(0, 0xFFFF), external=st.integers(0, 0xFFFF),
       address=st.binary(min_size=16, max_size=16), cut=st.integers(0, 70))
def test_a_pcp_answer_is_a_usable_mapping_or_a_pcp_error(result, lifetime, nonce, protocol,
                                                         internal, external, address, cut):
    answer = _pcp_answer(result=result, lifetime=lifetime, nonce=nonce, protocol=protocol,
                         internal=internal, external=external, address=address)[:cut or None]
    try:
        got = pcp.parse_map_response(answer, NONCE, 4000)
    except pcp.PcpError:
        return
    assert got.internal_port == 4000 and 1 <= got.external_port <= 0xFFFF
    assert got.lifetime >= 1 and address_problem(got.external_address) is None


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(st.binary(max_size=120))
def test_no_bytes_make_the_pcp_or_natpmp_readers_crash(data):
    with contextlib.suppress(pcp.PcpError):
        pcp.parse_map_response(data, NONCE, 4000)
    with contextlib.suppress(natpmp.NatPmpError):
        natpmp.parse_external_address(data)
    with contextlib.suppress(natpmp.NatPmpError):
        natpmp.parse_map_tcp(data, 4000)


@pytest.mark.parametrize(("answer", "complaint"), [
    (b"\x00\x82\x00\x00" + bytes(4) + struct.pack(">HHI", 4000, 0, 3600), "external port 0"),
    (b"\x00\x82\x00\x00" + bytes(4) + struct.pack(">HHI", 4000, 4000, 0), "0 seconds"),
    (b"\x00\x82\x00\x00" + bytes(4) + struct.pack(">HHI", 4001, 4000, 60), "not the 4000"),
])
def test_a_natpmp_mapping_no_one_could_use_is_refused(answer, complaint):
    with pytest.raises(natpmp.NatPmpError, match=complaint):
        natpmp.parse_map_tcp(answer, 4000)


@pytest.mark.parametrize("address", [bytes(4), bytes([224, 0, 0, 1]), bytes([255] * 4),
                                     bytes([127, 0, 0, 1]), bytes([240, 0, 0, 1])])
def test_a_natpmp_external_address_that_is_no_address_is_refused(address):
    with pytest.raises(natpmp.NatPmpError, match="external address"):
        natpmp.parse_external_address(b"\x00\x80\x00\x00" + bytes(4) + address)


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(internal=st.integers(0, 0xFFFF), external=st.integers(0, 0xFFFF),
       lifetime=st.integers(0, 2**32 - 1), address=st.binary(min_size=4, max_size=4))
def test_a_natpmp_answer_is_a_usable_mapping_or_a_natpmp_error(internal, external, lifetime,
                                                               address):
    try:
        got_address = natpmp.parse_external_address(b"\x00\x80\x00\x00" + bytes(4) + address)
        assert address_problem(got_address.address) is None
    except natpmp.NatPmpError:
        pass
    mapped = b"\x00\x82\x00\x00" + bytes(4) + struct.pack(">HHI", internal, external, lifetime)
    try:
        got = natpmp.parse_map_tcp(mapped, 4000)
    except natpmp.NatPmpError:
        return
    assert got.internal_port == 4000 and got.external_port >= 1 and got.lifetime >= 1


# -- SPAKE2 from SPEC 3.7's words alone ---------------------------------------------------

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P


def _hkdf48(ikm: bytes, info: bytes) -> int:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return int.from_bytes(HKDF(algorithm=hashes.SHA256(), length=48, salt=b"",
                               info=info).derive(ikm), "big")


def _encode(x: int, y: int) -> bytes:
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _element_s() -> bytes:
    """SPEC 3.7: S from the seed "symmetric": HKDF to 48 bytes, mod p, the first y that has
    an even x on the curve, times 8 (not the identity)."""
    from nacl.bindings import crypto_core_ed25519_add

    y = _hkdf48(b"symmetric", b"SPAKE2 arbitrary element") % _P
    while True:
        xx = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
        x = pow(xx, (_P + 3) // 8, _P)
        if (x * x - xx) % _P:
            x = x * pow(2, (_P - 1) // 4, _P) % _P
        if (x * x - xx) % _P == 0:
            x = _P - x if x % 2 else x
            point = _encode(x, y)
            for _ in range(3):  # [8]P by three doublings
                point = crypto_core_ed25519_add(point, point)
            if point != _encode(0, 1):
                return point
        y = (y + 1) % _P


def test_spake2_from_the_spec_text_gives_the_vectors() -> None:
    """Each step of SPEC 3.7's SPAKE2 recomputed with libsodium's group operations, HKDF
    and SHA-256 (not the spake2 package): the vectors' messages and keys."""
    from nacl.bindings import (
        crypto_core_ed25519_add,
        crypto_core_ed25519_sub,
        crypto_scalarmult_ed25519_base_noclamp,
        crypto_scalarmult_ed25519_noclamp,
    )

    def mul(k: int, point: bytes) -> bytes:
        return crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), point)

    S = _element_s()
    assert S.hex() == "6f00dae87c1be1a73b5922ef431cd8f57879569c222d22b1cd71e8546ab8e6f1"
    for case in VECTORS["pake"]:
        pw = case["code"].encode()
        w = _hkdf48(pw, b"SPAKE2 pw") % _L
        scalars, messages = {}, {}
        for role in ("host", "joiner"):
            entropy = hashlib.shake_256(bytes.fromhex(case[f"{role}_entropy"])).digest(64)
            scalars[role] = int.from_bytes(entropy, "big") % _L
            X = crypto_core_ed25519_add(
                crypto_scalarmult_ed25519_base_noclamp(scalars[role].to_bytes(32, "little")),
                mul(w, S))
            messages[role] = b"S" + X
            assert messages[role].hex() == case[f"{role}_message"]
        K = mul(scalars["host"], crypto_core_ed25519_sub(messages["joiner"][1:], mul(w, S)))
        first, second = sorted([messages["host"][1:], messages["joiner"][1:]])
        key = hashlib.sha256(hashlib.sha256(pw).digest()
                             + hashlib.sha256(b"p2pgotg/short-code/v1").digest()
                             + first + second + K).digest()
        assert key.hex() == case["key"]


def test_invite_v1_vectors_decode_as_stated() -> None:
    for case in VECTORS["invite_v1"]:
        invite = Invite.decode(case["code"])
        assert (invite.address, invite.port) == (case["address"], case["port"])
        assert invite.pin.hex() == case["pin"] and invite.secret.hex() == case["secret"]
        assert Invite.decode(invite.encode()) == invite


def test_the_first_v2_vector_lists_mapped_then_lan_then_punch() -> None:
    """SPEC 3.3.1's stated order, and its stated size for that invite."""
    first = VECTORS["invite_v2"][0]
    assert [kind for kind, _, _ in first["candidates"]] == [MAPPED, LAN, PUNCH]
    assert len(first["code"]) - len("gg2-") == 125
    assert len(base64.b32decode(first["code"][4:].upper() + "=" * (-len(first["code"][4:]) % 8))
               ) == 78


def test_a_v2_code_shorter_than_60_bytes_is_cut_off_before_its_check() -> None:
    raw = bytes(59)
    text = "gg2-" + base64.b32encode(raw).decode().rstrip("=").lower()
    with pytest.raises(BadInviteError, match="too short"):
        Invite.decode(text)


def test_the_word_list_in_protocol_is_the_package_one() -> None:
    root = Path(__file__).parent.parent
    ours = (root / "p2pgotg" / "reach" / "pgp_words.txt").read_bytes()
    assert ours == (root / "protocol" / "pgp-words.txt").read_bytes()
    assert hashlib.sha256(ours).hexdigest() == \
        "fe881b3aeaeab4433b28ead098fdb93dadc1ea1d3a2e4368670746dd48b1a370"
    words = [line for line in ours.decode().splitlines() if line and not line.startswith("#")]
    assert len(words) == 256 and all(len(line.split()) == 2 for line in words)
