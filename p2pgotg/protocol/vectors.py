"""Test vectors for other implementations: fixed inputs, the hex bytes they must produce.

    python -m p2pgotg.protocol.vectors > protocol/vectors.json
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from p2pgotg.crypto import (
    TAG_GAME,
    coin_commitment,
    host_is_white,
    key_from_seed,
    piece_commitment,
    public_bytes,
    seed_commitment,
    setup_hash,
)
from p2pgotg.games.gotg.flow import options_bytes
from p2pgotg.protocol.envelope import ZERO_HASH, body_hash, seal
from p2pgotg.protocol.ids import game_id
from p2pgotg.protocol.messages import Body
from p2pgotg.rules import ChallengeMode, FlagRule, RuleOptions


def _bytes(label: str, n: int = 32) -> bytes:
    """Deterministic inputs: SHA-256 of a label, cut to n bytes."""
    return hashlib.sha256(label.encode()).digest()[:n]


def _signature_cases(seed: bytes, body: bytes, good: bytes) -> list[dict[str, Any]]:
    """Signatures a strict verifier must accept or refuse (SPEC 2.1), each over `body`
    (signed as `tag || 0x00 || body`) with the key of `seed`, or with the identity point as
    the key. The third is the key holder's second signature (R = the identity point):
    OpenSSL's equation alone accepts it, libsodium refuses it, SPEC 2.1 refuses it."""
    from p2pgotg.crypto.hashing import TAG_SIGN
    from p2pgotg.crypto.identity import L

    digest = hashlib.sha512(seed).digest()
    a = bytearray(digest[:32])
    a[0] &= 248
    a[31] &= 127
    a[31] |= 64
    scalar = int.from_bytes(a, "little") % L
    key = public_bytes(key_from_seed(seed))
    identity = bytes([1]) + bytes(31)
    message = TAG_SIGN + b"\x00" + body
    k = int.from_bytes(hashlib.sha512(identity + key + message).digest(), "little") % L
    r_identity = identity + (k * scalar % L).to_bytes(32, "little")
    s_plus_l = good[:32] + (int.from_bytes(good[32:], "little") + L).to_bytes(32, "little")
    seven = (7).to_bytes(32, "little")  # under the identity key, (7B, 7) verifies for all
    from nacl.bindings import crypto_scalarmult_ed25519_base_noclamp
    forgery = crypto_scalarmult_ed25519_base_noclamp(seven) + seven
    return [
        {"case": "the signer's own signature", "key": key.hex(), "sig": good.hex(),
         "valid": True},
        {"case": "S not canonical (S + L)", "key": key.hex(), "sig": s_plus_l.hex(),
         "valid": False},
        {"case": "R the identity point, S = k*a (only the key holder can make it)",
         "key": key.hex(), "sig": r_identity.hex(), "valid": False},
        {"case": "the identity point as the key", "key": identity.hex(),
         "sig": forgery.hex(), "valid": False},
    ]


_CHAT_CASES = (
    ("good game", True, "plain text"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467", True,
     "an emoji sequence joined by U+200D (zero-width joiner)"),
    ("\x7f\u0085\u202e", True, "DEL, a C1 control and a bidi override: valid, shown escaped"),
    ("x" * 280, True, "280 code points"),
    ("\u00e9" * 280, True, "280 code points of two bytes each"),
    ("x" * 281, False, "281 code points"),
    ("a\x1bb", False, "an ESC (below U+0020)"),
    ("line\nbreak", False, "a line feed (below U+0020)"),
)


def make_vectors() -> dict[str, Any]:
    host_sk, joiner_sk = key_from_seed(_bytes("host seed")), key_from_seed(_bytes("joiner seed"))
    host_key, joiner_key = public_bytes(host_sk), public_bytes(joiner_sk)
    options = RuleOptions(FlagRule.SAFE_OR_SURVIVE, two_squares=True, chasing=False,
                          challenge_mode=ChallengeMode.OPEN)
    host_nonce, joiner_nonce = _bytes("host nonce"), _bytes("joiner nonce")
    gid = game_id(host_nonce, joiner_nonce, host_key, joiner_key, 1, options_bytes(options),
                  TAG_GAME)
    salt = _bytes("salt 7")
    commit = piece_commitment(gid, host_key, 7, 14, salt)
    squares = bytes(range(21))
    commits = [piece_commitment(gid, host_key, pid, rank, _bytes(f"salt {pid}"))
               for pid, rank in enumerate([0, 1, 1, 2, 2, 2, 2, 2, 2, 3, 4, 5, 6, 7, 8, 9,
                                            10, 11, 12, 13, 14])]
    seed = _bytes("ot seed")
    seed_c = seed_commitment(gid, host_key, seed)
    host_coin, joiner_coin = _bytes("host coin"), _bytes("joiner coin")
    body = Body("move", 12, _bytes("prev"), _bytes("ack"), gid,
                {"ply": 6, "from": 20, "to": 29})
    env = seal(host_sk, body)
    return {
        "about": "p2pgotg protocol v1 test vectors; inputs are SHA-256 of the given labels. "
                 "See SPEC.md, 'Hashed byte layouts'.",
        "keys": {
            "host_seed": _bytes("host seed").hex(), "host_public": host_key.hex(),
            "joiner_seed": _bytes("joiner seed").hex(), "joiner_public": joiner_key.hex(),
        },
        "game_id": {
            "host_nonce": host_nonce.hex(), "joiner_nonce": joiner_nonce.hex(),
            "version": 1, "options": options.to_dict(),
            "options_bytes": options_bytes(options).hex(), "game_id": gid.hex(),
        },
        "piece_commitment": {
            "game_id": gid.hex(), "owner_key": host_key.hex(), "piece_id": 7, "rank": 14,
            "salt": salt.hex(), "commitment": commit.hex(),
        },
        "seed_commitment": {"seed": seed.hex(), "commitment": seed_c.hex()},
        "setup_hash": {
            "squares": squares.hex(), "commitments": [c.hex() for c in commits],
            "seed_commitment": seed_c.hex(),
            "hash": setup_hash(gid, host_key, squares, commits, seed_c).hex(),
        },
        "coin_toss": {
            "host_secret": host_coin.hex(), "joiner_secret": joiner_coin.hex(),
            "joiner_commitment": coin_commitment(gid, joiner_key, joiner_coin).hex(),
            "host_is_white": host_is_white(gid, host_coin, joiner_coin),
        },
        "envelope": {
            "body": env.body_bytes.hex(), "signature": env.signature.hex(),
            "envelope": env.encode().hex(), "body_hash": body_hash(env.body_bytes).hex(),
            "zero_hash": ZERO_HASH.hex(),
        },
        "chat_text": {
            "about": "chat texts as UTF-8 hex, each valid or malformed (SPEC 2.10: at most "
                     "280 code points, none below U+0020)",
            "cases": [{"text": text.encode().hex(), "valid": valid, "case": case}
                      for text, valid, case in _CHAT_CASES],
        },
        "signatures": {
            "about": "each signature over the envelope's body (SPEC 2.1): valid or refused",
            "body": env.body_bytes.hex(),
            "cases": _signature_cases(_bytes("host seed"), env.body_bytes, env.signature),
        },
    }


if __name__ == "__main__":
    json.dump(make_vectors(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
