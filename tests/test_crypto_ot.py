"""The blind mode's 1-out-of-15 oblivious transfer (p2pgotg.crypto.ot, SPEC 2.9).

What a player relies on: the attacker learns exactly the message of its own rank, any other
slot decrypts to noise, every peer point that is not a proper group element is refused, the
whole run replays byte for byte from the seeds, and protocol/vectors-ot.json agrees with a
textbook re-implementation (hashlib, hmac and plain integer curve arithmetic, no libsodium).

Run `python tests/test_crypto_ot.py` to rewrite protocol/vectors-ot.json from the package.
"""

from __future__ import annotations

import doctest
import hashlib
import hmac
import json
from pathlib import Path

import nacl.exceptions
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_is_valid_point,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)

from p2pgotg.crypto import ot
from p2pgotg.crypto.ot import (
    OUTCOMES,
    SLOTS,
    OTError,
    check_receiver,
    check_sender,
    find_outcome,
    outcome_tokens,
    receiver_choose,
    receiver_decrypt,
    receiver_point,
    receiver_scalar,
    sender_ciphertexts,
    sender_keypair,
    token_commitment,
    validate_point,
)

VECTORS_PATH = Path(__file__).parent.parent / "protocol" / "vectors-ot.json"


def label(s: str) -> bytes:
    return hashlib.sha256(s.encode()).digest()


def x(s: str) -> bytes:
    return bytes.fromhex(s)


SEED_D = label("ot sender seed")
SEED_A = label("ot receiver seed")
GAME = label("ot game id")
DISTINCT = [label(f"message {i}") for i in range(1, SLOTS + 1)]  # 15 different messages


def example_messages(seed: bytes, n: int) -> list[bytes]:
    """The vectors' example mapping: slot i (1..15) carries token (i mod 5)."""
    tokens = outcome_tokens(seed, n)
    return [tokens[i % OUTCOMES] for i in range(1, SLOTS + 1)]


def transfer(seed_d: bytes, seed_a: bytes, n: int, choice: int, messages: list[bytes]):
    y, S = sender_keypair(seed_d)
    xa, R = receiver_choose(seed_a, n, S, choice)
    e = sender_ciphertexts(y, S, R, GAME, n, messages)
    return y, S, xa, R, e


# -- correctness ------------------------------------------------------------------------------

@pytest.mark.parametrize("choice", range(1, SLOTS + 1))
def test_the_receiver_gets_exactly_its_message(choice: int) -> None:
    _, S, xa, R, e = transfer(SEED_D, SEED_A, 7, choice, DISTINCT)
    assert receiver_decrypt(xa, S, R, GAME, 7, choice, e) == DISTINCT[choice - 1]
    for other in range(1, SLOTS + 1):
        if other != choice:  # the same x and R, asked about another slot: noise
            assert receiver_decrypt(xa, S, R, GAME, 7, other, e) not in DISTINCT


def test_ciphertexts_of_equal_messages_differ() -> None:
    """Slots carrying the same token must not show it: each slot has its own key."""
    _, _, _, _, e = transfer(SEED_D, SEED_A, 3, 9, example_messages(SEED_D, 3))
    assert len(set(e)) == SLOTS


def test_everything_replays_from_the_seeds() -> None:
    first = transfer(SEED_D, SEED_A, 3, 9, example_messages(SEED_D, 3))
    again = transfer(SEED_D, SEED_A, 3, 9, example_messages(SEED_D, 3))
    assert first == again
    assert outcome_tokens(SEED_D, 3) == outcome_tokens(SEED_D, 3)
    # fresh per challenge: another n gives another receiver scalar and other tokens
    assert receiver_scalar(SEED_A, 3) != receiver_scalar(SEED_A, 4)
    assert not set(outcome_tokens(SEED_D, 3)) & set(outcome_tokens(SEED_D, 4))
    assert len(set(outcome_tokens(SEED_D, 3))) == OUTCOMES
    # and the challenge number and game are bound into the keys
    _, S, xa, R, e = first
    assert receiver_decrypt(xa, S, R, label("another game"), 3, 9, e) != e and \
        receiver_decrypt(xa, S, R, label("another game"), 3, 9, e) not in outcome_tokens(SEED_D, 3)
    assert receiver_decrypt(xa, S, R, GAME, 4, 9, e) not in outcome_tokens(SEED_D, 3)


@settings(max_examples=25, deadline=None)
@given(
    seed_d=st.binary(min_size=32, max_size=32),
    seed_a=st.binary(min_size=32, max_size=32),
    n=st.integers(0, 2**32 - 1),
    choice=st.integers(1, SLOTS),
)
def test_any_seeds_any_choice(seed_d: bytes, seed_a: bytes, n: int, choice: int) -> None:
    messages = example_messages(seed_d, n)
    _, S, xa, R, e = transfer(seed_d, seed_a, n, choice, messages)
    token = receiver_decrypt(xa, S, R, GAME, n, choice, e)
    assert token == messages[choice - 1]
    commitments = [token_commitment(GAME, n, o, t) for o, t in enumerate(outcome_tokens(seed_d, n))]
    assert find_outcome(GAME, n, token, commitments) == choice % OUTCOMES
    assert check_receiver(seed_a, n, S, choice, R)
    assert check_sender(seed_d, S, R, GAME, n, messages, e)
    wrong = choice % SLOTS + 1
    assert find_outcome(GAME, n, receiver_decrypt(xa, S, R, GAME, n, wrong, e), commitments) is None


# -- invalid points ---------------------------------------------------------------------------

P_FIELD = 2**255 - 19
IDENTITY = b"\x01" + bytes(31)
ORDER_4 = bytes(32)  # y = 0: the points (±sqrt(-1), 0), order 4
ORDER_2 = (P_FIELD - 1).to_bytes(32, "little")  # y = -1: ec ff .. ff 7f, the point (0, -1)
ORDER_8 = x("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")  # x = sqrt(-1)*y
NON_CANONICAL_IDENTITY = (P_FIELD + 1).to_bytes(32, "little")  # y = p + 1 = 1 (mod p)
NON_CANONICAL_ON_CURVE = (P_FIELD + 3).to_bytes(32, "little")  # y = p + 3: on the curve


def off_curve_bytes() -> bytes:
    """Hash outputs until one is no curve point at all (libsodium's add refuses it)."""
    for i in range(100):
        candidate = label(f"not a point {i}")
        try:
            crypto_core_ed25519_add(candidate, candidate)
        except nacl.exceptions.RuntimeError:
            return candidate
    raise AssertionError("no off-curve candidate found")


def mixed_order_point() -> bytes:
    """A valid S plus the order-8 point: canonical, on the curve, not of small order, but
    outside the prime-order subgroup. libsodium's add happily produces and accepts it."""
    _, S = sender_keypair(SEED_D)
    return crypto_core_ed25519_add(S, ORDER_8)


BAD_POINTS = {
    "identity": IDENTITY,
    "order 2": ORDER_2,
    "order 4 (all-zero encoding)": ORDER_4,
    "order 8": ORDER_8,
    "non-canonical identity": NON_CANONICAL_IDENTITY,
    "non-canonical, on the curve": NON_CANONICAL_ON_CURVE,
    "off the curve": off_curve_bytes(),
    "torsion component": mixed_order_point(),
}


def test_the_library_add_does_not_validate() -> None:
    """Why validate_point exists: add/sub accept points that would leak bits of c or y."""
    _, S = sender_keypair(SEED_D)
    for bad in (ORDER_8, NON_CANONICAL_ON_CURVE, mixed_order_point()):
        crypto_core_ed25519_add(S, bad)  # no error
        assert not crypto_core_ed25519_is_valid_point(bad)


@pytest.mark.parametrize("name", BAD_POINTS)
def test_invalid_points_are_refused_everywhere(name: str) -> None:
    bad = BAD_POINTS[name]
    y, S = sender_keypair(SEED_D)
    xa, R = receiver_choose(SEED_A, 0, S, 5)
    e = sender_ciphertexts(y, S, R, GAME, 0, DISTINCT)
    with pytest.raises(OTError):
        validate_point(bad, "point")
    with pytest.raises(OTError):
        receiver_choose(SEED_A, 0, bad, 5)  # a bad S from the defender
    with pytest.raises(OTError):
        sender_ciphertexts(y, S, bad, GAME, 0, DISTINCT)  # a bad R from the attacker
    with pytest.raises(OTError):
        receiver_decrypt(xa, bad, R, GAME, 0, 5, e)
    assert not check_receiver(SEED_A, 0, bad, 5, R)
    assert not check_sender(SEED_D, S, bad, GAME, 0, DISTINCT, e)


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), "01" * 32, None])
def test_malformed_point_values(bad: object) -> None:
    with pytest.raises(OTError, match="32-byte point"):
        validate_point(bad, "point")  # type: ignore[arg-type]


@pytest.mark.parametrize("i", range(1, SLOTS + 1))
def test_R_equal_to_i_times_S_is_refused(i: int) -> None:
    """R = i*S means x = 0: slot i's key would be H(..., identity), known to everyone."""
    y, S = sender_keypair(SEED_D)
    R = crypto_scalarmult_ed25519_noclamp(i.to_bytes(32, "little"), S)
    with pytest.raises(OTError, match=f"equals {i}\\*S"):
        sender_ciphertexts(y, S, R, GAME, 0, DISTINCT)


def test_sender_point_must_belong_to_the_scalar() -> None:
    y, _ = sender_keypair(SEED_D)
    _, other = sender_keypair(SEED_A)
    _, R = receiver_choose(SEED_A, 0, other, 1)
    with pytest.raises(OTError, match="does not belong"):
        sender_ciphertexts(y, other, R, GAME, 0, DISTINCT)


# -- ranges and lengths -----------------------------------------------------------------------

def test_ranges_and_lengths() -> None:
    y, S = sender_keypair(SEED_D)
    xa, R = receiver_choose(SEED_A, 0, S, 1)
    e = sender_ciphertexts(y, S, R, GAME, 0, DISTINCT)
    for choice in (0, 16, -1, 1.5, True):
        with pytest.raises(OTError, match="choice"):
            receiver_choose(SEED_A, 0, S, choice)  # type: ignore[arg-type]
        with pytest.raises(OTError, match="choice"):
            receiver_decrypt(xa, S, R, GAME, 0, choice, e)  # type: ignore[arg-type]
    for n in (-1, 2**32, 1.0):
        with pytest.raises(OTError, match="challenge number"):
            receiver_choose(SEED_A, n, S, 1)  # type: ignore[arg-type]
        with pytest.raises(OTError, match="challenge number"):
            outcome_tokens(SEED_D, n)  # type: ignore[arg-type]
    for outcome in (-1, OUTCOMES):
        with pytest.raises(OTError, match="outcome"):
            token_commitment(GAME, 0, outcome, DISTINCT[0])
    for seed in (bytes(31), bytes(33), "00" * 32):
        with pytest.raises(OTError, match="seed"):
            sender_keypair(seed)  # type: ignore[arg-type]
    with pytest.raises(OTError, match="15 messages"):
        sender_ciphertexts(y, S, R, GAME, 0, DISTINCT[:14])
    with pytest.raises(OTError, match="32 bytes"):
        sender_ciphertexts(y, S, R, GAME, 0, [*DISTINCT[:14], b"short"])
    with pytest.raises(OTError, match="15 ciphertexts"):
        receiver_decrypt(xa, S, R, GAME, 0, 1, e + e[:1])
    with pytest.raises(OTError, match="5 token commitments"):
        find_outcome(GAME, 0, DISTINCT[0], [])
    # scalars from a peer (a cheating proof's x) are checked too
    for scalar in (bytes(32), ot.L.to_bytes(32, "little"), bytes(31)):
        with pytest.raises(OTError, match="scalar"):
            receiver_point(scalar, S, 1)


# -- the audit and the proof of cheating ------------------------------------------------------

def test_audit_catches_a_receiver_that_lied_about_its_rank() -> None:
    _, S = sender_keypair(SEED_D)
    _, R = receiver_choose(SEED_A, 2, S, 4)
    assert check_receiver(SEED_A, 2, S, 4, R)
    assert not check_receiver(SEED_A, 2, S, 5, R)  # the opened rank says 5
    assert not check_receiver(SEED_A, 3, S, 4, R)  # replayed from another challenge
    assert not check_receiver(SEED_D, 2, S, 4, R)  # not from the committed seed


def test_audit_catches_any_altered_ciphertext() -> None:
    messages = example_messages(SEED_D, 2)
    _, S, _, R, e = transfer(SEED_D, SEED_A, 2, 4, messages)
    assert check_sender(SEED_D, S, R, GAME, 2, messages, e)
    for i in range(SLOTS):  # even slots the attacker never opened
        tampered = list(e)
        tampered[i] = bytes([e[i][0] ^ 1]) + e[i][1:]
        assert not check_sender(SEED_D, S, R, GAME, 2, messages, tampered)
    swapped = messages[1:] + messages[:1]  # ciphertexts of another rank's table
    assert not check_sender(SEED_D, S, R, GAME, 2, swapped, e)
    _, other_S = sender_keypair(SEED_A)
    assert not check_sender(SEED_A, other_S, R, GAME, 2, messages, e)


def test_a_token_matching_no_commitment_is_a_proof_anyone_can_check() -> None:
    """The defender encrypts something it did not commit to. The attacker publishes (x, c);
    anyone re-derives R from them, decrypts e_c and finds no commitment opens to it."""
    n, c = 5, 11
    tokens = outcome_tokens(SEED_D, n)
    commitments = [token_commitment(GAME, n, o, t) for o, t in enumerate(tokens)]
    cheating = [label("uncommitted")] * SLOTS
    _, S, xa, R, e = transfer(SEED_D, SEED_A, n, c, cheating)
    token = receiver_decrypt(xa, S, R, GAME, n, c, e)
    assert find_outcome(GAME, n, token, commitments) is None
    # the third party's check, from public values plus the revealed (x, c)
    assert receiver_point(xa, S, c) == R
    assert find_outcome(GAME, n, receiver_decrypt(xa, S, R, GAME, n, c, e), commitments) is None
    # and an honest defender's ciphertexts can never be framed this way
    honest = example_messages(SEED_D, n)
    _, S, xa, R, e = transfer(SEED_D, SEED_A, n, c, honest)
    assert find_outcome(GAME, n, receiver_decrypt(xa, S, R, GAME, n, c, e), commitments) == 1


def test_module_examples() -> None:
    assert doctest.testmod(ot).failed == 0


# -- known-answer vectors, checked against a textbook re-implementation -----------------------

def make_vectors() -> dict:
    """One transfer with fixed inputs and every intermediate value, from the package."""
    n, choice = 3, 9
    y, S = sender_keypair(SEED_D)
    xa, R = receiver_choose(SEED_A, n, S, choice)
    tokens = outcome_tokens(SEED_D, n)
    messages = example_messages(SEED_D, n)
    e = sender_ciphertexts(y, S, R, GAME, n, messages)
    # P_i and k_i are internal to sender_ciphertexts; rebuild them from the same helpers
    slots = []
    for i in range(1, SLOTS + 1):
        diff = crypto_core_ed25519_add(
            R, crypto_scalarmult_ed25519_noclamp((ot.L - i).to_bytes(32, "little"), S)
        )
        P = crypto_scalarmult_ed25519_noclamp(y, diff)
        k = ot._key(GAME, n, S, R, i, P)
        slots.append({"i": i, "message": messages[i - 1].hex(), "P": P.hex(), "k": k.hex(),
                      "e": e[i - 1].hex()})
    decrypted = receiver_decrypt(xa, S, R, GAME, n, choice, e)
    return {
        "about": "p2pgotg blind-mode 1-out-of-15 OT, one run. Seeds and game id are SHA-256 of "
                 "the labels given. Slot i (1..15) carries outcome token (i mod 5); the real "
                 "mapping comes from the rules. See SPEC.md, 'Blind challenges'.",
        "inputs": {
            "seed_sender": SEED_D.hex(), "seed_sender_label": "ot sender seed",
            "seed_receiver": SEED_A.hex(), "seed_receiver_label": "ot receiver seed",
            "game_id": GAME.hex(), "game_id_label": "ot game id",
            "n": n, "choice": choice,
        },
        "sender": {"y": y.hex(), "S": S.hex()},
        "receiver": {"x": xa.hex(), "R": R.hex(), "P_choice": crypto_scalarmult_ed25519_noclamp(
            xa, S).hex()},
        "tokens": [t.hex() for t in tokens],
        "token_commitments": [token_commitment(GAME, n, o, t).hex() for o, t in enumerate(tokens)],
        "slots": slots,
        "decrypted": decrypted.hex(),
        "outcome": find_outcome(GAME, n, decrypted, [token_commitment(GAME, n, o, t)
                                                     for o, t in enumerate(tokens)]),
    }


VECTORS = json.loads(VECTORS_PATH.read_text()) if VECTORS_PATH.exists() else {}


def test_the_vector_file_is_what_the_package_makes() -> None:
    assert json.loads(json.dumps(make_vectors())) == VECTORS


# A textbook edwards25519 (RFC 8032, section 5.1) in plain integers, for the vectors only.
D = -121665 * pow(121666, -1, P_FIELD) % P_FIELD
L = 2**252 + 27742317777372353535851937790883648493
SQRT_M1 = pow(2, (P_FIELD - 1) // 4, P_FIELD)


def ref_add(p: tuple, q: tuple) -> tuple:
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a, b = (y1 - x1) * (y2 - x2) % P_FIELD, (y1 + x1) * (y2 + x2) % P_FIELD
    c, d = 2 * t1 * t2 * D % P_FIELD, 2 * z1 * z2 % P_FIELD
    e, f, g, h = b - a, d - c, d + c, b + a
    return e * f % P_FIELD, g * h % P_FIELD, f * g % P_FIELD, e * h % P_FIELD


def ref_mul(s: int, p: tuple) -> tuple:
    q = (0, 1, 1, 0)
    while s:
        if s & 1:
            q = ref_add(q, p)
        p, s = ref_add(p, p), s >> 1
    return q


def ref_neg(p: tuple) -> tuple:
    return -p[0] % P_FIELD, p[1], p[2], -p[3] % P_FIELD


def ref_encode(p: tuple) -> bytes:
    zi = pow(p[2], -1, P_FIELD)
    xx, yy = p[0] * zi % P_FIELD, p[1] * zi % P_FIELD
    return (yy | (xx & 1) << 255).to_bytes(32, "little")


def ref_decode(s: bytes) -> tuple:
    v = int.from_bytes(s, "little")
    yy, sign = v & (2**255 - 1), v >> 255
    assert yy < P_FIELD
    x2 = (yy * yy - 1) * pow(D * yy * yy + 1, -1, P_FIELD) % P_FIELD
    xx = pow(x2, (P_FIELD + 3) // 8, P_FIELD)
    if xx * xx % P_FIELD != x2:
        xx = xx * SQRT_M1 % P_FIELD
    assert xx * xx % P_FIELD == x2 and not (xx == 0 and sign)
    if xx & 1 != sign:
        xx = P_FIELD - xx
    return xx, yy, 1, xx * yy % P_FIELD


BASE = ref_decode((4 * pow(5, -1, P_FIELD) % P_FIELD).to_bytes(32, "little"))


def hkdf_sha256(ikm: bytes, info: bytes, length: int) -> bytes:  # RFC 5869, salt absent
    prk = hmac.new(bytes(32), ikm, hashlib.sha256).digest()
    okm, t, i = b"", b"", 1
    while len(okm) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm, i = okm + t, i + 1
    return okm[:length]


def H(tag: bytes, *fields: bytes) -> bytes:
    return hashlib.sha256(tag + b"\x00" + b"".join(fields)).digest()


def test_vectors_against_the_textbook() -> None:
    v, inp = VECTORS, VECTORS["inputs"]
    seed_d, seed_a, game = x(inp["seed_sender"]), x(inp["seed_receiver"]), x(inp["game_id"])
    assert (seed_d, seed_a, game) == (label(inp["seed_sender_label"]),
                                      label(inp["seed_receiver_label"]),
                                      label(inp["game_id_label"]))
    n, c = inp["n"], inp["choice"]
    nb = n.to_bytes(4, "big")
    # scalars: 64 bytes of HKDF, little-endian, mod L
    y = int.from_bytes(hkdf_sha256(seed_d, b"p2pgotg/ot-sender/v1", 64), "little") % L
    xr = int.from_bytes(hkdf_sha256(seed_a, b"p2pgotg/ot-receiver/v1" + nb, 64), "little") % L
    assert v["sender"]["y"] == y.to_bytes(32, "little").hex()
    assert v["receiver"]["x"] == xr.to_bytes(32, "little").hex()
    # points, by plain integer arithmetic
    S = ref_mul(y, BASE)
    R = ref_add(ref_mul(c, S), ref_mul(xr, BASE))
    S_b, R_b = ref_encode(S), ref_encode(R)
    assert v["sender"]["S"] == S_b.hex()
    assert v["receiver"]["R"] == R_b.hex()
    assert v["receiver"]["P_choice"] == ref_encode(ref_mul(xr, S)).hex()
    # tokens and their commitments
    tokens = [hkdf_sha256(seed_d, b"p2pgotg/ot-token/v1" + nb + bytes([o]), 32) for o in range(5)]
    assert v["tokens"] == [t.hex() for t in tokens]
    assert v["token_commitments"] == [
        H(b"p2pgotg/ot-token-commit/v1", game, nb, bytes([o]), t).hex()
        for o, t in enumerate(tokens)
    ]
    # every slot: P_i = y*(R - i*S), k_i = H(...), e_i = m_i XOR k_i
    assert [s["i"] for s in v["slots"]] == list(range(1, 16))
    for s in v["slots"]:
        i = s["i"]
        assert s["message"] == tokens[i % 5].hex()
        P = ref_encode(ref_mul(y, ref_add(R, ref_neg(ref_mul(i, S)))))
        assert s["P"] == P.hex()
        k = H(b"p2pgotg/ot-key/v1", game, nb, S_b, R_b, bytes([i]), P)
        assert s["k"] == k.hex()
        assert s["e"] == bytes(a ^ b for a, b in zip(tokens[i % 5], k, strict=True)).hex()
    # the receiver's side: its P is slot c's, and it opens to token c mod 5, outcome 4
    assert v["receiver"]["P_choice"] == v["slots"][c - 1]["P"]
    k_c = H(b"p2pgotg/ot-key/v1", game, nb, S_b, R_b, bytes([c]), x(v["receiver"]["P_choice"]))
    e_c = x(v["slots"][c - 1]["e"])
    assert v["decrypted"] == bytes(a ^ b for a, b in zip(e_c, k_c, strict=True)).hex()
    assert v["decrypted"] == tokens[c % 5].hex() and v["outcome"] == c % 5 == 4


def test_textbook_agrees_with_libsodium_on_the_base_point() -> None:
    assert ref_encode(BASE) == crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))
    assert ref_encode(ref_mul(L, BASE)) == IDENTITY


@pytest.mark.parametrize(("point", "order"), [(ORDER_2, 2), (ORDER_4, 4), (ORDER_8, 8)])
def test_the_small_order_constants_have_that_order(point: bytes, order: int) -> None:
    P = ref_decode(point)
    assert ref_encode(ref_mul(order, P)) == IDENTITY
    assert ref_encode(ref_mul(order // 2, P)) != IDENTITY


if __name__ == "__main__":
    VECTORS_PATH.write_text(json.dumps(make_vectors(), indent=2) + "\n")
    print(f"wrote {VECTORS_PATH}")
