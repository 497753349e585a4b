"""Recorded tables of three and four seats (SPEC 5.10): honest games, and one table for
each row of SPEC 5.10's table, each seat's file as its driver writes it (SPEC 5.9). Written
with the two-party scenarios by `python -m protocol.scenarios protocol/transcripts` (file
names `table-NAME-seat-N.gtr`), their verdicts in `expected.json` (SPEC 2.8, 5.9).

The seats are the sans-IO `TableSeat`s, their messages moved by the relay loop of
`tests/tablekit.py` with a seeded random order, so every file is the same on every run.
A cheat is a message made by hand with the cheating seat's key, as a cheating program
would make it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import public_bytes, sign
from p2pgotg.games.towers.players import Budget, TowersBot
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.table import TableSeat, TableViolation
from p2pgotg.protocol.table.body import TableBody
from p2pgotg.protocol.table.talk import seal_whisper
from p2pgotg.testing.table_relay import Table, file_bytes, keys, make_table, play_random

#: SPEC 5.10's rows, in its words (the first column), so each recorded table names its row.
HOST_EQUIVOCATES = "the host shows two seats two versions of a message"
JOINER_EQUIVOCATES = "a joiner sends two versions of a message"
WITHHELD = "the host leaves a seat's message out for some seats"
COIN_ABORTED = "the host (or a joiner) aborts the order once it knows it"
WRONG_ACTION = "a seat acts for another colour, at another ply, or illegally"
UNCLOSED_VIEW = "a seat acks a message without what that message acked"
FALSE_CLAIM = "a seat claims while the other does not owe, or claims out of its place"
UNREADABLE_WHISPER = "a seat whispers what its receiver cannot read"


@dataclass
class Kept:
    """What a scenario leaves: its table and the seats whose files are recorded."""

    table: Table
    seats: tuple[int, ...]
    winner: int | None = None  # the seat the script makes the winner, when it does
    cheater: int | None = None  # the seat the script made cheat, when it does


@dataclass(frozen=True)
class Verdict:
    """What `verify` finds (SPEC 5.9): `cheater` and `winner` are seats; `winner` None
    means no winner (a table's game that ended before the order, or a violation)."""

    exit_code: int
    rule: str | None = None
    cheater: int | None = None
    termination: str | None = None
    winner: int | None = None


@dataclass(frozen=True)
class TableScenario:
    name: str
    cheat: str
    run: Callable[[int], Kept]
    verdict: Verdict | None  # None: an honest game, whose result its play decides
    together: Verdict | None = None  # every file of the table at once, when it differs


# -- driving a table ------------------------------------------------------------------------


def seat_key(table: Table, seat: int) -> Ed25519PrivateKey:
    """The key of `seat` (the relay loop's keys, `tests.tablekit.keys`)."""
    flow = table.host.flow
    return next(k for k in keys(flow.n) if public_bytes(k) == flow.key_of(seat))


def forged(table: Table, seat: int, type_: str, fields: dict[str, Any], **over: Any) -> bytes:
    """A message of `seat` signed with its key on the host's picture of the chains: by
    default the next of its chain, acknowledging every head the host holds."""
    flow = table.host.flow
    chain = flow.chains[seat]
    acks = tuple(ZERO_HASH if j == seat or not flow.chains[j] else flow.chains[j][-1].hash
                 for j in range(flow.n))
    body = TableBody(type_, over.get("seq", len(chain)), over.get("prev", chain[-1].hash),
                     seat, over.get("acks", acks), over.get("game", flow.game_id), fields)
    data = body.encode()
    return Envelope(data, sign(seat_key(table, seat), data)).encode()


def twin(table: Table, seat: int, data: bytes, fields: dict[str, Any]) -> bytes:
    """A second version of `seat`'s message `data`: its place and acks, other fields."""
    body = TableBody.decode(Envelope.decode(data).body_bytes)
    other = TableBody(body.type, body.seq, body.prev, body.seat, body.acks, body.game,
                      fields).encode()
    return Envelope(other, sign(seat_key(table, seat), other)).encode()


def seated(n: int, name: str, seed: int) -> tuple[Table, random.Random]:
    """A table whose roster and order are made and delivered everywhere."""
    rng = random.Random(f"table-{name}-{seed}")
    table = make_table(n, rng)
    table.settle(rng)
    return table, rng


def act_once(table: Table, rng: random.Random) -> None:
    """The seat to act makes a random legal action; everything is delivered."""
    seat = table.by_seat()[table.host.status().seat_to_act]  # type: ignore[index]
    seat.act(rng.choice(list(seat.game.game.legal_actions)))
    table.settle(rng)


def until_to_act(table: Table, rng: random.Random, wanted: Callable[[int], bool]) -> int:
    """Play random actions until a seat `wanted` is to act; that seat."""
    for _ in range(200):
        seat = table.host.status().seat_to_act
        assert seat is not None, "the game ended first"
        if wanted(seat):
            return seat
        act_once(table, rng)
    raise AssertionError("no such seat came to act")


def convicted_by_host(table: Table, data: bytes) -> None:
    """The host takes the cheat, keeps it as evidence, and the table stops (SPEC 5.2)."""
    try:
        table.host.receive(data)
    except TableViolation as exc:
        assert exc.signed
        table.collect()
        return
    raise AssertionError("the host took the cheat")


def bot_chooser(n: int, seed: int, nodes: int = 200) -> Callable[[TableSeat, random.Random],
                                                                bool]:
    """Each seat plays the hard bot with a node budget (deterministic: no deadline)."""
    bots: dict[int, TowersBot] = {}

    def choose(seat: TableSeat, rng: random.Random) -> bool:
        state = seat.flow.state
        assert state is not None and state.order is not None and seat.my_seat is not None
        colour = state.order.index(seat.my_seat)
        bot = bots.setdefault(colour, TowersBot(colour, random.Random(seed * 8 + colour),
                                                "hard", Budget(nodes=nodes, seconds=None)))
        seat.act(bot.choose_action(seat.game.game))
        return True
    return choose


# -- the scenarios --------------------------------------------------------------------------


def honest(n: int) -> Callable[[int], Kept]:
    def run(seed: int) -> Kept:
        rng = random.Random(f"table-honest-{n}-{seed}")
        table = make_table(n, rng)
        play_random(table, rng)
        return Kept(table, tuple(range(n)))
    return run


def host_equivocates(seed: int) -> Kept:
    """The host makes an action, shows it to seat 1, and shows seat 2 another action at the
    same place. Each seat holds one version only, and cannot take what the other's acks
    name: each file alone shows nothing yet; the two together convict the host."""
    table, rng = seated(3, "host-equivocates", seed)
    until_to_act(table, rng, lambda s: s == 0)
    legal = list(table.host.game.game.legal_actions)
    table.host.act(legal[0])
    first = table.host.flow.chains[0][-1]
    seat, data = table.host.accepted[-1]
    assert seat == 0 and Envelope.decode(data).hash == first.hash
    other = twin(table, 0, data, {"ply": first.body["ply"], "code": legal[1].code()})
    link2 = next(link for link in table.links if link.joiner.my_seat == 2)
    link2.withhold = lambda seat, d: d == data
    link2.joiner.receive(other)
    table.settle(rng)
    return Kept(table, (1, 2))


def joiner_equivocates(seed: int) -> Kept:
    """A joiner makes an action, then signs another at the same place: the host holds
    both and convicts it."""
    table, rng = seated(3, "joiner-equivocates", seed)
    mover = until_to_act(table, rng, lambda s: s != 0)
    seat = table.by_seat()[mover]
    legal = list(seat.game.game.legal_actions)
    seat.act(legal[0])
    table.settle(rng)
    data = table.host.flow.chains[mover][-1]
    sent = next(d for s, d in table.host.accepted if Envelope.decode(d).hash == data.hash)
    convicted_by_host(table, twin(table, mover, sent, {"ply": data.body["ply"],
                                                       "code": legal[1].code()}))
    return Kept(table, (0,), cheater=mover)


def coin_aborted(seed: int) -> Kept:
    """Seat 1 never opens its coin (its program sees the others' values and goes away);
    seat 2, the next seat in seat order, claims: the game ends before the setup."""
    rng = random.Random(f"table-coin-aborted-{seed}")
    table = make_table(3, rng)
    for link in table.links:
        table.host.receive(link.up.pop(0))  # the hellos: the first is seated at 1
    link1 = table.links[0]
    while table.step(rng):
        link1.up[:] = [d for d in link1.up if _type(d) != "coin_open"]
    link1.up.clear()  # (it went away: nothing more of it arrives)
    link1.joiner.take_outgoing()
    table.by_seat()[2].claim(1, "abandoned")
    table.settle(rng)
    return Kept(table, (0, 2))


def withheld(seed: int) -> Kept:
    """The relay takes a joiner's action and does not forward it: the next seat, a joiner
    too, sees it absent and claims; the seat claimed against disputes. The withheld action,
    delivered later (as a resume does), is void: its view did not hold the claim (5.7).
    Two actions later the host resigns, and the claimant, the last seat in, wins."""
    table, rng = seated(3, "withheld", seed)

    def joiner_before_joiner(seat: int) -> bool:
        state = table.host.flow.state
        return seat != 0 and state is not None and state.next_in(seat) not in (0, None)

    late = until_to_act(table, rng, joiner_before_joiner)
    state = table.host.flow.state
    assert state is not None
    claimant = state.next_in(late)
    assert claimant is not None
    by_seat = table.by_seat()
    by_seat[late].act(next(iter(by_seat[late].game.game.legal_actions)))
    action = by_seat[late].flow.chains[late][-1]
    link = next(link for link in table.links if link.joiner.my_seat == claimant)
    kept_back: list[bytes] = []

    def withhold(seat: int, data: bytes) -> bool:
        if Envelope.decode(data).hash == action.hash:
            kept_back.append(data)
            return True
        return False

    link.withhold = withhold
    table.settle(rng)
    assert kept_back
    by_seat[claimant].claim(late, "abandoned")
    table.settle(rng)
    claim = by_seat[late].flow.chains[claimant][-1]
    by_seat[late].dispute((claimant, claim.seq))
    table.settle(rng)
    link.withhold = lambda seat, data: False
    link.joiner.receive(kept_back[0])  # (what a resume gives it, SPEC 5.4)
    table.settle(rng)
    for _ in range(2):
        act_once(table, rng)
    table.host.resign()  # (after the claim in the game's order: its place is later)
    table.settle(rng)
    return Kept(table, (0, 1, 2), winner=claimant)


def resignation_before_order(seed: int) -> Kept:
    """Seat 1 opens its coin and resigns before it has seen the others' openings: no order
    can be made, the game ends before the setup (SPEC 5.5), no winner, nothing claimed."""
    rng = random.Random(f"table-resignation-before-order-{seed}")
    table = make_table(3, rng)
    for link in table.links:
        table.host.receive(link.up.pop(0))  # the hellos: the roster and the host's opening
    table.collect()
    joiner = table.links[0].joiner  # (its hello came first: the roster seats it at 1)
    for _, data in list(table.host.accepted):
        if joiner.flow.rostered:
            break
        if data != joiner._my_hello:
            joiner.receive(data)
    assert joiner.my_seat is not None and joiner.flow.chains[joiner.my_seat][-1].body.type \
        == "coin_open"
    joiner.resign()
    table.collect()
    table.settle(rng)
    return Kept(table, (0, 1, 2))


def out_of_turn(seed: int) -> Kept:
    """A joiner that is not to act makes an action for the colour to act."""
    table, _ = seated(3, "out-of-turn", seed)
    status = table.host.status()
    mover = status.seat_to_act
    cheat = next(s for s in (1, 2) if s != mover)
    code = next(iter(table.host.game.game.legal_actions)).code()
    convicted_by_host(table, forged(table, cheat, "action", {"ply": status.ply, "code": code}))
    return Kept(table, (0,), cheater=cheat)


def illegal_action(seed: int) -> Kept:
    """The joiner to act makes an action the rules forbid (SPEC 4.9's codes: one the
    position does not allow)."""
    table, rng = seated(4, "illegal-action", seed)
    mover = until_to_act(table, rng, lambda s: s != 0)
    game = table.host.game.game
    illegal = next(c for c in range(175) if table.host.game.problem(c) is not None)
    convicted_by_host(table, forged(table, mover, "action", {"ply": game.ply,
                                                              "code": illegal}))
    return Kept(table, (0,), cheater=mover)


def unclosed_view(seed: int) -> Kept:
    """Seat 1 opens its coin acking the host's opening, which saw seat 2's hello, and acks
    nothing of seat 2 (SPEC 5.2 step 5)."""
    rng = random.Random(f"table-unclosed-view-{seed}")
    table = make_table(3, rng)
    for link in table.links:
        table.host.receive(link.up.pop(0))  # the hellos: the roster and the host's opening
    table.collect()
    flow = table.host.flow
    acks = (flow.chains[0][-1].hash, ZERO_HASH, ZERO_HASH)
    joiner = table.links[0].joiner  # (its hello came first: seat 1)
    convicted_by_host(table, forged(table, 1, "coin_open", {"secret": joiner._coin},
                                    acks=acks))
    return Kept(table, (0,))


def false_claim(seed: int) -> Kept:
    """A joiner claims against a seat that owes nothing."""
    table, rng = seated(4, "false-claim", seed)
    until_to_act(table, rng, lambda s: s == 0)
    status = table.host.status()
    idle = next(s for s in (1, 2, 3) if s not in status.owes)
    target = next(s for s in (1, 2, 3) if s != idle)
    convicted_by_host(table, forged(table, idle, "forfeit_claim",
                                    {"seat": target, "reason": "abandoned"}))
    return Kept(table, (0,), cheater=idle)


def unreadable_whisper(seed: int) -> Kept:
    """Seat 1's program whispers to seat 2 a box sealed for the host's key: seat 2 is told
    it is unreadable, nobody is convicted, and the game ends by two resignations."""
    table, rng = seated(3, "unreadable-whisper", seed)
    by_seat = table.by_seat()
    sender = by_seat[1]
    box = seal_whisper(seat_key(table, 1), table.host.public_key, "meet me at c3",
                       rng.randbytes(24))
    flow = sender.flow
    acks = tuple(ZERO_HASH if j == 1 or not flow.chains[j] else flow.chains[j][-1].hash
                 for j in range(flow.n))
    sender._own(TableBody("whisper", len(flow.chains[1]), flow.chains[1][-1].hash, 1, acks,
                          flow.game_id, {"to": 2, "box": box}))
    table.settle(rng)
    by_seat[1].resign()
    table.settle(rng)
    by_seat[2].resign()
    table.settle(rng)
    return Kept(table, (0, 1, 2))


def bot_game(n: int) -> Callable[[int], Kept]:
    def run(seed: int) -> Kept:
        rng = random.Random(f"table-bot-{n}-{seed}")
        table = make_table(n, rng)
        play_random(table, rng, chooser=bot_chooser(n, seed))
        return Kept(table, tuple(range(n)))
    return run


def _type(data: bytes) -> str:
    return TableBody.decode(Envelope.decode(data).body_bytes).type


TABLE_SCENARIOS = (
    TableScenario("table-honest-3", "none: a whole honest game at a table of three (seed 1's "
                  "random game)", honest(3), None),
    TableScenario("table-honest-4", "none: a whole honest game at a table of four (seed 1's "
                  "random game)", honest(4), None),
    TableScenario("table-host-equivocates", HOST_EQUIVOCATES + " (each seat's file alone "
                  "shows one version: nothing proven yet)", host_equivocates, Verdict(3),
                  together=Verdict(1, "equivocation", 0)),
    TableScenario("table-joiner-equivocates", JOINER_EQUIVOCATES, joiner_equivocates,
                  Verdict(1, "equivocation")),
    TableScenario("table-withheld", WITHHELD + " (here: a joiner's action; the next seat "
                  "claims, the seat claimed against disputes)", withheld,
                  Verdict(4, termination="resignation")),
    TableScenario("table-coin-aborted", COIN_ABORTED + " (here: a joiner, claimed by the "
                  "next seat: the game ends before the setup)", coin_aborted,
                  Verdict(4, termination="abandonment")),
    TableScenario("table-resignation-before-order", "none: a seat resigns before every seat "
                  "opened its coin (the game ends before the setup, no winner)",
                  resignation_before_order, Verdict(0, termination="resignation")),
    TableScenario("table-out-of-turn", WRONG_ACTION + " (here: for another colour)",
                  out_of_turn, Verdict(1, "out-of-turn")),
    TableScenario("table-illegal-action", WRONG_ACTION + " (here: illegally)",
                  illegal_action, Verdict(1, "illegal-action")),
    TableScenario("table-unclosed-view", UNCLOSED_VIEW, unclosed_view,
                  Verdict(1, "chain-ack", 1)),
    TableScenario("table-false-claim", FALSE_CLAIM + " (here: against a seat that owes "
                  "nothing)", false_claim, Verdict(1, "false-claim")),
    TableScenario("table-unreadable-whisper", UNREADABLE_WHISPER + " (then two seats resign)",
                  unreadable_whisper, Verdict(0, termination="resignation", winner=0)),
)


def _entry(scenario: TableScenario, verdict: Verdict) -> dict[str, Any]:
    def seat(s: int | None) -> str | None:
        return None if s is None else f"seat {s}"
    winner = None if verdict.exit_code in (2, 3) else seat(verdict.winner) or "none"
    return {"cheat": scenario.cheat, "exit": verdict.exit_code, "cheater": seat(verdict.cheater),
            "rule": verdict.rule, "winner": winner, "termination": verdict.termination}


def write_tables(outdir: Path, seed: int = 1) -> dict[str, dict[str, Any]]:
    """Write each scenario's kept files; their entries for expected.json."""
    manifest = {}
    for scenario in TABLE_SCENARIOS:
        kept = scenario.run(seed)
        verdict = scenario.verdict
        if verdict is None:  # an honest game: what its play decided
            status = kept.table.host.status()
            assert status.over and len(status.winners) == 1, scenario.name
            verdict = Verdict(0, termination=status.termination, winner=status.winners[0])
        if kept.winner is not None or kept.cheater is not None:
            verdict = Verdict(verdict.exit_code, verdict.rule,
                              verdict.cheater if kept.cheater is None else kept.cheater,
                              verdict.termination, kept.winner)
        seats = {seat.my_seat: seat for seat in kept.table.seats}
        for s in kept.seats:
            name = f"{scenario.name}-seat-{s}.gtr"
            (outdir / name).write_bytes(file_bytes(kept.table, seats[s]))
            entry = _entry(scenario, verdict)
            entry.update(owner=f"seat {s}", game=scenario.name)
            if scenario.together is not None:
                entry["together"] = _entry(scenario, scenario.together)
                del entry["together"]["cheat"]
            manifest[name] = entry
    return manifest
