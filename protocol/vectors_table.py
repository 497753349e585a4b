"""Test vectors of a table (SPEC 5.3, 5.5, and 3.4's seat proof), computed from SPEC's
formulas with hashlib and struct (and the `cryptography` package's Ed25519, which signs
deterministically) alone, never with p2pgotg's code, so the tests that check p2pgotg
against them check it against SPEC:

    python -m protocol.vectors_table > protocol/vectors-table.json
"""

from __future__ import annotations

import hashlib
import json
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


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


def seat_proof(seed: bytes, nonce: bytes, game: bytes, seat: int) -> dict[str, object]:
    """SPEC 3.4: the seat proof, and its signature as 2.2 signs a body."""
    proof = h(b"p2pgotg/table/seat-proof/v1", nonce, game, bytes([seat]))
    key = Ed25519PrivateKey.from_private_bytes(seed)
    return {"seed": seed.hex(), "key": key.public_key().public_bytes_raw().hex(),
            "nonce": nonce.hex(), "game_id": game.hex(), "seat": seat, "proof": proof.hex(),
            "sig": key.sign(b"p2pgotg/sign/v1\x00" + proof).hex()}


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
        "seat_proofs": [seat_proof(bytes([0x40 + seat]) * 32, bytes([0x50 + seat]) * 32, game,
                                   seat) for seat in (1, 3)],
    }


if __name__ == "__main__":
    print(json.dumps(vectors(), indent=1))
