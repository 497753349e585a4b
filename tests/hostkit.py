"""What the tests that play games against a real host share: the short limits, the net
against hangs, a joiner's configuration and the check that a game ended clean."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.net.play.joining import JoinConfig
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.reaching.invite import Invite

SAFETY = 30  # seconds: a net against hangs, never a measure of speed
# Short enough that a stall costs about a second, long enough that a busy machine never
# ends a healthy connection before its planned fault.
FAST = Timeouts(handshake=1.5, keepalive=0.2, silence=1.0, audit=30.0, abandon=60.0, bye=2.0,
              retry=(0.02, 0.1))


def joiner(invite: Invite, save_dir: Path, limits: Timeouts = FAST) -> JoinConfig:
    """A joiner with a fresh key that starts a new game (no resume)."""
    return JoinConfig(Ed25519PrivateKey.generate(), invite, save_dir, limits, resume=False)


def assert_clean(session: GameSession) -> None:
    verdict = session.verdict
    assert verdict is not None and verdict.clean and verdict.audit_complete, verdict
