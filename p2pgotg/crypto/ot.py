"""1-out-of-15 oblivious transfer for the blind challenge mode (SPEC 2.9).

Chou and Orlandi's "simplest OT" over edwards25519, with every secret drawn from a seed the
player committed to at setup, so the audit can replay each transfer byte for byte.

In a challenge the defender is the sender: it holds 15 messages, one per attacker rank, each
one of the 5 outcome tokens of this challenge. The attacker is the receiver: its choice is
c = rank + 1 and it must learn message c and nothing else, while the defender learns nothing
about c. With B the base point, y the sender's scalar and x the receiver's scalar:

    S = y*B  (once per game)     R = c*S + x*B     P_i = y*(R - i*S), i = 1..15
    k_i = H(game_id, n, S, R, i, P_i)    e_i = m_i XOR k_i    receiver: P_c = x*S

Only y*(R - c*S) = x*y*B is known to the receiver; any other P_i would need y*y*B, which is
the Diffie-Hellman problem. SPEC.md "Blind challenges" states every byte layout below.

Examples:

>>> y, S = sender_keypair(bytes(32))
>>> x, R = receiver_choose(bytes([1]) * 32, 0, S, 9)
>>> tokens = outcome_tokens(bytes(32), 0)
>>> messages = [tokens[i % OUTCOMES] for i in range(1, SLOTS + 1)]
>>> e = sender_ciphertexts(y, S, R, bytes(32), 0, messages)
>>> receiver_decrypt(x, S, R, bytes(32), 0, 9, e) == messages[8]
True
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_is_valid_point,
    crypto_core_ed25519_scalar_mul,
    crypto_core_ed25519_scalar_reduce,
    crypto_core_ed25519_sub,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)

from p2pgotg.crypto.hashing import HASH_LEN, equal, fixed, tagged_hash

SLOTS = 15
OUTCOMES = 5
POINT_LEN = 32
SCALAR_LEN = 32
TOKEN_LEN = 32
SEED_LEN = 32

INFO_SENDER = b"p2pgotg/ot-sender/v1"
INFO_RECEIVER = b"p2pgotg/ot-receiver/v1"
INFO_TOKEN = b"p2pgotg/ot-token/v1"
TAG_KEY = b"p2pgotg/ot-key/v1"
TAG_TOKEN_COMMIT = b"p2pgotg/ot-token-commit/v1"

L = 2**252 + 27742317777372353535851937790883648493  # order of the prime-order subgroup
IDENTITY = b"\x01" + bytes(31)  # the neutral element (0, 1): x*B for x = 0 mod L


class OTError(ValueError):
    """An oblivious-transfer input is invalid: a point that is not a proper group element, or
    a value out of range. Raised on the peer's bytes as on our own, and never recovered from:
    the caller treats a peer's invalid point as a protocol violation."""


# -- derivation -------------------------------------------------------------------------------

def _hkdf(seed: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA256 (RFC 5869), salt absent (= 32 zero bytes), the seed as key material."""
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(
        _seed(seed)
    )


def _scalar(seed: bytes, info: bytes) -> bytes:
    """64 bytes of HKDF output reduced mod L: uniform to within 2^-259, never zero in practice
    (chance 2^-252), and rejected if it were, because a zero scalar gives the identity."""
    s = crypto_core_ed25519_scalar_reduce(_hkdf(seed, info, 64))
    if s == bytes(SCALAR_LEN):
        raise OTError("seed derives a zero scalar; choose another seed")
    return s


def _u32(n: int) -> bytes:
    if isinstance(n, bool) or not isinstance(n, int) or not (0 <= n < 2**32):
        raise OTError(f"challenge number {n} out of range 0..2^32-1")
    return n.to_bytes(4, "big")


def _seed(seed: bytes) -> bytes:
    if not isinstance(seed, bytes) or len(seed) != SEED_LEN:
        raise OTError("an OT seed is 32 bytes")
    return seed


def _secret(s: bytes, what: str) -> bytes:
    """A scalar as 32 little-endian bytes, reduced (< L) and not zero. Ours always are; this
    guards the scalar a cheating proof reveals, which comes from the peer."""
    if not isinstance(s, bytes) or len(s) != SCALAR_LEN:
        raise OTError(f"{what} must be a 32-byte scalar")
    if not (0 < int.from_bytes(s, "little") < L):
        raise OTError(f"{what} is zero or not reduced mod L")
    return s


def _choice(choice: int) -> int:
    if isinstance(choice, bool) or not isinstance(choice, int) or not (1 <= choice <= SLOTS):
        raise OTError(f"choice {choice!r} out of range 1..15")
    return choice


# -- points -----------------------------------------------------------------------------------

def validate_point(p: bytes, what: str) -> bytes:
    """Accept only a canonical encoding of a non-identity point of the prime-order subgroup.

    libsodium's is_valid_point checks canonical form, on-curve, main subgroup and not small
    order; we also name the identity explicitly. This matters because crypto_core_ed25519_add
    and _sub check only that a point is on the curve: a point with a small-order (torsion) part
    would pass through them and leak c mod 8 (from a bad S) or y mod 8 (from a bad R)."""
    if not isinstance(p, bytes) or len(p) != POINT_LEN:
        raise OTError(f"{what} must be a 32-byte point")
    if p == IDENTITY:
        raise OTError(f"{what} is the identity point")
    if not crypto_core_ed25519_is_valid_point(p):
        raise OTError(f"{what} is not a valid edwards25519 point of the prime-order subgroup")
    return p


def _mul(scalar: bytes, point: bytes) -> bytes:
    """scalar*point in constant time; libsodium itself refuses a zero scalar or result."""
    return crypto_scalarmult_ed25519_noclamp(scalar, point)


# -- the transfer ------------------------------------------------------------------------------

def add_points(p: bytes, q: bytes) -> bytes:
    """p + q for two points the caller has validated (crypto_core_ed25519_add checks
    nothing itself)."""
    return crypto_core_ed25519_add(p, q)


def sender_keypair(seed: bytes) -> tuple[bytes, bytes]:
    """(y, S = y*B) from the player's seed: one sender key for the whole game, published at
    setup, so every challenge this player defends uses the same S."""
    y = _scalar(seed, INFO_SENDER)
    return y, crypto_scalarmult_ed25519_base_noclamp(y)


def receiver_scalar(seed: bytes, n: int) -> bytes:
    """x_n for challenge n: fresh per challenge, replayable by an auditor who has the seed."""
    return _scalar(seed, INFO_RECEIVER + _u32(n))


def receiver_point(x: bytes, S: bytes, choice: int) -> bytes:
    """R = c*S + x*B. c*S uses the constant-time multiplication: c is the secret rank, so no
    loop whose length depends on it. Also how anyone checks an opening (x, c) of R."""
    validate_point(S, "sender point S")
    c = _choice(choice).to_bytes(SCALAR_LEN, "little")
    xB = crypto_scalarmult_ed25519_base_noclamp(_secret(x, "receiver scalar x"))
    R = crypto_core_ed25519_add(_mul(c, S), xB)
    return validate_point(R, "receiver point R")  # fails only if x = -c*y mod L (2^-252)


def receiver_choose(seed: bytes, n: int, S: bytes, choice: int) -> tuple[bytes, bytes]:
    """(x, R) for challenge n: the receiver's message R and the scalar it keeps to decrypt."""
    x = receiver_scalar(seed, n)
    return x, receiver_point(x, S, choice)


def _key(game_id: bytes, n: int, S: bytes, R: bytes, i: int, P: bytes) -> bytes:
    """k_i = H(tag, game_id[32] || n[4] || S[32] || R[32] || i[1] || P_i[32]). Hashing the
    game, the challenge, both points and the slot makes every key single-use: a key from one
    challenge or slot says nothing about another, even with the same S for the whole game."""
    return tagged_hash(
        TAG_KEY, fixed(game_id, HASH_LEN, "game id"), _u32(n), S, R, bytes([i]), P
    )


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(u ^ v for u, v in zip(a, b, strict=True))


def _messages(items: Sequence[bytes], what: str) -> list[bytes]:
    if len(items) != SLOTS:
        raise OTError(f"{SLOTS} {what} expected, got {len(items)}")
    if not all(isinstance(m, bytes) and len(m) == TOKEN_LEN for m in items):
        raise OTError(f"{what} must be {TOKEN_LEN} bytes each")
    return list(items)


def sender_ciphertexts(
    y: bytes, S: bytes, R: bytes, game_id: bytes, n: int, messages: Sequence[bytes]
) -> list[bytes]:
    """e_i = m_i XOR k_i for slots i = 1..15 (list index i - 1).

    P_i = y*(R - i*S) is computed as y*R - i*T with T = y*S = (y*y)*B: two multiplications and
    15 subtractions instead of 15 multiplications. i is public, so the loop leaks nothing. An R
    with R - i*S = identity (R = i*S, x = 0) is refused: no honest receiver sends it."""
    validate_point(R, "receiver point R")
    y = _secret(y, "sender scalar y")
    if not equal(crypto_scalarmult_ed25519_base_noclamp(y), validate_point(S, "sender point S")):
        raise OTError("sender point S does not belong to scalar y")
    ms = _messages(messages, "messages")
    T = crypto_scalarmult_ed25519_base_noclamp(crypto_core_ed25519_scalar_mul(y, y))
    P = _mul(y, R)
    out = []
    for i in range(1, SLOTS + 1):
        P = crypto_core_ed25519_sub(P, T)
        if P == IDENTITY:
            raise OTError(f"receiver point R equals {i}*S")
        out.append(_xor(ms[i - 1], _key(game_id, n, S, R, i, P)))
    return out


def receiver_decrypt(
    x: bytes, S: bytes, R: bytes, game_id: bytes, n: int, choice: int,
    ciphertexts: Sequence[bytes],
) -> bytes:
    """m_c = e_c XOR H(..., c, x*S). Any other slot decrypts to noise."""
    c = _choice(choice)
    es = _messages(ciphertexts, "ciphertexts")
    P = _mul(_secret(x, "receiver scalar x"), validate_point(S, "sender point S"))
    return _xor(es[c - 1], _key(game_id, n, S, validate_point(R, "receiver point R"), c, P))


# -- outcome tokens ---------------------------------------------------------------------------

def outcome_tokens(seed: bytes, n: int) -> list[bytes]:
    """The defender's 5 tokens for challenge n, one per outcome index 0..4: fresh per
    challenge (n is in the HKDF info), secret until the audit reveals the seed."""
    return [_hkdf(seed, INFO_TOKEN + _u32(n) + bytes([o]), TOKEN_LEN) for o in range(OUTCOMES)]


def token_commitment(game_id: bytes, n: int, outcome: int, token: bytes) -> bytes:
    """H(tag, game_id[32] || n[4] || o[1] || token[32]), sent before the attacker chooses, so
    the token the attacker decrypts proves which outcome the defender's ciphertexts gave."""
    if not (0 <= outcome < OUTCOMES):
        raise OTError(f"outcome {outcome} out of range 0..4")
    return tagged_hash(
        TAG_TOKEN_COMMIT, fixed(game_id, HASH_LEN, "game id"), _u32(n), bytes([outcome]),
        fixed(token, TOKEN_LEN, "token"),
    )


def find_outcome(game_id: bytes, n: int, token: bytes, commitments: Sequence[bytes]) -> int | None:
    """The outcome index whose commitment opens to `token`, or None: then the defender's
    ciphertext was not one of its committed tokens, and (x, c, R, e_c) proves it to anyone."""
    if len(commitments) != OUTCOMES:
        raise OTError(f"{OUTCOMES} token commitments expected, got {len(commitments)}")
    found = None
    for o, commitment in enumerate(commitments):
        if equal(token_commitment(game_id, n, o, token), commitment):
            found = o
    return found


# -- audit ------------------------------------------------------------------------------------

def check_receiver(seed: bytes, n: int, S: bytes, choice: int, R: bytes) -> bool:
    """Audit: was R exactly what the committed seed and the committed rank give?"""
    try:
        return equal(receiver_choose(seed, n, S, choice)[1], R)
    except OTError:
        return False


def check_sender(
    seed: bytes, S: bytes, R: bytes, game_id: bytes, n: int, messages: Sequence[bytes],
    ciphertexts: Sequence[bytes],
) -> bool:
    """Audit: are all 15 ciphertexts exactly what the seed's key and the rule-given messages
    give? `messages` are rebuilt by the caller from both opened ranks and outcome_tokens."""
    try:
        y, S_seed = sender_keypair(seed)
        expected = sender_ciphertexts(y, S, R, game_id, n, messages)
        got = _messages(ciphertexts, "ciphertexts")
    except OTError:
        return False
    return equal(S_seed, S) and len(expected) == len(got) and all(
        equal(a, b) for a, b in zip(expected, got, strict=True))
