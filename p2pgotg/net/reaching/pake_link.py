"""Short-code admission over TLS: the PAKE of ``reach.pake`` as session control frames
(SPEC 3.7), on the host (``ShortCodeGate``) and on the joiner (``join_by_short_code``).

A joiner with a short code has no pin yet, so it accepts whatever certificate the host
shows, runs the PAKE bound to that certificate's fingerprint, and only after the host's
confirmation checks does it trust the connection: it then learns the join secret over it
and pins the certificate for every reconnection. The host gives a short code
``MAX_FAILURES`` tries in all, however many connections run at once, then retires it; the
long invite code keeps working.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import trio

from p2pgotg.net.reaching.control_frames import SessionError, expect
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.reaching.lan import LanGame
from p2pgotg.net.transport._stream import close_quietly
from p2pgotg.net.transport.errors import NetError
from p2pgotg.net.transport.framing import FramedChannel
from p2pgotg.net.transport.tls import (
    certificate_fingerprint,
    client_context,
    handshake,
    peer_certificate,
    public_key_pin,
)
from p2pgotg.protocol import control
from p2pgotg.reach.pake import HOST_ROLE, JOINER_ROLE, PakeError, PakeSide
from p2pgotg.reach.shortcode import ShortCode

MAX_FAILURES = 3


def is_pake_frame(frame: bytes) -> bool:
    try:
        return isinstance(control.decode(frame), control.Pake)
    except control.ControlError:
        return False


@dataclass
class ShortCodeGate:
    """The host's side: checks short-code joiners and counts their tries (SPEC 3.7).

    A try is taken when the host answers a joiner's PAKE message, since from then on the
    joiner can learn whether its guess was right, and it is given back only when the
    joiner's confirmation checks. Tries under way count, so sessions opened at once get
    no more than ``MAX_FAILURES`` guesses between them; a try whose joiner never confirms
    stays used. Taking a try happens before the first await of ``admit``: trio runs one
    task at a time, so two connections never take the last try both.
    """

    code: ShortCode
    fingerprint: bytes  # of our TLS certificate
    join_secret: bytes
    on_status: Callable[[str], None] = lambda s: None
    failures: int = 0  # tries used up: wrong guesses, and exchanges never confirmed
    under_way: int = 0  # tries taken whose confirmation has not come yet

    @property
    def retired(self) -> bool:
        return self.failures >= MAX_FAILURES

    def _tries_left(self) -> str:
        if self.retired:
            return "the host has now retired it"
        left = MAX_FAILURES - self.failures - self.under_way
        if not left:
            return "the host's other tries are under way"
        return f"{left} more tr{'y' if left == 1 else 'ies'} before the host retires it"

    async def admit(self, channel: FramedChannel, first: bytes, timeout: float) -> bytes:
        """Run the PAKE that ``first`` opens; the joiner's next frame (its ``hi``) on
        success. SessionError (after telling the joiner why) on failure."""
        if self.retired:
            await _refuse(channel, "this short code was retired after too many wrong tries: "
                          "ask the host for the long invite code")
            raise SessionError("a short-code joiner was refused: the code is retired")
        if self.failures + self.under_way >= MAX_FAILURES:
            await _refuse(channel, f"all {MAX_FAILURES} tries of this short code are under "
                          "way on other connections: try again in a moment, or ask the host "
                          "for the long invite code")
            raise SessionError("a short-code joiner was refused: every try is under way")
        side = PakeSide(self.code.password, self.fingerprint, HOST_ROLE)
        try:
            side.finish(expect(first, control.Pake).msg)
        except PakeError as exc:  # (nothing answered yet: no try is taken)
            await _refuse(channel, f"bad short-code exchange: {exc}")
            raise SessionError(f"a short-code joiner sent a bad PAKE message: {exc}") \
                from None
        self.under_way += 1  # the try is taken here, before the answer goes out
        try:
            with trio.fail_after(timeout):
                await channel.send(control.encode(control.Pake(msg=side.message)))
                confirm = expect(await channel.receive(), control.Pake).confirm
            side.check(confirm)
        except BaseException as exc:  # (a cancellation too: the try stays used)
            self.under_way -= 1
            self.failures += 1
            wrong = isinstance(exc, PakeError)
            retired = "; the short code is retired, the invite code still works" \
                if self.retired else ""
            what = "gave a wrong short code" if wrong else "left before confirming its code"
            self.on_status(f"a joiner {what} ({self.failures} of {MAX_FAILURES} "
                           f"failures{retired})")
            if wrong:
                await _refuse(channel, f"wrong short code ({exc}); {self._tries_left()}")
                raise SessionError(f"wrong short code: {exc}") from None
            if isinstance(exc, (SessionError, NetError, trio.TooSlowError)):
                reason = "too slow" if isinstance(exc, trio.TooSlowError) else str(exc)
                raise SessionError(f"a short-code joiner did not confirm: {reason}") from None
            raise
        self.under_way -= 1  # a right code: the try is given back
        try:
            with trio.fail_after(timeout):
                await channel.send(control.encode(control.Pake(
                    confirm=side.confirm(), secret=self.join_secret)))
                return await channel.receive()
        except trio.TooSlowError:
            raise SessionError("a short-code joiner was too slow") from None


async def _refuse(channel: FramedChannel, reason: str) -> None:
    with trio.move_on_after(2):
        with contextlib.suppress(NetError):
            await channel.send(control.encode(control.Refusal(reason)))


class ShortCodeFailed(SessionError):
    """A short code that did not lead to the game; the text is for the user. Final: a
    join spends one guess of the code at most."""


async def join_by_short_code(code: ShortCode, games: list[LanGame], timeout: float,
                             on_status: Callable[[str], None] = lambda s: None,
                             ) -> tuple[Invite, trio.SSLStream]:
    """One guess of the code per join (SPEC 3.7): reach the one game announced with the
    code's number over TLS (nothing about the code is sent), then run the PAKE once, on
    that connection; the invite (pinned to what we saw) and the open, authenticated TLS
    stream. Several games announced with the number: none is tried."""
    mine = [g for g in games if g.number == code.number]
    if not mine:
        seen = ", ".join(str(g.number) for g in games)
        raise ShortCodeFailed(
            f"no game numbered {code.number} is announced on this network"
            + (f" (games seen: {seen})" if seen else " (no p2pgotg game is announced here)")
            + "; check the number, or use the long invite code")
    if len(mine) > 1:
        names = "; ".join(g.name for g in mine)
        raise ShortCodeFailed(
            f"{len(mine)} games on this network are announced as number {code.number} "
            f"({names}): the code was tried at none of them, since each try would spend a "
            "guess of it; ask the host for the long invite code (or to host again, for "
            "another number)")
    game = mine[0]
    stream, address = await _first_tls(game, timeout)
    return await _run_pake(code, stream, address, game.port, timeout, on_status)


CONNECT_STAGGER = 0.25  # seconds between the addresses of one announcement


async def _first_tls(game: LanGame, timeout: float) -> tuple[trio.SSLStream, str]:
    """A finished TLS handshake with the first of the game's addresses to answer (a
    quarter second apart, as Happy Eyeballs), the others closed; no byte of the PAKE is
    sent on any."""
    winner: list[tuple[trio.SSLStream, str]] = []
    failures: list[str] = []

    async def one(address: str, nursery: trio.Nursery) -> None:
        where = f"{address}:{game.port}"
        try:
            with trio.fail_after(timeout):
                tcp = await trio.open_tcp_stream(address, game.port)
        except (OSError, trio.TooSlowError) as exc:
            failures.append(f"{where}: {getattr(exc, 'strerror', None) or 'no answer'}")
            return
        stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
        try:
            await handshake(stream, timeout, where)
        except NetError as exc:
            failures.append(exc.detail or str(exc))
            await close_quietly(stream)
            return
        except BaseException:
            await close_quietly(stream)
            raise
        if winner:
            await close_quietly(stream)
            return
        winner.append((stream, address))
        nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        for i, address in enumerate(game.addresses):
            nursery.start_soon(one, address, nursery)
            if i + 1 < len(game.addresses):
                await trio.sleep(CONNECT_STAGGER)
    if not winner:
        raise ShortCodeFailed(f"the game announced as number {game.number} could not be "
                              f"reached ({'; '.join(failures)})")
    return winner[0]


async def _run_pake(code: ShortCode, stream: trio.SSLStream, address: str, port: int,
                    timeout: float, on_status: Callable[[str], None],
                    ) -> tuple[Invite, trio.SSLStream]:
    channel = FramedChannel(stream)
    try:
        cert = peer_certificate(stream)
        side = PakeSide(code.password, certificate_fingerprint(cert), JOINER_ROLE)
        with trio.fail_after(timeout):
            await channel.send(control.encode(control.Pake(msg=side.message)))
            answer = expect(await channel.receive(), control.Pake)
            side.finish(answer.msg)
            await channel.send(control.encode(control.Pake(confirm=side.confirm())))
            last = expect(await channel.receive(), control.Pake)
        side.check(last.confirm)
        secret = last.secret
        if secret is None:
            raise ShortCodeFailed("the host sent no valid join secret")
    except ShortCodeFailed:
        await close_quietly(stream)
        raise
    except SessionError as exc:  # the host's `error` frame: a wrong code, or retired
        await close_quietly(stream)
        raise ShortCodeFailed(f"the host refused the short code: {exc}") from None
    except PakeError:
        await close_quietly(stream)
        raise ShortCodeFailed("the short code does not match this host's: check it, or "
                              "someone on this network is pretending to be the host") \
            from None
    except (NetError, trio.TooSlowError) as exc:
        await close_quietly(stream)
        reason = "no answer in time" if isinstance(exc, trio.TooSlowError) else str(exc)
        raise ShortCodeFailed(f"the short-code exchange with {address}:{port} failed "
                              f"({reason}); the code was not tried again elsewhere") \
            from None
    except BaseException:
        await close_quietly(stream)
        raise
    on_status(f"short code accepted by {address}:{port}")
    return Invite(address, port, public_key_pin(cert), secret), stream
