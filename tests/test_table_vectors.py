"""protocol/vectors-table.json (made from SPEC 5.3 and 5.5 with hashlib alone) against
p2pgotg's table code: the game id, the coin commitments and the turn order."""

from __future__ import annotations

import json
from pathlib import Path

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol.table.coin import seat_coin_commitment, table_game_id, turn_order

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


def test_the_seat_proofs() -> None:
    """SPEC 3.4: the seat proof's hash and its signature, made and checked by p2pgotg."""
    from p2pgotg.crypto import key_from_seed
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
