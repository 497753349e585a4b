"""The host: listen (IPv4 and IPv6), print invite codes, admit one joiner, play, resume.

The join secret and the TLS key pin are in the invite; a joiner must know both. One game at
a time: a second joiner is told the host is busy. When the joiner drops, the host keeps
listening; the same joiner (same secret, same game id) picks the game up where it was.
Strangers are bounded before admission (`admission`), and a game must begin (both hellos)
within the pre-game limit of its first connection.
"""

from __future__ import annotations

import contextlib
import hmac
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.games import module_of
from p2pgotg.net import rendezvous
from p2pgotg.net._stream import abort_on_close
from p2pgotg.net.admission import (
    AdmissionLimits,
    Gate,
    Ticket,
    peer_address,
    serve_admission,
    serve_one,
)
from p2pgotg.net.errors import NetError
from p2pgotg.net.framing import FramedChannel
from p2pgotg.net.games import resume_session, unfinished_games
from p2pgotg.net.invite import Invite, reachable_addresses
from p2pgotg.net.pake_link import ShortCodeGate, is_pake_frame
from p2pgotg.net.player_name import shown_name
from p2pgotg.net.reach import ReachOptions, offer
from p2pgotg.net.seat import SeatRunner
from p2pgotg.net.session import (
    GameSession,
    Link,
    SessionError,
    Timeouts,
    expect,
    lost_words,
    unwrap,
)
from p2pgotg.net.tls import (
    certificate_fingerprint,
    listening_port,
    public_key_pin,
    server_context,
)
from p2pgotg.protocol import HOST, JOINER, control
from p2pgotg.reach.tor_onion import game_seed


@dataclass
class HostConfig:
    key: Ed25519PrivateKey
    tls_cert: bytes
    tls_key: bytes
    options: Any  # the game's rule options (Game of the Generals' or Towers')
    save_dir: Path
    port: int = 0
    bind: str | None = None
    limits: Timeouts = field(default_factory=Timeouts)
    resume: bool = True  # pick up our unfinished hosted game, if there is one
    resume_from: Path | None = None  # that one (the player chose it), else the newest
    name: str | None = None  # ours, sent in `ok` (SPEC 3.4): a label the joiner shows
    reach: ReachOptions | None = None  # None: LAN invite codes only (SPEC 3.3, version 1)
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)


@dataclass
class Hosting:
    """What `host_game` reports through `task_status.started`: the invite codes."""

    port: int
    invites: list[str]
    short_code: str | None = None  # announced on the LAN (SPEC 3.7)
    notes: list[str] = field(default_factory=list)  # what the host found about its network


async def host_game(
    config: HostConfig,
    run_seat: SeatRunner,
    *,
    on_status: Callable[[str], None] = lambda s: None,
    on_invite: Callable[[str], None] = lambda code: None,
    on_short_code: Callable[[str], None] = lambda code: None,
    task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED,
) -> GameSession:
    """Host one game to its end (verdict or violation) and return its session.
    ``on_invite`` gets a new invite code for the same game when the one reported at the
    start no longer reaches us (our public mapping moved: SPEC 3.8); ``on_short_code`` the
    LAN short code as soon as it is announced, before the invite is ready (SPEC 3.7)."""
    fingerprint = certificate_fingerprint(config.tls_cert)
    pin = public_key_pin(config.tls_cert)
    session: GameSession | None = None
    join_secret = secrets.token_bytes(16)
    listen_port = config.port
    if config.resume:
        saved = unfinished_games(config.save_dir, HOST, config.key)
        if config.resume_from is not None:
            saved = [game for game in saved if game.path == config.resume_from]
        if saved and saved[0].join_secret is not None:
            session = resume_session(saved[0], config.key, fingerprint, config.limits)
            session.on_claim = on_status
            join_secret = saved[0].join_secret
            if not listen_port and saved[0].port:
                listen_port = saved[0].port  # so that the joiner's invite still reaches us
            on_status(f"resuming the unfinished game saved in {saved[0].path.name}")
    if session is not None:
        session.link = Link.RECONNECTING  # the joiner is away at least since we stopped
        session.away_since = trio.current_time()
    bound_port = [0]
    begin_by = [math.inf]  # when the game in its pre-game phase must have begun
    strangers = Gate(config.admission)  # (connections not yet admitted)
    live: list[LiveConnection] = []  # the joiner's connection, while there is one
    finished = trio.Event()
    gates: list[ShortCodeGate] = []  # the short code's, from the moment it is shown

    async def handler(stream: trio.SSLStream, ticket: Ticket) -> None:
        nonlocal session
        channel = FramedChannel(stream, keepalive_interval=config.limits.keepalive,
                                silence_timeout=config.limits.silence)
        try:
            with trio.fail_at(min(trio.current_time() + config.limits.handshake,
                                  ticket.pregame_deadline)):
                first = await channel.receive()
                gate = gates[0] if gates else None
                if is_pake_frame(first):
                    if gate is None:
                        raise SessionError("this host has no short code: use its invite code")
                    first = await gate.admit(channel, first, config.limits.handshake)
                hi = expect(first, control.Hi)
        except (trio.TooSlowError, NetError, SessionError) as exc:
            reason = ("no greeting in time" if isinstance(exc, trio.TooSlowError)
                      else lost_words(exc) if isinstance(exc, NetError) else str(exc))
            on_status(f"a connection was refused: {reason}")
            await refuse(channel, f"no valid greeting: {reason}")
            return
        wanted, have = hi.game, hi.have
        if not hmac.compare_digest(hi.secret, join_secret):
            on_status("a joiner with a wrong join secret was refused")
            await refuse(channel, "wrong join secret: check the invite code")
            return
        ticket.release()  # (admitted: no longer counts among the strangers)
        if (session is not None and have > session.sent_count) \
                or not first_hello_matches(session, hi.first, wanted):
            # (a `have` beyond what we sent, or a `first` that is not our hello: refused,
            # this connection only; the game is untouched, SPEC 3.4)
            await refuse(channel, "bad greeting")
            return
        if finished.is_set():
            await refuse(channel, "this game is over")
            return
        gid = session.peer.flow.game_id if session else None
        if gid is not None:
            if wanted is None:  # someone with the invite but not our game: a second joiner,
                # or ours asking for a fresh coin toss (SPEC 3.4: the invite is this game's)
                on_status("a joiner asking for a new game was refused: a game is in progress")
                await refuse(channel, INVITE_TAKEN)
                return
            if wanted != gid:
                await refuse(channel, "this host does not have that game (it may be over)")
                return
        elif wanted is not None and not (session is not None and awaits_joiner_hello(session)):
            await refuse(channel, "this host does not have that game (it may be over)")
            return
        # From here the joiner is admitted: our game (wanted == gid), our game before the
        # joiner's hello reached us (wanted set, gid None), or a new game (both None).
        new_game = wanted is None
        if live:
            if new_game:
                on_status("a second joiner was refused: a game is in progress")
                await refuse(channel, "this host is already playing a game with someone "
                              "else")
                return
            # Our joiner is back on a new connection while we still hold its old one (a
            # drop we have not noticed yet): the old one is stale, the new one wins.
            on_status("the other player reconnected: dropping the old connection")
            old = live[0]
            old.scope.cancel()
            await old.gone.wait()
            if live or finished.is_set():
                await refuse(channel, "this host is busy with another connection")
                return
        if new_game:
            peer = module_of(config.options).peer(HOST, config.key, fingerprint,
                                                  config.options)
            session = GameSession(peer, config.save_dir, join_secret, config.limits,
                                  listen_port=bound_port[0], on_claim=on_status,
                                  own_name=config.name)
            begin_by[0] = ticket.pregame_deadline
            have = 0
        assert session is not None
        current = session
        current.note_peer_name(shown_name(hi.name))
        me = LiveConnection(trio.CancelScope(), trio.Event())
        live.append(me)
        lift = before_the_game(current, me.scope, begin_by[0], nursery)
        try:
            hellos = current.peer.flow.senders[HOST].hashes
            held = current.peer.received_count()
            try:
                await current.durable()  # (what we say we hold must survive a crash)
                await channel.send(control.encode(control.Ok(
                    game=current.peer.flow.game_id, have=held,
                    first=hellos[0] if hellos else None, name=config.name,
                    rules=current.peer.flow.GAME)))
            except NetError:
                return
            if new_game:
                current.perform(lambda p: p.start())
                nursery.start_soon(run_seat, current)
            on_status("the other player is connected")
            with me.scope:
                await current.run_connection(channel, have)
        except (NetError, SessionError) as exc:
            if isinstance(exc, NetError):  # (lost: its addresses may be punched again)
                abort_on_close(stream)
            on_status(lost_words(exc, current))
        finally:
            lift.cancel()
            live.remove(me)
            me.gone.set()
        await refuse_if_too_late(me.scope, channel, on_status)
        if current.finished or current.halted:
            finished.set()

    try:
        async with trio.open_nursery() as nursery:
            if session is not None:
                nursery.start_soon(run_seat, session)
            context = server_context(config.tls_cert, config.tls_key)
            listeners = await nursery.start(serve_admission, handler, context, listen_port,
                                            config.bind, strangers, on_status)
            port = bound_port[0] = listening_port(listeners)
            if config.reach is not None:

                async def accept_punched(tcp: trio.SocketStream) -> None:
                    ticket = strangers.enter(peer_address(tcp))
                    if ticket is None:
                        tcp.socket.close()
                        return
                    await serve_one(tcp, ticket, handler, context)

                def joiner_away() -> bool:
                    return (session is not None and session.peer.flow.game_id is not None
                            and not live and not finished.is_set() and not session.finished)

                def short_code_up(code: str, gate: ShortCodeGate) -> None:
                    gates.append(gate)  # (before anyone can read the code)
                    on_short_code(code)

                found = await nursery.start(partial(
                    offer, config.reach, port, config.bind, pin, join_secret, fingerprint,
                    accept_punched, on_status=on_status, on_invite=on_invite,
                    on_short_code=short_code_up, away=joiner_away,
                    onion_seed=game_seed(config.key.private_bytes_raw(), join_secret)))
                task_status.started(Hosting(port, [found.invite], found.short_code,
                                            found.notes))
            else:
                invites = [Invite(address, port, pin, join_secret).encode()
                           for address in reachable_addresses(config.bind)]
                task_status.started(Hosting(port, invites))
            poll = min(1.0, max(0.05, config.limits.abandon / 4))
            while not finished.is_set():
                with trio.move_on_after(poll):
                    await finished.wait()
                if session is None or live:
                    continue
                if session.finished or session.halted:
                    finished.set()
                elif session.done and session.verdict is not None \
                        and session.verdict.audit_complete and session.away_since is not None \
                        and trio.current_time() - session.away_since > config.limits.linger:
                    finished.set()  # (a clean end: we hold all we need, and the joiner did not
                    # come back for our last messages while it could have)
                elif session.peer.flow.game_id is not None:
                    # (before the game has an id nothing is saved: wait for a joiner as at
                    # first)
                    now = trio.current_time()
                    session.claim_overdue(now)  # (deadlines run while it is away)
                    if session.away_too_long(now):
                        finished.set()
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # a ListenError, say: raised as itself, not a group
        raise unwrap(group) from None
    finally:  # (cancelled too: the transcript file is closed, never left open)
        if session is not None:
            session.close()
            if config.reach is not None and session.finished:  # (nothing to punch back to)
                rendezvous.forget(config.reach.data_dir, join_secret, HOST)
    assert session is not None
    return session


# -- shared with the many-game host (multihost.py) ------------------------------------------

@dataclass
class LiveConnection:
    """The connection a joiner is playing over, so that a reconnect can replace it."""

    scope: trio.CancelScope
    gone: trio.Event


def awaits_joiner_hello(session: GameSession) -> bool:
    """Our hello is out and the joiner's never reached us: a joiner that has our hello and
    sent its own (so it knows the game id) may come back and send it again."""
    flow = session.peer.flow
    return HOST in flow.hellos and JOINER not in flow.hellos


def first_hello_matches(session: GameSession | None, first: bytes | None,
                        wanted: bytes | None = None) -> bool:
    """A `hi`'s `first` is nil or the body hash of our hello (SPEC 3.4): a `first` that
    names no hello of ours (we have none yet, `session` None) is refused; and not nil when
    it comes back to a game that awaits the joiner's hello (`wanted` set): that hash went
    only to the joiner we admitted, so another holder of the invite cannot take the game
    over while the joiner's hello is lost."""
    if first is None:
        return session is None or wanted is None or not awaits_joiner_hello(session)
    hellos = session.peer.flow.senders[HOST].hashes if session is not None else []
    return bool(hellos) and hmac.compare_digest(first, hellos[0])


PREGAME_WORDS = "the game did not begin in time (no hello from the joiner): connection dropped"
#: A one-game host's answer to a `hi` for a new game once its game has begun (SPEC 3.4).
INVITE_TAKEN = ("this host is already playing this invite's game, whose coin toss is made: "
                "only its joiner can come back to it (the same join command does); ask the "
                "host for a new invite later")


def before_the_game(session: GameSession, scope: trio.CancelScope, deadline: float,
                    nursery: trio.Nursery) -> trio.CancelScope:
    """Give a connection whose game has no id yet until `deadline` (SPEC 3.4, the pre-game
    limit): `scope` (the connection's) is cancelled then, unless the joiner's hello came
    first. Returns the scope of the watcher, to cancel when the connection ends."""
    watcher = trio.CancelScope()
    if session.peer.flow.game_id is not None:
        return watcher
    scope.deadline = deadline

    async def lift() -> None:
        with watcher:
            while session.peer.flow.game_id is None:
                await session.wait_changed()
            scope.deadline = math.inf

    nursery.start_soon(lift)
    return watcher


async def refuse_if_too_late(scope: trio.CancelScope, channel: FramedChannel,
                             say: Callable[[str], None]) -> None:
    """When `scope` (a connection's, set by `before_the_game`) ended at the pre-game
    limit, and not because a reconnection replaced it: say so, and tell the joiner."""
    if scope.cancelled_caught and trio.current_time() >= scope.deadline:
        say(PREGAME_WORDS)
        await refuse(channel, PREGAME_WORDS)


async def refuse(channel: FramedChannel, reason: str) -> None:
    """Tell the joiner why it is turned away (an `error` frame, best effort) and hang up."""
    with trio.move_on_after(2):
        with contextlib.suppress(NetError):
            await channel.send(control.encode(control.Refusal(reason)))
    await channel.aclose()
