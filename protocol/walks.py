"""Random walks of two honest peers through every action an honest player or network has.

The scripted plans of `schedules` explore every delivery order of a few fixed games, so
they can only find what their scripts contain. A walk scripts nothing: at every step it
picks, at random, one of everything that could happen next, for both sides and the wire:
deliver the next message either way (so messages cross anywhere), a random legal move (a
challenge included, a draw offer riding on it, a flag claim riding on a flag's arrival), a
draw accepted or declined, a flag claimed, chat, a resignation, any claim that side's own
view allows (a timer may fire at any moment), a dispute of a claim against it, a dropped
connection (what was in flight is lost, each side resends from the other's `have`, now and
then one message too many) and a crash (the side comes back from its transcript). After a
number of plies the side to move resigns, so every walk ends.

Once nothing more can happen, a walk checks the promise: neither honest side was refused a
message nor its own honest action, both sides' verdicts are the same, and `verify` of the
host's file and of the joiner's file both give that same verdict with no rule broken
(exit 0, or exit 4 when the result rests on a claim).

    python -m protocol.walks --walks 2000          # open and blind, seeds 0..1999
    python -m protocol.walks --walks 500 --start 7000 --mode blind
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from p2pgotg.games import replay
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.games.towers.peer import TowersPeer
from p2pgotg.games.towers.rules.options import CaptureRule
from p2pgotg.games.towers.rules.options import RuleOptions as TowersOptions
from p2pgotg.protocol.errors import LocalProtocolError, RemoteProtocolError
from p2pgotg.protocol.flow import HOST, JOINER, Phase, other
from p2pgotg.protocol.limits import CHATS_IN_A_ROW
from p2pgotg.protocol.peer import Action, Peer, Record
from p2pgotg.protocol.referee import Finding
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.protocol.verdict import Verdict
from p2pgotg.rules import ChallengeMode, FlagRule, Rank, RuleOptions, Setup, Side
from p2pgotg.testing.pair import TLS_FP, DetRand, det_key
from protocol.schedules import claim_allowed


@dataclass
class WalkFailure:
    seed: int
    options: Any
    problem: str
    steps: list[str]
    label: str = ""  # the options in words

    def describe(self, last: int = 40) -> str:
        shown = self.steps[-last:]
        cut = "... " if len(self.steps) > last else ""
        return (f"walk {self.seed} ({self.label}): {self.problem}\n"
                f"  steps: {cut}{' | '.join(shown)}")


class AnyWalk(Protocol):
    """A walk of either explorer: run once; its steps and how often each kind ran."""

    steps: list[str]
    seen: dict[str, int]

    def run(self) -> tuple[str, bytes] | WalkFailure: ...


@dataclass
class WalkCounts:
    walks: int = 0
    steps: int = 0
    end_states: set[bytes] = field(default_factory=set)  # distinct pairs of final files
    results: dict[str, int] = field(default_factory=dict)
    failures: list[WalkFailure] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)  # how often each kind of step ran

    def add(self, other_: WalkCounts) -> None:
        self.walks += other_.walks
        self.steps += other_.steps
        self.end_states |= other_.end_states
        self.failures += other_.failures
        for mine, theirs in ((self.results, other_.results), (self.seen, other_.seen)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n

    def take(self, one: AnyWalk,
             on_failure: Callable[[WalkFailure], None] | None = None) -> None:
        """Run `one` walk to its end and add it: its steps, how often each kind of step ran,
        and how it ended (a result's name and a digest of the final files, or a failure,
        handed to `on_failure` too). The two-party and the table explorers tally alike."""
        outcome = one.run()
        self.walks += 1
        self.steps += len(one.steps)
        for kind, n in one.seen.items():
            self.seen[kind] = self.seen.get(kind, 0) + n
        if isinstance(outcome, WalkFailure):
            self.failures.append(outcome)
            if on_failure is not None:
                on_failure(outcome)
            return
        name, digest = outcome
        self.end_states.add(digest)
        self.results[name] = self.results.get(name, 0) + 1

    def summary(self, took: float) -> list[str]:
        """The lines an explorer ends with: how many walks and what they found."""
        return [f"{self.walks} walks ({self.steps} steps, {took:.0f} s), "
                f"{len(self.end_states)} distinct end states, {len(self.failures)} failures",
                "steps: " + ", ".join(f"{k} {n}" for k, n in sorted(self.seen.items())),
                "results: " + ", ".join(f"{k}: {n}" for k, n in sorted(self.results.items()))]


def explorer_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """An explorer's command line: how many walks, from which seed (its own options added)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--walks", type=int, default=200, help="how many walks")
    parser.add_argument("--start", type=int, default=0, help="the first walk's seed")
    return parser


def explore(walks: Callable[[Callable[[WalkFailure], None]], WalkCounts],
            shown: int = 5) -> int:
    """Run an explorer's walks (`walks(on_failure)`), printing the first `shown` failures as
    they are found and the tallies at the end; the exit code (1: something failed)."""
    began = time.perf_counter()
    found = 0

    def show(failure: WalkFailure) -> None:
        nonlocal found
        if found < shown:
            print(f"FAIL {failure.describe()}", flush=True)
        found += 1

    counts = walks(show)
    for line in counts.summary(time.perf_counter() - began):
        print(line)
    return 1 if counts.failures else 0


class _Stopped(Exception):
    """Both sides have their verdict and nothing is in flight: the walk may end here."""


class _Broken(Exception):
    """An honest side was refused a message, or could not do its honest action."""


def _swarm(rng: random.Random) -> dict[str, float]:
    """How willing each kind of step is in one walk. Every walk draws its own mix (swarm
    testing: Groce et al., 2012), some with a kind switched off, so that some walks are
    long games with rare endings and others end at once with everything crossing."""
    weights = {"deliver": rng.uniform(2.0, 20.0), "decide": 6.0, "stop": 4.0,
               # how often the side to move runs its Flag forward (flag runs and claims)
               "flag_run": rng.choice((0.0, 0.0, 0.3, 0.8)),
               # how much likelier endings are while a challenge waits for its answer (where
               # an ending crosses the most: the defender's reply and its next move)
               "at_challenge": rng.choice((1.0, 10.0, 30.0))}
    for kind, base in (("chat", 0.05), ("resign", 0.02), ("claim", 0.03),
                       ("dispute", 0.5), ("drop", 0.05), ("crash", 0.01), ("draw", 0.03)):
        weights[kind] = 0.0 if rng.random() < 0.25 else base * 10 ** rng.uniform(-1.0, 1.5)
    return weights


Choices = list[tuple[str, str, Action[Any]]]
#: Either game's side to act, past the walk's ply limit: it resigns, and nothing else.
RESIGN_AT_LIMIT: tuple[str, str, Action[Any]] = ("decide", "resign-at-limit",
                                                 lambda p: p.resign())


def draw_answers(peer: Peer) -> Choices:
    """Either game's answers to a draw offer made to `peer` (none without one)."""
    if not peer.draw_offered_to_me:
        return []
    return [("decide", "accept-draw", lambda p: p.accept_draw()),
            ("decide", "decline-draw", lambda p: p.decline_draw())]


class Plan:
    """A game's part of a walk: its peers and options, and what its player decides (its
    setup and its turns); everything else a walk does is the kernel's, the same for every
    game."""

    peer: type[Peer]
    plies = 40  # the side to move resigns once the game is this long

    def options(self, seed: int, mode: str | None) -> Any:
        raise NotImplementedError

    def label(self, options: Any) -> str:
        raise NotImplementedError

    def decisions(self, walk: Walk, peer: Any) -> Choices:
        """What `peer`'s player may decide now (its setup, its turn's actions, an answer
        to a draw offer), each a random honest choice."""
        raise NotImplementedError

    def answer_waits(self, peer: Any) -> bool:
        """Whether an answer is owed inside a turn (a challenge): endings are likelier then,
        where they cross the most."""
        return False


class GotgPlan(Plan):
    peer = GotgPeer

    def label(self, options: RuleOptions) -> str:
        parts = [options.challenge_mode.value, options.flag_rule.value]
        if options.move_seconds or options.clock_seconds:
            parts.append("timed")
        if options.two_squares:
            parts.append("two-squares")
        if options.chasing:
            parts.append("chasing")
        return ", ".join(parts)

    def options(self, seed: int, mode: str | None = None) -> RuleOptions:
        """Both modes, every flag rule, with and without a clock (a clock makes time claims
        against a side to move possible)."""
        rng = random.Random(f"options/{seed}")
        blind = rng.random() < 0.5 if mode is None else mode == "blind"
        return RuleOptions(
            flag_rule=rng.choice(list(FlagRule)),
            challenge_mode=ChallengeMode.BLIND if blind else ChallengeMode.OPEN,
            move_seconds=rng.choice((0, 60)),
            two_squares=rng.random() < 0.3,
            chasing=rng.random() < 0.2,
        )

    def answer_waits(self, peer: GotgPeer) -> bool:
        return peer.flow.pending is not None

    def decisions(self, walk: Walk, peer: GotgPeer) -> Choices:
        found: Choices = []
        if peer.flow.phase is Phase.SETUP and peer.own_setup is None and peer.side is not None:
            setup = Setup.random(peer.side, random.Random(walk.rng.random()))
            found.append(("decide", "commit", lambda p: p.commit_setup(setup)))
        view = peer.view
        if view is not None and peer.my_turn:
            found += self._turn(walk, peer, view)
        return found

    def _turn(self, walk: Walk, peer: GotgPeer, view: Any) -> Choices:
        """The side to move: past the ply limit it resigns; otherwise a random legal move
        (challenges preferred a little, a draw offer now and then, a flag claim riding on
        the flag's arrival when the rules allow it), an answer to a draw offer, or a claim
        of its flag's run."""
        rng, side = walk.rng, view.turn
        if view.ply >= walk.plies:
            return [RESIGN_AT_LIMIT]
        found = draw_answers(peer)
        flag = next((q for q in view.pieces(side) if view.rank_of(q) is Rank.FLAG), None)
        if flag is not None and view.flag_claim_problem(side, flag) is None:
            found.append(("decide", "claim-flag", lambda p: p.claim_flag(flag)))
        moves = view.legal_moves
        if moves:
            challenges = [m for m in moves if view.is_challenge(m)]
            pool = challenges if challenges and rng.random() < 0.5 else moves
            forward = 1 if side is Side.WHITE else -1
            runs = [m for m in moves if view.piece_at(m.from_square) == flag
                    and not view.is_challenge(m) and (m.to_square - m.from_square) * forward > 0]
            if runs and rng.random() < walk.weights["flag_run"]:
                pool = runs
            move = rng.choice(pool)
            offer = rng.random() < walk.weights["draw"]
            claim = None
            piece = view.piece_at(move.from_square)
            if piece == flag and not view.is_challenge(move):
                view.push(move)
                if not view.is_over and view.flag_claim_problem(side, flag) is None:
                    claim = flag
                view.pop()
            found.append(("decide", f"move {move.text()}{' =?' if offer else ''}"
                          f"{' +flag' if claim else ''}",
                          partial(GotgPeer.move, move=move, offer_draw=offer, claim=claim)))
        return found



class TowersPlan(Plan):
    """Towers for two: both variants, the rule options that change what is legal, with and
    without a clock. Its games are longer in messages (an action each): the side to act
    resigns later."""

    peer = TowersPeer
    plies = 120

    def label(self, options: TowersOptions) -> str:
        return options.describe() + (", timed" if options.clock_seconds or
                                     options.turn_seconds else "")

    def options(self, seed: int, mode: str | None = None) -> TowersOptions:
        rng = random.Random(f"towers-options/{seed}")
        teams = rng.random() < 0.4 if mode is None else mode == "teams"
        return TowersOptions(
            seats=4 if teams else 2, teams=teams,
            capture=rng.choice(list(CaptureRule)),
            climb_limit=rng.choice((0, 0, 1, 2)), start_gap=rng.choice((1, 2, 2)),
            short_turn=rng.random() < 0.3, stuck_loses=rng.random() < 0.3,
            turn_seconds=rng.choice((0, 60)))

    def decisions(self, walk: Walk, peer: TowersPeer) -> Choices:
        view, rng = peer.view, walk.rng
        if view is None or not peer.my_turn:
            return []
        if view.ply >= walk.plies:
            return [RESIGN_AT_LIMIT]
        found = draw_answers(peer)
        action = rng.choice(view.legal_actions)
        offer = not peer.in_setup and rng.random() < walk.weights["draw"]
        found.append(("decide", f"{action.text()}{' =?' if offer else ''}",
                      partial(TowersPeer.act, action=action, offer_draw=offer)))
        return found


PLANS: dict[str, Plan] = {"generals": GotgPlan(), "towers": TowersPlan()}


def walk_options(seed: int, mode: str | None = None) -> RuleOptions:
    """The rule options of Game of the Generals walk `seed` (see `GotgPlan.options`)."""
    options: RuleOptions = PLANS["generals"].options(seed, mode)
    return options


class Walk:
    """One random walk: two honest peers, the wire between them, and a random scheduler."""

    def __init__(self, seed: int, options: Any, plies: int | None = None,
                 plan: Plan | None = None) -> None:
        self.plan = plan or PLANS["generals"]
        self.seed, self.options = seed, options
        self.plies = self.plan.plies if plies is None else plies
        self.rng = random.Random(seed)
        label = f"walk/{seed}"
        self.keys = {role: det_key(f"{label}/{role}-key") for role in (HOST, JOINER)}
        self.peers = {
            HOST: self.plan.peer(HOST, self.keys[HOST], TLS_FP, options, DetRand(f"{label}/host")),
            JOINER: self.plan.peer(JOINER, self.keys[JOINER], TLS_FP, None,
                                   DetRand(f"{label}/joiner")),
        }
        self.records: dict[str, list[Record]] = {HOST: [], JOINER: []}
        self.next_to: dict[str, int] = {HOST: 0, JOINER: 0}  # sender's seq next on the wire
        self.crashes = 0
        self.steps: list[str] = []
        self.seen: dict[str, int] = {}
        self.weights = _swarm(self.rng)

    # -- what can happen now ---------------------------------------------------------

    def _in_flight(self, to: str) -> bool:
        sender = self.peers[other(to)]
        return self.next_to[to] < len(sender.flow.senders[sender.role].envelopes)

    def _options(self) -> list[tuple[str, str, Callable[[], None]]]:
        """Everything that could happen next: (kind, name, do)."""
        found: list[tuple[str, str, Callable[[], None]]] = []
        for to in (HOST, JOINER):
            if self._in_flight(to):
                found.append(("deliver", f"->{to[0]}{self.next_to[to]}",
                              partial(self._deliver, to)))
        for role in (HOST, JOINER):
            peer = self.peers[role]
            for kind, name, action in self._honest(peer):
                found.append((kind, f"{role[0]}:{name}", partial(self._act, role, name, action)))
        if any(self._in_flight(to) for to in (HOST, JOINER)):
            found.append(("drop", "drop", self._drop))
        if not any(self._in_flight(to) for to in (HOST, JOINER)) and all(
                peer.flow.conclusion() is not None for peer in self.peers.values()):
            found.append(("stop", "stop", self._stop))  # (chat and crashes could go on)
        for role in (HOST, JOINER):
            if self.peers[role].flow.game_id is not None and self.crashes < 3:
                found.append(("crash", f"{role[0]}:crash", partial(self._crash, role)))
        return found

    def _honest(self, peer: Peer) -> Choices:
        """What an honest player (or its driver's timers) may do in its own view."""
        flow, role = peer.flow, peer.role
        found: Choices = []
        if peer.failed is not None:
            return found
        if role == HOST and not flow.hellos:
            return [("decide", "start", lambda p: p.start())]
        if role == JOINER and HOST in flow.hellos and JOINER not in flow.hellos:
            return [("decide", "accept", lambda p: p.accept())]
        found += self.plan.decisions(self, peer)
        if flow.game_id is not None and flow.senders[role].chats_in_a_row < CHATS_IN_A_ROW:
            found.append(("chat", "chat", lambda p: p.chat("gg")))
        if flow.phase is Phase.PLAY and not flow.is_over:
            found.append(("resign", "resign", lambda p: p.resign()))
        for reason in ("time", "abandoned", "audit"):
            if claim_allowed(peer, reason):
                found.append(("claim", f"claim-{reason}", partial(Peer.claim_forfeit,
                                                                  reason=reason)))
        for claim in sorted(flow.claims[peer.other_role]):
            if role not in flow.disputes:
                found.append(("dispute", f"dispute{claim}", partial(Peer.dispute, claim=claim)))
        return found

    # -- doing it -------------------------------------------------------------------------

    def _save(self, role: str) -> None:
        peer = self.peers[role]
        peer.data_to_send()  # (the wire is read from the senders' chains)
        self.records[role] += peer.take_records()

    def _deliver(self, to: str) -> None:
        sender, receiver = self.peers[other(to)], self.peers[to]
        data = sender.flow.senders[sender.role].envelopes[self.next_to[to]]
        self.next_to[to] += 1
        if receiver.failed is not None:
            return
        try:
            receiver.receive(data)
        except RemoteProtocolError as exc:
            self._save(to)
            raise _Broken(f"the {to} refused a message of the honest {other(to)}: "
                          f"{exc}") from None
        self._save(to)

    def _act(self, role: str, name: str, action: Action[Any]) -> None:
        try:
            action(self.peers[role])
        except LocalProtocolError as exc:
            raise _Broken(f"the {role} could not do its honest action {name}: {exc}") \
                from None
        self._save(role)

    def _drop(self) -> None:
        """The connection drops; on the next one each side resends from the other's
        `have`, now and then one message too many (a stale count)."""
        for to in (HOST, JOINER):
            have = self.peers[to].received_count()
            self.next_to[to] = max(0, have - (1 if self.rng.random() < 0.3 else 0))

    def _stop(self) -> None:
        raise _Stopped

    def _crash(self, role: str) -> None:
        """The process dies and comes back from its transcript; the connection drops."""
        old = self.peers[role]
        self.crashes += 1
        peer = self.plan.peer.restore(role, self.keys[role], TLS_FP, list(self.records[role]),
                            self.options if role == HOST else None,
                            DetRand(f"walk/{self.seed}/{role}/restored{self.crashes}"))
        assert peer.flow.transcript == old.flow.transcript
        self.peers[role] = peer
        self._save(role)
        for to in (HOST, JOINER):
            self.next_to[to] = self.peers[to].received_count()

    def run(self, max_steps: int = 4000) -> tuple[str, bytes] | WalkFailure:
        """Walk until nothing more can happen; the result's name and a digest of both final
        files, or the failure found."""
        try:
            for _ in range(max_steps):
                options = self._options()
                if not options:
                    return self._check()
                pending = any(self.plan.answer_waits(peer) for peer in self.peers.values())
                boost = self.weights["at_challenge"] if pending else 1.0
                weights = [self.weights[kind] * (boost if kind in ("resign", "claim") else 1.0)
                           for kind, _, _ in options]
                if not any(weights):
                    return self._check()
                kind, name, do = self.rng.choices(options, weights)[0]
                self.steps.append(name)
                self.seen[kind] = self.seen.get(kind, 0) + 1
                do()
            return self._failure(f"still going after {max_steps} steps")
        except _Stopped:
            return self._check()
        except _Broken as exc:
            return self._failure(str(exc))

    # -- the promise ----------------------------------------------------------------------

    def _failure(self, problem: str) -> WalkFailure:
        return WalkFailure(self.seed, self.options, problem, self.steps,
                           self.plan.label(self.options))

    def _check(self) -> tuple[str, bytes] | WalkFailure:
        live: dict[str, Verdict] = {}
        digest = hashlib.sha256()
        for role in (HOST, JOINER):
            peer = self.peers[role]
            if peer.failed is not None:
                return self._failure(f"the {role} failed: {peer.failed}")
            verdict = peer.flow.conclusion()
            if verdict is None:
                return self._failure(f"nothing more can happen, but the {role} has no "
                                     f"verdict (phase {peer.flow.phase.value})")
            if not verdict.clean:
                return self._failure(f"the {role} convicted someone: {verdict.describe()}")
            report = replay(Transcript(role, peer.public_key, list(self.records[role])))
            want = Finding.CLAIMED if verdict.claimants else Finding.CLEAN
            if report.finding is not want or report.verdict != verdict:
                got = report.verdict.describe() if report.verdict else report.problem
                return self._failure(f"verify of the {role}'s file: {report.finding.name}, "
                                     f"{got} (live: {verdict.describe()})")
            live[role] = verdict
            for record in self.records[role]:
                digest.update(repr(record).encode())
        if live[HOST] != live[JOINER]:
            return self._failure(f"the two files give two verdicts: host's "
                                 f"{live[HOST].describe()}; joiner's "
                                 f"{live[JOINER].describe()}")
        verdict = live[HOST]
        how = verdict.termination.value if verdict.termination else "-"
        name = f"{verdict.winner or 'draw'} {how}" + (" (claimed)" if verdict.claimants
                                                     else "")
        return name, digest.digest()


def walk(seeds: range, mode: str | None = None, plies: int | None = None,
         on_failure: Callable[[WalkFailure], None] | None = None,
         game: str = "generals") -> WalkCounts:
    """Run one walk per seed of `game` ("generals" or "towers"); the counts, with every
    failure found."""
    counts = WalkCounts()
    plan = PLANS[game]
    for seed in seeds:
        counts.take(Walk(seed, plan.options(seed, mode), plies, plan), on_failure)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = explorer_parser("python -m protocol.walks", __doc__)
    parser.add_argument("--game", choices=sorted(PLANS), default="generals",
                        help="the game the walks play (default: generals)")
    parser.add_argument("--mode", choices=("open", "blind", "teams", "two"),
                        help="only this mode (generals: open or blind; towers: teams or two)")
    parser.add_argument("--plies", type=int, default=None,
                        help="the side to move resigns at this ply (default: 40 for "
                        "generals, 120 actions for towers)")
    args = parser.parse_args(argv)
    seeds = range(args.start, args.start + args.walks)
    return explore(lambda show: walk(seeds, args.mode, args.plies, show, args.game))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
