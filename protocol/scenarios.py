"""Scripted games, honest and dishonest: one per row of SPEC.md's threat table.

Each scenario plays two in-memory peers (`Pair`) to the point where one side cheats, and
returns the honest side, which must have caught it. The same scenarios produce the
recorded transcripts in `protocol/transcripts/` and drive the tests.

    python -m protocol.scenarios OUTDIR   # (re)write the recorded transcripts
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from p2pgotg.crypto import ot, piece_commitment, seed_commitment, setup_hash
from p2pgotg.games.gotg.flow import outcome_index
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol.envelope import Envelope, seal
from p2pgotg.protocol.errors import RemoteProtocolError
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import HOST, JOINER, other
from p2pgotg.protocol.limits import CHATS_IN_A_ROW, MAX_PLAY_MESSAGES
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.transcript import encode_header, encode_record
from p2pgotg.rules import (
    FULL_SET,
    ChallengeMode,
    Game,
    Move,
    Rank,
    RuleOptions,
    Setup,
    Side,
    home_squares,
)
from p2pgotg.testing.forging import forge, next_body, tamper
from p2pgotg.testing.pair import Pair


@dataclass
class Result:
    honest: GotgPeer
    error: RemoteProtocolError | None  # what the honest side raised (None: no exception)
    #: The transcript to record, when it is not the honest side's own records: a file its
    #: owner edited (a message left out, two swapped, a secret damaged).
    records: list[Record] | None = None
    #: The other side of the same game, when both files are recorded: two files of one
    #: game must give one verdict (SPEC 2.4), whatever order each side processed them in.
    other: GotgPeer | None = None
    winner: str | None = None  # the winner's role, when only the game played tells it


@dataclass(frozen=True)
class Scenario:
    name: str
    cheat: str  # SPEC.md's words for it
    cheater: str | None  # role, None for honest games (or: the honest side's peer)
    rule: str | None
    exit_code: int  # what `p2pgotg verify` returns on the honest side's transcript
    run: Callable[[int], Result]
    winner: str | None = None  # the result verify must print: "host", "joiner", "draw"
    termination: str | None = None  # ... and how the game ended (chapter 1.10's value)


def _deliver_one(pair: Pair, sender: GotgPeer, data: bytes) -> Result:
    receiver = pair.peer(sender.other_role)
    try:
        receiver.receive(data)
    except RemoteProtocolError as exc:
        return Result(receiver, exc)
    return Result(receiver, None)


def _to_play(seed: int, options: RuleOptions | None = None,
             classes: dict[str, type[GotgPeer]] | None = None) -> Pair:
    pair = Pair.new(options, seed=f"scenario-{seed}", classes=classes)
    pair.handshake(rng=random.Random(seed))
    return pair


_T = TypeVar("_T")


def _play_until(pair: Pair, rng: random.Random, want: Callable[[GotgPeer], _T | None]) -> _T:
    """Random legal play until `want(side to move)` returns something truthy."""
    for _ in range(3000):
        mover = pair.host if pair.host.my_turn else pair.joiner
        found = want(mover)
        if found:
            return found
        assert mover.view is not None
        mover.move(rng.choice(mover.view.legal_moves))
        pair.deliver()
        if pair.host.flow.is_over:
            raise RuntimeError("the game ended before the scenario's moment came")
    raise RuntimeError("the scenario's moment never came")


def _side(peer: GotgPeer) -> Side:
    """The side `peer` plays (the scenarios ask only once the coin has decided it)."""
    assert peer.side is not None, "the coin has not been tossed yet"
    return peer.side


def _view(peer: GotgPeer) -> Game:
    """`peer`'s view of the game (the scenarios ask only once play has begun)."""
    assert peer.view is not None, "play has not begun yet"
    return peer.view


def _own_rank_on(peer: GotgPeer, square: int) -> Rank:
    """The rank of `peer`'s own piece on `square`."""
    piece, setup = _view(peer).piece_at(square), peer.own_setup
    assert piece is not None and setup is not None
    return setup.ranks[piece.pid]


def _cheater(peer: GotgPeer) -> CheatingPeer:
    assert isinstance(peer, CheatingPeer), "the scenario made this peer a cheater"
    return peer


def _a_challenge(peer: GotgPeer) -> Move | None:
    view = peer.view
    assert view is not None
    return next((m for m in view.legal_moves if view.is_challenge(m)), None)


# -- honest games ---------------------------------------------------------------------------

def honest_game(seed: int) -> Result:
    pair = _to_play(seed)
    pair.play_random(random.Random(seed))
    return Result(pair.host, None)


def honest_resignation(seed: int) -> Result:
    pair = _to_play(seed)
    rng = random.Random(seed)
    for _ in range(6):
        mover = pair.host if pair.host.my_turn else pair.joiner
        mover.move(rng.choice(_view(mover).legal_moves))
        pair.deliver()
    pair.joiner.resign()
    pair.deliver()
    return Result(pair.host, None)


# -- cheats in the handshake ----------------------------------------------------------------

def steer_coin(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    (hello,) = pair.joiner.data_to_send()
    pair.host.receive(hello)
    for data in pair.host.data_to_send():  # the host's coin
        pair.joiner.receive(data)
    (honest_open,) = pair.joiner.data_to_send()
    return _deliver_one(pair, pair.joiner, tamper(pair.joiner, honest_open, secret=bytes(32)))


def change_options(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    (hello,) = pair.joiner.data_to_send()
    assert pair.host.options is not None
    options = dict(pair.host.options.to_dict())
    options["flag_rule"] = "immediate"
    return _deliver_one(pair, pair.joiner, tamper(pair.joiner, hello, options=options))


# -- cheats in the setup --------------------------------------------------------------------

def change_setup_after_commit(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    rng = random.Random(seed)
    pair.joiner.commit_setup(Setup.random(_side(pair.joiner), rng))
    pair.deliver()
    pair.host.commit_setup(Setup.random(_side(pair.host), rng))
    for data in pair.host.data_to_send():  # the host's commitment and reveal
        pair.joiner.receive(data)
    (reveal,) = pair.joiner.data_to_send()  # the joiner's honest reveal, now it saw the host's
    body = Envelope.decode(reveal).body()
    squares = bytes(sorted(home_squares(_side(pair.joiner))[:21]))
    if squares == body["squares"]:
        squares = bytes(sorted(home_squares(_side(pair.joiner))[6:]))
    return _deliver_one(pair, pair.joiner, tamper(pair.joiner, reveal, squares=squares))


def _forged_setup(pair: Pair, cheater: GotgPeer, squares: list[int], ranks: list[Rank]
                  ) -> tuple[bytes, bytes, bytes]:
    """(commit, reveal) messages for a setup no honest client would make, and the seed."""
    gid, key = pair.host.flow.game_id, cheater.public_key
    assert gid is not None
    salts = [bytes([i]) * 32 for i in range(21)]
    commits = [piece_commitment(gid, key, pid, int(r), salts[pid]) for pid, r in enumerate(ranks)]
    seed = bytes(32)
    seed_c = seed_commitment(gid, key, seed)
    sq = bytes(squares)
    commit = forge(cheater, "setup_commit", {"hash": setup_hash(gid, key, sq, commits, seed_c)},
                   record=True)
    return commit, sq + b"".join(commits) + seed_c, seed


def setup_outside_home(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    cheater, honest = pair.joiner, pair.host
    side = cheater.side
    assert side is not None
    home = list(home_squares(side))
    forward = 27 if side is Side.WHITE else 44  # a square in front of the home rows
    squares = sorted([*home[:20], forward])
    commit, packed, _ = _forged_setup(pair, cheater, squares, list(FULL_SET))
    honest.receive(commit)
    honest.commit_setup(Setup.random(_side(honest), random.Random(seed)))
    commit_h, _reveal_h = honest.data_to_send()
    cheater.receive(commit_h)
    reveal = forge(cheater, "setup_reveal", {"squares": packed[:21],
                                             "commits": packed[21:21 + 672],
                                             "seed_commit": packed[-32:]}, record=True)
    return _deliver_one(pair, cheater, reveal)


def reveal_before_commit(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    cheater = pair.joiner
    setup = Setup.random(_side(cheater), random.Random(seed))
    cheater.commit_setup(setup)
    (commit,) = cheater.data_to_send()
    pair.host.receive(commit)
    gid = pair.host.flow.game_id
    assert gid is not None
    reveal = forge(cheater, "setup_reveal", {
        "squares": bytes(setup.squares), "commits": bytes(21 * 32),
        "seed_commit": bytes(32)})
    return _deliver_one(pair, cheater, reveal)


# -- cheats in play -------------------------------------------------------------------------

def attacker_lies(seed: int) -> Result:
    pair = _to_play(seed)
    rng = random.Random(seed)
    move = _play_until(pair, rng, _a_challenge)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    cheater.move(move)
    (honest_move,) = cheater.data_to_send()
    body = Envelope.decode(honest_move).body()
    rank, salt = body["open"]
    lie = [Rank.GENERAL_OF_THE_ARMY if rank != Rank.GENERAL_OF_THE_ARMY else Rank.SPY, salt]
    return _deliver_one(pair, cheater, tamper(cheater, honest_move, open=[int(lie[0]), salt]))


def defender_lies(seed: int) -> Result:
    pair = _to_play(seed)
    rng = random.Random(seed)
    move = _play_until(pair, rng, _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    cheater = pair.peer(attacker.other_role)
    attacker.move(move)
    for data in attacker.data_to_send():
        cheater.receive(data)
    reply = cheater.data_to_send()[0]  # (its audit may follow, if the reply ended the game)
    rank, salt = Envelope.decode(reply).body()["open"]
    lie = Rank.SPY if rank != Rank.SPY else Rank.PRIVATE
    return _deliver_one(pair, cheater, tamper(cheater, reply, open=[int(lie), salt]))


def false_flag_claim(seed: int) -> Result:
    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    setup = cheater.own_setup
    assert setup is not None and cheater.view is not None
    flag_pid = setup.ranks.index(Rank.FLAG)
    assert cheater._own is not None
    opening = [flag_pid, int(Rank.FLAG), cheater._own.salts[flag_pid]]
    return _deliver_one(pair, cheater, forge(cheater, "claim_flag", {"claim": opening}))


def illegal_move(seed: int) -> Result:
    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = cheater.view
    assert view is not None
    piece = view.pieces(view.turn)[0]
    src = view.square_of(piece)
    assert src is not None
    dst = src + 18 if src + 18 < 72 else src - 18  # two rows away: never legal
    data = forge(cheater, "move", {"ply": view.ply, "from": src, "to": dst})
    return _deliver_one(pair, cheater, data)


def move_out_of_turn(seed: int) -> Result:
    pair = _to_play(seed)
    cheater = pair.joiner if pair.host.my_turn else pair.host
    view = cheater.view
    assert view is not None
    own = _side(cheater)
    src, dst = next(
        (s, n) for p in view.pieces(own)
        if (s := view.square_of(p)) is not None
        for n in _neighbours(s) if view.piece_at(n) is None
    )
    return _deliver_one(pair, cheater, forge(cheater, "move",
                                             {"ply": view.ply, "from": src, "to": dst}))


def _neighbours(sq: int) -> list[int]:
    from p2pgotg.rules import neighbours

    return list(neighbours(sq))


def replay_other_game(seed: int) -> Result:
    """A message of another game, signed by the other side. Live it is refused and the
    connection resumes: anyone holding an old message could have sent it. The recorded file
    is its owner's edit, such a message spliced into its transcript: unreadable, never a
    conviction."""
    pair, error = _finished_with_a_refusal(seed, lambda cheater, view, move: forge(
        cheater, "move", {"ply": view.ply, "from": move.from_square, "to": move.to_square},
        game=bytes(32)))
    honest = pair.host
    records = honest.take_records()
    spliced = forge(pair.joiner, "chat", {"text": "from another game"}, game=bytes(32),
                    seq=_seq_of(records, JOINER, 3), prev=_prev_of(records, JOINER, 3))
    return Result(honest, error, _replace_message(records, JOINER, 3, spliced))


def drop_a_message(seed: int) -> Result:
    """A gap in the other side's sequence. Live the message after the gap is refused and the
    connection resumes (the missing one is resent from `have`). The recorded file is its
    owner's edit, one message of the other side left out: unreadable, never a conviction."""
    pair, error = _finished_with_a_refusal(seed, lambda cheater, view, move: forge(
        cheater, "move", {"ply": view.ply, "from": move.from_square, "to": move.to_square},
        seq=cheater.flow.next_seq(cheater.role) + 1))
    honest = pair.host
    records = honest.take_records()
    return Result(honest, error, _replace_message(records, JOINER, 4, None))


def swap_two_messages(seed: int) -> Result:
    """The file's owner swaps two of the other side's messages: unreadable (exit 2)."""
    pair = _to_play(seed)
    pair.play_random(random.Random(seed), max_plies=8)
    honest = pair.host
    records = honest.take_records()
    where = [i for i, r in enumerate(records) if r[0] == "msg" and r[1] == JOINER]
    a, b = where[3], where[4]
    records[a], records[b] = records[b], records[a]
    return Result(honest, None, records)


def damage_own_secrets(seed: int) -> Result:
    """A transcript that would convict the other side (its attacker lied), whose owner's
    saved secrets are damaged: the file is unreadable (exit 2), not a conviction."""
    result = attacker_lies(seed)
    records = result.honest.take_records()
    i = max(k for k, r in enumerate(records) if r[0] == "secrets" and "salts" in r[1])
    values = dict(records[i][1])  # type: ignore[arg-type]
    salts = bytearray(values["salts"])
    salts[5] ^= 0x10
    values["salts"] = bytes(salts)
    records[i] = ("secrets", values)
    return Result(result.honest, result.error, records)


def _finished_with_a_refusal(seed: int, make: Callable[[GotgPeer, Game, Move], bytes]
                             ) -> tuple[Pair, RemoteProtocolError | None]:
    """Play, let the joiner send the host `make(...)` on its turn (refused: it proves
    nothing), check the host is still usable, and play the game to its end."""
    pair = _to_play(seed)
    rng = random.Random(seed)

    def joiner_to_move(peer: GotgPeer) -> bool:
        return peer.role == JOINER and _view(peer).ply >= 2

    _play_until(pair, rng, joiner_to_move)
    view = _view(pair.joiner)
    move = next(m for m in view.legal_moves if not view.is_challenge(m))
    error: RemoteProtocolError | None = None
    try:
        pair.host.receive(make(pair.joiner, view, move))
    except RemoteProtocolError as exc:
        error = exc
    assert pair.host.failed is None, "input that proves nothing leaves the peer usable"
    pair.play_random(rng, max_plies=12)
    return pair, error


def _msg_index(records: list[Record], role: str, k: int) -> int:
    return [i for i, r in enumerate(records) if r[0] == "msg" and r[1] == role][k]


def _body_at(records: list[Record], role: str, k: int) -> Any:
    record = records[_msg_index(records, role, k)]
    assert record[0] == "msg"
    return Envelope.decode(record[2]).body()


def _seq_of(records: list[Record], role: str, k: int) -> int:
    return int(_body_at(records, role, k).seq)


def _prev_of(records: list[Record], role: str, k: int) -> bytes:
    return bytes(_body_at(records, role, k).prev)


def _replace_message(records: list[Record], role: str, k: int, data: bytes | None
                     ) -> list[Record]:
    """`role`'s k-th message in the file replaced by `data` (None: left out)."""
    i = _msg_index(records, role, k)
    if data is None:
        return records[:i] + records[i + 1:]
    return [*records[:i], ("msg", role, data), *records[i + 1:]]


def equivocate(seed: int) -> Result:
    pair = _to_play(seed)
    rng = random.Random(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = cheater.view
    assert view is not None
    plain = [m for m in view.legal_moves if not view.is_challenge(m)]
    first, second = rng.sample(plain, 2)
    seq = cheater.flow.next_seq(cheater.role)
    prev = cheater.flow.last_hash(cheater.role)
    cheater.move(first)
    pair.deliver()
    data = forge(cheater, "move", {"ply": view.ply - 1, "from": second.from_square,
                                   "to": second.to_square}, seq=seq, prev=prev)
    return _deliver_one(pair, cheater, data)


def move_after_resigning(seed: int) -> Result:
    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = cheater.view
    assert view is not None
    move = view.legal_moves[0]
    ply = view.ply
    cheater.resign()
    for data in cheater.data_to_send():
        pair.peer(cheater.other_role).receive(data)
    pair.peer(cheater.other_role).data_to_send()  # the honest side's audit: never delivered
    data = forge(cheater, "move", {"ply": ply, "from": move.from_square, "to": move.to_square})
    return _deliver_one(pair, cheater, data)


# -- flooding: the limits of SPEC 2.10 ------------------------------------------------------

def chat_flood(seed: int) -> Result:
    """The side waiting for a move chats ten lines (the most in a row), then an eleventh."""
    pair = _to_play(seed)
    cheater = pair.joiner if pair.host.my_turn else pair.host
    for i in range(CHATS_IN_A_ROW):
        cheater.chat(f"line {i + 1} of a flood")
        pair.deliver()
    return _deliver_one(pair, cheater, forge(cheater, "chat", {"text": "one line too many"}))


def _shuffle(peer: GotgPeer, last: dict[str, Move]) -> Move:
    """A plain move that undoes `peer`'s last one when it can (so that no challenge comes
    and the game never ends), else any plain move."""
    view = _view(peer)
    plain = [m for m in view.legal_moves if not view.is_challenge(m)]
    back = last.get(peer.role)
    undo = next((m for m in plain if back is not None and m.from_square == back.to_square
                 and m.to_square == back.from_square), None)
    move = undo or plain[0]
    last[peer.role] = move
    return move


def limit_filling_pair(seed: int = 1) -> Pair:
    """A game played up to the message limit of SPEC 2.10: both sides shuffle a piece back
    and forth, the joiner chatting ten lines (the most in a row) before each of its moves,
    until its next message would be number MAX_PLAY_MESSAGES, on its turn."""
    pair = _to_play(seed)
    flooder, last = pair.joiner, dict[str, Move]()
    while True:
        mover = pair.host if pair.host.my_turn else pair.joiner
        if mover is flooder:
            for i in range(CHATS_IN_A_ROW):
                if flooder.flow.next_seq(JOINER) >= MAX_PLAY_MESSAGES:
                    break
                flooder.chat(f"{i}")
            pair.deliver()
            if flooder.flow.next_seq(JOINER) >= MAX_PLAY_MESSAGES:
                return pair
        mover.move(_shuffle(mover, last))
        pair.deliver()


def limit_filling_game(seed: int = 1, over: bool = False) -> Result:
    """`limit_filling_pair`'s game as the host keeps it; with `over`, the joiner then sends
    one chat more (a `message-limit` violation; its own `GotgPeer` refuses to, so the chat is
    forged). The largest transcript an honest game can leave is about this one's size."""
    pair = limit_filling_pair(seed)
    if not over:
        return Result(pair.host, None)
    return _deliver_one(pair, pair.joiner, forge(pair.joiner, "chat", {"text": "over the limit"}))


# -- cheats at the audit --------------------------------------------------------------------

def _finish_with_resignation(pair: Pair, resigner: GotgPeer) -> None:
    resigner.resign()
    for data in resigner.data_to_send():  # the resignation and the resigner's audit
        pair.peer(resigner.other_role).receive(data)


def audit_false_opening(seed: int) -> Result:
    pair = _to_play(seed)
    honest, cheater = pair.host, pair.joiner
    _finish_with_resignation(pair, honest)
    for data in honest.data_to_send():
        cheater.receive(data)
    (audit,) = cheater.data_to_send()
    ranks = bytearray(Envelope.decode(audit).body()["ranks"])
    i = next(i for i in range(21) if ranks[i] != Rank.GENERAL_OF_THE_ARMY)
    ranks[i] = Rank.GENERAL_OF_THE_ARMY
    return _deliver_one(pair, cheater, tamper(cheater, audit, ranks=bytes(ranks)))


def wrong_composition(seed: int) -> Result:
    pair = Pair.new(seed=f"scenario-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    honest, cheater = pair.host, pair.joiner
    side = cheater.side
    assert side is not None
    ranks = list(FULL_SET)
    ranks[ranks.index(Rank.PRIVATE)] = Rank.GENERAL_OF_THE_ARMY  # two 5-star generals
    squares = sorted(home_squares(side)[:21])
    fake = object.__new__(Setup)  # a setup the honest code would never build
    object.__setattr__(fake, "side", side)
    object.__setattr__(fake, "placement", dict(zip(squares, ranks, strict=True)))
    cheater.commit_setup(fake)
    pair.deliver()
    honest.commit_setup(Setup.random(_side(honest), random.Random(seed)))
    pair.deliver()
    honest.resign()
    resign, _honest_audit = honest.data_to_send()
    cheater.flow.process(honest.role, resign)  # its honest code would refuse to go on
    own = cheater._own
    assert own is not None
    audit = forge(cheater, "audit", {"ranks": bytes(own.setup.ranks),
                                     "salts": b"".join(own.salts), "seed": own.seed})
    return _deliver_one(pair, cheater, audit)


def refuse_audit(seed: int) -> Result:
    """The winner never opens its commitments: the loser claims the game (its word)."""
    pair = _to_play(seed)
    honest = pair.host  # the joiner (the cheater) never sends its audit
    _finish_with_resignation(pair, honest)
    honest.claim_forfeit("audit")  # the driver's audit timeout expired
    return Result(honest, None)


def resigner_disputes_the_audit_claim(seed: int) -> Result:
    """The loser resigns, never opens its commitments, and disputes the winner's audit
    claim. Its signed resignation and the winner's audit prove the result: the dispute of
    the claim changes nothing (SPEC 2.6)."""
    pair = _to_play(seed, classes={JOINER: CheatingPeer})
    winner, loser = pair.host, _cheater(pair.joiner)
    loser.refuse_audit = True
    loser.resign()
    pair.deliver()  # the resignation; the winner's audit
    winner.claim_forfeit("audit")  # the driver's audit timeout expired
    pair.deliver()
    loser.dispute(max(loser.flow.claims_made[winner.role]))
    pair.deliver()
    return Result(winner, None)


def stall_on_challenge(seed: int) -> Result:
    """The defender, having seen the attacker's rank, never answers: it loses on time."""
    pair = _to_play(seed)
    rng = random.Random(seed)
    move = _play_until(pair, rng, _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    cheater = pair.peer(attacker.other_role)
    attacker.move(move)
    for data in attacker.data_to_send():
        cheater.receive(data)
    cheater.data_to_send()  # the reply it withholds
    attacker.claim_forfeit("time")
    attacker.data_to_send()
    return Result(attacker, None, winner=attacker.role)


def bad_signature(seed: int) -> Result:
    """A move with the mover's chain fields, signed with a key not the mover's."""
    from p2pgotg.crypto import key_from_seed

    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = cheater.view
    assert view is not None
    move = view.legal_moves[0]
    body = next_body(cheater, "move", {"ply": view.ply, "from": move.from_square,
                                       "to": move.to_square})
    return _deliver_one(pair, cheater, seal(key_from_seed(bytes(32)), body).encode())


# -- cheats in the blind mode ---------------------------------------------------------------

BLIND = RuleOptions(challenge_mode=ChallengeMode.BLIND)


class CheatingPeer(GotgPeer):
    """A peer whose honest code is bent in one place of the blind challenge, consistently,
    so that its own chain of messages stays valid and only the audit (or the attacker's
    proof) can tell."""

    garble_slot: int | None = None  # as defender: spoil this slot's ciphertext (1..15)
    rotate_outcomes: bool = False  # as defender: swap the attacker-wins and defender-wins tokens
    fake_rank: Rank | None = None  # as attacker: choose the slot of this rank instead
    withhold_outcome: bool = False  # as attacker: learn the outcome, then say nothing
    other_sender_seed: bytes | None = None  # publish and use an S not from the committed seed
    refuse_audit: bool = False  # never open its commitments at the end

    def _duties(self) -> list[Event]:
        if self.refuse_audit and self.flow.is_over:
            return []
        return super()._duties()

    def _sender_keypair(self) -> tuple[bytes, bytes]:
        if self.other_sender_seed is None:
            return super()._sender_keypair()
        return ot.sender_keypair(self.other_sender_seed)

    def _attacker_point(self, pid: int) -> bytes:
        if self.fake_rank is None:
            return super()._attacker_point(pid)
        S = self.flow.reveals[self.other_role].ot
        assert S is not None and self._own is not None
        return ot.receiver_choose(self._own.seed, len(self.flow.blind_log), S,
                                  int(self.fake_rank) + 1)[1]

    def _blind_duty(self) -> list[Event]:
        pending, own = self.flow.pending, self._own
        assert own is not None
        if pending is not None and pending.attacker == self.role and pending.cts:
            if self.withhold_outcome:
                return []
            if self.fake_rank is not None:  # decrypt the slot it really chose
                S = self.flow.reveals[self.other_role].ot
                assert S is not None
                x = ot.receiver_scalar(own.seed, pending.n)
                token = ot.receiver_decrypt(x, S, pending.point, self._gid, pending.n,
                                            int(self.fake_rank) + 1, pending.cts)
                return self._send("blind_outcome", {"ply": pending.ply, "token": token})
        if pending is not None and pending.attacker == self.other_role and not pending.cts and (
                self.garble_slot is not None or self.rotate_outcomes):
            gid, game = self._gid, self.flow.game
            assert game is not None
            defender = game.piece_at(pending.move.to_square)
            assert defender is not None
            y, S = self._sender_keypair()
            tokens = ot.outcome_tokens(own.seed, pending.n)
            d_rank = own.setup.ranks[defender.pid]
            swap = {0: 1, 1: 0} if self.rotate_outcomes else {}  # winner and loser swapped
            table = [tokens[swap.get(o, o)] for o in
                     (outcome_index(Rank(i), d_rank) for i in range(15))]
            cts = ot.sender_ciphertexts(y, S, pending.point, gid, pending.n, table)
            if self.garble_slot is not None:
                i = self.garble_slot - 1
                cts[i] = bytes(b ^ 0x55 for b in cts[i])
            commits = [ot.token_commitment(gid, pending.n, o, t) for o, t in enumerate(tokens)]
            return self._send("blind_reply", {"ply": pending.ply, "commits": b"".join(commits),
                                              "cts": b"".join(cts)})
        return super()._blind_duty()


def _blind_pair(seed: int, cheater_role: str, **bends: object) -> Pair:
    pair = Pair.new(BLIND, seed=f"blind-scenario-{seed}", classes={cheater_role: CheatingPeer})
    cheater = pair.peer(cheater_role)
    for name, value in bends.items():
        setattr(cheater, name, value)
    pair.handshake(rng=random.Random(seed))
    return pair


def _blind_challenge_by(pair: Pair, attacker_role: str, seed: int) -> Move:
    """Random play until `attacker_role` is to move and can challenge with a piece that is
    not its flag (a flag's own view would refuse some of the bent outcomes)."""
    rng = random.Random(seed)

    def want(peer: GotgPeer) -> Move | None:
        view = peer.view
        if peer.role != attacker_role or view is None:
            return None
        return next((m for m in view.legal_moves if view.is_challenge(m)
                     and _own_rank_on(peer, m.from_square) is not Rank.FLAG), None)

    return _play_until(pair, rng, want)


def _finish_blind(pair: Pair, honest: GotgPeer) -> Result:
    """The honest side resigns at once; both audits follow; the verdict is the audit's."""
    honest.resign()
    pair.deliver()
    return Result(honest, None)


def _host_attacks_garbled(seed: int, chosen: bool) -> Pair:
    """The host challenges; the joiner, defending, spoils the host's own slot (`chosen`) or
    another one."""
    pair = _blind_pair(seed, JOINER)
    move = _blind_challenge_by(pair, HOST, seed)
    host = pair.host
    rank = _own_rank_on(host, move.from_square)
    slot = int(rank) + 1
    _cheater(pair.joiner).garble_slot = slot if chosen else (15 if slot != 15 else 1)
    host.move(move)
    pair.deliver()
    return pair


def blind_garbled_other_slot(seed: int) -> Result:
    """The defender spoils a slot the attacker did not choose: only the audit can tell."""
    pair = _host_attacks_garbled(seed, chosen=False)
    return _finish_blind(pair, pair.host)


def blind_garbled_chosen_slot(seed: int) -> Result:
    """The defender spoils the attacker's slot: the attacker proves it at once."""
    return Result(_host_attacks_garbled(seed, chosen=True).host, None)


def blind_wrong_outcome(seed: int) -> Result:
    """The defender encodes valid tokens for the wrong outcomes."""
    pair = _blind_pair(seed, JOINER)
    joiner = pair.joiner
    rng = random.Random(seed)

    def want(peer: GotgPeer) -> Move | None:  # the scenario may look at both views
        view, mine = peer.view, joiner.view
        if peer.role != HOST or view is None or mine is None:
            return None
        return next((m for m in view.legal_moves if view.is_challenge(m)
                     and _own_rank_on(joiner, m.to_square) is not Rank.FLAG
                     and _own_rank_on(peer, m.from_square) is not Rank.FLAG),
                    None)

    move = _play_until(pair, rng, want)
    _cheater(pair.joiner).rotate_outcomes = True
    pair.host.move(move)
    pair.deliver()
    _cheater(pair.joiner).rotate_outcomes = False
    if pair.host.flow.is_over:
        return Result(pair.host, None)
    return _finish_blind(pair, pair.host)


def blind_attacker_other_rank(seed: int) -> Result:
    """The attacker asks for the slot of a rank it does not have."""
    pair = _blind_pair(seed, JOINER)
    move = _blind_challenge_by(pair, JOINER, seed)
    joiner = _cheater(pair.joiner)
    rank = _own_rank_on(joiner, move.from_square)
    joiner.fake_rank = Rank.SPY if rank != Rank.SPY else Rank.PRIVATE
    joiner.move(move)
    pair.deliver()
    joiner.fake_rank = None
    if pair.host.flow.is_over:
        return Result(pair.host, None)
    return _finish_blind(pair, pair.host)


def blind_attacker_aborts(seed: int) -> Result:
    """The attacker learns the outcome and goes silent: it loses on time."""
    pair = _blind_pair(seed, JOINER, withhold_outcome=True)
    move = _blind_challenge_by(pair, JOINER, seed)
    pair.joiner.move(move)
    pair.deliver()
    pair.host.claim_forfeit("time")
    pair.host.data_to_send()
    return Result(pair.host, None)


def blind_replayed_point(seed: int) -> Result:
    pair = Pair.new(BLIND, seed=f"blind-scenario-{seed}")
    pair.handshake(rng=random.Random(seed))
    rng = random.Random(seed)
    first = _play_until(pair, rng, _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    attacker.move(first)
    used = Envelope.decode(attacker.flow.senders[attacker.role].envelopes[-1]).body()["ot_r"]
    pair.deliver()
    while not pair.host.flow.is_over:
        mover = pair.host if pair.host.my_turn else pair.joiner
        challenge = _a_challenge(mover)
        if mover is attacker and challenge is not None:
            view = mover.view
            assert view is not None
            data = forge(mover, "move", {"ply": view.ply, "from": challenge.from_square,
                                         "to": challenge.to_square, "ot_r": used})
            return _deliver_one(pair, mover, data)
        mover.move(rng.choice(_view(mover).legal_moves))
        pair.deliver()
    raise RuntimeError("no second challenge came")


def blind_invalid_point(seed: int) -> Result:
    pair = Pair.new(BLIND, seed=f"blind-scenario-{seed}")
    pair.handshake(rng=random.Random(seed))
    move = _play_until(pair, random.Random(seed), _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    view = attacker.view
    assert view is not None
    small_order = bytes(32)  # encodes a point of order 4
    data = forge(attacker, "move", {"ply": view.ply, "from": move.from_square,
                                    "to": move.to_square, "ot_r": small_order})
    return _deliver_one(pair, attacker, data)


def blind_other_sender_key(seed: int) -> Result:
    """The defender's published S is not the one its committed seed gives."""
    pair = _blind_pair(seed, JOINER, other_sender_seed=bytes(range(32)))
    move = _blind_challenge_by(pair, HOST, seed)
    pair.host.move(move)
    pair.deliver()
    if pair.host.flow.is_over:
        return Result(pair.host, None)
    return _finish_blind(pair, pair.host)


def _blind_waiting_for_attacker(seed: int) -> tuple[Pair, GotgPeer, GotgPeer]:
    """A blind challenge by the joiner, the host's table delivered, the joiner's answer
    held back: (pair, attacker, defender)."""
    pair = _blind_pair(seed, JOINER, withhold_outcome=True)
    move = _blind_challenge_by(pair, JOINER, seed)
    pair.joiner.move(move)
    pair.deliver()
    return pair, pair.joiner, pair.host


def blind_token_not_given(seed: int) -> Result:
    """The attacker announces a token the transfer did not give it."""
    pair, attacker, _defender = _blind_waiting_for_attacker(seed)
    pending = attacker.flow.pending
    assert pending is not None
    data = forge(attacker, "blind_outcome", {"ply": pending.ply, "token": bytes(32)})
    return _deliver_one(pair, attacker, data)


def blind_false_proof(seed: int) -> Result:
    """The attacker claims a bad table when the table was good."""
    pair, attacker, _defender = _blind_waiting_for_attacker(seed)
    pending, own, view = attacker.flow.pending, attacker._own, attacker.view
    assert pending is not None and own is not None and view is not None
    piece = view.piece_at(pending.move.from_square)
    assert piece is not None
    x = ot.receiver_scalar(own.seed, pending.n)
    data = forge(attacker, "blind_proof", {"ply": pending.ply, "x": x,
                                           "open": attacker._opening(piece.pid)})
    return _deliver_one(pair, attacker, data)


# -- claims, crossings and the hellos (fair play at the edges) ------------------------------

TIMED = RuleOptions(move_seconds=60)


def _to_play_with(seed: int, options: RuleOptions) -> Pair:
    pair = Pair.new(options, seed=f"edge-{seed}")
    pair.handshake(rng=random.Random(seed))
    return pair


def _instead_of_last(peer: GotgPeer, sent: bytes, type_: str, fields: dict[str, Any]) -> bytes:
    """What a cheater sends instead of `sent`, its honest code's last message: the same place
    in its chain (seq, prev, ack), another content."""
    body = Envelope.decode(sent).body()
    return forge(peer, type_, fields, seq=body.seq, prev=body.prev, ack=body.ack)


def claim_without_a_clock(seed: int) -> Result:
    """A time claim against a side that owes a move, in a game with no clock."""
    pair = _to_play(seed)
    waiting = pair.joiner if pair.host.my_turn else pair.host
    return _deliver_one(pair, waiting, forge(waiting, "forfeit_claim", {"reason": "time"}))


def claim_on_own_turn(seed: int) -> Result:
    """A time claim by the side to move (a clock is set): the claimant owes the move."""
    pair = _to_play_with(seed, TIMED)
    mover = pair.host if pair.host.my_turn else pair.joiner
    return _deliver_one(pair, mover, forge(mover, "forfeit_claim", {"reason": "time"}))


def claim_instead_of_reply(seed: int) -> Result:
    """The defender of a challenge, owing its reply, claims time instead of replying."""
    pair = _to_play_with(seed, TIMED)
    move = _play_until(pair, random.Random(seed), _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    cheater = pair.peer(attacker.other_role)
    attacker.move(move)
    for data in attacker.data_to_send():
        cheater.receive(data)
    (reply,) = cheater.data_to_send()
    return _deliver_one(pair, cheater, _instead_of_last(cheater, reply, "forfeit_claim",
                                                        {"reason": "time"}))


def claim_in_the_coin_toss(seed: int) -> Result:
    """The joiner, owing the opening of its coin, claims the game instead."""
    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    for data in pair.joiner.data_to_send():
        pair.host.receive(data)
    for data in pair.host.data_to_send():  # the host's coin
        pair.joiner.receive(data)
    (coin_open,) = pair.joiner.data_to_send()
    return _deliver_one(pair, pair.joiner, _instead_of_last(
        pair.joiner, coin_open, "forfeit_claim", {"reason": "abandoned"}))


def claim_after_the_answer(seed: int) -> Result:
    """A time claim after the owed answer arrived (its ack shows it), in an untimed game."""
    pair = _to_play(seed)
    move = _play_until(pair, random.Random(seed), _a_challenge)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    cheater.move(move)
    pair.deliver()  # the reply came
    if pair.host.flow.is_over:
        raise RuntimeError("the challenge ended the game")
    return _deliver_one(pair, cheater, forge(cheater, "forfeit_claim", {"reason": "time"}))


def audit_claim_before_own_audit(seed: int) -> Result:
    """The loser resigns and, instead of its audit, claims the winner refused the audit."""
    pair = _to_play(seed)
    cheater = pair.joiner
    cheater.resign()
    resign, audit = cheater.data_to_send()
    pair.host.receive(resign)
    pair.host.data_to_send()  # the honest host's audit, in flight
    return _deliver_one(pair, cheater, _instead_of_last(cheater, audit, "forfeit_claim",
                                                        {"reason": "audit"}))


def instant_audit_claim(seed: int) -> Result:
    """The loser sends its resignation, its audit and an audit claim in one burst, before the
    winner's audit could reach it. The winner's audit, sent on the resignation, crosses the
    claim: the claim is void, the audit completes, and nobody is convicted."""
    pair = _to_play(seed)
    loser, winner = pair.joiner, pair.host
    loser.resign()
    burst = loser.data_to_send()
    burst.append(forge(loser, "forfeit_claim", {"reason": "audit"}, record=True))
    for data in burst:
        winner.receive(data)
    for data in winner.data_to_send():  # the winner's audit, sent on the resignation
        loser.flow.process(winner.role, data)
    return Result(winner, None)


def blind_table_crossing_resignation(seed: int) -> Result:
    """The attacker of a blind challenge resigns while the defender's table is on its way:
    the table crossed the end on the wire and is no violation."""
    pair = Pair.new(BLIND, seed=f"edge-{seed}")
    pair.handshake(rng=random.Random(seed))
    move = _play_until(pair, random.Random(seed), _a_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    defender = pair.peer(attacker.other_role)
    attacker.move(move)
    for data in attacker.data_to_send():
        defender.receive(data)
    table = defender.data_to_send()  # in flight
    attacker.resign()
    for data in table:
        attacker.receive(data)
    pair.deliver()
    return Result(attacker, None, winner=defender.role)


def time_claim_crossing_resignation(seed: int) -> Result:
    """The side to move resigns while the other's time claim is on its way: the resignation
    (a fact) decides, on both sides, and nobody is convicted."""
    pair = _to_play_with(seed, TIMED)
    mover = pair.host if pair.host.my_turn else pair.joiner
    claimant = pair.peer(mover.other_role)
    claimant.claim_forfeit("time")
    mover.resign()
    pair.deliver()
    return Result(claimant, None, winner=claimant.role)


def crossing_abandonment_claims(seed: int) -> Result:
    """A network split: one side's move is lost in flight, and each side claims the other
    went away. The claims cross: a draw, on both sides, resting on both claims."""
    pair = _to_play(seed)
    mover = pair.host if pair.host.my_turn else pair.joiner
    view = _view(mover)
    mover.move(next(m for m in view.legal_moves if not view.is_challenge(m)))
    lost = mover.data_to_send()
    waiting = pair.peer(mover.other_role)
    mover.claim_forfeit("abandoned")
    waiting.claim_forfeit("abandoned")
    for data in lost:
        waiting.receive(data)
    pair.deliver()
    return Result(pair.host, None)


def _crossing_end_at_a_challenge(seed: int, options: RuleOptions, ending: str) -> Result:
    """The attacker ends the game (`ending`: it resigns, or claims the time of the reply it
    is owed) while its challenge waits for the reply; the defender's reply and its next
    move both cross that end on the wire. The defender's move is judged on the board after
    its reply, as it saw it, so both files give one verdict and nobody is convicted."""
    pair = _to_play_with(seed, options)
    rng = random.Random(seed)

    def safe_challenge(peer: GotgPeer) -> Move | None:  # (neither piece a flag: play goes on)
        view = _view(peer)
        for move in view.legal_moves:
            target = view.piece_at(move.to_square)
            if view.is_challenge(move) and target is not None \
                    and _own_rank_on(peer, move.from_square) is not Rank.FLAG \
                    and pair.peer(peer.other_role).own_setup is not None \
                    and _own_rank_on(pair.peer(peer.other_role), move.to_square) \
                    is not Rank.FLAG:
                return move
        return None

    move = _play_until(pair, rng, safe_challenge)
    attacker = pair.host if pair.host.my_turn else pair.joiner
    defender = pair.peer(attacker.other_role)
    attacker.move(move)
    for data in attacker.data_to_send():
        defender.receive(data)
    if ending == "resign":
        attacker.resign()
    else:
        attacker.claim_forfeit(ending)
    end = attacker.data_to_send()
    view = _view(defender)
    assert defender.my_turn, "after its reply, the defender is to move"
    defender.move(rng.choice(view.legal_moves))
    for data in defender.data_to_send():  # the reply, then the move: both cross the end
        attacker.receive(data)
    for data in end:
        defender.receive(data)
    pair.deliver()
    winner = defender if ending == "resign" else attacker
    return Result(attacker, None, other=defender, winner=winner.role)


def crossing_resignation_at_a_challenge(seed: int) -> Result:
    return _crossing_end_at_a_challenge(seed, RuleOptions(), "resign")


def crossing_time_claim_at_a_challenge(seed: int) -> Result:
    return _crossing_end_at_a_challenge(seed, TIMED, "time")


def blind_probe_crossing_resignation(seed: int) -> Result:
    """A blind attacker queries another rank's slot while the defender resigns: its R
    crossed the end on the wire, and the state of play takes it, so the audit replays that
    challenge on both sides and convicts the attacker in both files."""
    pair = _blind_pair(seed, JOINER)
    move = _blind_challenge_by(pair, JOINER, seed)
    joiner = _cheater(pair.joiner)
    rank = _own_rank_on(joiner, move.from_square)
    joiner.fake_rank = Rank.SPY if rank != Rank.SPY else Rank.PRIVATE
    joiner.move(move)
    joiner.fake_rank = None
    probe = joiner.data_to_send()
    pair.host.resign()
    resignation = pair.host.data_to_send()
    for data in probe:
        pair.host.receive(data)
    for data in resignation:
        joiner.receive(data)
    pair.deliver()
    return Result(pair.host, None, other=joiner)


def turn_action_crossing_a_turn(seed: int) -> Result:
    """The side to move offers a draw with its move; the other side signs a decline whose
    `ack` stops before that move. In the receiver's order the decline looks in turn, but in
    its sender's view there was no offer and the turn was not its own: `out-of-turn`, in
    both files."""
    pair = _to_play(seed)
    mover = pair.host if pair.host.my_turn else pair.joiner
    cheater = pair.peer(mover.other_role)
    view = _view(mover)
    before = mover.flow.senders[mover.role].hashes[-1]
    mover.move(next(m for m in view.legal_moves if not view.is_challenge(m)), offer_draw=True)
    offer = mover.data_to_send()
    decline = forge(cheater, "draw_decline", {}, ack=before, record=True)
    for data in offer:
        cheater.flow.process(mover.role, data)  # (it holds the offer in its own file)
    return _deliver_one(pair, cheater, decline)


def disputed_time_claim(seed: int) -> Result:
    """A move-time claim that the claimed side, present and disagreeing, disputes."""
    pair = _to_play_with(seed, TIMED)
    mover = pair.host if pair.host.my_turn else pair.joiner
    claimant = pair.peer(mover.other_role)
    claimant.claim_forfeit("time")
    pair.deliver()
    claim = max(mover.flow.claims[claimant.role])
    mover.dispute(claim)
    pair.deliver()
    return Result(claimant, None, winner=claimant.role)


def refuse_coin_opening(seed: int) -> Result:
    """The joiner has seen the host's coin (so knows who plays White) and never opens its
    own: the host claims the game when the duty deadline passes."""
    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    for data in pair.joiner.data_to_send():
        pair.host.receive(data)
    for data in pair.host.data_to_send():  # the host's coin
        pair.joiner.receive(data)
    pair.joiner.data_to_send()  # withheld
    pair.host.claim_forfeit("time")
    return Result(pair.host, None)


def never_commit_a_setup(seed: int) -> Result:
    """The joiner never commits a setup: the host claims the game at the setup deadline."""
    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    pair.host.commit_setup(Setup.random(_side(pair.host), random.Random(seed)))
    pair.deliver()
    pair.host.claim_forfeit("time")
    pair.deliver()
    return Result(pair.host, None)


def claim_after_the_end(seed: int) -> Result:
    """A time claim from a side that had already seen the game end."""
    pair = _to_play_with(seed, TIMED)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    honest = pair.peer(cheater.other_role)
    honest.resign()
    pair.deliver()
    return _deliver_one(pair, cheater, forge(cheater, "forfeit_claim", {"reason": "time"}))


def prev_contradicts_chain(seed: int) -> Result:
    """A message whose `prev` is not the hash of the sender's previous message."""
    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = _view(cheater)
    move = next(m for m in view.legal_moves if not view.is_challenge(m))
    return _deliver_one(pair, cheater, forge(cheater, "move", {
        "ply": view.ply, "from": move.from_square, "to": move.to_square}, prev=bytes(range(32))))


def ack_goes_back(seed: int) -> Result:
    """A zero ack after a non-zero one: the sender's own signed messages contradict."""
    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = _view(cheater)
    move = next(m for m in view.legal_moves if not view.is_challenge(m))
    return _deliver_one(pair, cheater, forge(cheater, "move", {
        "ply": view.ply, "from": move.from_square, "to": move.to_square}, ack=bytes(32)))


def repeated_map_key(seed: int) -> Result:
    """A move whose body repeats the `to` key: two decoders could read two moves."""
    import msgpack

    from p2pgotg.crypto import sign

    pair = _to_play(seed)
    cheater = pair.host if pair.host.my_turn else pair.joiner
    view = _view(cheater)
    moves = [m for m in view.legal_moves if not view.is_challenge(m)]
    first = moves[0]
    second = next(m for m in moves if m.to_square != first.to_square)
    flow = cheater.flow
    peer_hashes = flow.senders[cheater.other_role].hashes
    fields: list[tuple[str, Any]] = [
        ("t", "move"), ("seq", flow.next_seq(cheater.role)),
        ("prev", flow.last_hash(cheater.role)), ("ack", peer_hashes[-1]),
        ("game", flow.game_id), ("ply", view.ply), ("from", first.from_square),
        ("to", first.to_square), ("to", second.to_square)]
    body = bytes([0x80 | len(fields)]) + b"".join(
        msgpack.packb(k) + msgpack.packb(v, use_bin_type=True) for k, v in fields)
    data = msgpack.packb({"body": body, "sig": sign(cheater._key, body)}, use_bin_type=True)
    return _deliver_one(pair, cheater, data)


def reveal_without_acking_the_commit(seed: int) -> Result:
    """The joiner reveals its setup with an ack that does not reach the host's commitment,
    although that had arrived: by what the reveal's own sender had seen, it revealed before
    both setups were committed. Judged by the ack, the same on both sides."""
    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    cheater = pair.joiner
    ack = cheater.flow.last_hash(HOST)  # the host's last message before its commitment
    cheater.commit_setup(Setup.random(_side(cheater), random.Random(seed)))
    pair.host.commit_setup(Setup.random(_side(pair.host), random.Random(seed + 1)))
    for data in cheater.data_to_send():
        pair.host.receive(data)
    host_out = pair.host.data_to_send()  # its commitment and its reveal
    cheater.receive(host_out[0])
    (reveal,) = cheater.data_to_send()
    body = Envelope.decode(reveal).body()
    data = forge(cheater, "setup_reveal", dict(body.fields), seq=body.seq, prev=body.prev,
                 ack=ack)
    return _deliver_one(pair, cheater, data)


def _hello_of(pair: Pair, **changes: Any) -> Result:
    """The joiner's hello with `changes`, re-signed: the host keeps it as evidence."""
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    (hello,) = pair.joiner.data_to_send()
    return _deliver_one(pair, pair.joiner, tamper(pair.joiner, hello, **changes))


def hello_other_version(seed: int) -> Result:
    return _hello_of(Pair.new(seed=f"edge-{seed}"), version=2)


def hello_wrong_role(seed: int) -> Result:
    return _hello_of(Pair.new(seed=f"edge-{seed}"), role=HOST)


def hello_same_nonce(seed: int) -> Result:
    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    host_hello = pair.host.data_to_send()[0]
    pair.joiner.receive(host_hello)
    pair.joiner.accept()
    (hello,) = pair.joiner.data_to_send()
    nonce = Envelope.decode(host_hello).body()["nonce"]
    return _deliver_one(pair, pair.joiner, tamper(pair.joiner, hello, nonce=nonce))


def hello_other_certificate(seed: int) -> Result:
    return _hello_of(Pair.new(seed=f"edge-{seed}"), tls=bytes(range(32)))


def hello_bad_key(seed: int) -> Result:
    """A host hello carrying the identity point as its key, 'signed' so that it verifies
    (with that key any signature verifies for any message)."""
    from nacl.bindings import crypto_scalarmult_ed25519_base_noclamp

    from p2pgotg.protocol.envelope import Envelope as Env
    from p2pgotg.protocol.messages import Body

    pair = Pair.new(seed=f"edge-{seed}")
    pair.host.start()
    (hello,) = pair.host.data_to_send()
    body = Envelope.decode(hello).body()
    identity = b"\x01" + bytes(31)
    fields = dict(body.fields)
    fields["key"] = identity
    new = Body("hello", 0, bytes(32), bytes(32), None, fields).encode()
    s = (7).to_bytes(32, "little")
    forged = Env(new, crypto_scalarmult_ed25519_base_noclamp(s) + s).encode()
    result = _deliver_one(pair, pair.host, forged)
    # Refused and not kept (it proves nothing); a file holding it is what its owner could
    # have made alone: unreadable, never a conviction.
    return Result(result.honest, result.error, records=[("msg", HOST, forged)])


def _blind_honest(seed: int) -> Result:
    pair = Pair.new(BLIND, seed=f"blind-scenario-{seed}")
    pair.handshake(rng=random.Random(seed))
    pair.play_random(random.Random(seed))
    return Result(pair.host, None)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("honest-game", "none: a whole honest game (seed 1's random game: the host "
             "captures the joiner's flag)", None, None, 0, honest_game, "host",
             "flag_captured"),
    Scenario("honest-resignation", "none: a short game ended by resignation", None, None, 0,
             honest_resignation, "host", "resignation"),
    # the handshake and the hellos
    Scenario("steer-coin", "open the coin commitment to another secret", JOINER,
             "coin-open", 1, steer_coin),
    Scenario("change-options", "accept other rule options than the host's", JOINER,
             "options", 1, change_options),
    Scenario("hello-version", "a hello of another protocol version", JOINER, "version", 1,
             hello_other_version),
    Scenario("hello-role", "a hello claiming the other role", JOINER, "hello-role", 1,
             hello_wrong_role),
    Scenario("hello-nonce", "a hello reusing the other side's nonce", JOINER,
             "hello-fields", 1, hello_same_nonce),
    Scenario("hello-tls-binding", "a hello binding another TLS certificate", JOINER,
             "tls-binding", 1, hello_other_certificate),
    Scenario("hello-bad-key", "a hello whose key is the identity point (signatures that "
             "verify for anything, so that the hello proves nothing)", None, None, 2,
             hello_bad_key),
    Scenario("refuse-coin-opening", "see the host's coin, then never open one's own", JOINER,
             None, 4, refuse_coin_opening, "host", "time_forfeit"),
    # the setup
    Scenario("change-setup", "change the setup after seeing the opponent's", JOINER,
             "setup-changed", 1, change_setup_after_commit),
    Scenario("setup-outside-home", "a setup outside the home rows", JOINER,
             "setup-squares", 1, setup_outside_home),
    Scenario("reveal-before-commit", "show the setup before both are committed", JOINER,
             "privacy-screen", 1, reveal_before_commit),
    Scenario("reveal-without-ack", "reveal with an ack that does not reach the other's "
             "commitment", JOINER, "privacy-screen", 1, reveal_without_acking_the_commit),
    Scenario("never-commit", "never commit a setup", JOINER, None, 4, never_commit_a_setup,
             "host", "time_forfeit"),
    # play
    Scenario("attacker-lies", "lie about the attacker's rank in a challenge", None,
             "false-opening", 1, attacker_lies),
    Scenario("defender-lies", "lie about the defender's rank in a challenge", None,
             "false-opening", 1, defender_lies),
    Scenario("false-flag-claim", "claim a flag win that the rules do not give", None,
             "false-flag-claim", 1, false_flag_claim),
    Scenario("illegal-move", "a move the rules forbid", None, "illegal-move", 1,
             illegal_move),
    Scenario("out-of-turn", "move when it is not one's turn", None, "out-of-turn", 1,
             move_out_of_turn),
    Scenario("repeated-key", "a message repeating a map key", None, "malformed-message", 1,
             repeated_map_key),
    Scenario("equivocate", "send two different messages in the same place", None,
             "equivocation", 1, equivocate),
    Scenario("chain-prev", "a prev that is not the sender's previous message", None,
             "chain-prev", 1, prev_contradicts_chain),
    Scenario("ack-goes-back", "an ack older than the sender's previous one", None,
             "chain-ack", 1, ack_goes_back),
    Scenario("move-after-resigning", "play on after the game ended", None, "after-end", 1,
             move_after_resigning),
    Scenario("chat-flood", "flood the other side with chat: an eleventh chat message in a row",
             None, "chat-limit", 1, chat_flood),
    # claims
    Scenario("claim-without-clock", "a time claim in a game with no clock", None,
             "false-claim", 1, claim_without_a_clock),
    Scenario("claim-on-own-turn", "a time claim by the side to move", None, "false-claim", 1,
             claim_on_own_turn),
    Scenario("claim-instead-of-reply", "a time claim instead of the reply one owes", None,
             "false-claim", 1, claim_instead_of_reply),
    Scenario("claim-in-coin-toss", "a claim while owing the coin's opening", JOINER,
             "false-claim", 1, claim_in_the_coin_toss),
    Scenario("claim-after-answer", "a time claim after the owed answer arrived", None,
             "false-claim", 1, claim_after_the_answer),
    Scenario("claim-after-end", "a time claim after seeing the end", None, "after-end", 1,
             claim_after_the_end),
    Scenario("audit-claim-early", "an audit claim before one's own audit", JOINER,
             "false-claim", 1, audit_claim_before_own_audit),
    Scenario("instant-audit-claim", "resignation, audit and audit claim in one burst",
             None, None, 0, instant_audit_claim, "host", "resignation"),
    Scenario("stall-on-challenge", "withhold the answer to a challenge", None, None, 4,
             stall_on_challenge, None, "time_forfeit"),
    Scenario("disputed-time-claim", "a move-time claim the other side disputes", None, None,
             4, disputed_time_claim, None, "time_forfeit"),
    Scenario("crossing-claims", "both sides claim abandonment across a network split",
             None, None, 4, crossing_abandonment_claims, "draw", "abandonment"),
    Scenario("claim-crossing-resignation", "a time claim crossing the other's resignation",
             None, None, 0, time_claim_crossing_resignation, None, "resignation"),
    Scenario("blind-table-crossing-resignation", "a blind table crossing the attacker's "
             "resignation", None, None, 0, blind_table_crossing_resignation, None,
             "resignation"),
    Scenario("crossing-resignation-at-a-challenge", "the attacker resigns with its challenge "
             "waiting; the defender's reply and next move cross the resignation", None, None,
             0, crossing_resignation_at_a_challenge, None, "resignation"),
    Scenario("crossing-time-claim-at-a-challenge", "the attacker claims the time of the reply "
             "it is owed; the defender's reply and next move cross the claim", None, None, 4,
             crossing_time_claim_at_a_challenge, None, "time_forfeit"),
    Scenario("blind-probe-crossing-resignation", "blind: the attacker queries another rank's "
             "slot while the defender resigns", JOINER, "blind-wrong-input", 1,
             blind_probe_crossing_resignation),
    Scenario("turn-action-crossing-a-turn", "a draw decline whose ack stops before the move "
             "that offered the draw", None, "out-of-turn", 1, turn_action_crossing_a_turn),
    # the audit
    Scenario("audit-false-opening", "open a commitment to another rank at the audit", JOINER,
             "false-opening", 1, audit_false_opening),
    Scenario("wrong-composition", "a setup with the wrong composition", JOINER,
             "composition", 1, wrong_composition),
    Scenario("refuse-audit", "refuse the audit", JOINER, None, 4, refuse_audit, "host",
             "abandonment"),
    Scenario("resigner-disputes-audit-claim", "resign, never open one's commitments, and "
             "dispute the winner's audit claim", None, None, 0,
             resigner_disputes_the_audit_claim, "host", "resignation"),
    # the transcript file: what its owner can do proves nothing about the other side
    Scenario("replay-other-game", "a message of another game spliced into the file", None,
             None, 2, replay_other_game),
    Scenario("drop-message", "one of the other side's messages left out of the file", None,
             None, 2, drop_a_message),
    Scenario("swap-messages", "two of the other side's messages swapped in the file", None,
             None, 2, swap_two_messages),
    Scenario("damaged-own-secrets", "the owner's own saved secrets damaged", None, None, 2,
             damage_own_secrets),
    # blind mode
    Scenario("blind-honest-game", "none: a whole honest blind-mode game (seed 1's random "
             "game: the host captures the joiner's flag)", None, None, 0,
             lambda seed: _blind_honest(seed), "host", "flag_captured"),
    Scenario("blind-garbled-slot", "blind: the defender spoils a slot the attacker did not "
             "choose", JOINER, "blind-wrong-table", 1, blind_garbled_other_slot),
    Scenario("blind-garbled-chosen-slot", "blind: the defender spoils the attacker's slot",
             JOINER, "blind-bad-token", 1, blind_garbled_chosen_slot),
    Scenario("blind-wrong-outcome", "blind: the defender encodes a wrong outcome", JOINER,
             "blind-wrong-table", 1, blind_wrong_outcome),
    Scenario("blind-attacker-other-rank", "blind: the attacker uses another rank", JOINER,
             "blind-wrong-input", 1, blind_attacker_other_rank),
    Scenario("blind-attacker-aborts", "blind: the attacker aborts after learning the outcome",
             None, None, 4, blind_attacker_aborts, "host", "time_forfeit"),
    Scenario("blind-replayed-point", "blind: a replayed OT point", None, "replayed-point", 1,
             blind_replayed_point),
    Scenario("blind-invalid-point", "blind: an invalid OT point", None, "invalid-point", 1,
             blind_invalid_point),
    Scenario("blind-other-sender-key", "blind: an OT key S not from the committed seed",
             JOINER, "blind-sender-key", 1, blind_other_sender_key),
    Scenario("blind-token-not-given", "blind: announce a token the transfer did not give",
             JOINER, "blind-token", 1, blind_token_not_given),
    Scenario("blind-false-proof", "blind: a false proof of a bad table", JOINER,
             "false-proof", 1, blind_false_proof),
)


def transcript_bytes(result: Result) -> bytes:
    """The file the scenario's honest side keeps (or the edited one it stands for)."""
    honest = result.honest
    records = result.records if result.records is not None else honest.take_records()
    return encode_header(honest.role, honest.public_key) + b"".join(
        encode_record(r) for r in records)


def write_transcripts(outdir: Path, seed: int = 1) -> dict[str, dict[str, Any]]:
    """Write each scenario's honest-side transcript (both sides' files, named `-host` and
    `-joiner`, when the scenario keeps both) and a manifest of expected verdicts."""
    from protocol.towers_scenarios import TOWERS_SCENARIOS

    outdir.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for scenario in SCENARIOS + TOWERS_SCENARIOS:
        result = scenario.run(seed)
        owner = result.honest.role
        cheater = (scenario.cheater or other(owner)) if scenario.rule else None
        files = [(f"{scenario.name}.gtr", result)]
        if result.other is not None:
            files = [(f"{scenario.name}-{peer.role}.gtr", Result(peer, None))
                     for peer in sorted((result.honest, result.other), key=lambda p: p.role)]
        # who wins: the breaker of a rule loses (SPEC 2.6); no verdict in an unreadable or
        # unfinished file
        winner = other(cheater) if cheater else result.winner or scenario.winner
        if scenario.exit_code in (2, 3):
            winner = None
        for name, kept in files:
            (outdir / name).write_bytes(transcript_bytes(kept))
            manifest[name] = {"cheat": scenario.cheat, "exit": scenario.exit_code,
                              "cheater": cheater, "rule": scenario.rule,
                              "owner": kept.honest.role, "winner": winner,
                              "termination": scenario.termination}
            if result.other is not None:
                manifest[name]["game"] = scenario.name
    from protocol.table_scenarios import write_tables

    manifest.update(write_tables(outdir, seed))
    (outdir / "expected.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


if __name__ == "__main__":
    write_transcripts(Path(sys.argv[1] if len(sys.argv) > 1 else "protocol/transcripts"))
