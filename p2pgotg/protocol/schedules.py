"""Every delivery order of short scripted games between two honest peers.

The promise that no honest player is ever convicted, whatever the network does, is checked
here by exhaustion, not by examples. Two honest `GotgPeer`s play a scripted game (a `Plan`);
an explorer tries every schedule the network and the drivers allow: each direction keeps
its order, but every message may be delivered at any moment, so messages cross anywhere;
either side may resign, claim (when its own view allows the claim: the moment a timer fires
is arbitrary), dispute a claim against it, or crash and come back from its transcript; a
connection may drop, losing what was in flight, after which each side resends from the
other's `have` (once, also one message too many). In every schedule, once nothing more can
happen, both peers must have the same result, neither may have been refused a message, and
`verify` of both transcripts must find no rule broken: exit 0, or exit 4 when the result
rests on a claim.

A schedule is identified by what each peer did and processed, in its own order (two
interleavings that differ only in the order of independent steps at different peers are the
same schedule to both peers); the explorer visits each once and also counts the
interleavings they stand for.

    python -m p2pgotg.protocol.schedules      # explore every plan and print the counts
"""

from __future__ import annotations

import copy
import hashlib
import random
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from p2pgotg.crypto import key_from_seed
from p2pgotg.games import replay
from p2pgotg.games.gotg.flow import DUTIES
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.protocol.errors import LocalProtocolError, RemoteProtocolError
from p2pgotg.protocol.flow import HOST, JOINER, Phase, other
from p2pgotg.protocol.pair import TLS_FP
from p2pgotg.protocol.peer import Record
from p2pgotg.protocol.referee import Finding
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.rules import ChallengeMode, FlagRule, Move, Rank, RuleOptions, Setup, Side


class DetRand:
    """Deterministic 'randomness' that a deep copy continues independently."""

    def __init__(self, label: str) -> None:
        self.label, self.counter = label, 0

    def __call__(self, n: int) -> bytes:
        self.counter += 1
        return hashlib.sha256(f"{self.label}/{self.counter}".encode()).digest()[:n]


EXTRAS = frozenset({"resign", "time", "abandoned", "audit", "dispute", "drop", "restore"})


@dataclass(frozen=True)
class Plan:
    """A short scripted game. `line` is played ply by ply by whichever side is to move (the
    boards of two honest peers agree); then the side to move ends the game by `finish`:
    "resign", "flag" (its flag on the back rank claims the win) or "draw" (the line's last
    move offered one, which is accepted). `extras` are what may also happen at any moment."""

    name: str
    options: RuleOptions
    setups: tuple[Setup, Setup]  # White's, Black's
    line: tuple[Move, ...]
    finish: str = "resign"
    draw_at: int = -1  # the ply whose move offers a draw
    extras: frozenset[str] = frozenset()
    seed: str = "schedules"

    def setup_for(self, side: Side) -> Setup:
        return self.setups[0] if side is Side.WHITE else self.setups[1]


@dataclass
class Failure:
    plan: str
    problem: str
    schedule: tuple[tuple[str, ...], tuple[str, ...]]  # what each peer did, in its order


@dataclass
class Counts:
    states: int = 0  # distinct global states visited
    schedules: int = 0  # distinct complete schedules (per-peer orders at quiescence)
    interleavings: int = 0  # global interleavings these stand for
    results: dict[str, int] = field(default_factory=dict)  # how the schedules ended
    failures: list[Failure] = field(default_factory=list)

    def add(self, other_: Counts) -> None:
        self.states += other_.states
        self.schedules += other_.schedules
        self.interleavings += other_.interleavings
        for key, n in other_.results.items():
            self.results[key] = self.results.get(key, 0) + n
        self.failures += other_.failures


# -- one peer's state, shared between global states -----------------------------------------

@dataclass
class _Local:
    peer: GotgPeer
    records: tuple[Record, ...]
    log: tuple[str, ...]  # what it did and processed, in order
    restores: int = 0


class _Broken(Exception):
    """An honest peer refused a message, or refused its own honest action."""


def _apply(local: _Local, event: str, data: bytes | None, plan: Plan,
           action: Callable[[GotgPeer], Any] | None = None) -> _Local:
    peer = copy.deepcopy(local.peer)
    try:
        if data is not None:
            peer.receive(data)
        elif action is not None:
            action(peer)
    except RemoteProtocolError as exc:
        raise _Broken(f"the {peer.role} refused a message of the honest {peer.peer_role}: "
                      f"{exc}") from None
    except LocalProtocolError as exc:
        raise _Broken(f"the {peer.role} could not do its honest action {event}: {exc}") \
            from None
    peer.data_to_send()  # (the explorer reads what is in flight from the senders' chains)
    return _Local(peer, local.records + tuple(peer.take_records()), (*local.log, event),
                  local.restores)


def _restored(local: _Local, plan: Plan) -> _Local:
    old = local.peer
    peer = GotgPeer.restore(old.role, old._key, TLS_FP, list(local.records),
                        plan.options if old.role == HOST else None,
                        DetRand(f"{plan.seed}/{old.role}/restored{local.restores}"))
    peer.data_to_send()
    return _Local(peer, local.records + tuple(peer.take_records()), (*local.log, "restore"),
                  local.restores + 1)


# -- what an honest driver may do now -------------------------------------------------------

def _scripted(peer: GotgPeer, plan: Plan) -> tuple[str, Callable[[GotgPeer], Any]] | None:
    """The one decision the script makes in this view, if any (start, accept, commit a
    setup, the next move of the line, the finishing action)."""
    flow = peer.flow
    if peer.role == HOST and not flow.hellos:
        return "start", lambda p: p.start()
    if peer.role == JOINER and HOST in flow.hellos and JOINER not in flow.hellos:
        return "accept", lambda p: p.accept()
    if flow.phase is Phase.SETUP and peer.own_setup is None and peer.side is not None:
        setup = plan.setup_for(peer.side)
        return "commit", lambda p: p.commit_setup(setup)
    view = peer.view
    if view is None or not peer.my_turn:
        return None
    ply = view.ply
    if ply < len(plan.line):
        move, offer = plan.line[ply], ply == plan.draw_at
        return f"move{ply}", lambda p: p.move(move, offer_draw=offer)
    if plan.finish == "draw" and peer.draw_offered_to_me:
        return "accept-draw", lambda p: p.accept_draw()
    if plan.finish == "flag":
        flag = next(q for q in view.pieces(view.turn) if view.rank_of(q) is Rank.FLAG)
        if view.flag_claim_problem(view.turn, flag) is None:
            return "claim-flag", lambda p: p.claim_flag(flag)
    if plan.finish in ("resign", "flag", "draw"):
        return "resign-end", lambda p: p.resign()
    return None


def claim_allowed(peer: GotgPeer, reason: str) -> bool:
    """Whether an honest driver's timer could fire a claim of `reason` in this view."""
    flow, me, them = peer.flow, peer.role, peer.peer_role
    if reason == "audit":
        return (flow.is_over and len(flow.reveals) == 2 and me in flow.audits
                and them not in flow.audits and flow.audit_claim is None)
    if flow.is_over or flow.game_id is None or flow.owes(me) is not None:
        return False
    owed = flow.owes(them)
    if owed is None:
        return False
    if reason == "abandoned":
        return True
    options = flow.options
    assert options is not None
    return owed in DUTIES or owed == "setup" or (
        owed == "move" and bool(options.clock_seconds or options.move_seconds))


def _claiming(reason: str) -> Callable[[GotgPeer], Any]:
    return lambda p: p.claim_forfeit(reason)


def _choices(local: _Local, plan: Plan, used: frozenset[str]
             ) -> Iterator[tuple[str, Callable[[GotgPeer], Any]]]:
    peer = local.peer
    scripted = _scripted(peer, plan)
    if scripted is not None:
        yield scripted
    role, flow = peer.role, peer.flow
    if "resign" in plan.extras and f"resign-{role}" not in used and flow.phase is Phase.PLAY \
            and not flow.is_over:
        yield f"resign-{role}", lambda p: p.resign()
    for reason in ("time", "abandoned", "audit"):
        if reason in plan.extras and f"claim-{role}" not in used \
                and claim_allowed(peer, reason):
            yield f"claim-{reason}-{role}", _claiming(reason)
    if "dispute" in plan.extras and role not in flow.disputes:
        theirs = flow.claims[peer.peer_role]
        if theirs:
            claim = min(theirs)
            yield f"dispute-{role}", lambda p: p.dispute(claim)


# -- the explorer -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Global:
    host: _Local
    joiner: _Local
    next_to_joiner: int  # the host's next message on the wire to the joiner (its seq)
    next_to_host: int
    used: frozenset[str]  # one-shot extras already used in this schedule

    def local(self, role: str) -> _Local:
        return self.host if role == HOST else self.joiner

    def key(self) -> tuple[Any, ...]:
        return (self.host.log, self.joiner.log, self.next_to_joiner, self.next_to_host,
                self.used)


def _sent(local: _Local) -> int:
    return len(local.peer.flow.senders[local.peer.role].envelopes)


def _with(state: _Global, role: str, local: _Local, **changes: Any) -> _Global:
    if role == HOST:
        return replace(state, host=local, **changes)
    return replace(state, joiner=local, **changes)


class Explorer:
    """Depth-first over the global states of one plan, each visited once."""

    def __init__(self, plan: Plan, limit: int = 200_000) -> None:
        self.plan = plan
        self.limit = limit
        self.counts = Counts()
        self._paths: dict[tuple[Any, ...], int] = {}
        self._verified: dict[bytes, tuple[Finding, Any]] = {}
        # One peer's state depends only on what it did and processed (its log), and many
        # global states share it: each local step is computed once (bounded, most recent).
        self._locals: OrderedDict[tuple[str, tuple[str, ...]], _Local] = OrderedDict()

    def _step(self, local: _Local, event: str, data: bytes | None,
              action: Callable[[GotgPeer], Any] | None = None) -> _Local:
        key = (local.peer.role, (*local.log, event))
        found = self._locals.get(key)
        if found is not None:
            self._locals.move_to_end(key)
            return found
        if event == "restore":
            found = _restored(local, self.plan)
        else:
            found = _apply(local, event, data, self.plan, action)
        self._locals[key] = found
        if len(self._locals) > 4000:
            self._locals.popitem(last=False)
        return found

    def run(self) -> Counts:
        plan = self.plan
        seed = plan.seed
        host = GotgPeer(HOST, key_from_seed(hashlib.sha256(f"{seed}/host-key".encode()).digest()),
                    TLS_FP, plan.options, DetRand(f"{seed}/host"))
        joiner = GotgPeer(JOINER,
                      key_from_seed(hashlib.sha256(f"{seed}/joiner-key".encode()).digest()),
                      TLS_FP, None, DetRand(f"{seed}/joiner"))
        root = _Global(_Local(host, (), ()), _Local(joiner, (), ()), 0, 0, frozenset())
        self.counts.interleavings = self._visit(root)
        return self.counts

    def _successors(self, state: _Global) -> Iterator[_Global]:
        plan = self.plan
        for role, nxt in ((JOINER, state.next_to_joiner), (HOST, state.next_to_host)):
            sender, receiver = state.local(other(role)), state.local(role)
            if nxt < _sent(sender):
                chain = sender.peer.flow.senders[sender.peer.role]
                data = chain.envelopes[nxt]  # (named by its hash: which message it is)
                local = self._step(receiver, f"r{nxt}:{chain.hashes[nxt][:3].hex()}", data)
                field_ = "next_to_joiner" if role == JOINER else "next_to_host"
                yield _with(state, role, local, **{field_: nxt + 1})
        for role in (HOST, JOINER):
            local = state.local(role)
            for name, action in _choices(local, plan, state.used):
                one_shot = name.startswith(("resign-", "claim-", "dispute-")) and \
                    name != "resign-end"
                used = state.used | {"claim-" + role if name.startswith("claim-") else name} \
                    if one_shot else state.used
                yield _with(state, role, self._step(local, name, None, action), used=used)
        in_flight = state.next_to_joiner < _sent(state.host) or \
            state.next_to_host < _sent(state.joiner)
        if "drop" in plan.extras and "drop" not in state.used and in_flight:
            # the connection drops: what was in flight is lost; on the next one each side
            # sends from the other's `have`, and here one message too many (a stale count)
            to_joiner = max(0, state.joiner.peer.received_count() - 1)
            to_host = max(0, state.host.peer.received_count() - 1)
            yield replace(state, next_to_joiner=to_joiner, next_to_host=to_host,
                          used=state.used | {"drop"})
        if "restore" in plan.extras and "restore" not in state.used:
            for role in (HOST, JOINER):
                local = state.local(role)
                if local.peer.flow.game_id is None:
                    continue  # (nothing is saved before the game has an id)
                back = self._step(local, "restore", None)  # a crash: the connection drops too
                crashed = _with(state, role, back)
                yield replace(crashed,
                              next_to_joiner=crashed.joiner.peer.received_count(),
                              next_to_host=crashed.host.peer.received_count(),
                              used=state.used | {"restore"})

    def _visit(self, state: _Global) -> int:
        key = state.key()
        known = self._paths.get(key)
        if known is not None:
            return known
        self.counts.states += 1
        if self.counts.states > self.limit:
            raise RuntimeError(f"plan {self.plan.name}: more than {self.limit} states")
        total = 0
        quiet = True
        try:
            for nxt in self._successors(state):
                quiet = False
                total += self._visit(nxt)
        except _Broken as exc:
            self._fail(state, str(exc))
            total = 1
        if quiet:
            self.counts.schedules += 1
            self._check_end(state)
            total = 1
        self._paths[key] = total
        return total

    def _fail(self, state: _Global, problem: str) -> None:
        self.counts.failures.append(Failure(self.plan.name, problem,
                                            (state.host.log, state.joiner.log)))

    def _verify(self, local: _Local) -> tuple[Finding, Any]:
        peer = local.peer
        transcript = Transcript(peer.role, peer.public_key, list(local.records))
        key = hashlib.sha256(repr(local.records).encode()).digest()
        found = self._verified.get(key)
        if found is None:
            report = replay(transcript)
            found = self._verified[key] = (report.finding, report.verdict)
        return found

    def _check_end(self, state: _Global) -> None:
        ends = []
        for role in (HOST, JOINER):
            local = state.local(role)
            peer = local.peer
            verdict = peer.flow.conclusion()
            if peer.failed is not None:
                return self._fail(state, f"the {role} failed: {peer.failed}")
            if verdict is None or (not verdict.audit_complete and len(peer.flow.reveals) == 2
                                   and not verdict.claimants):
                return self._fail(state, f"the {role} has no complete verdict: {verdict}")
            if not verdict.clean:
                return self._fail(state, f"the {role} convicted someone: {verdict.describe()}")
            finding, checked = self._verify(local)
            want = Finding.CLAIMED if verdict.claimants else Finding.CLEAN
            if finding is not want or checked is None:
                return self._fail(state, f"verify of the {role}'s transcript: {finding.name}, "
                                  f"{checked.describe() if checked else ''} (live: "
                                  f"{verdict.describe()})")
            ends.append((verdict.termination, verdict.winner, verdict.claimants,
                         verdict.audit_complete, checked.termination, checked.winner))
        if ends[0] != ends[1]:
            return self._fail(state, f"the two sides disagree: {ends[0]} vs {ends[1]}")
        termination, winner, claimants = ends[0][:3]
        name = f"{winner or 'draw'} {termination.value if termination else '-'}" + (
            " (claimed)" if claimants else "")
        self.counts.results[name] = self.counts.results.get(name, 0) + 1
        return None


# -- the plans ---------------------------------------------------------------------------------

def _sq(name: str) -> int:
    return (int(name[1]) - 1) * 9 + "abcdefghi".index(name[0])


def _setups(seed: int) -> tuple[Setup, Setup]:
    rng = random.Random(seed)
    return Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng)


def _challenge_line(setups: tuple[Setup, Setup]) -> tuple[Move, ...]:
    """White's front piece on a file where Black also has a front piece (neither a flag):
    W forward, B forward, W challenges (ply 2)."""
    white, black = setups
    for f in range(9):
        w, b = 2 * 9 + f, 5 * 9 + f
        if w in white.placement and b in black.placement \
                and white.placement[w] is not Rank.FLAG and black.placement[b] is not Rank.FLAG:
            return (Move(w, w + 9), Move(b, b - 9), Move(w + 9, b - 9))
    raise ValueError("no file for a challenge")


def _flag_setups() -> tuple[Setup, Setup, tuple[Move, ...]]:
    """White's flag on e3 walks up an empty e-file into Black's home rows and reaches e8;
    Black shuffles a piece between a7 and a6 meanwhile; then White claims the win."""
    from p2pgotg.rules import FULL_SET, home_squares
    others = [r for r in FULL_SET if r is not Rank.FLAG]
    white_squares = sorted(s for s in home_squares(Side.WHITE) if s != _sq("e3"))[:20]
    white = Setup(Side.WHITE, {**dict(zip(white_squares, others, strict=True)),
                               _sq("e3"): Rank.FLAG})
    empty = {_sq(n) for n in ("e6", "e7", "e8", "a6", "b6", "c6")}
    black_squares = sorted(s for s in home_squares(Side.BLACK) if s not in empty)
    black = Setup(Side.BLACK, dict(zip(black_squares, FULL_SET, strict=True)))
    e = [_sq(f"e{r}") for r in range(3, 9)]
    a7, a6 = _sq("a7"), _sq("a6")
    line: list[Move] = []
    for i in range(5):
        line.append(Move(e[i], e[i + 1]))
        line.append(Move(a7, a6) if i % 2 == 0 else Move(a6, a7))
    return white, black, tuple(line)


def plans(full: bool = False) -> list[Plan]:
    """The scripted games: challenges in both modes, resignations, draws, a flag run, every
    kind of claim and dispute, the audit, dropped connections and crashes. The extras of a
    plan multiply its schedules: the test suite explores them a few at a time; `full`
    combines more of them in one plan (minutes, not seconds)."""
    open_ = RuleOptions()
    timed = RuleOptions(move_seconds=60)
    blind = RuleOptions(challenge_mode=ChallengeMode.BLIND)
    blind_timed = RuleOptions(challenge_mode=ChallengeMode.BLIND, move_seconds=60)
    setups = _setups(1)
    line = _challenge_line(setups)
    flag = _flag_setups()
    flag_setups, flag_line = (flag[0], flag[1]), flag[2]
    immediate = RuleOptions(flag_rule=FlagRule.IMMEDIATE, move_seconds=60)

    def plan(name: str, options: RuleOptions, extras: set[str], more: set[str],
             line_: tuple[Move, ...] = line, **kw: Any) -> Plan:
        chosen = extras | more if full else extras
        label = f"{name} [{', '.join(sorted(chosen))}]"
        return Plan(label, options, kw.pop("setups", setups), line_,
                    extras=frozenset(chosen), **kw)

    return [
        plan("open: a challenge", open_, {"resign"}, {"drop"}),
        plan("open: a challenge, time claims", timed, {"time", "dispute"}, {"drop"}),
        plan("open: a challenge, time claims, a dropped connection", timed, {"time", "drop"},
             set()),
        plan("open: a challenge, abandonment claims", open_, {"abandoned"}, {"dispute"}),
        plan("open: the audit", open_, {"audit", "dispute", "drop"}, set()),
        plan("open: one move, then resignations and claims", timed, {"resign", "time"},
             set(), line[:1]),
        plan("open: a crash", open_, {"restore"}, {"drop"}),
        plan("blind: a challenge", blind, {"resign"}, {"drop"}),
        plan("blind: a challenge, time claims", blind_timed, {"time"}, {"dispute"}),
        plan("blind: a crash", blind, {"restore"}, set()),
        plan("open: a draw offered and accepted", open_, {"resign"}, {"drop"}, line[:2],
             finish="draw", draw_at=1),
        plan("flag run (immediate)", immediate, {"time"}, {"dispute", "resign"}, flag_line,
             setups=flag_setups, finish="flag"),
        plan("coin and setup: claims", open_, {"time", "abandoned"}, {"dispute", "drop"}, ()),
        plan("coin and setup: a dropped connection", open_, {"abandoned", "drop"}, set(), ()),
    ] + ([plan("flag run (safe_or_survive)", open_, {"resign"}, set(), flag_line,
               setups=flag_setups, finish="flag")] if full else [])


def explore(selected: list[Plan] | None = None, limit: int = 200_000) -> Counts:
    total = Counts()
    for plan in selected if selected is not None else plans():
        total.add(Explorer(plan, limit).run())
    return total


def main(argv: list[str] | None = None) -> int:
    """`--full` explores the plans with more extras combined (minutes)."""
    total = Counts()
    for plan in plans(full="--full" in (argv or [])):
        counts = Explorer(plan).run()
        print(f"{plan.name}: {counts.schedules} schedules ({counts.interleavings} "
              f"interleavings, {counts.states} states), {len(counts.failures)} failures")
        total.add(counts)
        for failure in counts.failures[:3]:
            print(f"  FAIL {failure.problem}\n    host:   {' '.join(failure.schedule[0])}"
                  f"\n    joiner: {' '.join(failure.schedule[1])}")
    print(f"all plans: {total.schedules} distinct schedules, {total.interleavings} "
          f"interleavings, {total.states} states; {len(total.failures)} failures")
    print("results: " + ", ".join(f"{k}: {n}" for k, n in sorted(total.results.items())))
    return 1 if total.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
