"""Group 8 of the conformance cases: Towers (seed 002_836edfe2f167b267.txt, SPEC chapter 4)
on the same fair-play protocol, hosted with `--game towers`.

The joiner is a `TowersJoiner` (its case's `rules` are Towers' options). Each cheat is a row
of SPEC 4.11's threat table or a rule of chapter 2 that holds for Towers as it is; the
squares a case needs (a start off the border, one too near the host's) are worked out here
from SPEC 4.2's board, never asked of the rules engine.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

from p2pgotg.crypto import key_from_seed
from p2pgotg.games.towers.rules.actions import Action
from p2pgotg.games.towers.rules.game import Phase as RulesPhase
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.protocol import HOST
from p2pgotg.rules import RuleOptions as GotgOptions

from .cases import _claim, _ended, _resumed, _short, case, hello_refused, rejected
from .harness import Ctx, Fail, TowersJoiner, Until, body_of, my_turn

GAME = ("--game", "towers")
TWO = RuleOptions()  # two players, a colour each (SPEC 4.10's defaults)
TEAMS = RuleOptions(seats=4, teams=True)  # two colours each (T25)
TURN_TIME = 60  # seconds, for --turn-time: time claims on actions are allowed
TIMED = RuleOptions(turn_seconds=TURN_TIME)

#: SPEC 4.2: the outer border in ring order; a square's index is rank * 5 + file.
BORDER = "a1 a2 a3 a4 a5 b5 c5 d5 e5 e4 e3 e2 e1 d1 c1 b1"
RING = [("abcde".index(name[0]) + 5 * (int(name[1]) - 1)) for name in BORDER.split(" ")]
C3 = 12  # the centre: not on the border (T5)


def towers(id: str, title: str, *, expect: str, spec: str, options: tuple[str, ...] = (),
           rules: RuleOptions = TWO, **kw: object):
    """A case of this group: hosted with `--game towers` (and `options`)."""
    return case(id, title, expect=expect, spec=spec, options=GAME + options, rules=rules,
                **kw)


# -- moments of a Towers game -------------------------------------------------------------

def host_to_act(j: TowersJoiner) -> bool:
    """a colour of the host's to act"""
    game = j.peer.view
    return game is not None and not j.flow.is_over and not game.is_over \
        and not j.peer.my_turn


def setup_turn(j: TowersJoiner) -> bool:
    """our setup choice, with the host's start claimed and ours not yet"""
    game = j.peer.view
    if not j.peer.my_turn or game is None or game.phase is not RulesPhase.SETUP:
        return False
    host_seats = [s for s in range(game.seats) if s not in j.peer.my_seats]
    return all(game.start(s) is None for s in j.peer.my_seats) \
        and any(game.start(s) is not None for s in host_seats)


def play_turn(j: TowersJoiner) -> bool:
    """our turn in play, its first action"""
    game = j.peer.view
    return j.peer.my_turn and game is not None and game.phase is RulesPhase.PLAY \
        and game.actions_left == 2


def our_first_choice(j: TowersJoiner) -> bool:
    """our first setup choice"""
    game = j.peer.view
    return j.peer.my_turn and game is not None and game.phase is RulesPhase.SETUP


def not_behind_after(j: TowersJoiner) -> Action | None:
    """the last action of our turn in play after which the host's points (SPEC 4.8) are
    not above ours: a moment to offer a draw that a host not ahead may take"""
    game = j.peer.view
    if not j.peer.my_turn or game is None or game.phase is not RulesPhase.PLAY \
            or game.actions_left != 1:
        return None
    ours = game.team(game.turn)
    for act in game.legal_actions:
        after = game.copy()
        after.push(act)
        points = after.team_points()
        if all(p <= points[ours] for p in points):
            return act
    return None


def layers_until_the_host_claims(j: TowersJoiner):
    """A policy for the setup: a layer on the centre while the host has not claimed (so
    that its start comes first), else the bot's choice."""
    def policy(peer) -> object:
        game = peer.view
        if game is not None and peer.my_turn and game.phase is RulesPhase.SETUP \
                and Action.layer(C3) in game.legal_actions:
            return lambda p: p.act(Action.layer(C3))
        return j.seat.step(peer)
    return policy


async def lie_at(ctx: Ctx, moment: Until, lie: Callable[[TowersJoiner], bytes], rule: str,
                 **play: Any) -> str:
    """Play honestly to `moment`, send the message `lie(j)` makes (signed by us), and
    expect the host to refuse it naming `rule`, close, and end the game."""
    j = await ctx.join()
    await j.play(moment, **play)
    await j.send_cheat(lie(j))
    return rejected(await j.expect_rejection(rule))


def action(j: TowersJoiner, act: Action, **fields: object) -> bytes:
    """Our next message: `act` signed as an `action` at the count of actions (or `ply`)."""
    return j.forge("action", {"ply": j.view.ply, "code": act.code(), **fields})


def a_legal_action(j: TowersJoiner, seed: int) -> Action:
    """One of the actions our own view allows now, drawn with the case's seed."""
    return random.Random(seed).choice(j.view.legal_actions)


# == 8. Towers ==============================================================================

@towers("8.1", "Towers: honest game to the end, two colours",
        expect="the game is played to its end by the rules (4.7); every host message checks "
        "out; the verdict is clean, nothing hidden; the host sends `bye` holding all our "
        "messages, closes, and exits 0", spec="4.11, 2.6, 3.4", timeout=60)
async def towers_honest(ctx: Ctx) -> str:
    j = await ctx.join()
    return _ended(j, await j.finish(timeout=50))


@towers("8.2", "Towers: honest game to the end, two colours each (--teams)",
        expect="as 8.1 with 4 colours, each player playing two in turn (T25)",
        spec="4.1 T25, 4.11", options=("--teams",), rules=TEAMS, timeout=60)
async def towers_honest_teams(ctx: Ctx) -> str:
    j = await ctx.join()
    verdict = await j.finish(timeout=50)
    if j.peer.my_seats not in ((0, 2), (1, 3)):
        raise Fail(f"we played the colours {j.peer.my_seats}, not a team of SPEC 4.2")
    return _ended(j, verdict)


@towers("8.3", "Towers: the host's `ok` and hello name the game",
        expect="`ok` carries `rules: \"towers\"`; the host's hello names `rules: \"towers\"` "
        "and proposes exactly SPEC 4.10's options it was given; a joiner that leaves before "
        "its hello ends nothing: the host keeps waiting", spec="3.4, 4.11", host="runs")
async def towers_names_itself(ctx: Ctx) -> str:
    j = await ctx.join()  # (checks the `ok`: TowersJoiner.RULES)
    await j.next_game_message(5.0, "the host's hello")
    hello = j.flow.hellos.get(HOST)
    if hello is None:
        raise Fail("the host's first game message was not its hello")
    if hello.get("rules") != "towers":
        raise Fail(f"the host's hello names the game {hello.get('rules')!r}, not 'towers'")
    if hello["options"] != TWO.to_dict():
        raise Fail(f"the host's hello proposes {hello['options']!r}, not SPEC 4.10's "
                   f"defaults {TWO.to_dict()!r}")
    await j.conn.close()
    return "`ok` names 'towers'; the hello names 'towers' with 4.10's default options"


@towers("8.4", "Towers: joiner's hello with other Towers rule options",
        expect="error frame naming `options`; the connection closes; the game is over",
        spec="4.11 hello, 2.4 hello, 3.4")
async def towers_other_options(ctx: Ctx) -> str:
    other = {**TWO.to_dict(), "capture": "not_lower"}  # (T17's other reading)
    return await hello_refused(ctx, "options", options=other)


@towers("8.5", "Towers: joiner's hello for Game of the Generals",
        expect="error frame naming `options` (a hello of another game than the host's, "
        "SPEC 3.4); the connection closes; the game is over", spec="4.11 hello, 3.4")
async def towers_gotg_hello(ctx: Ctx) -> str:
    return await hello_refused(ctx, "options", drop=("rules",),
                               options=GotgOptions().to_dict())


@towers("8.6", "Towers: a start off the border (@c3)",
        expect="error frame naming `illegal-action` (T5: a start is on the outer border)",
        spec="4.11, 4.1 T5, 4.3")
async def towers_start_inside(ctx: Ctx) -> str:
    return await lie_at(ctx, our_first_choice, lambda j: action(j, Action.claim(C3)),
                        "illegal-action")


@towers("8.7", "Towers: a start with one border square between it and the host's",
        expect="error frame naming `illegal-action` (T6: at least two border squares lie "
        "between two starts, `start_gap` 2)", spec="4.11, 4.1 T6, 4.2", timeout=40)
async def towers_start_too_near(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(setup_turn, policy=layers_until_the_host_claims(j), timeout=30)
    game = j.view
    theirs = next(game.start(s) for s in range(game.seats) if game.start(s) is not None)
    assert theirs is not None
    near = RING[(RING.index(theirs) + 2) % len(RING)]  # one border square between
    await j.send_cheat(action(j, Action.claim(near)))
    return rejected(await j.expect_rejection("illegal-action"))


@towers("8.8", "Towers: a second build under the same pawn in one turn",
        expect="the first build is taken; the second gets an error frame naming "
        "`illegal-action` (T11: the same action twice needs two pawns)",
        spec="4.11, 4.1 T11, 4.4", timeout=40)
async def towers_second_build(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(play_turn, timeout=30)
    game = j.view
    pawn = next(sq for sq in range(25) if game.pawn_at(sq) == game.turn)
    build = Action.layer(pawn)
    if game.pool < 2:
        raise Fail("the pool has fewer than two layers at our first turn")  # (never: T1)
    await j.send_honest(j.produce(lambda p: p.act(build)))
    await j.send_cheat(action(j, build))
    return rejected(await j.expect_rejection("illegal-action"))


@towers("8.9", "Towers: an action on the host's turn",
        expect="error frame naming `out-of-turn`", spec="4.11")
async def towers_out_of_turn(ctx: Ctx) -> str:
    return await lie_at(ctx, host_to_act, lambda j: action(j, Action.layer(C3)),
                        "out-of-turn")


@towers("8.10", "Towers: an action whose `ply` is not the count of actions",
        expect="error frame naming `out-of-turn` (an action for another position)",
        spec="4.11")
async def towers_wrong_ply(ctx: Ctx) -> str:
    return await lie_at(ctx, my_turn, lambda j: action(
        j, a_legal_action(j, ctx.seed), ply=j.view.ply + 1), "out-of-turn")


@towers("8.11", "Towers: equivocation, two different actions with one sequence number",
        expect="the first is played; the second gets an error frame naming `equivocation`",
        spec="4.11, 2.3 step 4, 2.7")
async def towers_equivocation(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    first, second = j.view.legal_actions[:2]
    chain, ply = j.chain_fields(), j.view.ply
    await j.send_honest(j.produce(lambda p: p.act(first)))
    await j.send_cheat(j.forge("action", {"ply": ply, "code": second.code()},
                               seq=chain["seq"], prev=chain["prev"], ack=chain["ack"]))
    return rejected(await j.expect_rejection("equivocation"))


@towers("8.12", "Towers: an action signed by another key",
        expect="error frame naming `bad-signature`; the connection closes; the game is not "
        "over (the message proves nothing about its sender): the joiner resumes and plays "
        "on to a clean verdict", spec="4.11, 2.3 step 2, 3.4", timeout=60)
async def towers_bad_signature(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    legal = a_legal_action(j, ctx.seed)
    await j.send_unattributable(j.forge(
        "action", {"ply": j.view.ply, "code": legal.code()},
        key=key_from_seed(hashlib.sha256(b"not ours").digest())))
    return await _resumed(ctx, j, "bad-signature")


@towers("8.13", "Towers: a time claim with no clock, on the host's turn",
        expect="error frame naming `false-claim`: the host owes an action, which has no "
        "time limit without a clock", spec="4.11 what each side owes, 2.6 claims")
async def towers_claim_no_clock(ctx: Ctx) -> str:
    return await lie_at(ctx, host_to_act, lambda j: _claim(j, "time"), "false-claim")


@towers("8.14", "Towers: a time claim while we owe an action (--turn-time)",
        expect="error frame naming `false-claim`: the claimant itself owes its action",
        spec="4.11 what each side owes, 2.6 claims",
        options=("--turn-time", str(TURN_TIME)), rules=TIMED)
async def towers_claim_own_turn(ctx: Ctx) -> str:
    return await lie_at(ctx, my_turn, lambda j: _claim(j, "time"), "false-claim")


@towers("8.15", "Towers: accepting a draw that was never offered",
        expect="error frame naming `no-draw-offer`", spec="4.11, 2.4", timeout=40)
async def towers_accept_no_offer(ctx: Ctx) -> str:
    return await lie_at(ctx, play_turn, lambda j: j.forge("draw_accept", {}),
                        "no-draw-offer", timeout=30)


@towers("8.16", "Towers: a draw offered in the setup",
        expect="error frame naming `illegal-action` (`draw` only once every colour has "
        "claimed its start)", spec="4.11")
async def towers_draw_in_setup(ctx: Ctx) -> str:
    return await lie_at(ctx, our_first_choice, lambda j: action(
        j, a_legal_action(j, ctx.seed), draw=True), "illegal-action")


@towers("8.17", "Towers: we resign in play",
        expect="the host wins by resignation, clean, nothing hidden; goodbyes; the host "
        "exits 0", spec="4.11 the end, 2.6", timeout=40)
async def towers_resign(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(play_turn, timeout=30)
    await j.send_honest(j.produce(lambda p: p.resign()))
    verdict = await j.finish()
    if verdict.winner != HOST or verdict.termination is None \
            or verdict.termination.value != "resignation":
        raise Fail(f"our own verdict is not the host's win by resignation: {_short(verdict)}")
    return _ended(j, verdict)


@towers("8.18", "Towers: a draw offered on our turn's last action, the host not ahead",
        expect="the host answers by the rules (2.4): `draw_accept` ends the game as "
        "`draw_agreed`, a draw, clean; or it declines (`draw_decline`, or its next "
        "action) and the game goes on to a clean verdict; goodbyes; the host exits 0",
        spec="4.11, 2.4", timeout=60)
async def towers_draw(ctx: Ctx) -> str:
    j = await ctx.join()
    offer = await j.play(not_behind_after, timeout=30)
    await j.send_honest(j.produce(lambda p: p.act(offer, offer_draw=True)))
    verdict = await j.finish(timeout=50)
    answered = [body_of(m).type for m in j.host_messages
                if body_of(m).type in ("draw_accept", "draw_decline")]
    if verdict.termination is not None and verdict.termination.value == "draw_agreed":
        if verdict.winner is not None:
            raise Fail(f"a draw agreed with a winner: {_short(verdict)}")
        return f"the host accepted: {_ended(j, verdict)}"
    how = "the host declined with draw_decline" if answered else "no draw agreed"
    return f"{how}; {_ended(j, verdict)}"
