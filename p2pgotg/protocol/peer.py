"""One side of a game: the sans-IO peer state machine (h11 style).

Bytes in (`receive`), events out; actions in (`move`, `resign`, ...), bytes out
(`data_to_send`). It never touches a socket, a file or the clock: the driver moves the
bytes, persists `take_records()` before it sends or acts (write-ahead), and owns every
timeout. Duties that need no decision (showing the coin, answering a challenge with our
opening, revealing the setup once both are committed, the audit) are done automatically.
"""

from __future__ import annotations

import secrets as _secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import (
    coin_commitment,
    equal,
    ot,
    piece_commitment,
    public_bytes,
    seed_commitment,
    setup_hash,
)
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope, seal
from p2pgotg.protocol.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RuleViolation,
)
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import (
    HOST,
    JOINER,
    GameFlow,
    Phase,
    other,
    outcome_index,
    possible_outcomes,
)
from p2pgotg.protocol.limits import CHATS_IN_A_ROW, MAX_PLAY_MESSAGES
from p2pgotg.protocol.messages import MAX_CHAT, PROTOCOL_VERSION, Body
from p2pgotg.protocol.wire import WireError
from p2pgotg.rules import ChallengeMode, Game, Move, Piece, Rank, RuleOptions, Setup, Side

RandBytes = Callable[[int], bytes]

#: A transcript record: the owner's secrets, or one signed message as it travelled.
SecretsRecord = tuple[Literal["secrets"], dict[str, bytes]]
MessageRecord = tuple[Literal["msg"], str, bytes]  # ("msg", sender's role, envelope bytes)
Record = SecretsRecord | MessageRecord


@dataclass
class _OwnSetup:
    setup: Setup
    salts: tuple[bytes, ...]
    seed: bytes


class Peer:
    """One player's end of the protocol."""

    def __init__(
        self,
        role: str,
        key: Ed25519PrivateKey,
        tls_fingerprint: bytes,
        options: RuleOptions | None = None,
        randbytes: RandBytes = _secrets.token_bytes,
    ) -> None:
        if role not in (HOST, JOINER):
            raise ValueError("role is host or joiner")
        if role == JOINER and options is not None:
            raise ValueError("the host proposes the options; the joiner accepts the host's")
        self.role = role
        self.peer_role = other(role)
        self._key = key
        self.public_key = public_bytes(key)
        self._tls = tls_fingerprint
        self._options = options
        self._rand = randbytes
        self.flow = GameFlow()
        self._out: list[bytes] = []
        self._records: list[Record] = []
        self._coin: bytes | None = None
        self._own: _OwnSetup | None = None
        self._error: ProtocolError | None = None
        self._accepted = False
        self._revealed_into: Game | None = None  # the game our ranks were revealed into

    # -- reading the state --------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self.flow.phase

    @property
    def failed(self) -> ProtocolError | None:
        """The error that stopped this connection, if any (h11's ERROR state)."""
        return self._error

    @property
    def options(self) -> RuleOptions | None:
        return self.flow.options

    @property
    def view(self) -> Game | None:
        """This player's view of the game: its own ranks and every declared rank."""
        return self.flow.game

    @property
    def side(self) -> Side | None:
        return self.flow.side_of(self.role) if self.flow.white else None

    @property
    def my_turn(self) -> bool:
        game = self.flow.game
        return (
            game is not None and not self.flow.is_over and self.flow.pending is None
            and self.side is game.turn
        )

    @property
    def draw_offered_to_me(self) -> bool:
        return self.flow.draw_offer == self.peer_role and not self.flow.is_over

    @property
    def own_setup(self) -> Setup | None:
        return self._own.setup if self._own else None

    def data_to_send(self) -> list[bytes]:
        """Messages to send, in order; the caller must persist `take_records()` first."""
        out, self._out = self._out, []
        return out

    def take_records(self) -> list[Record]:
        """New transcript records (secrets and messages, in processing order)."""
        records, self._records = self._records, []
        return records

    def messages_since(self, seq: int) -> list[bytes]:
        """Our messages from sequence `seq` on: what a reconnecting peer has not seen."""
        return list(self.flow.senders[self.role].envelopes[seq:])

    def received_count(self) -> int:
        """How many of the peer's messages we hold (tell it on reconnect)."""
        return len(self.flow.senders[self.peer_role].hashes)

    # -- input from the peer ------------------------------------------------------------

    def receive(self, data: bytes) -> list[Event]:
        """Take one message from the peer. A broken rule raises RemoteProtocolError.

        A signed message that breaks a rule is kept as a record (the evidence) and leaves
        the connection failed for good. Input that proves nothing about its sender
        (`violation.signed` False: garbage, a bad signature, a gap in the sequence, an ack
        naming nothing we hold, a message of another game) changes nothing: the peer stays
        usable, and the driver drops the connection and resumes."""
        self._check_usable()
        try:
            self._check_host_tls(data)
            events, recorded = self.flow.process(self.peer_role, data)
        except RuleViolation as violation:
            error = RemoteProtocolError(violation, data)
            if violation.signed:
                self._records.append(("msg", self.peer_role, data))
                self.flow.transcript.append((self.peer_role, data))
                self._error = error
            raise error from None
        if recorded:
            self._records.append(("msg", self.peer_role, data))
        return events + self._duties()

    def _check_host_tls(self, data: bytes) -> None:
        """The joiner compares the host hello's `tls` with the certificate this connection
        showed, before it sends anything. A mismatch proves nothing to anyone else (no one
        can check what the joiner saw), so it is not recorded: the hello is refused."""
        if self.role != JOINER or HOST in self.flow.hellos:
            return
        try:
            body = Envelope.decode(data).body()
        except WireError:
            return  # (the flow says what is wrong with it)
        if body.type == "hello" and not equal(body.get("tls", b""), self._tls):
            raise RuleViolation(HOST, "tls-binding", "the host's hello names another TLS "
                                "certificate than the one the connection showed", 0,
                                signed=False)

    # -- actions ------------------------------------------------------------------------

    def start(self) -> list[Event]:
        """The host opens with its hello."""
        if self.role != HOST or self._options is None or self.flow.hellos:
            raise LocalProtocolError("only a host with rule options opens, once, with hello")
        return self._send("hello", {
            "version": PROTOCOL_VERSION, "role": HOST, "options": self._options.to_dict(),
            "nonce": self._rand(32), "key": self.public_key, "tls": self._tls,
        })

    def accept(self) -> list[Event]:
        """The joiner accepts the host's rule options: its hello, with its coin commitment."""
        host = self.flow.hellos.get(HOST)
        if self.role != JOINER or host is None or self._accepted:
            raise LocalProtocolError("only a joiner accepts, once, after the host's hello")
        from p2pgotg.protocol.ids import game_id as compute_game_id

        nonce = self._rand(32)
        options = self.flow.options
        assert options is not None
        gid = compute_game_id(host["nonce"], nonce, host["key"], self.public_key,
                              PROTOCOL_VERSION, options)
        self._coin = self._rand(32)
        self._records.append(("secrets", {"coin": self._coin}))
        self._accepted = True
        return self._send("hello", {
            "version": PROTOCOL_VERSION, "role": JOINER, "options": options.to_dict(),
            "nonce": nonce, "key": self.public_key, "tls": self._tls,
            "coin": coin_commitment(gid, self.public_key, self._coin),
        })

    def commit_setup(self, setup: Setup) -> list[Event]:
        """Put our setup behind the privacy screen: one hash of the whole of it."""
        if self.phase is not Phase.SETUP or self._own is not None:
            raise LocalProtocolError("a setup is committed once, in the setup phase")
        if setup.side is not self.side:
            raise LocalProtocolError(f"we play {self.side.display_name if self.side else '?'}, "
                                     "the setup is for the other side")
        salts = tuple(self._rand(32) for _ in range(21))
        own = _OwnSetup(setup, salts, self._rand(32))
        self._records.append(("secrets", {
            "squares": bytes(setup.squares), "ranks": bytes(setup.ranks),
            "salts": b"".join(salts), "seed": own.seed,
        }))
        self._own = own
        return self._send("setup_commit", {"hash": setup_hash(
            self._gid, self.public_key, bytes(setup.squares), self._commits(),
            seed_commitment(self._gid, self.public_key, own.seed))})

    def move(self, move: Move, offer_draw: bool = False, claim: Piece | None = None
             ) -> list[Event]:
        """Play a move; a challenge carries our piece's opening (open mode). `claim` adds a
        flag-run claim for a flag that arrives with this move."""
        game = self._game_for("a move")
        if self.flow.next_seq(self.role) >= MAX_PLAY_MESSAGES:
            raise LocalProtocolError(f"no move sent: this game has reached its limit of "
                                     f"{MAX_PLAY_MESSAGES} messages for moves and chat "
                                     "(SPEC 2.10); it can only end by resignation or a claim")
        piece = game.piece_at(move.from_square)
        fields: dict[str, Any] = {"ply": game.ply, "from": move.from_square,
                                  "to": move.to_square}
        target = game.piece_at(move.to_square)
        if piece is not None and piece.side is self.side and target is not None \
                and target.side is not self.side:
            if self._blind:
                fields["ot_r"] = self._attacker_point(piece.pid)
            else:
                fields["open"] = self._opening(piece.pid)
        if claim is not None:
            fields["claim"] = [claim.pid, *self._opening(claim.pid)]
        if offer_draw:
            fields["draw"] = True
        return self._send("move", fields)

    def claim_flag(self, piece: Piece) -> list[Event]:
        """Claim the win for our flag on the opposing back rank, at the start of our turn."""
        self._game_for("a flag claim")
        return self._send("claim_flag", {"claim": [piece.pid, *self._opening(piece.pid)]})

    def accept_draw(self) -> list[Event]:
        self._game_for("accepting a draw")
        return self._send("draw_accept", {})

    def decline_draw(self) -> list[Event]:
        self._game_for("declining a draw")
        return self._send("draw_decline", {})

    def resign(self) -> list[Event]:
        return self._send("resign", {})

    def chat(self, text: str) -> list[Event]:
        """Send a chat line (control characters dropped). Refused, with the reason, when it
        is too long or would break the chat limits of SPEC 2.10: we never send what the
        peer would have to take as a violation."""
        text = "".join(c for c in text if ord(c) >= 32)
        if len(text) > MAX_CHAT:
            raise LocalProtocolError(f"chat not sent: {len(text)} characters, and a chat "
                                     f"line holds at most {MAX_CHAT}")
        mine = self.flow.senders[self.role]
        if self.flow.next_seq(self.role) >= MAX_PLAY_MESSAGES:
            raise LocalProtocolError(f"chat not sent: this game has reached its limit of "
                                     f"{MAX_PLAY_MESSAGES} messages for moves and chat")
        if mine.chats_in_a_row >= CHATS_IN_A_ROW:
            raise LocalProtocolError(f"chat not sent: {CHATS_IN_A_ROW} chat lines in a row "
                                     "is the most a side may send until its next move or "
                                     "other message")
        return self._send("chat", {"text": text})

    def claim_forfeit(self, reason: str) -> list[Event]:
        """The driver's word that the peer ran out of time ("time"), went away
        ("abandoned"), or did not open its commitments at the audit ("audit"). Refused
        (LocalProtocolError) when our own view contradicts it: SPEC 2.6."""
        return self._send("forfeit_claim", {"reason": reason})

    def dispute(self, claim: int) -> list[Event]:
        """Sign that we dispute the peer's claim (its message number `claim`): the result
        then rests on its word against ours."""
        return self._send("dispute", {"claim": claim})

    # -- restoring after a crash --------------------------------------------------------

    @classmethod
    def restore(
        cls,
        role: str,
        key: Ed25519PrivateKey,
        tls_fingerprint: bytes,
        records: list[Record],
        options: RuleOptions | None = None,
        randbytes: RandBytes = _secrets.token_bytes,
    ) -> Peer:
        """Rebuild a peer from its saved records: secrets, then every message replayed."""
        peer = cls(role, key, tls_fingerprint, options, randbytes)
        for record in records:
            if record[0] == "secrets":
                values = record[1]
                if "coin" in values:
                    peer._coin = values["coin"]
                    peer._accepted = True
                if "ranks" in values:
                    side = Side.WHITE if values["squares"][0] < 27 else Side.BLACK
                    setup = Setup(side, {sq: Rank(r) for sq, r in
                                         zip(values["squares"], values["ranks"], strict=True)})
                    salts = tuple(values["salts"][i * 32:(i + 1) * 32] for i in range(21))
                    peer._own = _OwnSetup(setup, salts, values["seed"])
            elif record[0] == "msg":
                _, sender, data = record
                try:
                    peer.flow.process(sender, data)
                except RuleViolation as violation:
                    if sender == role:
                        raise
                    peer._error = RemoteProtocolError(violation, data)
                    return peer
                if sender == role and peer.flow.hellos.get(JOINER) is not None:
                    peer._accepted = True
        peer._reveal_own_ranks()
        peer._duties()
        return peer

    # -- internals ----------------------------------------------------------------------

    @property
    def _gid(self) -> bytes:
        gid = self.flow.game_id
        if gid is None:
            raise LocalProtocolError("the game has no id yet (both hellos first)")
        return gid

    def _commits(self) -> list[bytes]:
        assert self._own is not None
        own = self._own
        return [piece_commitment(self._gid, self.public_key, pid, int(rank), own.salts[pid])
                for pid, rank in enumerate(own.setup.ranks)]

    def _opening(self, pid: int) -> list[int | bytes]:
        if self._own is None or not 0 <= pid < 21:
            raise LocalProtocolError("no such piece of ours")
        return [int(self._own.setup.ranks[pid]), self._own.salts[pid]]

    @property
    def _blind(self) -> bool:
        options = self.flow.options
        return options is not None and options.challenge_mode is ChallengeMode.BLIND

    def _sender_keypair(self) -> tuple[bytes, bytes]:
        """(y, S): our OT sender key for the whole game, from our committed seed."""
        assert self._own is not None
        return ot.sender_keypair(self._own.seed)

    def _attacker_point(self, pid: int) -> bytes:
        """R for the next blind challenge, from our seed and our piece's rank."""
        assert self._own is not None
        S = self.flow.reveals[self.peer_role].ot
        assert S is not None
        choice = int(self._own.setup.ranks[pid]) + 1
        return ot.receiver_choose(self._own.seed, len(self.flow.blind_log), S, choice)[1]

    def _blind_duty(self) -> list[Event]:
        """Our part of a blind challenge in flight: the table (as defender), or the token
        or a proof of a bad table (as attacker). Computed once: the message is stored."""
        flow, own = self.flow, self._own
        pending, game = flow.pending, flow.game
        if pending is None or pending.n < 0 or own is None or game is None:
            return []
        gid = self._gid
        if pending.attacker == self.peer_role and not pending.cts:
            defender = game.piece_at(pending.move.to_square)
            assert defender is not None
            y, S = self._sender_keypair()
            tokens = ot.outcome_tokens(own.seed, pending.n)
            d_rank = own.setup.ranks[defender.pid]
            table = [tokens[outcome_index(Rank(i), d_rank)] for i in range(ot.SLOTS)]
            cts = ot.sender_ciphertexts(y, S, pending.point, gid, pending.n, table)
            commits = [ot.token_commitment(gid, pending.n, o, t) for o, t in enumerate(tokens)]
            return self._send("blind_reply", {"ply": pending.ply, "commits": b"".join(commits),
                                              "cts": b"".join(cts)})
        if pending.attacker == self.role and pending.cts:
            attacker = game.piece_at(pending.move.from_square)
            assert attacker is not None
            rank = own.setup.ranks[attacker.pid]
            S_peer = flow.reveals[self.peer_role].ot
            assert S_peer is not None
            x = ot.receiver_scalar(own.seed, pending.n)
            token = ot.receiver_decrypt(x, S_peer, pending.point, gid, pending.n, int(rank) + 1,
                                        pending.cts)
            outcome = ot.find_outcome(gid, pending.n, token, pending.commits)
            if outcome is None or outcome not in possible_outcomes(rank):
                return self._send("blind_proof", {"ply": pending.ply, "x": x,
                                                  "open": self._opening(attacker.pid)})
            return self._send("blind_outcome", {"ply": pending.ply, "token": token})
        return []

    def _game_for(self, what: str) -> Game:
        game = self.flow.game
        if game is None or self.flow.is_over:
            raise LocalProtocolError(f"{what} needs a game in play")
        return game

    def _check_usable(self) -> None:
        if self._error is not None:
            raise ProtocolError(f"the connection has failed: {self._error}")

    def _send(self, type_: str, fields: dict[str, Any]) -> list[Event]:
        self._check_usable()
        flow = self.flow
        peer_hashes = flow.senders[self.peer_role].hashes
        body = Body(
            type_,
            flow.next_seq(self.role),
            flow.last_hash(self.role),
            peer_hashes[-1] if peer_hashes else ZERO_HASH,
            None if type_ == "hello" else flow.game_id,
            fields,
        )
        data = seal(self._key, body).encode()
        try:
            events, _ = flow.process(self.role, data, sealed_here=True)
        except RuleViolation as violation:
            raise LocalProtocolError(violation.detail) from None
        self._records.append(("msg", self.role, data))
        self._out.append(data)
        return events + self._duties()

    def _reveal_own_ranks(self) -> None:
        """Our ranks into our view of the game, once, as soon as play has begun."""
        game = self.flow.game
        if game is not None and self._own is not None and game is not self._revealed_into:
            for pid, rank in enumerate(self._own.setup.ranks):
                game.reveal(Piece(self._own.setup.side, pid), rank)
            self._revealed_into = game

    def _duties(self) -> list[Event]:
        """Send whatever the protocol requires of us now and needs no decision."""
        flow = self.flow
        events: list[Event] = []
        if self._error is not None:
            return events
        self._reveal_own_ranks()
        if self.role == HOST and flow.phase is Phase.COIN:
            events += self._send("coin", {"secret": self._rand(32)})
        elif self.role == JOINER and flow.phase is Phase.COIN_OPEN and self._coin is not None:
            events += self._send("coin_open", {"secret": self._coin})
        elif flow.phase is Phase.SETUP and self._own is not None \
                and len(flow.setup_commits) == 2 and self.role not in flow.reveals:
            fields = {
                "squares": bytes(self._own.setup.squares),
                "commits": b"".join(self._commits()),
                "seed_commit": seed_commitment(self._gid, self.public_key, self._own.seed),
            }
            if self._blind:
                fields["ot"] = self._sender_keypair()[1]
            events += self._send("setup_reveal", fields)
        elif flow.phase is Phase.PLAY and flow.pending is not None and flow.pending.n >= 0:
            events += self._blind_duty()
        elif flow.phase is Phase.PLAY and flow.pending is not None \
                and flow.pending.attacker == self.peer_role and flow.game is not None:
            defender = flow.game.piece_at(flow.pending.move.to_square)
            assert defender is not None
            events += self._send("reply", {"ply": flow.pending.ply,
                                           "open": self._opening(defender.pid)})
        elif flow.phase is Phase.AUDIT and self.role not in flow.audits \
                and self.role in flow.reveals and self._own is not None:
            events += self._send("audit", {
                "ranks": bytes(self._own.setup.ranks),
                "salts": b"".join(self._own.salts),
                "seed": self._own.seed,
            })
        return events
