"""protocol/vectors.json: recomputed here from SPEC.md's byte layouts with hashlib alone,
and from the package; the file, the spec and the code must all agree."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.vectors import make_vectors

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors.json").read_text())


def H(tag: str, *fields: bytes) -> bytes:  # SPEC.md 2.1
    return hashlib.sha256(tag.encode() + b"\x00" + b"".join(fields)).digest()


def x(s: str) -> bytes:
    return bytes.fromhex(s)


def label(s: str) -> bytes:
    return hashlib.sha256(s.encode()).digest()


def test_the_file_is_what_the_package_makes() -> None:
    assert json.loads(json.dumps(make_vectors())) == VECTORS


def test_game_id_layout() -> None:
    v, k = VECTORS["game_id"], VECTORS["keys"]
    assert v["host_nonce"] == label("host nonce").hex()
    # flag rule safe_or_survive=0, two_squares=1, chasing=0, open=0, clock u32, move u32
    assert v["options_bytes"] == "00010000" + "00000000" + "00000000"  # no clock, no move limit
    expected = H("p2pgotg/game/v1", x(v["host_nonce"]), x(v["joiner_nonce"]),
                 x(k["host_public"]), x(k["joiner_public"]), (1).to_bytes(2, "big"),
                 x(v["options_bytes"]))
    assert v["game_id"] == expected.hex()


def test_commitment_layouts() -> None:
    v = VECTORS["piece_commitment"]
    assert v["commitment"] == H("p2pgotg/commit/v1", x(v["game_id"]), x(v["owner_key"]),
                                bytes([v["piece_id"], v["rank"]]), x(v["salt"])).hex()
    gid, key = x(v["game_id"]), x(v["owner_key"])
    s = VECTORS["seed_commitment"]
    assert s["commitment"] == H("p2pgotg/seed/v1", gid, key, x(s["seed"])).hex()
    u = VECTORS["setup_hash"]
    assert u["hash"] == H("p2pgotg/setup/v1", gid, key, x(u["squares"]),
                          *map(x, u["commitments"]), x(u["seed_commitment"])).hex()


def test_coin_toss_layout() -> None:
    v, gid = VECTORS["coin_toss"], x(VECTORS["game_id"]["game_id"])
    joiner = x(VECTORS["keys"]["joiner_public"])
    assert v["joiner_commitment"] == H("p2pgotg/coin-commit/v1", gid, joiner,
                                       x(v["joiner_secret"])).hex()
    flip = H("p2pgotg/coin-flip/v1", gid, x(v["host_secret"]), x(v["joiner_secret"]))
    assert v["host_is_white"] == (flip[0] & 1 == 0)


def test_signed_envelope() -> None:
    v = VECTORS["envelope"]
    env = msgpack.unpackb(x(v["envelope"]), raw=False)
    assert env == {"body": x(v["body"]), "sig": x(v["signature"])}
    Ed25519PublicKey.from_public_bytes(x(VECTORS["keys"]["host_public"])).verify(
        x(v["signature"]), b"p2pgotg/sign/v1\x00" + x(v["body"]))
    body = msgpack.unpackb(x(v["body"]), raw=False)
    assert body["t"] == "move" and body["game"] == x(VECTORS["game_id"]["game_id"])
    assert v["body_hash"] == H("p2pgotg/body/v1", x(v["body"])).hex()


def test_signature_cases_are_judged_as_spec_2_1_says() -> None:
    """Each signature vector is accepted or refused by our verifier exactly as marked, and
    by libsodium's (PyNaCl), an independent strict verifier: the R = identity signature,
    which OpenSSL's equation alone accepts, is refused by both."""
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    from p2pgotg.crypto import valid_public_key
    from p2pgotg.crypto.identity import verify

    v = VECTORS["signatures"]
    message = b"p2pgotg/sign/v1\x00" + x(v["body"])
    assert len(v["cases"]) >= 4 and {c["valid"] for c in v["cases"]} == {True, False}
    for case in v["cases"]:
        key, sig = x(case["key"]), x(case["sig"])
        assert (valid_public_key(key) and verify(key, x(v["body"]), sig)) is case["valid"], \
            case["case"]
        try:
            VerifyKey(key).verify(message, sig)
            sodium = True
        except (BadSignatureError, ValueError):
            sodium = False
        assert sodium is case["valid"], case["case"]


def test_chat_text_cases_follow_the_rule_text() -> None:
    """SPEC 2.10's rule, applied here by hand, and the message schema agree on each case."""
    from p2pgotg.protocol.messages import Body
    from p2pgotg.protocol.wire import WireError

    cases = VECTORS["chat_text"]["cases"]
    assert {c["valid"] for c in cases} == {True, False}
    for case in cases:
        text = x(case["text"]).decode("utf-8")
        by_rule = len(text) <= 280 and all(ord(c) >= 0x20 for c in text)
        assert by_rule is case["valid"], case["case"]
        try:
            Body("chat", 1, bytes(32), bytes(32), bytes(32), {"text": text})
            schema = True
        except WireError:
            schema = False
        assert schema is case["valid"], case["case"]
