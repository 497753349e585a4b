"""Test vectors of a table (SPEC 5.3, 5.5, 5.6, 5.8, and 3.4's seat proof), computed from
SPEC's formulas with hashlib, struct, msgpack written out byte by byte and PyNaCl alone
(and the `cryptography` package's Ed25519 for the seat proof), never with p2pgotg's code,
so the tests that check p2pgotg against them check it against SPEC:

    python -m protocol.vectors_table > protocol/vectors-table.json
"""

from __future__ import annotations

import hashlib
import json
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import (
    crypto_box_easy,
    crypto_sign_ed25519_pk_to_curve25519,
    crypto_sign_ed25519_sk_to_curve25519,
    crypto_sign_seed_keypair,
)
from nacl.signing import SigningKey


def h(tag: bytes, *fields: bytes) -> bytes:
    """SPEC 2.1: SHA-256 over tag ‖ 0x00 ‖ fields."""
    return hashlib.sha256(tag + b"\x00" + b"".join(fields)).digest()


def order(game: bytes, secrets: list[bytes]) -> list[int]:
    """SPEC 5.5, step by step."""
    d = h(b"p2pgotg/table/coin-flip/v1", game, *secrets)
    rest, out = list(range(len(secrets))), []
    for c in range(len(secrets)):
        k = struct.unpack(">Q", d[8 * c:8 * c + 8])[0] % (len(secrets) - c)
        out.append(rest.pop(k))
    return out


def _str(text: str) -> bytes:
    """msgpack fixstr (up to 31 bytes)."""
    data = text.encode()
    assert len(data) < 32
    return bytes([0xA0 | len(data)]) + data


def _bin(data: bytes) -> bytes:
    """msgpack bin 8 (up to 255 bytes)."""
    assert len(data) < 256
    return b"\xc4" + bytes([len(data)]) + data


def _uint(n: int) -> bytes:
    """msgpack's shortest unsigned integer up to 65,535."""
    if n < 0x80:
        return bytes([n])
    return b"\xcc" + bytes([n]) if n < 0x100 else b"\xcd" + struct.pack(">H", n)


def signed_action() -> dict[str, object]:
    """SPEC 5.2 and 5.6: seat 2 of four acts at ply 7; its body's keys in the table's order,
    the shortest forms; its body hash and signature (SPEC 2.2) from a fixed key."""
    seed = bytes([0x42]) * 32
    key = SigningKey(seed)
    prev = bytes([0x51]) * 32
    acks = [bytes([0x60]) * 32, bytes([0x61]) * 32, bytes(32), bytes([0x63]) * 32]
    game = bytes([0x70]) * 32
    body = (b"\x88" + _str("t") + _str("action") + _str("seq") + _uint(9)
            + _str("prev") + _bin(prev) + _str("from") + _uint(2)
            + _str("acks") + bytes([0x90 | len(acks)]) + b"".join(_bin(a) for a in acks)
            + _str("game") + _bin(game) + _str("ply") + _uint(7) + _str("code") + _uint(130))
    signature = key.sign(b"p2pgotg/sign/v1\x00" + body).signature
    envelope = b"\x82" + _str("body") + _bin(body) + _str("sig") + _bin(signature)
    return {"seed": seed.hex(), "key": bytes(key.verify_key).hex(),
            "fields": {"t": "action", "seq": 9, "prev": prev.hex(), "from": 2,
                       "acks": [a.hex() for a in acks], "game": game.hex(), "ply": 7,
                       "code": 130},
            "body": body.hex(), "body_hash": h(b"p2pgotg/body/v1", body).hex(),
            "signature": signature.hex(), "envelope": envelope.hex()}


def seat_proof(seed: bytes, nonce: bytes, game: bytes, seat: int) -> dict[str, object]:
    """SPEC 3.4: the seat proof, and its signature as 2.2 signs a body."""
    proof = h(b"p2pgotg/table/seat-proof/v1", nonce, game, bytes([seat]))
    key = Ed25519PrivateKey.from_private_bytes(seed)
    return {"seed": seed.hex(), "key": key.public_key().public_bytes_raw().hex(),
            "nonce": nonce.hex(), "game_id": game.hex(), "seat": seat, "proof": proof.hex(),
            "sig": key.sign(b"p2pgotg/sign/v1\x00" + proof).hex()}


def whisper_box() -> dict[str, object]:
    """SPEC 5.8: seat 1 whispers to seat 3; the box and the Curve25519 keys (libsodium's
    conversion of the two Ed25519 identity keys) and nonce that open it."""
    sender_seed, receiver_seed = bytes([0x81]) * 32, bytes([0x83]) * 32
    sender_pk, sender_sk = crypto_sign_seed_keypair(sender_seed)
    receiver_pk, receiver_sk = crypto_sign_seed_keypair(receiver_seed)
    nonce = bytes(range(24))
    text = "Blue is weak on the left: take c3"
    box = crypto_box_easy(text.encode(), nonce, crypto_sign_ed25519_pk_to_curve25519(
        receiver_pk), crypto_sign_ed25519_sk_to_curve25519(sender_sk))
    return {"sender_seed": sender_seed.hex(), "sender_key": sender_pk.hex(),
            "receiver_seed": receiver_seed.hex(), "receiver_key": receiver_pk.hex(),
            "sender_curve_public": crypto_sign_ed25519_pk_to_curve25519(sender_pk).hex(),
            "receiver_curve_secret": crypto_sign_ed25519_sk_to_curve25519(receiver_sk).hex(),
            "nonce": nonce.hex(), "text": text, "box": (nonce + box).hex()}


def vectors() -> dict[str, object]:
    # towers_options[19] of SPEC 4.10 for seats 4, everything else default
    options = bytes([4, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0]) + struct.pack(">II", 0, 0)
    hellos = [bytes([0xA0 + i]) * 32 for i in range(4)]
    game = h(b"p2pgotg/table/game/v1", struct.pack(">H", 1), options, *hellos)
    host_nonce = bytes([0x11]) * 32
    keys = [bytes([0x20 + i]) * 32 for i in range(4)]
    secrets = [bytes([0x30 + i]) * 32 for i in range(4)]
    return {
        "game_id": {"version": 1, "options": options.hex(),
                    "hellos": [x.hex() for x in hellos], "game_id": game.hex()},
        "coin_commitments": [
            {"host_nonce": host_nonce.hex(), "key": k.hex(), "secret": s.hex(),
             "commitment": h(b"p2pgotg/table/coin-commit/v1", host_nonce, k, s).hex()}
            for k, s in zip(keys, secrets, strict=True)],
        "orders": [
            {"game_id": game.hex(), "secrets": [s.hex() for s in secrets[:n]],
             "order": order(game, secrets[:n])}
            for n in (3, 4)],
        "signed_action": signed_action(),
        "whisper": whisper_box(),
        "seat_proofs": [seat_proof(bytes([0x40 + seat]) * 32, bytes([0x50 + seat]) * 32, game,
                                   seat) for seat in (1, 3)],
    }


if __name__ == "__main__":
    print(json.dumps(vectors(), indent=1))
