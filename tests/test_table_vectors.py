"""protocol/vectors-table.json (made from SPEC 5.3 to 5.8 with hashlib, msgpack by hand and
PyNaCl alone) against p2pgotg's table code: the game id, the coin commitments, the turn
order, a signed action with its acks, a whisper's box, and 3.4's seat proof."""

from __future__ import annotations

import json
from pathlib import Path

import p2pgotg.games.towers.table  # noqa: F401  (registers `action`, SPEC 5.6)
from p2pgotg.crypto import key_from_seed, public_bytes, sign, verify
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.table.body import TableBody, author_of
from p2pgotg.protocol.table.coin import seat_coin_commitment, table_game_id, turn_order
from p2pgotg.protocol.table.talk import open_whisper, seal_whisper

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors-table.json")
                     .read_text())


def test_the_options_bytes_are_spec_4_10s() -> None:
    assert RuleOptions(seats=4).to_bytes().hex() == VECTORS["game_id"]["options"]


def test_the_game_id() -> None:
    v = VECTORS["game_id"]
    hellos = [bytes.fromhex(x) for x in v["hellos"]]
    assert table_game_id(v["version"], bytes.fromhex(v["options"]), hellos).hex() \
        == v["game_id"]


def test_the_coin_commitments() -> None:
    for v in VECTORS["coin_commitments"]:
        got = seat_coin_commitment(bytes.fromhex(v["host_nonce"]), bytes.fromhex(v["key"]),
                                   bytes.fromhex(v["secret"]))
        assert got.hex() == v["commitment"]


def test_the_turn_orders() -> None:
    for v in VECTORS["orders"]:
        secrets = [bytes.fromhex(s) for s in v["secrets"]]
        assert list(turn_order(bytes.fromhex(v["game_id"]), secrets)) == v["order"]


def test_the_signed_action_body_its_hash_and_signature() -> None:
    """SPEC 5.2, 5.6: p2pgotg writes the body byte for byte as the vector (written out by
    hand), reads back its fields, hashes and signs it as SPEC 2.2 says."""
    v = VECTORS["signed_action"]
    f = v["fields"]
    body = TableBody("action", f["seq"], bytes.fromhex(f["prev"]), f["from"],
                     tuple(bytes.fromhex(a) for a in f["acks"]), bytes.fromhex(f["game"]),
                     {"ply": f["ply"], "code": f["code"]})
    assert body.encode().hex() == v["body"]
    read = TableBody.decode(bytes.fromhex(v["body"]))
    assert (read.type, read.seq, read.seat, read["ply"], read["code"]) == (
        "action", f["seq"], f["from"], f["ply"], f["code"])
    assert [a.hex() for a in read.acks or ()] == f["acks"]
    key = key_from_seed(bytes.fromhex(v["seed"]))
    assert public_bytes(key).hex() == v["key"]
    assert sign(key, body.encode()).hex() == v["signature"]
    env = Envelope.decode(bytes.fromhex(v["envelope"]))
    assert env.hash.hex() == v["body_hash"]
    assert Envelope(body.encode(), bytes.fromhex(v["signature"])).encode().hex() == v["envelope"]
    assert verify(bytes.fromhex(v["key"]), env.body_bytes, env.signature)
    assert author_of(env.body_bytes) == f["from"]


def test_the_whisper_box_opens_with_its_keys_and_only_with_them() -> None:
    """SPEC 5.8: p2pgotg seals the vector's box from the same keys and nonce, the receiver
    opens it, and a box with one bit flipped does not open (unreadable, proves nothing)."""
    v = VECTORS["whisper"]
    sender = key_from_seed(bytes.fromhex(v["sender_seed"]))
    receiver = key_from_seed(bytes.fromhex(v["receiver_seed"]))
    assert public_bytes(sender).hex() == v["sender_key"]
    box = bytes.fromhex(v["box"])
    assert box[:24].hex() == v["nonce"]
    assert seal_whisper(sender, bytes.fromhex(v["receiver_key"]), v["text"],
                        bytes.fromhex(v["nonce"])) == box
    assert open_whisper(receiver, bytes.fromhex(v["sender_key"]), box) == v["text"]
    relay = key_from_seed(bytes(32))  # (a third seat, the host that carries it)
    assert open_whisper(relay, bytes.fromhex(v["sender_key"]), box) is None
    flipped = box[:-1] + bytes([box[-1] ^ 1])
    assert open_whisper(receiver, bytes.fromhex(v["sender_key"]), flipped) is None


def test_the_seat_proofs() -> None:
    """SPEC 3.4: the seat proof's hash and its signature, made and checked by p2pgotg."""
    from p2pgotg.net.play.table_proof import prove_seat, seat_proof_hash, seat_proven

    for v in VECTORS["seat_proofs"]:
        nonce, game = bytes.fromhex(v["nonce"]), bytes.fromhex(v["game_id"])
        key, seat = bytes.fromhex(v["key"]), v["seat"]
        assert seat_proof_hash(nonce, game, seat).hex() == v["proof"]
        assert prove_seat(key_from_seed(bytes.fromhex(v["seed"])), nonce, game, seat).hex() \
            == v["sig"]
        sig = bytes.fromhex(v["sig"])
        assert seat_proven(key, sig, nonce, game, seat)
        # the same signature proves no other seat, game or nonce
        assert not seat_proven(key, sig, nonce, game, seat ^ 2)
        assert not seat_proven(key, sig, nonce, bytes(32), seat)
        assert not seat_proven(key, sig, bytes(32), game, seat)
