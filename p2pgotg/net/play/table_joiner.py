"""A joiner's seat at a table (SPEC 5.4): one connection to the host, reconnected until the
game is over and the host holds every message.

The first connection learns from `ok` that the invite is a table's (`seats`) and makes the
seat from the host's hello; a later one (or a program started again, from its own file)
says in its `hi` the game id, its seat and how many messages of each seat it holds, takes
what it lacks, and resends its own from the host's count on. Every connection brings the
host's word on each seat's name again (`names`, SPEC 3.4), so none is saved.
"""

from __future__ import annotations

import contextlib
import hmac
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from p2pgotg.games.towers.table import joiner_seat
from p2pgotg.net.play.joining import JoinConfig, no_answer_words
from p2pgotg.net.play.session import lost_words, receive, unwrap
from p2pgotg.net.play.table_file import read_table_file
from p2pgotg.net.play.table_proof import prove_seat
from p2pgotg.net.play.table_session import TableSession, unfinished_tables
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.transport.errors import (
    ConnectFailedError,
    HandshakeTimeoutError,
    NetError,
    PinMismatchError,
)
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    open_pinned_connection,
    peer_certificate,
)
from p2pgotg.protocol import JOINER, LocalProtocolError, control
from p2pgotg.protocol.errors import RuleViolation
from p2pgotg.protocol.printable import printable

#: What plays a seat at a table (a bot, a person's lines): runs until the game is over.
TableRunner = Callable[[TableSession], Awaitable[None]]


class TableRefused(SessionError):
    """The host turned this seat away for good (a full table, a wrong secret...)."""


def saved_seat(config: JoinConfig) -> Path | None:
    """The file of our unfinished seat at this invite's table, when we have one."""
    if not config.resume:
        return None
    for path in unfinished_tables(config.save_dir, JOINER, config.key):
        if hmac.compare_digest(read_table_file(path).join, config.invite.secret):
            return path
    return None


def saved_table(config: JoinConfig, on_status: Callable[[str], None]) -> TableSession | None:
    """Our unfinished seat at this invite's table, from its file, when we have one."""
    path = saved_seat(config)
    if path is None:
        return None
    session = TableSession.resume(path, config.key, JOINER, config.limits, on_status)
    on_status(f"resuming the unfinished table saved in {path.name}")
    return session


async def join_table(config: JoinConfig, run_seat: TableRunner, *,
                     on_status: Callable[[str], None] = lambda s: None,
                     session: TableSession | None = None) -> TableSession:
    """Play our seat of the invite's table to its end; returns its session. Raises
    SessionError for what retrying cannot fix."""
    box: list[TableSession | None] = [session or saved_table(config, on_status)]
    delay, answered = config.limits.retry[0], box[0] is not None
    started = trio.current_time()
    try:
        async with trio.open_nursery() as nursery:
            if box[0] is not None:
                _begin(box[0], nursery, run_seat)
            while True:
                try:
                    await _one_connection(config, box, nursery, run_seat, on_status)
                    delay = config.limits.retry[0]
                except TableRefused:
                    raise
                except PinMismatchError as exc:
                    if box[0] is None:
                        raise SessionError(f"{exc.user_message}: this is not the host of the "
                                           "invite; nothing was sent") from None
                    on_status("the host's key does not match the invite: trying again")
                except (ConnectFailedError, HandshakeTimeoutError) as exc:
                    if not answered and trio.current_time() - started > config.give_up:
                        raise SessionError(f"{no_answer_words(config.invite, exc)}: gave up "
                                           f"after {config.give_up:g} s") from None
                    on_status(lost_words(exc))
                except (NetError, SessionError) as exc:
                    answered = True
                    on_status(lost_words(exc))
                current = box[0]
                if current is not None and current.settled:
                    break
                if current is not None and _host_gone(current, config, on_status):
                    break
                await trio.sleep(delay)
                delay = min(delay * 2, config.limits.retry[1])
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # (a SessionError from a task: raised as itself)
        raise unwrap(group) from None
    finally:
        if box[0] is not None:
            box[0].close()
    result = box[0]
    assert result is not None
    return result


def _host_gone(session: TableSession, config: JoinConfig,
               on_status: Callable[[str], None]) -> bool:
    """After a connection ended: whether the host has been unreachable for the abandonment
    limit (SPEC 3.6), as the joiner of two gives up on its host; then we say so and stop,
    our file kept for the same join command to resume."""
    now = trio.current_time()
    if session.away_since is None:
        session.away_since = now
        return False
    if now - session.away_since < config.limits.abandon:
        return False
    where = f" in {session.path.name}" if session.path is not None else ""
    on_status(f"the host has not let us back in for {config.limits.abandon:g} s (the "
              f"abandonment limit, SPEC 3.6): giving up for now; this table is saved{where} "
              "and the same join command resumes it while its host runs")
    return True


def _begin(session: TableSession, nursery: trio.Nursery, run_seat: TableRunner) -> None:
    nursery.start_soon(run_seat, session)
    nursery.start_soon(session.run_timers)


async def _one_connection(config: JoinConfig, box: list[TableSession | None],
                          nursery: trio.Nursery, run_seat: TableRunner,
                          on_status: Callable[[str], None]) -> None:
    limits = config.limits
    session = box[0]
    if config.opener is not None:
        stream = await config.opener()
    else:
        stream = await open_pinned_connection(config.invite.address, config.invite.port,
                                              config.invite.pin,
                                              handshake_timeout=limits.handshake)
    channel = FramedChannel(stream, keepalive_interval=limits.keepalive,
                            silence_timeout=limits.silence)
    try:
        hi = _greeting(config, session)
        if session is not None:
            await session.durable()
        with trio.fail_after(limits.handshake):
            await channel.send(control.encode(hi))
        try:
            ok = await receive(channel, control.Ok, limits.handshake)
        except SessionError as exc:
            # (refused: a full table, a wrong secret...; seated by no roster yet, we have no
            # place to wait for: the table may have filled while we were away, SPEC 5.3)
            if (session is None or session.status.game_id is None) and exc.fatal:
                raise TableRefused(str(exc)) from None
            raise SessionError(str(exc), fatal=False) from None
        if ok.seats is None:
            raise TableRefused("this invite is a game of two, not a table")
        if session is None:
            frame = await channel.receive()  # the host's hello comes first (SPEC 5.3)
            seen = certificate_fingerprint(peer_certificate(stream))
            try:
                seat = joiner_seat(config.key, frame, seen)
            except LocalProtocolError as exc:
                raise TableRefused(f"the host's first message is not a table's hello: "
                                   f"{printable(str(exc), 200)}") from None
            session = box[0] = TableSession(seat, config.key, JOINER, config.save_dir,
                                            config.invite.secret, limits, on_status=on_status)
            session.perform(lambda s: s.start())
            _begin(session, nursery, run_seat)
            mine = 0
        else:
            await _prove(config, session, channel, ok)
            mine = ok.have
        session.away_since = None
        on_status("connected to the host")
        await _play(session, channel, mine)
    finally:
        with trio.move_on_after(2):
            await channel.aclose()


async def _prove(config: JoinConfig, session: TableSession, channel: FramedChannel,
                 ok: control.Ok) -> None:
    """Answer the `ok`'s nonce with our seat's signature (SPEC 3.4), so that the host gives
    this connection our seat (a host that asks nothing gets nothing)."""
    seat, game = session.seat.my_seat, session.status.game_id
    if ok.nonce is None or seat is None or game is None:
        return
    with trio.fail_after(config.limits.handshake):
        await channel.send(control.encode(control.Prove(
            prove_seat(config.key, ok.nonce, game, seat))))


def _greeting(config: JoinConfig, session: TableSession | None) -> control.Hi:
    if session is None or session.status.game_id is None:
        # (no roster seated us yet: we ask for a place as a new joiner does, and send our
        # hello again, SPEC 5.3)
        return control.Hi(config.invite.secret, None, 0, None, config.name)
    status = session.status
    return control.Hi(config.invite.secret, status.game_id, session.have(),
                      session.first_hash(), config.name, seat=session.seat.my_seat)


async def _play(session: TableSession, channel: FramedChannel, host_has: int) -> None:
    """Over one connection: resend our messages from the host's count on, then send ours as
    they come and take the host's, until the game is over and both sides hold it all."""
    pending = session.mine[host_has:]
    session.take_outbox()  # (everything in it is in `mine`, sent below)
    goodbye = _Goodbye(session, channel)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(channel.keep_alive)
            nursery.start_soon(_write, session, channel, pending, goodbye)
            nursery.start_soon(_read, session, channel, nursery.cancel_scope, goodbye)
    except BaseExceptionGroup as group:
        raise unwrap(group) from None


@dataclass
class _Goodbye:
    """Our `bye` on one connection: the counts it said last. The host leaves once every
    joiner's `bye` shows it holds every message (SPEC 3.4), so the last one must go out
    before we leave, even when the host's goodbye is what tells us we are done."""

    session: TableSession
    channel: FramedChannel
    said: tuple[int, ...] | None = None

    async def say(self) -> None:
        """Send our counts if they are new on this connection."""
        have = self.session.have()
        if self.session.done and self.said != have:
            await self.session.durable()
            self.said = have
            await self.channel.send(control.encode(control.Bye(have)))


async def _write(session: TableSession, channel: FramedChannel, pending: list[bytes],
                 goodbye: _Goodbye) -> None:
    while True:
        pending += session.take_outbox()
        if pending:
            await session.durable()
            while pending:
                await channel.send(pending.pop(0))
            continue
        await goodbye.say()
        await session.wait_changed()


async def _read(session: TableSession, channel: FramedChannel, scope: trio.CancelScope,
                goodbye: _Goodbye) -> None:
    while True:
        # Once the host's goodbye matches what we hold, we leave when it closes the
        # connection (every joiner said it holds everything) or when nothing more came for
        # `bye` seconds: another seat's last `heads` (SPEC 5.6) may still be on its way after
        # the end, and a joiner that left before it would keep the host waiting for it.
        quiet = session.limits.bye if session.settled else math.inf
        frame = None
        with trio.move_on_after(quiet):
            try:
                frame = await channel.receive()
            except NetError:
                if session.settled:  # (the host left once every seat held it all)
                    scope.cancel()
                    return
                raise
        if frame is None:
            if session.settled:
                with trio.move_on_after(session.limits.bye), contextlib.suppress(NetError):
                    await goodbye.say()  # (ours last: the host waits for it to leave)
                scope.cancel()
                return
            continue
        try:
            ctl = control.decode(frame)
        except control.AdvisoryError as exc:  # (names only advise: say so, go on)
            session.on_status(f"the host's seat names are ignored: {exc}")
            continue
        except control.ControlError as exc:
            raise SessionError(f"a malformed control frame from the host: {exc}") from None
        if isinstance(ctl, control.Names):
            session.take_names(ctl.names)
            continue
        if isinstance(ctl, control.Bye):
            session.host_bye = ctl.have if isinstance(ctl.have, tuple) else None
            session.notify()
            continue
        if isinstance(ctl, control.Refusal):
            raise SessionError(f"the host stopped: {printable(ctl.reason, 200)}")
        if ctl is not None or session.failure is not None:
            continue
        try:
            session.receive(frame)
        except RuleViolation as exc:
            if exc.signed:
                where = f"; the evidence is kept in {session.path}" if session.path else ""
                session.on_status(f"a seat broke the protocol: {printable(str(exc), 200)}"
                                  f"{where}")
                continue
            raise SessionError(f"unreadable input from the host: {printable(str(exc), 200)}"
                               ) from None

