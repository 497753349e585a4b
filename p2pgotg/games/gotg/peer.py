"""Game of the Generals' peer: its secrets (the setup, the salts, the blind mode's seed),
its actions (commit a setup, move, claim the flag, answer a draw offer) and its automatic
duties (reveal the setup, answer a challenge, the blind exchange, the audit), on the
kernel's peer (`p2pgotg.protocol.peer.Peer`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p2pgotg.crypto import ot, piece_commitment, seed_commitment, setup_hash
from p2pgotg.games.gotg.flow import GotgFlow, outcome_index, possible_outcomes
from p2pgotg.protocol.errors import LocalProtocolError
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import Phase
from p2pgotg.protocol.limits import MAX_PLAY_MESSAGES
from p2pgotg.protocol.peer import Peer
from p2pgotg.rules import ChallengeMode, Game, Move, Piece, Rank, RuleOptions, Setup, Side


@dataclass
class _OwnSetup:
    setup: Setup
    salts: tuple[bytes, ...]
    seed: bytes


class GotgPeer(Peer):
    """One player's end of a game of Game of the Generals."""

    FLOW = GotgFlow
    flow: GotgFlow

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._own: _OwnSetup | None = None
        self._revealed_into: Game | None = None  # the game our ranks were revealed into

    @property
    def options(self) -> RuleOptions | None:
        options: RuleOptions | None = self.flow.options
        return options


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


    def _restore_secrets(self, values: dict[str, bytes]) -> None:
        if "ranks" in values:
            side = Side.WHITE if values["squares"][0] < 27 else Side.BLACK
            setup = Setup(side, {sq: Rank(r) for sq, r in
                                 zip(values["squares"], values["ranks"], strict=True)})
            salts = tuple(values["salts"][i * 32:(i + 1) * 32] for i in range(21))
            self._own = _OwnSetup(setup, salts, values["seed"])

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


    def _reveal_own_ranks(self) -> None:
        """Our ranks into our view of the game, once, as soon as play has begun."""
        game = self.flow.game
        if game is not None and self._own is not None and game is not self._revealed_into:
            for pid, rank in enumerate(self._own.setup.ranks):
                game.reveal(Piece(self._own.setup.side, pid), rank)
            self._revealed_into = game


    def _game_duties(self) -> list[Event]:
        """Ours in the game, at once: reveal our setup once both are committed, answer a
        challenge (our opening, or the blind table and token), and the audit at the end."""
        flow = self.flow
        events: list[Event] = []
        self._reveal_own_ranks()
        if flow.phase is Phase.SETUP and self._own is not None \
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
