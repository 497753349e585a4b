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

from p2pgotg.net._stream import close_quietly
from p2pgotg.net.errors import NetError
from p2pgotg.net.framing import FramedChannel
from p2pgotg.net.invite import Invite
from p2pgotg.net.lan import LanGame
from p2pgotg.net.session import SessionError, check_control, control, parse_control
from p2pgotg.net.tls import (
    certificate_fingerprint,
    client_context,
    handshake,
    peer_certificate,
    public_key_pin,
)
from p2pgotg.reach.pake import HOST_ROLE, JOINER_ROLE, PakeError, PakeSide
from p2pgotg.reach.shortcode import ShortCode

MAX_FAILURES = 3


def is_pake_frame(frame: bytes) -> bool:
    ctl = parse_control(frame)
    return ctl is not None and ctl.get("ctl") == "pake"


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
            side.finish(check_control(first, "pake").get("msg"))
        except PakeError as exc:  # (nothing answered yet: no try is taken)
            await _refuse(channel, f"bad short-code exchange: {exc}")
            raise SessionError(f"a short-code joiner sent a bad PAKE message: {exc}") \
                from None
        self.under_way += 1  # the try is taken here, before the answer goes out
        try:
            with trio.fail_after(timeout):
                await channel.send(control("pake", msg=side.message))
                confirm = check_control(await channel.receive(), "pake").get("confirm")
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
                await channel.send(control("pake", confirm=side.confirm(),
                                           secret=self.join_secret))
                return await channel.receive()
        except trio.TooSlowError:
            raise SessionError("a short-code joiner was too slow") from None


async def _refuse(channel: FramedChannel, reason: str) -> None:
    with trio.move_on_after(2):
        with contextlib.suppress(NetError):
            await channel.send(control("error", reason=reason))


class ShortCodeFailed(SessionError):
    """A short code that did not lead to the game; the text is for the user."""


async def join_by_short_code(code: ShortCode, games: list[LanGame], timeout: float,
                             on_status: Callable[[str], None] = lambda s: None,
                             ) -> tuple[Invite, trio.SSLStream]:
    """Try each announced game with the code's number; the first PAKE that succeeds gives
    the invite (pinned to what we saw) and the open, authenticated TLS stream."""
    mine = [g for g in games if g.number == code.number]
    if not mine:
        seen = ", ".join(str(g.number) for g in games)
        raise ShortCodeFailed(
            f"no game numbered {code.number} is announced on this network"
            + (f" (games seen: {seen})" if seen else " (no p2pgotg game is announced here)")
            + "; check the number, or use the long invite code")
    last: str = ""
    for game in mine:
        for address in game.addresses:
            try:
                return await _try(code, address, game.port, timeout, on_status)
            except ShortCodeFailed as exc:
                last = str(exc)
                if exc.fatal:
                    raise
            except (NetError, trio.TooSlowError, OSError) as exc:
                last = f"could not reach {address}:{game.port}: {exc}"
    raise ShortCodeFailed(last or "the announced game could not be reached")


async def _try(code: ShortCode, address: str, port: int, timeout: float,
               on_status: Callable[[str], None]) -> tuple[Invite, trio.SSLStream]:
    with trio.fail_after(timeout):
        tcp = await trio.open_tcp_stream(address, port)
    stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
    channel = FramedChannel(stream)
    try:
        await handshake(stream, timeout, f"{address}:{port}")
        cert = peer_certificate(stream)
        side = PakeSide(code.password, certificate_fingerprint(cert), JOINER_ROLE)
        with trio.fail_after(timeout):
            await channel.send(control("pake", msg=side.message))
            answer = check_control(await channel.receive(), "pake")
            side.finish(answer.get("msg"))
            await channel.send(control("pake", confirm=side.confirm()))
            last = check_control(await channel.receive(), "pake")
        side.check(last.get("confirm"))
        secret = last.get("secret")
        if not isinstance(secret, bytes) or len(secret) != 16:
            raise ShortCodeFailed("the host sent no valid join secret", fatal=False)
    except SessionError as exc:  # the host's `error` frame: a wrong code, or retired
        await close_quietly(stream)
        raise ShortCodeFailed(f"the host refused the short code: {exc}", fatal=False) \
            from None
    except PakeError:
        await close_quietly(stream)
        raise ShortCodeFailed("the short code does not match this host's: check it, or "
                              "someone on this network is pretending to be the host",
                              fatal=False) from None
    except BaseException:
        await close_quietly(stream)
        raise
    on_status(f"short code accepted by {address}:{port}")
    return Invite(address, port, public_key_pin(cert), secret), stream
