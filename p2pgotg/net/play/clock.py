"""Game clocks as each side sees them: time is passed in, never read here.

Each peer keeps both clocks from its own observations: a side's clock runs from the moment
this peer saw the turn pass to that side until it saw that side's answer. The two peers'
readings differ by the network delay, so a claim is made only against the opponent, only
when its time is up by our own reading, and never about our own clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Clocks:
    """Remaining time per role. `limit` 0 means no clock; `per_move` 0 means no limit."""

    limit: float
    per_move: float
    used: dict[str, float] = field(default_factory=lambda: {"host": 0.0, "joiner": 0.0})
    running: str | None = None  # whose clock runs
    since: float = 0.0  # when it started running

    def switch(self, role: str | None, now: float) -> None:
        """The turn passed to `role` (None: no clock runs, e.g. during setup)."""
        if role == self.running:
            return
        self.stop(now)
        self.running, self.since = role, now

    def stop(self, now: float) -> None:
        if self.running is not None:
            self.used[self.running] += max(0.0, now - self.since)
        self.running = None

    def remaining(self, role: str, now: float) -> float | None:
        """Seconds left on `role`'s clock (None: no clock)."""
        if not self.limit:
            return None
        used = self.used[role] + (now - self.since if self.running == role else 0.0)
        return self.limit - used

    def move_remaining(self, role: str, now: float) -> float | None:
        if not self.per_move:
            return None
        if self.running != role:
            return float(self.per_move)
        return self.per_move - (now - self.since)

    def flagged(self, role: str, now: float) -> bool:
        """True when `role` is out of time by this peer's reading."""
        total, move = self.remaining(role, now), self.move_remaining(role, now)
        return (total is not None and total <= 0) or (move is not None and move <= 0)

    def deadline(self, role: str, now: float) -> float | None:
        """The moment `role` is out of time if it does not answer: a fixed moment, in the
        past once it has run out (so that waiting for it never starts again)."""
        candidates = [
            now + left
            for left in (self.remaining(role, now), self.move_remaining(role, now))
            if left is not None
        ]
        return min(candidates) if candidates and self.running == role else None
