"""One side of a game: the sans-IO peer state machine (h11 style), for any game.

Bytes in (`receive`), events out; actions in (`resign`, `chat`, a game's own actions, ...),
bytes out (`data_to_send`). It never touches a socket, a file or the clock: the driver
moves the bytes, persists `take_records()` before it sends or acts (write-ahead), and owns
every timeout. Duties that need no decision (showing the coin, and the game's own: answering
a challenge, revealing a setup, the audit) are done automatically. A game is a subclass
(`FLOW`, its duties and actions; Game of the Generals: `p2pgotg.games.gotg.peer.GotgPeer`).
"""

from __future__ import annotations

import secrets as _secrets
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import coin_commitment, equal, public_bytes
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope, seal
from p2pgotg.protocol.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RuleViolation,
)
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.flow import HOST, JOINER, Flow, Phase, other
from p2pgotg.protocol.ids import game_id as compute_game_id
from p2pgotg.protocol.limits import CHATS_IN_A_ROW, MAX_PLAY_MESSAGES
from p2pgotg.protocol.messages import MAX_CHAT, PROTOCOL_VERSION, Body
from p2pgotg.protocol.wire import WireError

RandBytes = Callable[[int], bytes]

#: A transcript record: the owner's secrets, or one signed message as it travelled.
SecretsRecord = tuple[Literal["secrets"], dict[str, bytes]]
MessageRecord = tuple[Literal["msg"], str, bytes]  # ("msg", sender's role, envelope bytes)
Record = SecretsRecord | MessageRecord


class Peer:
    """One player's end of the protocol (the kernel's part; a game is a subclass)."""

    #: The game's flow (its messages and rules of play).
    FLOW: ClassVar[type[Flow]]

    def __init__(
        self,
        role: str,
        key: Ed25519PrivateKey,
        tls_fingerprint: bytes,
        options: Any = None,
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
        self.flow = self.FLOW()
        self._out: list[bytes] = []
        self._records: list[Record] = []
        self._coin: bytes | None = None
        self._error: ProtocolError | None = None
        self._accepted = False

    # -- reading the state --------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self.flow.phase

    @property
    def failed(self) -> ProtocolError | None:
        """The error that stopped this connection, if any (h11's ERROR state)."""
        return self._error

    @property
    def options(self) -> Any:
        return self.flow.options

    @property
    def rules_to_accept(self) -> bool:
        """Whether this joiner holds the host's hello and has not accepted its rules yet
        (the one step a bot takes without deciding: it plays whatever the host proposes)."""
        flow = self.flow
        return (self.role == JOINER and flow.phase is Phase.HELLO and HOST in flow.hellos
                and JOINER not in flow.hellos and self._error is None and not flow.is_over)

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
        return self._send("hello", self._hello_fields({
            "version": PROTOCOL_VERSION, "role": HOST,
            "options": self._options.to_dict(), "nonce": self._rand(32),
            "key": self.public_key, "tls": self._tls,
        }))

    def accept(self) -> list[Event]:
        """The joiner accepts the host's rule options: its hello, with its coin commitment."""
        host = self.flow.hellos.get(HOST)
        if self.role != JOINER or host is None or self._accepted:
            raise LocalProtocolError("only a joiner accepts, once, after the host's hello")
        nonce = self._rand(32)
        options = self.flow.options
        gid = compute_game_id(host["nonce"], nonce, host["key"], self.public_key,
                              PROTOCOL_VERSION, self.flow.options_bytes(options),
                              self.flow.game_id_tag())
        self._coin = self._rand(32)
        self._records.append(("secrets", {"coin": self._coin}))
        self._accepted = True
        return self._send("hello", self._hello_fields({
            "version": PROTOCOL_VERSION, "role": JOINER, "options": options.to_dict(),
            "nonce": nonce, "key": self.public_key, "tls": self._tls,
            "coin": coin_commitment(gid, self.public_key, self._coin),
        }))

    def _hello_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        if self.FLOW.GAME is not None:  # (Game of the Generals names none: its bytes)
            fields["rules"] = self.FLOW.GAME
        return fields

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
        options: Any = None,
        randbytes: RandBytes = _secrets.token_bytes,
    ) -> Self:
        """Rebuild a peer from its saved records: secrets, then every message replayed."""
        peer = cls(role, key, tls_fingerprint, options, randbytes)
        for record in records:
            if record[0] == "secrets":
                values = record[1]
                if "coin" in values:
                    peer._coin = values["coin"]
                    peer._accepted = True
                peer._restore_secrets(values)
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
        peer._duties()
        return peer

    def _restore_secrets(self, values: dict[str, bytes]) -> None:
        """Take the game's own secrets back from a saved `secrets` record."""

    # -- internals ----------------------------------------------------------------------

    @property
    def _gid(self) -> bytes:
        gid = self.flow.game_id
        if gid is None:
            raise LocalProtocolError("the game has no id yet (both hellos first)")
        return gid

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

    def _duties(self) -> list[Event]:
        """Send whatever the protocol requires of us now and needs no decision: the coin,
        then the game's own duties."""
        flow = self.flow
        if self._error is not None:
            return []
        if self.role == HOST and flow.phase is Phase.COIN:
            return self._send("coin", {"secret": self._rand(32)})
        if self.role == JOINER and flow.phase is Phase.COIN_OPEN and self._coin is not None:
            return self._send("coin_open", {"secret": self._coin})
        return self._game_duties()

    def _game_duties(self) -> list[Event]:
        return []
