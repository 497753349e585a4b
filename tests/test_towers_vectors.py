"""protocol/vectors-towers.json, recomputed from SPEC 4.9 to 4.11 with hashlib, struct and
msgpack alone, and from the package: the file, the spec and the code agree."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.errors import InvalidNotationError
from protocol.vectors import make_towers_vectors

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors-towers.json")
                     .read_text())


def H(tag: str, *fields: bytes) -> bytes:  # SPEC 2.1
    return hashlib.sha256(tag.encode() + b"\x00" + b"".join(fields)).digest()


def label(s: str) -> bytes:
    return hashlib.sha256(s.encode()).digest()


def test_the_file_is_what_the_package_makes() -> None:
    assert json.loads(json.dumps(make_towers_vectors())) == VECTORS


def test_options_bytes_and_game_id_follow_spec_4_10_and_4_11() -> None:
    v = VECTORS["game_id"]
    o = v["options"]
    # SPEC 4.10: seats, teams, capture (higher 0, not_lower 1), climb, descent, start gap,
    # short turn, stuck loses, partners block, two bonuses (u8 each), clock, turn (u32 BE)
    expected = struct.pack(">11BII", o["seats"], o["teams"], ["higher", "not_lower"].index(
        o["capture"]), o["climb_limit"], o["descent_limit"], o["start_gap"], o["short_turn"],
        o["stuck_loses"], o["partners_block"], o["bonus_highest_tower"],
        o["bonus_most_pawns"], o["clock_seconds"], o["turn_seconds"])
    assert len(expected) == 19 and v["options_bytes"] == expected.hex()
    assert v["host_nonce"] == label("host nonce").hex()
    assert v["tag"] == "p2pgotg/towers/game/v1"
    gid = H("p2pgotg/towers/game/v1", bytes.fromhex(v["host_nonce"]),
            bytes.fromhex(v["joiner_nonce"]), bytes.fromhex(v["host_public"]),
            bytes.fromhex(v["joiner_public"]), (1).to_bytes(2, "big"), expected)
    assert v["game_id"] == gid.hex()


def _spec_code(text: str) -> int:
    """SPEC 4.9's formula, written out: a layer s, a spawn 25 + s, a claim 50 + s, a move
    75 + 4s + d (d: 0 towards rank 5, 1 towards file e, 2 towards rank 1, 3 towards file a);
    square index rank * 5 + file (4.2)."""
    def square(name: str) -> int:
        return (int(name[1]) - 1) * 5 + "abcde".index(name[0])
    if text[0] in "+*@":
        return {"+": 0, "*": 25, "@": 50}[text[0]] + square(text[1:])
    src, dst = (square(part) for part in text.split("-"))
    direction = {5: 0, 1: 1, -5: 2, -1: 3}[dst - src]
    return 75 + 4 * src + direction


def test_action_codes_follow_spec_4_9() -> None:
    for case in VECTORS["action_codes"]:
        assert case["code"] == _spec_code(case["action"]), case
        assert Action.from_code(case["code"]).text() == case["action"]
    for code in VECTORS["refused_codes"]:
        with pytest.raises(InvalidNotationError):
            Action.from_code(code)


def test_action_messages_are_signed_bodies_of_spec_4_11() -> None:
    key = Ed25519PublicKey.from_public_bytes(
        bytes.fromhex(VECTORS["game_id"]["host_public"]))
    for case in VECTORS["actions"]:
        body = bytes.fromhex(case["body"])
        env = msgpack.unpackb(bytes.fromhex(case["envelope"]), raw=False)
        assert env == {"body": body, "sig": bytes.fromhex(case["signature"])}
        key.verify(bytes.fromhex(case["signature"]), b"p2pgotg/sign/v1\x00" + body)
        fields = msgpack.unpackb(body, raw=False)
        assert fields["t"] == "action"
        assert fields["game"] == bytes.fromhex(VECTORS["game_id"]["game_id"])
        assert {k: fields[k] for k in case["fields"]} == case["fields"]
        assert set(fields) == {"t", "seq", "prev", "ack", "game", *case["fields"]}
        assert case["body_hash"] == H("p2pgotg/body/v1", body).hex()
