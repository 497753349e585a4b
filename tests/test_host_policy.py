"""The host's admission decision (SPEC 3.4) on plain values: every way a `hi` is taken or
refused, for the one-game policy and the many-game one. The expected words are SPEC 3.4's
refusals ("wrong join secret", "bad greeting", a game the host does not have, a finished
game, the invite taken once the toss is made, a full host, the per-source limits)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from p2pgotg.net.play.host_policy import (
    FULL,
    INVITE_TAKEN,
    HeldGame,
    HostPolicy,
    HostState,
    NewGame,
    Refuse,
    Resume,
    TossBound,
    decide,
)
from p2pgotg.protocol.control import Hi

SECRET = bytes(range(16))
ONE = HostPolicy()
MANY = HostPolicy(max_games=3, games_total=None, toss_bound=TossBound.KEY)
GID = b"g" * 32
HELLO = b"h" * 32


def game(number: int = 1, *, begun: bool = True, awaiting: bool = False, **kw: object
         ) -> HeldGame:
    fields: dict[str, object] = dict(
        number=number, game_id=GID if begun else None, host_hello=HELLO, sent=5,
        awaits_joiner_hello=awaiting, connected=False, in_progress=True)
    fields.update(kw)
    return HeldGame(**fields)  # type: ignore[arg-type]


def state(*games: HeldGame, **kw: object) -> HostState:
    return HostState(SECRET, tuple(games), **kw)  # type: ignore[arg-type]


def hi(game_id: bytes | None = None, have: int = 0, first: bytes | None = None,
       secret: bytes = SECRET) -> Hi:
    return Hi(secret, game_id, have, first)


def reason(decision: object) -> str:
    assert isinstance(decision, Refuse), decision
    return decision.reason


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_wrong_secret_is_refused_whatever_else_the_hi_says(policy: HostPolicy) -> None:
    for game_id, first in itertools.product((None, GID), (None, HELLO)):
        got = decide(hi(game_id, 0, first, secret=bytes(16)), state(game()), policy)
        assert reason(got) == "wrong join secret: check the invite code"
        assert isinstance(got, Refuse) and got.note is not None


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_new_game_hi_with_a_first_names_no_hello(policy: HostPolicy) -> None:
    """SPEC 3.4: a `hi` for a new game with a `first` that is not nil is a bad greeting,
    even when `first` is our hello's hash."""
    for games in ((), (game(begun=False, awaiting=True),)):
        assert reason(decide(hi(None, 0, HELLO), state(*games), policy)) == "bad greeting"


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_an_empty_host_starts_a_new_game(policy: HostPolicy) -> None:
    assert decide(hi(), state(), policy) == NewGame()


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_game_id_of_no_game_here_is_refused(policy: HostPolicy) -> None:
    for games in ((), (game(),), (game(begun=False, awaiting=True),)):
        for first in (None, bytes(32)):
            got = decide(hi(b"x" * 32, 0, first), state(*games), policy)
            assert "does not have that game" in reason(got)


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_the_joiner_of_a_game_resumes_it_and_replaces_its_stale_connection(
        policy: HostPolicy) -> None:
    for connected, first in itertools.product((False, True), (None, HELLO)):
        got = decide(hi(GID, 5, first), state(game(7, connected=connected)), policy)
        assert got == Resume(7, stale=connected)


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_resent_hello_finds_the_game_awaiting_it_by_first_only(policy: HostPolicy) -> None:
    """The joiner's hello never reached us: it comes back with the game id only it knows
    and `first`, our hello's hash; without `first` (or with another) nothing is found, so
    no other holder of the invite takes the game over."""
    waiting = game(4, begun=False, awaiting=True)
    assert decide(hi(b"x" * 32, 1, HELLO), state(waiting), policy) == Resume(4)
    for first in (None, bytes(32)):
        assert "does not have that game" in reason(
            decide(hi(b"x" * 32, 1, first), state(waiting), policy))
    gone = dataclasses.replace(waiting, ended=True)
    assert "does not have that game" in reason(decide(hi(b"x" * 32, 1, HELLO), state(gone),
                                                      policy))


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_bad_greeting_is_a_have_beyond_what_we_sent_or_a_first_not_our_hello(
        policy: HostPolicy) -> None:
    assert reason(decide(hi(GID, 6, None), state(game(sent=5)), policy)) == "bad greeting"
    assert reason(decide(hi(GID, 0, bytes(32)), state(game()), policy)) == "bad greeting"
    assert decide(hi(GID, 5, HELLO), state(game(sent=5)), policy) == Resume(1)


@pytest.mark.parametrize("policy", [ONE, MANY])
def test_a_game_a_broken_rule_ended_or_that_cannot_be_saved_is_refused(
        policy: HostPolicy) -> None:
    assert reason(decide(hi(GID), state(game(failed=True)), policy)) == "this game is over"
    assert "cannot save that game" in reason(decide(hi(GID), state(game(halted=True)),
                                                    policy))


def test_the_one_game_host_gives_its_invite_to_the_game_whose_toss_is_made() -> None:
    for connected in (False, True):  # (whether its joiner is here or away)
        assert reason(decide(hi(), state(game(connected=connected)), ONE)) == INVITE_TAKEN


def test_the_one_game_host_before_the_toss() -> None:
    """Before the game has its id: a second joiner is refused while the first is here; a
    game whose joiner left gives way to the new joiner."""
    here = game(2, begun=False, awaiting=True, connected=True)
    assert "already playing a game with someone else" in reason(decide(hi(), state(here),
                                                                       ONE))
    left = dataclasses.replace(here, connected=False)
    assert decide(hi(), state(left), ONE) == NewGame(replaces=(2,))


def test_the_one_game_host_takes_no_new_game_once_its_game_is_over() -> None:
    over = game(ended=True, in_progress=False)
    assert reason(decide(hi(), state(over, stopping=True), ONE)) == "this game is over"


def test_the_many_game_host_starts_games_until_it_is_full() -> None:
    playing = [game(n, source=f"10.0.0.{n}") for n in (1, 2)]
    assert decide(hi(), state(*playing), MANY) == NewGame()
    full = decide(hi(), state(*playing, game(3, source="10.0.0.3")), MANY)
    assert isinstance(full, Refuse) and full.full and full.reason.startswith(FULL)
    freed = game(3, in_progress=False, source="10.0.0.3")  # (its verdict is known)
    assert decide(hi(), state(*playing, freed), MANY) == NewGame()


def test_the_many_game_host_stops_taking_new_games_when_told() -> None:
    assert "not starting new games" in reason(decide(hi(), state(stopping=True), MANY))
    assert decide(hi(GID), state(game(), stopping=True), MANY) == Resume(1)


def test_the_many_game_host_bounds_each_source() -> None:
    """SPEC 3.4's table: games not yet begun from one source, games in progress from one
    source, and the cool-down of a source whose game lapsed; other sources go on."""
    policy = dataclasses.replace(MANY, max_games=10)
    waiting = [game(n, begun=False, source="a") for n in (1, 2)]
    limits = dict(source="a", pregame_per_source=2, games_per_source=3)
    assert "2 games from your address have not begun yet" in reason(
        decide(hi(), state(*waiting, **limits), policy))
    playing = [game(n, source="a") for n in (1, 2, 3)]
    assert "3 games from your address are in progress" in reason(
        decide(hi(), state(*playing, **limits), policy))
    assert decide(hi(), state(*playing, **{**limits, "source": "b"}), policy) == NewGame()
    cooling = decide(hi(), state(source="a", cooling=41.2, cooldown=120.0), policy)
    assert "again in 42 s" in reason(cooling)
    assert decide(hi(GID), state(*playing, **limits), policy) == Resume(1)  # (its own game)


def test_a_policy_holds_at_least_one_game() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        HostPolicy(max_games=0)
