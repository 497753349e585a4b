"""The host of a table (SPEC 5.4): plays seat 0 and relays for the joiners.

One listener, the invite of chapter 3 (its join secret and TLS pin), one `TableSession` for
the host's own seat. Each joiner is admitted with its `hi` (3.4), one seat per joiner, up
to N-1 (a further joiner is refused with an `error` frame), and its connection forwards,
in the host's accepted order, every message the host's seat took (its own, the other
joiners', violations too), except the joiner's own: the seat takes a message only when it
holds what the message acknowledges, so nothing is forwarded before what it acknowledges.
A joiner that comes back (`hi` with the game id, its `seat` and its `have` counts) gets
exactly what it lacks, then the forwarding goes on. Each joiner is also told every seat's
name (`names`, SPEC 3.4: the host's word, unsigned) after what it is owed, again when one
changes. At the end every joiner's `bye` shows it holds every message; then the host stops.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games.towers.table import host_seat
from p2pgotg.net.play.host_invites import Hosting, open_invites
from p2pgotg.net.play.hosting import HostConfig, refuse
from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.player_name import BadNameError, checked_name, shown_name
from p2pgotg.net.play.session import unwrap
from p2pgotg.net.play.table_joiner import TableRunner, join_table
from p2pgotg.net.play.table_proof import fresh_nonce, seat_proven
from p2pgotg.net.play.table_session import TableSession, hello_key, seat_keys
from p2pgotg.net.reaching.control_frames import SessionError, expect
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.reaching.pake_link import ShortCodeGate, is_pake_frame
from p2pgotg.net.transport.admission import Gate, Ticket, serve_admission
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    listening_port,
    public_key_pin,
    server_context,
)
from p2pgotg.protocol import HOST, control
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.printable import printable
from p2pgotg.protocol.table.flow import WITHDRAWN

FULL_WORDS = "this table is full: its {n} seats are taken"
BOT_NAME = "bot"  # the name the host's bot seats give (SPEC 3.4 `names`)


@dataclass(eq=False)
class _Link:
    """One joiner's connection: which seat it is (once its hello is in), how far the
    forwarding has gone in the host's accepted order, what the joiner says it holds and
    what we last said we hold."""

    channel: FramedChannel
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    seat: int | None = None
    hello: bytes | None = None  # its hello, before the roster seats it
    cursor: int = 0
    bye: tuple[int, ...] | None = None
    said: tuple[int, ...] | None = None  # the counts of our last `bye` on this connection
    gone: trio.Event = field(default_factory=trio.Event)
    name: str | None = None  # the name its `hi` gave, once checked (SPEC 3.4)
    named: tuple[tuple[bytes, str], ...] | None = None  # our last `names` on it


class TableHost:
    """Hosts one table of `config.options.seats` seats to its end."""

    def __init__(self, config: HostConfig, *,
                 on_status: Callable[[str], None] = lambda s: None,
                 on_short_code: Callable[[str], None] = lambda code: None,
                 on_invite: Callable[[str], None] = lambda code: None,
                 session: TableSession | None = None) -> None:
        self.config = config
        self.on_status = on_status
        self.on_short_code = on_short_code
        self.on_invite = on_invite
        self.seats = int(config.options.seats)
        self.fingerprint = certificate_fingerprint(config.tls_cert)
        self.join_secret = secrets.token_bytes(16) if session is None else session.join_secret
        if session is None:
            seat = host_seat(config.key, config.options, self.fingerprint)
            session = TableSession(seat, config.key, HOST, config.save_dir, self.join_secret,
                                   config.limits, on_status=on_status)
            session.perform(lambda s: s.start())
        self.session = session
        if config.name:
            session.names[session.public_key] = config.name
        self.links: list[_Link] = []
        #: Each joiner seat's last `bye` counts: a joiner that said it holds everything
        #: leaves at once, before the others have said so (SPEC 3.4's `bye`).
        self.byes: dict[int, tuple[int, ...]] = {}
        self.strangers = Gate(config.admission)
        self.gates: list[ShortCodeGate] = []
        self.listen_port = config.port or session.port or config.port  # (resumed: its old one)
        self.finished = trio.Event()

    # -- admission ------------------------------------------------------------------------

    async def handler(self, stream: trio.SSLStream, ticket: Ticket) -> None:
        limits = self.config.limits
        channel = FramedChannel(stream, keepalive_interval=limits.keepalive,
                                silence_timeout=limits.silence)
        try:
            with trio.fail_after(limits.handshake):
                first = await channel.receive()
                if is_pake_frame(first):
                    if not self.gates:
                        raise SessionError("this host has no short code: use its invite code")
                    first = await self.gates[0].admit(channel, first, limits.handshake)
                hi = expect(first, control.Hi)
        except (trio.TooSlowError, NetError, SessionError) as exc:
            reason = "no greeting in time" if isinstance(exc, trio.TooSlowError) else str(exc)
            self.on_status(f"a connection was refused: {printable(reason, 200)}")
            await refuse(channel, f"no valid greeting: {reason}")
            return
        refusal = self._decide(hi)
        if refusal is not None:
            self.on_status(f"a joiner was refused: {refusal}")
            await refuse(channel, refusal)
            return
        link = _Link(channel, seat=hi.seat, name=self._name_of(hi))
        try:
            with trio.fail_after(limits.handshake):
                await self._greet(link)
        except (trio.TooSlowError, NetError, SessionError) as exc:
            reason = f"no seat proof in time for seat {link.seat}" \
                if isinstance(exc, trio.TooSlowError) else str(exc)
            self.on_status(f"a joiner was refused: {printable(reason, 200)}")
            await refuse(channel, reason)
            return  # (the seat's own connection, if any, is left alone)
        ticket.release()
        await self._serve(link, hi)

    def _name_of(self, hi: control.Hi) -> str | None:
        """The joiner's name, checked as any name is before we show or relay it; a bad
        one is said and left out (SPEC 3.4)."""
        if hi.name is None:
            return None
        try:
            return checked_name(hi.name)
        except BadNameError as exc:
            self.on_status(f"a joiner's name is ignored: {exc}")
            return None

    def _decide(self, hi: control.Hi) -> str | None:
        """Why `hi` is refused (SPEC 3.4, 5.4), or None: admitted."""
        if not hmac.compare_digest(hi.secret, self.join_secret):
            return "wrong join secret: check the invite code"
        if self.session.done and hi.game is None:
            return "this table's game is over"
        status = self.session.status
        if hi.game is not None:
            if status.game_id is None or not hmac.compare_digest(hi.game, status.game_id):
                return "this host does not have that game (it may be over)"
            if hi.seat is None or hi.seat >= self.seats or not isinstance(hi.have, tuple) \
                    or len(hi.have) != self.seats:
                return "bad greeting: coming back to a table needs its seat and its counts"
            return None
        if not isinstance(hi.have, int) or hi.seat is not None:
            return "bad greeting: a new seat holds nothing yet"
        if self._taken() >= self.seats - 1:
            return FULL_WORDS.format(n=self.seats)
        return None

    async def _greet(self, link: _Link) -> None:
        """Send `ok`; to a joiner that names its seat, with a nonce, and take the `prove`
        that signs it with that seat's key (SPEC 3.4): until then the connection is nobody's
        and the seat's current connection stays (SessionError: refused)."""
        session = self.session
        seat = link.seat
        nonce = None if seat is None else fresh_nonce()
        have = 0 if seat is None else session.seat.have()[seat]
        await session.durable()
        await link.channel.send(control.encode(control.Ok(
            game=session.status.game_id, have=have, first=session.first_hash(),
            name=self.config.name, rules="towers", seats=self.seats, nonce=nonce)))
        if seat is None or nonce is None:
            return
        proof = expect(await link.channel.receive(), control.Prove)
        game = session.status.game_id
        assert game is not None  # (`_decide` admits a seat's `hi` with our game id only)
        if not seat_proven(session.seat.flow.key_of(seat), proof.sig, nonce, game, seat):
            raise SessionError(f"this connection did not prove that it holds seat {seat}'s "
                               "key (SPEC 3.4): it cannot take that seat")

    def _taken(self) -> int:
        """Joiner seats taken: every one once the roster is out, else the connected ones."""
        status = self.session.status
        if status.game_id is not None:
            return self.seats - 1
        return sum(1 for link in self.links)

    # -- one joiner's connection ----------------------------------------------------------

    async def _serve(self, link: _Link, hi: control.Hi) -> None:
        session = self.session
        for old in [x for x in self.links if link.seat is not None and x.seat == link.seat]:
            self.on_status(f"seat {link.seat} reconnected: dropping its old connection")
            old.scope.cancel()
            await old.gone.wait()
        self.links.append(link)
        self._learn_name(link)
        try:
            if isinstance(hi.have, tuple):
                backlog = session.seat.lacking(hi.have)
                link.cursor = len(session.seat.accepted)
                for frame in backlog:
                    await link.channel.send(frame)
            who = "a joiner" if link.seat is None else f"seat {link.seat}"
            self.on_status(f"{who} is connected{_named(hi)}")
            with link.scope:
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(link.channel.keep_alive)
                        nursery.start_soon(self._forward, link)
                        nursery.start_soon(self._read, link, nursery.cancel_scope)
                except BaseExceptionGroup as group:
                    raise unwrap(group) from None
        except (NetError, SessionError) as exc:
            who = "a joiner" if link.seat is None else f"seat {link.seat}"
            self.on_status(f"{who} left: {printable(str(exc), 200)}")
        finally:
            self.links.remove(link)
            self.session.seat.forget(link)  # (what waited from it comes again, SPEC 5.4)
            self._let_go(link)
            link.gone.set()
            session.notify()

    def _let_go(self, link: _Link) -> None:
        """A joiner that left before the roster gives its place back (SPEC 5.3): its hello
        is withdrawn, unless it is back already on another connection."""
        hello = link.hello
        if hello is None or link.seat is not None \
                or any(other.hello == hello for other in self.links):
            return
        if self.session.seat.withdraw_hello(hello):
            self.on_status("a joiner left before the table filled: its place is open again")

    async def _forward(self, link: _Link) -> None:
        """Send the joiner, in accepted order, every message the seat took but its own."""
        session = self.session
        while True:
            accepted = session.seat.accepted
            if link.cursor < len(accepted):
                await session.durable()  # (what we relay is on our disk first)
                while link.cursor < len(accepted):
                    author, frame = accepted[link.cursor]
                    link.cursor += 1
                    if author == WITHDRAWN:
                        continue  # (its joiner left before the roster: no place, SPEC 5.3)
                    if link.seat is None and link.hello is not None:
                        link.seat = session.seat.seat_of_hello(link.hello)
                    if author != link.seat and frame != link.hello:
                        await link.channel.send(frame)
                continue
            names = self._names()
            if link.named != names:  # (after the host's hello: an older joiner ignores it)
                await link.channel.send(control.encode(control.Names(names)))
                link.named = names
                continue
            have = session.have()
            if session.done and link.said != have:
                await session.durable()
                await link.channel.send(control.encode(control.Bye(have)))
                link.said = have
                session.notify()  # (the end waits until every joiner was told our counts)
                continue
            await session.wait_changed()

    async def _read(self, link: _Link, scope: trio.CancelScope) -> None:
        session = self.session
        while True:
            frame = await link.channel.receive()
            try:
                ctl = control.decode(frame)
            except control.AdvisoryError:
                continue  # (`names` come from the host: a joiner's are ignored, any shape)
            except control.ControlError as exc:
                raise SessionError(f"a malformed control frame: {exc}") from None
            if isinstance(ctl, control.Bye):
                link.bye = ctl.have if isinstance(ctl.have, tuple) else None
                if link.seat is not None and link.bye is not None:
                    self.byes[link.seat] = link.bye  # (kept when the joiner then leaves)
                session.notify()
                if self._settled():
                    self.finished.set()
                continue
            if ctl is not None:
                if isinstance(ctl, control.Refusal):
                    raise SessionError(f"it stopped: {printable(ctl.reason, 200)}")
                continue
            if session.failure is not None:
                continue
            try:
                session.receive(frame, source=link)
            except RuleViolation as exc:
                what = "you broke the protocol" if exc.signed else "dropping the connection"
                with trio.move_on_after(2), contextlib.suppress(NetError):
                    await link.channel.send(control.encode(control.Refusal(f"{what}: {exc}")))
                if exc.signed:
                    self.on_status(f"seat {link.seat} broke the protocol: "
                                   f"{printable(str(exc), 200)}; the evidence is kept in "
                                   f"{session.path}")
                    continue  # (relayed to every seat, then the table ends)
                raise SessionError(f"unreadable input: {printable(str(exc), 200)}") from None
            if link.hello is None and link.seat is None:
                link.hello = frame  # (a joiner's first message is its hello, SPEC 5.3)
                link.seat = session.seat.seat_of_hello(frame)
                self._learn_name(link)

    def _learn_name(self, link: _Link) -> None:
        """Keep the joiner's name under its hello's key once both are known: every
        connection is then told (SPEC 3.4 `names`)."""
        session = self.session
        key: bytes | None = None
        if link.seat is not None and session.seat.flow.rostered:
            key = bytes(session.seat.flow.key_of(link.seat))
        elif link.hello is not None:
            key = hello_key(link.hello)
        if key is None or link.name is None or session.names.get(key) == link.name:
            return
        session.names[key] = link.name
        session.notify()

    def _names(self) -> tuple[tuple[bytes, str], ...]:
        """The `names` pairs: each hello held whose seat has a name, in seat order."""
        names = self.session.names
        return tuple((key, names[key]) for key in seat_keys(self.session.seat) if key in names)

    def _settled(self) -> bool:
        """The game is over and every joiner said it holds every message."""
        session = self.session
        if not session.done:
            return False
        ours = session.have()
        byes = self.byes
        return all(byes.get(seat) == ours for seat in range(1, self.seats))

    # -- the whole run --------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED
                  ) -> TableSession:
        """Serve the table until its game is over and every joiner holds it all (or until
        cancelled: the game stays resumable); returns the host's seat session."""
        config = self.config
        session = self.session
        try:
            async with trio.open_nursery() as nursery:
                context = server_context(config.tls_cert, config.tls_key)
                listeners = await nursery.start(
                    serve_admission, self.handler, context, self.listen_port, config.bind,
                    self.strangers, self.on_status)
                port = listening_port(listeners)
                self.listen_port = self.listen_port or port
                session.listening_on(port)
                hosting = await open_invites(self, nursery, port, context)
                nursery.start_soon(session.run_timers)
                task_status.started(hosting)
                # Once the game is over, a joiner that has not confirmed it holds it all
                # has `linger` seconds from then (not from the last change: a table goes
                # on changing, with a seat gone for good and the others' `heads`).
                close_at = math.inf
                while not self.finished.is_set() and not self._settled():
                    if session.done and close_at == math.inf:
                        close_at = trio.current_time() + config.limits.linger
                    with trio.move_on_at(close_at):
                        await session.wait_changed()
                        continue
                    break  # (a joiner that never confirmed: its file resumes from ours)
                # Every joiner still here gets what it lacks and our last counts: one whose
                # own `bye` settled the table before our last one reached it would
                # otherwise see the connection close with its file and ours apparently
                # apart, and knock at a host that is gone.
                with trio.move_on_after(config.limits.bye):
                    while any(link.cursor < len(session.seat.accepted)
                              or link.said != session.have() for link in self.links):
                        await session.wait_changed()
                nursery.cancel_scope.cancel()
        finally:
            session.close()
        return session


def _named(hi: control.Hi) -> str:
    name = shown_name(hi.name)
    return f" ({name})" if name else ""


def bot_key(host_key: Ed25519PrivateKey, join_secret: bytes, seat: int) -> Ed25519PrivateKey:
    """The identity key of the host's bot seat number `seat` (1, 2...): derived from the
    host's key and the table's join secret, so that a host started again finds its bots'
    files (and their keys) again, and no two tables share a bot key."""
    seed = hashlib.sha256(b"p2pgotg/table/bot-seat/v1" + host_key.private_bytes_raw()
                          + join_secret + bytes([seat])).digest()
    return Ed25519PrivateKey.from_private_bytes(seed)


async def host_table(config: HostConfig, run_seat: TableRunner, *, bot_seats: int = 0,
                     bot: Callable[[int], TableRunner] | None = None,
                     on_status: Callable[[str], None] = lambda s: None,
                     on_short_code: Callable[[str], None] = lambda code: None,
                     on_invite: Callable[[str], None] = lambda code: None,
                     session: TableSession | None = None,
                     task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED
                     ) -> TableSession:
    """Host a table to its end, our seat played by `run_seat`; `bot_seats` of the joiner
    seats are taken by `bot(k)` (k = 1..bot_seats), each joining over loopback TLS with the
    invite as any joiner does (the same admission, relay and resume as a person's). With
    `session` (our seat resumed from its file) the same table goes on, on its old port with
    its old join secret, and the bot seats resume from their own files."""
    host = TableHost(config, on_status=on_status, on_short_code=on_short_code,
                     on_invite=on_invite, session=session)
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[Hosting]) -> None:
            await host.run(task_status=task_status)
            nursery.cancel_scope.cancel()  # (every seat holds it all, or it gave up)

        nursery.start_soon(run_seat, host.session)
        hosting = await nursery.start(serve)
        pin = public_key_pin(config.tls_cert)
        address = config.bind if config.bind not in (None, "0.0.0.0", "::") else "127.0.0.1"
        assert address is not None
        for k in range(1, bot_seats + 1):
            assert bot is not None
            joiner = JoinConfig(bot_key(config.key, host.join_secret, k),
                                Invite(address, hosting.port, pin, host.join_secret),
                                config.save_dir, config.limits, name=BOT_NAME)
            nursery.start_soon(partial(join_table, joiner, bot(k),
                                       on_status=partial(_bot_line, on_status, k)))
        task_status.started(hosting)
    return host.session


def _bot_line(on_status: Callable[[str], None], k: int, text: str) -> None:
    on_status(f"bot seat {k}: {text}")
