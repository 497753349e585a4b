"""The conformance cases: numbered, grouped like Autobahn's, each with the behaviour
SPEC.md requires and a script that provokes it.

Every script plays the joiner against the implementation under test (the host) and
returns a short account of what it observed; it raises `Fail` when the implementation did
something else, and `Missed` when the game never reached the moment of the case (the
runner then starts the case again). Rule names are SPEC.md's (2.3, 2.4, 2.7, 2.9.5).
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import trio

from p2pgotg.crypto import key_from_seed, ot, sign
from p2pgotg.crypto.commitments import piece_commitment, seed_commitment, setup_hash
from p2pgotg.protocol import HOST, JOINER, LocalProtocolError, Phase
from p2pgotg.protocol.envelope import seal
from p2pgotg.protocol.limits import CHATS_IN_A_ROW
from p2pgotg.protocol.messages import Body
from p2pgotg.rules import (
    FULL_SET,
    ChallengeMode,
    Rank,
    RuleOptions,
    Setup,
    Side,
    Termination,
    home_squares,
    neighbours,
)

from .harness import (
    Closed,
    Ctx,
    Fail,
    Joiner,
    Missed,
    a_challenge,
    body_of,
    challenging,
    control,
    expect_closed,
    expect_refusal,
    hosts_turn,
    in_phase,
    my_turn,
    parse_control,
    plain_moves,
    plies,
    silent,
)

Script = Callable[[Ctx], Awaitable[str]]

DEFAULT_RULES = RuleOptions()
BLIND = RuleOptions(challenge_mode=ChallengeMode.BLIND)
MOVE_TIME = 2  # seconds, for --move-time
CLOCK = 3  # seconds, for --clock
ABANDON = 2  # seconds, for --abandon
AUDIT_TIME = 2  # seconds, for --audit-timeout
DUTY_TIME = 2  # seconds, for --duty-timeout


@dataclass(frozen=True)
class Case:
    id: str  # "3.4"
    title: str
    expect: str  # the behaviour SPEC.md requires, in words
    spec: str  # where SPEC.md says so
    script: Script
    options: tuple[str, ...] = ()  # host command-line options ({options})
    rules: RuleOptions = DEFAULT_RULES  # what the host must then propose in its hello
    host: str = "exits"  # after the script: "exits" (status 0, within 5 s), "runs", "any"
    timeout: float = 25.0
    xfail: str | None = None

    @property
    def key(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.id.split("."))


GROUPS = {
    1: "handshake and admission",
    2: "setup",
    3: "play",
    4: "blind mode",
    5: "audit",
    6: "timeouts",
    7: "fair play at the edges",
    8: "Towers",
}

CASES: list[Case] = []


def case(id: str, title: str, *, expect: str, spec: str, **kw) -> Callable[[Script], Script]:
    def register(script: Script) -> Script:
        CASES.append(Case(id, title, expect, spec, script, **kw))
        return script
    return register


def rejected(reason: str) -> str:
    return f"error frame {reason!r}; connection closed"


async def hello_refused(ctx: Ctx, rule: str, drop: tuple[str, ...] = (), **changes: Any
                        ) -> str:
    """Our hello re-signed with `changes` (and without the fields in `drop`): the host
    must refuse it naming `rule`, close, and end the game."""
    j = await ctx.join()
    j.intercept("hello", lambda j, d: [j.resign_body(d, drop=drop, **changes)])
    await j.play(lambda j: j.cheated, waiting_for="our hello")
    return rejected(await j.expect_rejection(rule))


def _short(verdict) -> str:
    who = "draw" if verdict.winner is None else f"{verdict.winner} wins"
    how = verdict.termination.value.replace("_", " ") if verdict.termination else "?"
    return f"{who} ({how})"


def _ended(j: Joiner, verdict) -> str:
    ply = j.peer.view.ply if j.peer.view is not None else 0
    audit = "nothing hidden, no audit" if verdict.nothing_hidden else "audits exchanged"
    return (f"clean verdict after {ply} plies: {_short(verdict)}; {audit}; "
            f"byes exchanged (host holds {j.host_byes[-1]} of our messages); host closed")


def _result(j: Joiner) -> tuple[Termination | None, str | None]:
    result = j.flow.result
    assert result is not None, "the game is over"
    return result


def _other_flag_rule(options: dict) -> dict:
    changed = dict(options)
    changed["flag_rule"] = ("immediate" if options["flag_rule"] != "immediate"
                            else "safe_or_survive")
    return changed


# == 1. handshake and admission ===========================================================

@case("1.1", "honest game to the end, open mode",
      expect="the game is played to its end; both audits are exchanged and check out; the "
      "host sends `bye` holding all our messages, closes, and exits 0",
      spec="2.5, 2.6, 3.4", timeout=45)
async def honest_open(ctx: Ctx) -> str:
    j = await ctx.join()
    return _ended(j, await j.finish())


@case("1.2", "honest game to the end, blind mode",
      expect="as 1.1, every challenge resolved by the oblivious transfer; the audit replays "
      "every blind challenge and finds it clean", spec="2.9, 2.9.6", options=("--arbiter", "blind"),
      rules=BLIND, timeout=45)
async def honest_blind(ctx: Ctx) -> str:
    j = await ctx.join()
    return _ended(j, await j.finish())


@case("1.3", "joiner's hello with other rule options",
      expect="error frame naming `options`; the connection closes; the game is over",
      spec="2.4 hello, 2.7")
async def options_mismatch(ctx: Ctx) -> str:
    return await hello_refused(ctx, "options", options=_other_flag_rule(DEFAULT_RULES.to_dict()))


@case("1.4", "joiner's hello with protocol version 2",
      expect="error frame naming `version`; the connection closes", spec="2.4 hello")
async def wrong_version(ctx: Ctx) -> str:
    return await hello_refused(ctx, "version", version=2)


@case("1.5", "wrong join secret",
      expect="error frame and the connection closed, before any game message; the host "
      "keeps waiting and admits the right secret afterwards", spec="3.4", host="runs")
async def wrong_secret(ctx: Ctx) -> str:
    conn = await ctx.connect()
    wrong = bytes(b ^ 0x5A for b in ctx.invite.secret)
    await conn.send(control("hi", secret=wrong, game=None, have=0, first=None))
    refused = await expect_refusal(conn)
    j = await ctx.join()
    await j.next_game_message(5.0, "the host's hello after a valid `hi`")
    if HOST not in j.flow.hellos:
        raise Fail("after a valid `hi` the host's first message was not its hello")
    return (f"{rejected(str(refused.get('reason')))}; then the right secret got `ok` and the "
            "host's hello")


@case("1.6", "session version 2 in `hi`",
      expect="error frame whose reason names both versions; the connection closes; the "
      "host keeps waiting and admits a version 1 `hi` afterwards", spec="3.4",
      host="runs")
async def session_v2(ctx: Ctx) -> str:
    conn = await ctx.connect()
    await conn.send(control("hi", version=2, secret=ctx.invite.secret, game=None, have=0,
                            first=None))
    refused = await expect_refusal(conn)
    reason = str(refused.get("reason", ""))
    if not (re.search(r"(?<!\d)2(?!\d)", reason) and re.search(r"(?<!\d)1(?!\d)", reason)):
        raise Fail(f"the reason does not name both versions (1 and 2): {reason!r}")
    j = await ctx.join()
    await j.next_game_message(5.0, "the host's hello after a valid `hi`")
    return f"{rejected(reason)}; then a version 1 `hi` got `ok` and the host's hello"


@case("1.7", "joiner's hello binds another TLS certificate",
      expect="error frame naming `tls-binding`; the connection closes", spec="2.4 hello, 3.1")
async def tls_binding(ctx: Ctx) -> str:
    other = hashlib.sha256(b"a certificate the host never showed").digest()
    return await hello_refused(ctx, "tls-binding", tls=other)


@case("1.8", "coin commitment opened to another secret (steer the toss)",
      expect="error frame naming `coin-open`; the connection closes", spec="2.4 coin, 2.7")
async def steer_coin(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("coin_open", lambda j, d: [j.resign_body(d, secret=bytes(32))])
    await j.play(lambda j: j.cheated, waiting_for="the host's coin")
    return rejected(await j.expect_rejection("coin-open"))


@case("1.9", "first message is not a hello",
      expect="error frame naming `hello-first`; the connection closes; nothing is over "
      "(an unsigned first message proves nothing): a new `hi` starts a game that is played "
      "to a clean verdict", spec="2.3 step 2", timeout=45)
async def hello_first(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(lambda j: HOST in j.flow.hellos, policy=silent, waiting_for="the host's hello")
    await j.send_unattributable(j.forge("chat", {"text": "hello?"}, game=bytes(32)))
    reason = await j.expect_drop("hello-first")
    j = await ctx.join(seed_offset=1)
    return f"{rejected(reason)}; then a new game: {_ended(j, await j.finish())}"


@case("1.10", "a second joiner while one is connected",
      expect="the second gets an error frame and is closed; the first plays on to a clean "
      "verdict", spec="3.4", timeout=45)
async def second_joiner(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(in_phase(Phase.SETUP))
    conn = await ctx.connect()
    await conn.send(control("hi", secret=ctx.invite.secret, game=None, have=0, first=None))
    refused = await expect_refusal(conn)
    verdict = await j.finish()
    return f"second joiner: {rejected(str(refused.get('reason')))}; first: {_ended(j, verdict)}"


@case("1.11", "connection lost in play; the joiner resumes",
      expect="a `hi` with the game id and `have` gets `ok` with the same game id; the host "
      "resends its messages from `have` on; the game goes on to a clean verdict",
      spec="3.4", timeout=45)
async def resume(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(6))
    await j.conn.close()
    held = len(j.flow.senders[HOST].envelopes)
    claim = held - 2  # say we hold two fewer: the host must send them again
    ok = await ctx.rejoin(j, have=claim)
    first = await j.next_game_message(5.0, "the host's resent messages")
    if first != j.flow.senders[HOST].envelopes[claim]:
        raise Fail(f"after `hi` with have={claim}, the host's first message was not its "
                   f"message {claim}, byte for byte")
    verdict = await j.finish()
    return (f"`ok` for our game (host held {ok['have']} of ours); host resent from message "
            f"{claim}; {_ended(j, verdict)}")


# == 2. setup ==============================================================================

@case("1.12", "`hi` frames that break SPEC 3.4's table: `first` missing, an unknown key, "
      "the version as text, and a new game's `first` naming no hello",
      expect="each gets an error frame and its connection closes; the host keeps waiting "
      "and admits a proper `hi` afterwards", spec="3.4", host="runs")
async def malformed_hi(ctx: Ctx) -> str:
    secret = ctx.invite.secret
    bad = [control("hi", secret=secret, game=None, have=0),
           control("hi", secret=secret, game=None, have=0, first=None, colour="x"),
           msgpack.packb({"ctl": "hi", "v": "1", "secret": secret, "game": None, "have": 0,
                          "first": None}, use_bin_type=True),
           control("hi", secret=secret, game=None, have=0, first=bytes(32))]
    reasons = []
    for frame in bad:
        conn = await ctx.connect()
        await conn.send(frame)
        reasons.append(str((await expect_refusal(conn)).get("reason")))
    j = await ctx.join()
    await j.next_game_message(5.0, "the host's hello after a valid `hi`")
    return "; ".join(rejected(r) for r in reasons) + "; then a proper `hi` got `ok`"


@case("2.1", "setup revealed before both are committed",
      expect="error frame naming `privacy-screen`", spec="2.4 setup_reveal, 2.7")
async def reveal_before_commit(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(in_phase(Phase.SETUP))
    setup = Setup.random(j.side, random.Random(ctx.seed))
    await j.send_cheat(j.forge("setup_reveal", {
        "squares": bytes(setup.squares), "commits": bytes(21 * 32), "seed_commit": bytes(32)}))
    return rejected(await j.expect_rejection("privacy-screen"))


@case("2.2", "setup changed after the commitment",
      expect="error frame naming `setup-changed`", spec="2.4 setup_reveal, 2.7")
async def setup_changed(ctx: Ctx) -> str:
    j = await ctx.join()

    def other_squares(j: Joiner, data: bytes) -> list[bytes]:
        home = sorted(home_squares(j.side))
        squares = bytes(home[:21])
        if squares == body_of(data)["squares"]:
            squares = bytes(home[6:])
        return [j.resign_body(data, squares=squares)]

    j.intercept("setup_reveal", other_squares)
    await j.play(lambda j: j.cheated, waiting_for="both setup commitments")
    return rejected(await j.expect_rejection("setup-changed"))


@case("2.3", "setup outside the home rows",
      expect="error frame naming `setup-squares` (on the reveal, which matches its commitment)",
      spec="2.4 setup_reveal, 2.7")
async def setup_outside_home(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(in_phase(Phase.SETUP))
    side, gid, key = j.side, j.gid, j.peer.public_key
    home = sorted(home_squares(side))
    forward = 27 if side is Side.WHITE else 44  # just in front of the home rows
    squares = bytes(sorted([*home[:20], forward]))
    salts = [bytes([i]) * 32 for i in range(21)]
    commits = [piece_commitment(gid, key, pid, int(r), salts[pid])
               for pid, r in enumerate(FULL_SET)]
    seed_c = seed_commitment(gid, key, bytes(32))
    commit = j.forge("setup_commit", {"hash": setup_hash(gid, key, squares, commits, seed_c)})
    j.flow.process(JOINER, commit)  # a valid commitment: our own state follows it
    await j.send_honest([commit])
    await j.play(lambda j: HOST in j.flow.setup_commits, policy=silent,
                 waiting_for="the host's setup commitment")
    await j.send_cheat(j.forge("setup_reveal", {
        "squares": squares, "commits": b"".join(commits), "seed_commit": seed_c}))
    return rejected(await j.expect_rejection("setup-squares"))


# == 3. play ===============================================================================

async def _resumed(ctx: Ctx, j: Joiner, rule: str) -> str:
    """After input that proves nothing about us: dropped, then resumed to the end."""
    reason = await j.expect_drop(rule)
    ok = await ctx.rejoin(j)
    verdict = await j.finish()
    return (f"{rejected(reason)}; resumed (host held {ok['have']} of ours); "
            f"{_ended(j, verdict)}")


DROPPED = ("; the game is not over (the message proves nothing about its sender): the joiner "
           "resumes and plays on to a clean verdict")


def _two_rows_away(j: Joiner) -> tuple[int, int]:
    """A move of one of our pieces two ranks forward or back: never legal (1.6)."""
    src = plain_moves(j)[0].from_square
    return src, (src + 18 if src + 18 < 72 else src - 18)


@case("3.1", "illegal move (two squares)",
      expect="error frame naming `illegal-move`", spec="2.4 move, 1.6")
async def illegal_move(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    src, dst = _two_rows_away(j)
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": src, "to": dst}))
    return rejected(await j.expect_rejection("illegal-move"))


@case("3.2", "move out of turn",
      expect="error frame naming `out-of-turn`", spec="2.4 move")
async def out_of_turn(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(hosts_turn)
    view, side = j.view, j.side
    src, dst = next((view.square_of(p), n) for p in view.pieces(side)
                    for n in neighbours(view.square_of(p)) if view.piece_at(n) is None)
    await j.send_cheat(j.forge("move", {"ply": view.ply, "from": src, "to": dst}))
    return rejected(await j.expect_rejection("out-of-turn"))


@case("3.3", "attacker lies about its rank",
      expect="error frame naming `false-opening` (on the move)", spec="2.4 move, 2.7")
async def attacker_lies(ctx: Ctx) -> str:
    j = await ctx.join()
    move = await j.play(a_challenge)
    (honest,) = j.produce(lambda p: p.move(move))
    rank, salt = body_of(honest)["open"]
    lie = Rank.GENERAL_OF_THE_ARMY if rank != Rank.GENERAL_OF_THE_ARMY else Rank.SPY
    await j.send_cheat(j.resign_body(honest, open=[int(lie), salt]))
    return rejected(await j.expect_rejection("false-opening"))


@case("3.4", "defender lies about its rank",
      expect="error frame naming `false-opening` (on the reply)", spec="2.4 reply, 2.7",
      timeout=40)
async def defender_lies(ctx: Ctx) -> str:
    j = await ctx.join()

    def lie(j: Joiner, data: bytes) -> list[bytes]:
        rank, salt = body_of(data)["open"]
        return [j.resign_body(data, open=[int(Rank.SPY if rank != Rank.SPY
                                              else Rank.PRIVATE), salt])]

    j.intercept("reply", lie)
    await j.play(lambda j: j.cheated, timeout=30, waiting_for="a challenge by the host")
    return rejected(await j.expect_rejection("false-opening"))


@case("3.5", "false flag claim (flag not on the back rank)",
      expect="error frame naming `false-flag-claim`", spec="2.4 claim_flag, 1.7")
async def false_flag_claim(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    pid = j.own.setup.ranks.index(Rank.FLAG)
    salt = j.own.salts[pid]
    await j.send_cheat(j.forge("claim_flag", {"claim": [pid, int(Rank.FLAG), salt]}))
    return rejected(await j.expect_rejection("false-flag-claim"))


@case("3.6", "a move after our own resignation",
      expect="the resignation and our audit are taken; the move is refused with an error "
      "frame naming `after-end`", spec="2.4 after the end, 2.7")
async def after_end(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move, ply = plain_moves(j)[0], j.view.ply
    await j.send_honest(j.produce(lambda p: p.resign()))  # the resignation and our audit
    await j.send_cheat(j.forge("move", {"ply": ply, "from": move.from_square,
                                        "to": move.to_square}))
    return rejected(await j.expect_rejection("after-end"))


@case("3.7", "message from another game (game id)",
      expect="error frame naming `game-id`; the connection closes" + DROPPED,
      spec="2.3 step 4, 2.7", timeout=45)
async def other_game(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    other = hashlib.sha256(b"another game").digest()
    await j.send_unattributable(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                                 "to": move.to_square}, game=other))
    return await _resumed(ctx, j, "game-id")


@case("3.8", "a dropped message (sequence number skips one)",
      expect="error frame naming `sequence`; the connection closes" + DROPPED,
      spec="2.3 step 4, 2.7", timeout=45)
async def dropped(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    await j.send_unattributable(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                                 "to": move.to_square},
                                        seq=j.flow.next_seq(JOINER) + 1))
    return await _resumed(ctx, j, "sequence")


@case("3.9", "equivocation: two different moves with one sequence number",
      expect="the first is played; the second gets an error frame naming `equivocation`",
      spec="2.3 step 4, 2.7")
async def equivocation(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    first, second = plain_moves(j)[:2]
    chain, ply = j.chain_fields(), j.view.ply
    await j.send_honest(j.produce(lambda p: p.move(first)))
    await j.send_cheat(j.forge("move", {"ply": ply, "from": second.from_square,
                                        "to": second.to_square},
                               seq=chain["seq"], prev=chain["prev"], ack=chain["ack"]))
    return rejected(await j.expect_rejection("equivocation"))


@case("3.10", "bad signature (another key)",
      expect="error frame naming `bad-signature`; the connection closes" + DROPPED,
      spec="2.3 step 2, 2.7", timeout=45)
async def bad_signature(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    await j.send_unattributable(j.forge(
        "move", {"ply": j.view.ply, "from": move.from_square, "to": move.to_square},
        key=key_from_seed(hashlib.sha256(b"not ours").digest())))
    return await _resumed(ctx, j, "bad-signature")


@case("3.11", "malformed envelope (a 5-byte signature)",
      expect="error frame naming `malformed-envelope`; the connection closes" + DROPPED,
      spec="2.3 step 1", timeout=45)
async def malformed_envelope(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_unattributable(msgpack.packb({"body": b"\x80", "sig": b"short"},
                                              use_bin_type=True))
    return await _resumed(ctx, j, "malformed-envelope")


@case("3.12", "malformed body (a square out of range), correctly signed",
      expect="error frame naming `malformed-message`", spec="2.3 step 3, 2.1")
async def malformed_body(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    chain = j.chain_fields()
    await j.send_cheat(j.sign_raw({"t": "move", **chain, "ply": j.view.ply, "from": 99,
                                   "to": 108}))
    return rejected(await j.expect_rejection("malformed-message"))


@case("3.13", "oversized frame (length 65,537)",
      expect="the host closes the connection without waiting for the body; the game is not "
      "over: the joiner resumes it and plays on to a clean verdict", spec="3.2, 3.4",
      timeout=45)
async def oversized(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    await j.conn.send_raw((65536 + 1).to_bytes(4, "big"))  # the length alone, no body
    said = ""
    deadline = trio.current_time() + 3.0
    with contextlib.suppress(Closed):
        while True:
            frame = await j.conn.receive(deadline - trio.current_time())
            if frame is None:
                raise Fail("the host did not close the connection within 3 s of an oversized "
                           "length (does it wait for the body?)")
            ctl = parse_control(frame)
            if ctl is not None and ctl["ctl"] == "error":
                said = f"error frame {ctl.get('reason')!r}; "
    ok = await ctx.rejoin(j)
    verdict = await j.finish()
    return (f"{said}connection closed at once; resumed (host held {ok['have']} of ours); "
            f"{_ended(j, verdict)}")


@case("3.14", "garbage bytes in a frame",
      expect="error frame naming `malformed-envelope`; the connection closes" + DROPPED,
      spec="2.3 step 1", timeout=45)
async def garbage(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_unattributable(b"\xc1" + random.Random(ctx.seed).randbytes(200))
    return await _resumed(ctx, j, "malformed-envelope")


@case("3.15", "broken chain: `prev` is not our previous message",
      expect="error frame naming `chain-prev`", spec="2.3 step 6")
async def chain_prev(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square},
                               prev=hashlib.sha256(b"no such message").digest()))
    return rejected(await j.expect_rejection("chain-prev"))


@case("3.16", "broken chain: `ack` names no message of the host",
      expect="error frame naming `chain-ack`; the connection closes" + DROPPED,
      spec="2.3 step 7", timeout=45)
async def chain_ack(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    await j.send_unattributable(j.forge(
        "move", {"ply": j.view.ply, "from": move.from_square, "to": move.to_square},
        ack=hashlib.sha256(b"no such message").digest()))
    return await _resumed(ctx, j, "chain-ack")


@case("3.17", "challenge without the attacker's opening",
      expect="error frame naming `opening-missing`", spec="2.4 move")
async def opening_missing(ctx: Ctx) -> str:
    j = await ctx.join()
    move = await j.play(a_challenge)
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square}))
    return rejected(await j.expect_rejection("opening-missing"))


@case("3.19", "`ack` goes back: a zero ack after a non-zero one",
      expect="error frame naming `chain-ack` (our own two signed messages contradict)",
      spec="2.3 step 7")
async def ack_goes_back(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square}, ack=bytes(32)))
    return rejected(await j.expect_rejection("chain-ack"))


@case("3.18", "plain move carrying an opening",
      expect="error frame naming `opening-extra`", spec="2.4 move")
async def opening_extra(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    move = plain_moves(j)[0]
    piece = j.view.piece_at(move.from_square)
    assert piece is not None
    opening = j.peer._opening(piece.pid)
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square, "open": opening}))
    return rejected(await j.expect_rejection("opening-extra"))


# == 4. blind mode =========================================================================

@case("4.1", "blind: invalid OT point (small order)",
      expect="error frame naming `invalid-point`", spec="2.9.4, 2.9.5",
      options=("--arbiter", "blind"), rules=BLIND)
async def invalid_point(ctx: Ctx) -> str:
    j = await ctx.join()
    move = await j.play(a_challenge)
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square, "ot_r": bytes(32)}))
    return rejected(await j.expect_rejection("invalid-point"))


@case("4.2", "blind: replayed OT point",
      expect="error frame naming `replayed-point` (an R already used in this game)",
      spec="2.9.5", options=("--arbiter", "blind"), rules=BLIND, timeout=40)
async def replayed_point(ctx: Ctx) -> str:
    j = await ctx.join()

    def moment(j: Joiner):
        return a_challenge(j) if j.flow.used_points else None
    moment.__doc__ = "our challenge after a first blind challenge"
    move = await j.play(moment, timeout=30, policy=challenging(j))
    used = next(iter(j.flow.used_points))
    await j.send_cheat(j.forge("move", {"ply": j.view.ply, "from": move.from_square,
                                        "to": move.to_square, "ot_r": used}))
    return rejected(await j.expect_rejection("replayed-point"))


@case("4.3", "blind: a token the transfer did not give",
      expect="error frame naming `blind-token`", spec="2.9.5", options=("--arbiter", "blind"),
      rules=BLIND, timeout=40)
async def token_not_given(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("blind_outcome", lambda j, d: [j.resign_body(d, token=bytes(32))])
    await j.play(lambda j: j.cheated, timeout=30, policy=challenging(j),
                 waiting_for="our blind challenge and the host's table")
    return rejected(await j.expect_rejection("blind-token"))


@case("4.4", "blind: a false proof of a bad table",
      expect="error frame naming `false-proof`", spec="2.9.5", options=("--arbiter", "blind"),
      rules=BLIND, timeout=40)
async def false_proof(ctx: Ctx) -> str:
    j = await ctx.join()

    def proof(j: Joiner, data: bytes) -> list[bytes]:
        record = j.flow.blind_log[-1]  # our Peer already applied its honest outcome
        x = ot.receiver_scalar(j.own.seed, record.n)
        return [j.resign_body(data, type_="blind_proof", drop=("token",), x=x,
                              open=j.peer._opening(record.attacker_pid))]

    j.intercept("blind_outcome", proof)
    await j.play(lambda j: j.cheated, timeout=30, policy=challenging(j),
                 waiting_for="our blind challenge and the host's table")
    return rejected(await j.expect_rejection("false-proof"))


# == 5. audit ==============================================================================

@case("5.1", "audit opens a piece to another rank",
      expect="error frame naming `false-opening` (on the audit)", spec="2.4 audit, 2.7")
async def audit_false_opening(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))

    def lie(j: Joiner, data: bytes) -> list[bytes]:
        ranks = bytearray(body_of(data)["ranks"])
        i = next(i for i in range(21) if ranks[i] != Rank.GENERAL_OF_THE_ARMY)
        ranks[i] = Rank.GENERAL_OF_THE_ARMY
        return [j.resign_body(data, ranks=bytes(ranks))]

    j.intercept("audit", lie)
    j.peer.resign()
    await j.flush()
    return rejected(await j.expect_rejection("false-opening"))


@case("5.2", "setup of the wrong composition (two 5-star generals, 5 privates)",
      expect="nothing shows until the end; the audit is refused with an error frame naming "
      "`composition`", spec="2.4 audit, 2.7")
async def wrong_composition(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(in_phase(Phase.SETUP))
    side = j.side
    ranks = list(FULL_SET)
    ranks[ranks.index(Rank.PRIVATE)] = Rank.GENERAL_OF_THE_ARMY
    fake = object.__new__(Setup)  # a setup the honest code would never build
    object.__setattr__(fake, "side", side)
    squares = sorted(home_squares(side))[:21]
    object.__setattr__(fake, "placement", dict(zip(squares, ranks, strict=True)))
    j.peer.commit_setup(fake)
    await j.play(in_phase(Phase.PLAY), policy=silent)
    with contextlib.suppress(LocalProtocolError):
        j.peer.resign()  # our own Peer refuses to send the audit of such a setup
    await j.send_honest(j.peer.data_to_send())  # the resignation
    own = j.own
    await j.send_cheat(j.forge("audit", {"ranks": bytes(own.setup.ranks),
                                         "salts": b"".join(own.salts), "seed": own.seed}))
    return rejected(await j.expect_rejection("composition"))


async def _await_claim(j: Joiner, reason: str, within: float) -> float:
    """Wait (silent) for the host's forfeit_claim with `reason`; the seconds it took."""
    start = trio.current_time()
    deadline = start + within
    while True:
        frame = await j.next_game_message(deadline - trio.current_time(),
                                          f"the host's forfeit_claim ({reason!r})")
        body = body_of(frame)
        if body is not None and body.type == "forfeit_claim":
            if body["reason"] != reason:
                raise Fail(f"the host claimed {body['reason']!r}, not {reason!r}")
            return trio.current_time() - start


async def _audit_late(j: Joiner) -> str:
    """After a withheld duty and the host's claim: open our commitments after all (our
    audit follows what we really sent); the audit completes; goodbyes; the host closes."""
    own = j.own
    await j.send_cheat(j.forge_next("audit", {"ranks": bytes(own.setup.ranks),
                                              "salts": b"".join(own.salts), "seed": own.seed}))
    await j.settle()
    return "our audit taken; byes; host closed"


@case("5.3", "the joiner never opens its commitments (audit refused)",
      expect="after its audit timeout the host sends `forfeit_claim` (\"audit\"): the "
      "joiner loses on the host's claim; goodbyes; the host exits 0",
      spec="2.6, 3.6", options=("--audit-timeout", str(AUDIT_TIME)))
async def refuse_audit(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    j.intercept("audit", lambda j, d: [])  # withheld
    j.peer.resign()
    await j.flush()
    took = await _await_claim(j, "audit", AUDIT_TIME + 10)
    await j.settle()
    return f"forfeit_claim 'audit' {took:.1f} s after our resignation; byes; host closed"


# == 6. timeouts ===========================================================================

@case("6.1", "the joiner goes silent on its move (--move-time)",
      expect=f"after the move time ({MOVE_TIME} s), not before, the host sends "
      "`forfeit_claim` (\"time\") and its audit; the game ends `time_forfeit`, host wins, "
      "audit clean; goodbyes; the host exits 0",
      spec="3.6, 1.10", options=("--move-time", str(MOVE_TIME)),
      rules=RuleOptions(move_seconds=MOVE_TIME), timeout=30)
async def silent_on_move(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    start = trio.current_time()
    await j.play(lambda j: j.flow.is_over, policy=silent, allow_end=True, timeout=MOVE_TIME + 5,
                 waiting_for="the host's time claim")
    took = trio.current_time() - start
    termination, winner = _result(j)
    if termination is not Termination.TIME_FORFEIT or winner != HOST:
        raise Fail(f"the game ended by {termination} (winner {winner}), not by the host's "
                   "time claim")
    if took < MOVE_TIME - 0.5:
        raise Fail(f"the host claimed time after {took:.2f} s, before the move time "
                   f"({MOVE_TIME} s) ran out")
    verdict = await j.finish()
    return f"forfeit_claim 'time' after {took:.1f} s of silence; {_ended(j, verdict)}"


@case("6.2", "the joiner runs out of its total time (--clock)",
      expect=f"the joiner thinks a little on two moves, then goes silent; when its total "
      f"time ({CLOCK} s) is used up by the host's reading, not before, the host sends "
      "`forfeit_claim` (\"time\"); `time_forfeit`, host wins, audit clean; the host exits 0",
      spec="3.6, 1.12", options=("--clock", str(CLOCK)),
      rules=RuleOptions(clock_seconds=CLOCK), timeout=30)
async def out_of_clock(ctx: Ctx) -> str:
    j = await ctx.join()
    used = 0.0
    for _ in range(2):
        await j.play(my_turn)
        turn = trio.current_time()
        await trio.sleep(0.4)
        action = j.seat.step(j.peer)
        if action is None:
            raise Missed("our bot had nothing to do on its turn")
        action(j.peer)
        await j.flush()
        used += trio.current_time() - turn
    await j.play(my_turn)
    start = trio.current_time()
    await j.play(lambda j: j.flow.is_over, policy=silent, allow_end=True, timeout=CLOCK + 5,
                 waiting_for="the host's time claim")
    silence = trio.current_time() - start
    termination, winner = _result(j)
    if termination is not Termination.TIME_FORFEIT or winner != HOST:
        raise Fail(f"the game ended by {termination} (winner {winner}), not by the host's "
                   "time claim")
    if silence < CLOCK - used - 0.5:
        raise Fail(f"the host claimed time after {used:.1f} s of thinking and {silence:.1f} s "
                   f"of silence, before our {CLOCK} s were used up")
    verdict = await j.finish()
    return (f"forfeit_claim 'time' after {used:.1f} s of thinking and {silence:.1f} s of "
            f"silence; {_ended(j, verdict)}")


@case("6.3", "the joiner disconnects and never returns (--abandon)",
      expect=f"after the abandonment limit ({ABANDON} s), not before, the host claims the game "
      "by abandonment, prints it and exits 0", spec="3.6, 1.10",
      options=("--abandon", str(ABANDON)), host="any", timeout=30)
async def abandon(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    start = trio.current_time()
    await j.conn.close()
    code = await ctx.host.wait_exit(ABANDON + 10)
    took = trio.current_time() - start
    if code is None:
        raise Fail(f"the host was still running {took:.0f} s after we left")
    if code != 0:
        raise Fail(f"the host exited with status {code}")
    if took < ABANDON - 0.5:
        raise Fail(f"the host gave up after {took:.2f} s, before the abandonment limit")
    said = [line for line in ctx.host.stdout_lines if re.search(r"abandon", line, re.IGNORECASE)]
    if not said:
        raise Fail("the host exited 0 but its output does not mention the abandonment: "
                   f"{ctx.host.output_tail(3)}")
    return f"host exited 0 after {took:.1f} s; it printed {said[0].strip()!r}"


@case("6.4", "the defender withholds its reply to a challenge",
      expect=f"after the duty timeout ({DUTY_TIME} s) the host sends `forfeit_claim` "
      "(\"time\"): the staller loses on time; its late audit completes the audit; the host "
      "exits 0", spec="2.7, 3.6",
      options=("--duty-timeout", str(DUTY_TIME)), timeout=40)
async def withhold_reply(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("reply", lambda j, d: [])
    await j.play(lambda j: j.cheated, timeout=25, waiting_for="a challenge by the host")
    took = await _await_claim(j, "time", DUTY_TIME + 10)
    return f"forfeit_claim 'time' {took:.1f} s after the challenge; {await _audit_late(j)}"


@case("6.5", "blind: the attacker learns the outcome and withholds its token",
      expect=f"after the duty timeout ({DUTY_TIME} s) the host sends `forfeit_claim` "
      "(\"time\"); the late audit completes it; the host exits 0", spec="2.7, 2.9.7, 3.6",
      options=("--arbiter", "blind", "--duty-timeout", str(DUTY_TIME)), rules=BLIND,
      timeout=40)
async def withhold_token(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("blind_outcome", lambda j, d: [])
    await j.play(lambda j: j.cheated, timeout=25, policy=challenging(j),
                 waiting_for="our blind challenge and the host's table")
    took = await _await_claim(j, "time", DUTY_TIME + 10)
    return f"forfeit_claim 'time' {took:.1f} s after the host's table; {await _audit_late(j)}"


# == 7. fair play at the edges ================================================================

SETUP_TIME = 2  # seconds, for --setup-timeout
TIMED = RuleOptions(move_seconds=60)


def _claim(j: Joiner, reason: str, **chain: Any) -> bytes:
    return j.forge("forfeit_claim", {"reason": reason}, **chain)


def _instead(reason: str):
    """An interceptor: the claim of `reason` in the place of the message our Peer made."""
    def replace(j: Joiner, data: bytes) -> list[bytes]:
        body = body_of(data)
        return [j.forge("forfeit_claim", {"reason": reason}, seq=body.seq, prev=body.prev,
                        ack=body.ack)]
    return replace


@case("7.1", "a time claim in a game with no clock, on the host's turn",
      expect="error frame naming `false-claim`: the host owes a move, which has no time limit",
      spec="2.6 claims, 2.7")
async def claim_without_clock(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(hosts_turn)
    await j.send_cheat(_claim(j, "time"))
    return rejected(await j.expect_rejection("false-claim"))


@case("7.2", "a time claim on our own turn (a clock is set)",
      expect="error frame naming `false-claim`: the claimant itself owes the move",
      spec="2.6 claims, 2.7", options=("--move-time", "60"), rules=TIMED)
async def claim_own_turn(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_cheat(_claim(j, "time"))
    return rejected(await j.expect_rejection("false-claim"))


@case("7.3", "a time claim instead of the reply we owe",
      expect="error frame naming `false-claim`: the host owed nothing; the claimant owed "
      "its reply", spec="2.6 claims, 2.7", timeout=40)
async def claim_instead_of_reply(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("reply", _instead("time"))
    await j.play(lambda j: j.cheated, timeout=30, waiting_for="a challenge by the host")
    return rejected(await j.expect_rejection("false-claim"))


@case("7.4", "an abandonment claim instead of opening our coin",
      expect="error frame naming `false-claim`: the claimant owed the opening of its coin",
      spec="2.6 claims, 2.5")
async def claim_in_coin_toss(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("coin_open", _instead("abandoned"))
    await j.play(lambda j: j.cheated, waiting_for="the host's coin")
    return rejected(await j.expect_rejection("false-claim"))


@case("7.5", "an abandonment claim while the host owes nothing",
      expect="error frame naming `false-claim`: it is our turn; the host, connected and "
      "answering, owes nothing", spec="2.6 claims")
async def claim_abandoned_own_turn(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_cheat(_claim(j, "abandoned"))
    return rejected(await j.expect_rejection("false-claim"))


@case("7.6", "an audit claim before our own audit",
      expect="error frame naming `false-claim`: a side claims the audit only after its own",
      spec="2.6 claims")
async def audit_claim_early(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    j.intercept("audit", _instead("audit"))
    j.peer.resign()
    await j.flush()
    return rejected(await j.expect_rejection("false-claim"))


@case("7.7", "resignation, audit and an audit claim in one burst",
      expect="the host's audit (sent on the resignation) crosses the claim: the claim is "
      "void, nobody is convicted; the host's audit is clean, host wins by resignation; "
      "goodbyes; the host exits 0", spec="2.6 claims, 2.4 after the end", timeout=40)
async def instant_audit_claim(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    await j.send_honest(j.produce(lambda p: p.resign()))  # the resignation and our audit
    await j.send_honest([j.forge("forfeit_claim", {"reason": "audit"}, record=True)])
    verdict = await j.finish()
    if verdict.winner != HOST or verdict.claimants:
        raise Fail(f"our own verdict is not the host's win by resignation: {verdict}")
    code = await ctx.host.wait_exit(5.0)
    said = [line for line in ctx.host.stdout_lines if line.startswith("game over")]
    if code != 0 or not said or "resignation" not in said[-1] or "claim" in said[-1]:
        raise Fail(f"the host did not end clean by our resignation: {said} (exit {code})")
    return f"no error frame; {_ended(j, verdict)}; host said {said[-1]!r}"


@case("7.8", "a time claim after our own resignation",
      expect="error frame naming `after-end`", spec="2.4 after the end")
async def claim_after_end(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_honest(j.produce(lambda p: p.resign()))
    await j.send_cheat(j.forge("forfeit_claim", {"reason": "time"}))
    return rejected(await j.expect_rejection("after-end"))


@case("7.9", "blind: our table crosses the host's time claim; we dispute the claim",
      expect=f"after the duty timeout ({DUTY_TIME} s) the host claims time; our table, sent "
      "before we saw the claim (its ack says so), is taken without a violation; our audit and "
      "our dispute are taken; the host's verdict says the result rests on its claim, "
      "disputed; goodbyes; the host exits 0", spec="2.4 after the end, 2.6 disputes, 3.6",
      options=("--arbiter", "blind", "--duty-timeout", str(DUTY_TIME)), rules=BLIND,
      timeout=40)
async def table_crossing_claim(ctx: Ctx) -> str:
    j = await ctx.join()
    held: list[bytes] = []

    def hold(j: Joiner, data: bytes) -> list[bytes]:
        held.append(data)
        return []

    j.intercept("blind_reply", hold)
    await j.play(lambda j: j.cheated, timeout=30, waiting_for="a blind challenge by the host")
    took = await _await_claim(j, "time", DUTY_TIME + 10)
    claim = body_of(j.host_messages[-1])
    await j.send_honest(held)  # sent as if just before the claim came: it crossed it
    own = j.own
    await j.send_honest([j.forge_next("audit", {"ranks": bytes(own.setup.ranks),
                                                "salts": b"".join(own.salts),
                                                "seed": own.seed})])
    await j.send_honest([j.forge_next("dispute", {"claim": claim.seq})])
    await j.settle()
    code = await ctx.host.wait_exit(5.0)
    said = [line for line in ctx.host.stdout_lines if line.startswith("game over")]
    if code != 0 or not said or "disputed" not in said[-1]:
        raise Fail(f"the host's end does not record our dispute: {said} (exit {code})")
    return f"claim after {took:.1f} s; table, audit and dispute taken; host said {said[-1]!r}"


@case("7.10", "the defender withholds its reply and reconnects every second",
      expect=f"the duty timeout ({DUTY_TIME} s) keeps counting across reconnects: the host "
      "claims time within the duty timeout plus one grace period (5 s), not later",
      spec="3.6", options=("--duty-timeout", str(DUTY_TIME)), timeout=50)
async def churn_withholding(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("reply", lambda j, d: [])
    await j.play(lambda j: j.cheated, timeout=25, waiting_for="a challenge by the host")
    start = trio.current_time()
    reconnects = 0
    while True:
        try:
            frame = await j.next_game_message(0.8, "the host's time claim")
        except (Fail, Closed):
            await j.conn.close()
            await ctx.rejoin(j, as_sent=True)
            reconnects += 1
            continue
        body = body_of(frame)
        if body is not None and body.type == "forfeit_claim":
            break
    took = trio.current_time() - start
    if took > DUTY_TIME + 5 + 2.0:
        raise Fail(f"the host claimed only after {took:.1f} s and {reconnects} reconnects: "
                   "reconnecting held the claim off")
    return f"forfeit_claim after {took:.1f} s and {reconnects} reconnects; " + \
        await _audit_late(j)


@case("7.11", "the joiner sees the host's coin and never opens its own",
      expect=f"after the duty timeout ({DUTY_TIME} s), not before, the host claims time: "
      "refusing to open one's coin loses, so aborting the toss does not choose the colour "
      "for free; goodbyes; the host exits 0", spec="2.5, 3.6",
      options=("--duty-timeout", str(DUTY_TIME)))
async def refuse_coin_open(ctx: Ctx) -> str:
    j = await ctx.join()
    j.intercept("coin_open", lambda j, d: [])
    await j.play(lambda j: j.cheated, waiting_for="the host's coin")
    took = await _await_claim(j, "time", DUTY_TIME + 10)
    if took < DUTY_TIME - 0.5:
        raise Fail(f"the host claimed after {took:.2f} s, before the duty timeout")
    await j.settle()
    return f"forfeit_claim 'time' {took:.1f} s after its coin; byes; host closed"


@case("7.12", "the joiner never commits a setup",
      expect=f"after the setup timeout ({SETUP_TIME} s), not before, the host claims time; "
      "goodbyes; the host exits 0", spec="2.5, 3.6",
      options=("--setup-timeout", str(SETUP_TIME)))
async def never_commit(ctx: Ctx) -> str:
    j = await ctx.join()

    def accept_only(peer):  # our hello, and nothing after it
        return j.seat.step(peer) if peer.phase is Phase.HELLO else None

    await j.play(in_phase(Phase.SETUP), policy=accept_only)
    j.cheated = True  # (we will not commit: our Peer stays as it is)
    took = await _await_claim(j, "time", SETUP_TIME + 10)
    if took < SETUP_TIME - 0.5:
        raise Fail(f"the host claimed after {took:.2f} s, before the setup timeout")
    await j.settle()
    return f"forfeit_claim 'time' {took:.1f} s into the setup; byes; host closed"


@case("7.13", "our hello's key is the identity point, 'signed' so that it verifies",
      expect="error frame naming `bad-key` and the connection closed; such a hello proves "
      "nothing (anyone can sign for that key), so the host keeps waiting", spec="2.3 step 2, "
      "2.4 hello", host="runs")
async def bad_key(ctx: Ctx) -> str:
    j = await ctx.join()

    def identity_key(j: Joiner, data: bytes) -> list[bytes]:
        from nacl.bindings import crypto_scalarmult_ed25519_base_noclamp

        body = body_of(data)
        fields = dict(body.fields)
        fields["key"] = b"\x01" + bytes(31)
        raw = Body("hello", body.seq, body.prev, body.ack, None, fields).encode()
        s = (7).to_bytes(32, "little")  # with that key, (s*B, s) verifies for anything
        return [msgpack.packb({"body": raw, "sig": crypto_scalarmult_ed25519_base_noclamp(s)
                               + s}, use_bin_type=True)]

    j.intercept("hello", identity_key)
    await j.play(lambda j: j.cheated, waiting_for="our hello")
    return rejected(await j.expect_rejection("bad-key"))


@case("7.14", "a move whose body repeats the `to` key",
      expect="error frame naming `malformed-message` (two decoders could read two moves)",
      spec="2.1, 2.3 step 3")
async def repeated_key(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    first, second = plain_moves(j)[:2]
    chain = j.chain_fields()
    pairs = [("t", "move"), ("seq", chain["seq"]), ("prev", chain["prev"]),
             ("ack", chain["ack"]), ("game", chain["game"]), ("ply", j.view.ply),
             ("from", first.from_square), ("to", first.to_square), ("to", second.to_square)]
    raw = bytes([0x80 | len(pairs)]) + b"".join(
        msgpack.packb(k) + msgpack.packb(v, use_bin_type=True) for k, v in pairs)
    await j.send_cheat(msgpack.packb({"body": raw, "sig": sign(j.key, raw)},
                                     use_bin_type=True))
    return rejected(await j.expect_rejection("malformed-message"))


@case("7.15", "our reveal's ack does not reach the host's commitment (which we had)",
      expect="error frame naming `privacy-screen`: judged by what the reveal's sender had "
      "seen, not by the order the host processed things", spec="2.4 setup_reveal")
async def reveal_stale_ack(ctx: Ctx) -> str:
    j = await ctx.join()

    def stale(j: Joiner, data: bytes) -> list[bytes]:
        body = body_of(data)
        host = j.flow.senders[HOST]
        commit = next(i for i, e in enumerate(host.envelopes)
                      if body_of(e).type == "setup_commit")
        ack = host.hashes[commit - 1]
        return [seal(j.key, Body(body.type, body.seq, body.prev, ack, body.game,
                                 dict(body.fields))).encode()]

    j.intercept("setup_reveal", stale)
    await j.play(lambda j: j.cheated, waiting_for="both setup commitments")
    return rejected(await j.expect_rejection("privacy-screen"))


@case("7.16", "an `error` control frame from us in mid-game",
      expect="the host closes that connection and keeps the game (an unsigned frame never "
      "ends a game); we resume and play on to a clean verdict", spec="3.4", timeout=45)
async def error_frame_mid_game(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    await j.conn.send(control("error", reason="conformance: testing"))
    await expect_closed(j.conn, within=5.0, after="our error frame")
    ok = await ctx.rejoin(j)
    verdict = await j.finish()
    return f"host closed; resumed (host held {ok['have']} of ours); {_ended(j, verdict)}"


@case("7.17", "a resume whose `have` is more than the host ever sent",
      expect="an error frame and that connection closed; the game untouched: a proper "
      "resume plays on to a clean verdict", spec="3.4", timeout=45)
async def have_too_large(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(plies(2))
    await j.conn.close()
    conn = await ctx.connect()
    await conn.send(control("hi", secret=ctx.invite.secret, game=j.game_id,
                            have=j.held() + 5, first=None))
    refused = await expect_refusal(conn)
    ok = await ctx.rejoin(j)
    verdict = await j.finish()
    return (f"{rejected(str(refused.get('reason')))}; then resumed (host held {ok['have']}); "
            f"{_ended(j, verdict)}")



@case("7.18", "a chat flood: ten chat messages in a row, then an eleventh",
      expect="the ten are taken; the eleventh gets an error frame naming `chat-limit`; "
      "the connection closes", spec="2.10, 2.7")
async def chat_flood(ctx: Ctx) -> str:
    j = await ctx.join()
    await j.play(my_turn)
    await j.send_honest(j.produce(
        lambda p: [p.chat(f"line {i + 1} of a flood") for i in range(CHATS_IN_A_ROW)]))
    await j.send_cheat(j.forge("chat", {"text": "one line too many"}))
    return rejected(await j.expect_rejection("chat-limit"))


from . import towers_cases  # noqa: E402, F401  (group 8 registers here, with `case`)

CASES.sort(key=lambda c: c.key)
