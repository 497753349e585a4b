"""Test vectors of a table (SPEC 5.3, 5.5), computed from SPEC's formulas with hashlib and
struct alone, never with p2pgotg's code, so the tests that check p2pgotg against them
check it against SPEC:

    python -m protocol.vectors_table > protocol/vectors-table.json
"""

from __future__ import annotations

import hashlib
import json
import struct


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
    }


if __name__ == "__main__":
    print(json.dumps(vectors(), indent=1))
