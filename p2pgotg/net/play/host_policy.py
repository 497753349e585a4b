"""What a host does with a joiner's `hi` (SPEC 3.4): admit it to a new game, to one of its
games (resume), or refuse it, and why. Pure: no I/O, no clock, no trio; the host's driver
(`hosting.Host`) takes a snapshot of its games, asks `decide`, and acts on the answer.

The one-game host and the many-game host differ only by their `HostPolicy`: how many games
at once, and what a made coin toss is bound to (SPEC 3.4, "An invite belongs to its game
once the toss is made"): the invite (one game: a new-game `hi` is refused once the toss is
made) or the joiner's key (many games: a new-game `hi` starts another game while there is
room, within the per-source limits).

    >>> from p2pgotg.protocol.control import Hi
    >>> decide(Hi(bytes(16), None, 0, None), HostState(bytes(16)), HostPolicy())
    NewGame(replaces=())
"""

from __future__ import annotations

import hmac
import math
from dataclasses import dataclass
from enum import Enum

from p2pgotg.protocol.control import Hi


class TossBound(Enum):
    """What a made coin toss belongs to, so that no joiner gets a second toss at will."""

    INVITE = "invite"  # the one-game host: its invite is its game's
    KEY = "key"  # the many-game host: one invite for many joiners, one game per key


@dataclass(frozen=True)
class HostPolicy:
    """How a host takes joiners: the one-game host is `HostPolicy()`."""

    max_games: int = 1  # games in progress at once
    games_total: int | None = 1  # stop once this many games have ended (None: never)
    toss_bound: TossBound = TossBound.INVITE
    action_limit: float | None = None  # the host's limit per owed action (SPEC 3.6), if any

    def __post_init__(self) -> None:
        if self.max_games < 1:
            raise ValueError("max_games is at least 1")

    @property
    def many(self) -> bool:
        """One invite for many joiners: its games are numbered in what the host says."""
        return self.toss_bound is TossBound.KEY


@dataclass(frozen=True)
class HeldGame:
    """What the decision reads of one game the host holds."""

    number: int
    game_id: bytes | None  # None until both hellos
    host_hello: bytes | None  # the body hash of our hello (None before it)
    sent: int  # game messages we have sent in it
    awaits_joiner_hello: bool  # our hello is out, the joiner's never reached us
    connected: bool  # a connection of its joiner is live
    in_progress: bool  # it holds a slot (admitted, verdict not yet known)
    ended: bool = False  # over for good (finished, abandoned or dropped), lingering
    failed: bool = False  # a broken rule ended it
    halted: bool = False  # its transcript cannot be written
    source: str = ""  # where its first connection came from

    @property
    def begun(self) -> bool:
        return self.game_id is not None


@dataclass(frozen=True)
class HostState:
    """The host at the moment a `hi` arrives."""

    secret: bytes  # the join secret of its invite
    games: tuple[HeldGame, ...] = ()
    source: str = ""  # where this connection comes from (`admission.source_of`)
    cooling: float = 0.0  # seconds before `source` may start a new game (SPEC 3.4)
    cooldown: float = 0.0  # the whole cool-down, seconds (for the words)
    stopping: bool = False  # no new games any more (enough have ended, or told to stop)
    pregame_per_source: int = 8  # (many games) games not yet begun from one source
    games_per_source: int = 8  # (many games) games in progress from one source


@dataclass(frozen=True)
class NewGame:
    """Admit to a new game; `replaces` are games (numbers) that never began and whose joiner
    left, given up for this one (the one-game host holds one game)."""

    replaces: tuple[int, ...] = ()


@dataclass(frozen=True)
class Resume:
    """Admit to game `number`; `stale` when its joiner's old connection is still up (the new
    one replaces it, SPEC 3.4)."""

    number: int
    stale: bool = False


@dataclass(frozen=True)
class Refuse:
    """Refuse with an `error` frame: `reason` for the joiner, `note` (when set) for the
    host's operator; `full` when only the number of games in progress stood in the way."""

    reason: str
    note: str | None = None
    full: bool = False


Decision = NewGame | Resume | Refuse

WRONG_SECRET = Refuse("wrong join secret: check the invite code",
                      "a joiner with a wrong join secret was refused")
BAD_GREETING = Refuse("bad greeting")
UNKNOWN_GAME = Refuse("this host does not have that game (it may be over)")
GAME_OVER = Refuse("this game is over")
CANNOT_SAVE = Refuse("this host cannot save that game right now: try later")
NO_NEW_GAMES = Refuse("this host is not starting new games any more")
#: A one-game host's answer to a `hi` for a new game once its game has begun (SPEC 3.4).
INVITE_TAKEN = ("this host is already playing this invite's game, whose coin toss is made: "
                "only its joiner can come back to it (the same join command does); ask the "
                "host for a new invite later")
#: A table seat's greeting (its `have` one count per seat, SPEC 5.4) at a host of two seats.
NOT_A_TABLE = Refuse("this host plays a game of two players, not a table of three or four: "
                     "check the invite code",
                     "a joiner of a table was refused: this host plays a game of two")
SOMEONE_ELSE = "this host is already playing a game with someone else"
FULL = "this host is full"  # the start of the refusal a joiner gets beyond max_games


def decide(hi: Hi, state: HostState, policy: HostPolicy) -> Decision:
    """New game, resume, or refuse (with SPEC 3.4's words) for `hi` at `state`."""
    if not hmac.compare_digest(hi.secret, state.secret):
        return WRONG_SECRET
    if isinstance(hi.have, tuple):
        return NOT_A_TABLE
    if hi.game is None:
        if hi.first is not None:  # (a new game's `first` names no hello)
            return BAD_GREETING
        return _new_game(state, policy)
    game = _find(state.games, hi.game, hi.first)
    if game is None:
        return UNKNOWN_GAME
    if hi.have > game.sent or (hi.first is not None and game.host_hello is not None
                               and not hmac.compare_digest(hi.first, game.host_hello)):
        return BAD_GREETING  # (more than we ever sent, or not our hello's hash)
    if game.failed:
        return GAME_OVER
    if game.halted:
        return CANNOT_SAVE
    return Resume(game.number, stale=game.connected)


def _find(games: tuple[HeldGame, ...], wanted: bytes, first: bytes | None) -> HeldGame | None:
    """Our game with id `wanted`; or, when the joiner's hello never reached us (it resends
    it), the game that awaits a joiner's hello and whose hello has the hash `first` the
    joiner holds. Without `first`, none: that hash went only to the joiner we admitted,
    so another holder of the invite cannot take such a game over."""
    for game in games:
        if game.game_id is not None and hmac.compare_digest(game.game_id, wanted):
            return game
    if first is None:
        return None
    return next((g for g in games if not g.ended and g.awaits_joiner_hello
                 and g.host_hello is not None and hmac.compare_digest(g.host_hello, first)),
                None)


def _new_game(state: HostState, policy: HostPolicy) -> Decision:
    if policy.toss_bound is TossBound.INVITE:
        return _one_game_per_invite(state)
    if state.stopping:
        return NO_NEW_GAMES
    refusal = _source_refusal(state)
    if refusal is not None:
        return refusal
    in_progress = sum(1 for g in state.games if g.in_progress)
    if in_progress >= policy.max_games:
        return Refuse(f"{FULL}: {policy.max_games} games are in progress; try again later",
                      f"a new joiner was refused: {policy.max_games} games in progress",
                      full=True)
    return NewGame()


def _one_game_per_invite(state: HostState) -> Decision:
    """The invite is its game's once the toss is made; before that, a game whose joiner
    left gives way to a new joiner, and one whose joiner is here does not."""
    live = [g for g in state.games if not g.ended]
    if state.stopping and not live:
        return GAME_OVER
    if any(g.begun for g in live):
        return Refuse(INVITE_TAKEN,
                      "a joiner asking for a new game was refused: a game is in progress")
    if any(g.connected for g in live):
        return Refuse(SOMEONE_ELSE, "a second joiner was refused: a game is in progress")
    return NewGame(replaces=tuple(g.number for g in live))


def _source_refusal(state: HostState) -> Refuse | None:
    """Why this source may not start a new game now (SPEC 3.4); None when it may."""
    if state.cooling > 0:  # (a squatter cut at a limit would otherwise be back in a slot)
        return Refuse("a game from your address made no progress in time: this host takes "
                      f"new games from it again in {math.ceil(state.cooling)} s",
                      "a new joiner was refused: a game from its address lapsed "
                      f"{state.cooldown - state.cooling:.0f} s ago")
    mine = [g for g in state.games if g.source == state.source and not g.ended]
    waiting = sum(1 for g in mine if not g.begun)
    if waiting >= state.pregame_per_source:
        # An invite is a bearer token: one holder could otherwise fill every slot with
        # games it never begins, each for the whole pre-game limit.
        return Refuse(f"{waiting} games from your address have not begun yet: accept or "
                      "leave one of them first",
                      f"a new joiner was refused: {waiting} games from its address have not "
                      "begun yet")
    playing = sum(1 for g in mine if g.in_progress)
    if playing >= state.games_per_source:
        # Begun games count too: one holder could otherwise hold every slot with games it
        # plays as slowly as the limits allow.
        return Refuse(f"{playing} games from your address are in progress, the most this "
                      "host plays with one address at once: finish one first",
                      f"a new joiner was refused: {playing} games from its address are in "
                      "progress")
    return None
