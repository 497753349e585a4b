"""Random walks of a table of honest seats (SPEC chapter 5) through everything an honest
player, its program's timers, the relay and the network can do.

The two-party walks (`protocol.walks`) pick among the next events of two peers and the wire
between them. A table has a host that relays and two or three joiners, each with its own
link to the host. At every step a walk picks, at random, one of everything that could
happen next: a joiner's next message taken by the host, the host's next forwarded message
taken by a joiner (so messages of different seats cross anywhere), the seat to act in its
own view making a random legal action, a line of chat or a whisper, a resignation, any
claim a seat's own view allows (its timer may fire at any moment: a claim is the
claimant's word), a dispute by the seat claimed against, a dropped link (what was in
flight on it is lost; on the next connection the host sends what the joiner's `have`
lacks, and the joiner resends what the host's count lacks), and a crash (the seat comes
back from its records; a crashed host drops every link). After a number of actions the
seat to act resigns, so every walk ends.

Once nothing more can happen, a walk checks the promise: no honest seat was refused a
message nor its own honest action, every seat ends with the same game (order, actions,
leaves, winners), and `verify` of every seat's file, and of all the files together, gives
that one verdict with no rule broken (clean, or resting on a claim).

    python -m protocol.table_walks --walks 500            # 3 and 4 seats, seeds 0..499
    python -m protocol.table_walks --walks 200 --seats 3 --start 5000
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.errors import LocalProtocolError, ProtocolError
from p2pgotg.protocol.limits import CHATS_IN_A_ROW
from p2pgotg.protocol.referee import Finding
from p2pgotg.protocol.table import TableRecord, TableSeat
from p2pgotg.protocol.table.flow import WITHDRAWN
from p2pgotg.protocol.table.verify import TableFile, judge_table
from p2pgotg.testing.pair import TLS_FP, DetRand, det_key
from protocol.walks import WalkCounts, WalkFailure, explore, explorer_parser

#: How often each kind of step is picked, relative to the others.
WEIGHTS = {"up": 10.0, "down": 10.0, "act": 6.0, "chat": 0.3, "whisper": 0.3,
           "resign": 0.05, "claim": 0.1, "dispute": 0.5, "drop": 0.3, "reconnect": 2.0,
           "crash": 0.05}
#: The kinds whose weight each walk scales at random (swarm testing).
SWARMED = frozenset({"chat", "whisper", "resign", "claim", "drop", "crash"})
MAX_CRASHES = 3


class _Broken(Exception):
    """An honest seat was refused something: the walk failed."""


@dataclass
class Link:
    """One joiner's connection to the host: what is on the wire each way."""

    joiner: int  # index into Walk.seats
    up: list[bytes] = field(default_factory=list)  # joiner -> host, not taken yet
    down: list[bytes] = field(default_factory=list)  # host -> joiner, not taken yet
    forwarded: int = 0  # how much of the host's accepted list went onto `down`
    connected: bool = True


class TableWalk:
    """One random walk of one table: its seats, its links and a random scheduler."""

    def __init__(self, seed: int, seats: int, plies: int = 60) -> None:
        self.seed, self.n, self.plies = seed, seats, plies
        self.rng = random.Random(seed)
        rng = self.rng
        self.options = RuleOptions(seats=seats, start_gap=rng.choice((1, 2)),
                                   short_turn=rng.random() < 0.3,
                                   stuck_loses=rng.random() < 0.3)
        label = f"table-walk/{seed}"
        self.keys = [det_key(f"{label}/key-{i}") for i in range(seats)]
        self.rands = [DetRand(f"{label}/seat-{i}") for i in range(seats)]
        host = TableSeat.host(TOWERS_TABLE, self.keys[0], self.options, TLS_FP, self.rands[0])
        host.start()
        hello = host.take_outgoing()[0]
        self.seats: list[TableSeat] = [host]
        self.hellos: list[bytes] = [hello]
        for i in range(1, seats):
            joiner = TableSeat.joiner(TOWERS_TABLE, self.keys[i], hello, TLS_FP, self.rands[i])
            joiner.start()
            self.seats.append(joiner)
            self.hellos.append(b"")
        self.records: list[list[TableRecord]] = [[] for _ in range(seats)]
        self.links = [Link(i) for i in range(1, seats)]
        self.disputed: set[tuple[int, int, int]] = set()
        self.crashes = 0
        # swarm testing: each walk leans its own way (many claims, or none to speak of)
        self.weights = {k: w * (rng.choice((0.05, 0.3, 1.0, 3.0)) if k in SWARMED else 1.0)
                        for k, w in WEIGHTS.items()}
        self.steps: list[str] = []
        self.seen: dict[str, int] = {}
        self._collect()

    # -- the wire -----------------------------------------------------------------------

    def _collect(self) -> None:
        """Every seat's new records (written before anything is sent, as a driver does),
        its outgoing messages onto its link, and the host's newly accepted messages onto
        every connected link but their author's."""
        for i, seat in enumerate(self.seats):
            self.records[i] += seat.take_records()
        self.seats[0].take_outgoing()  # (the host's own go out through its accepted list)
        for link in self.links:
            joiner = self.seats[link.joiner]
            out = joiner.take_outgoing()
            if out and not self.hellos[link.joiner]:
                self.hellos[link.joiner] = out[0]
            if link.connected:
                link.up += out
                accepted = self.seats[0].accepted
                for author, data in accepted[link.forwarded:]:
                    if author != WITHDRAWN and not self._authored(link, author, data):
                        link.down.append(data)
                link.forwarded = len(accepted)

    def _authored(self, link: Link, author: int, data: bytes) -> bool:
        mine = self.seats[link.joiner].my_seat
        return (author >= 0 and author == mine) or data == self.hellos[link.joiner]

    def _take(self, index: int, data: bytes, what: str) -> None:
        seat = self.seats[index]
        if seat.failed is not None:
            return
        try:
            seat.receive(data)
        except ProtocolError as exc:
            raise _Broken(f"seat {index} refused {what}: {exc}") from None

    def _up(self, link: Link) -> None:
        self._take(0, link.up.pop(0), f"a message of seat {link.joiner}")

    def _down(self, link: Link) -> None:
        self._take(link.joiner, link.down.pop(0), "a message the host relayed")

    def _drop(self, link: Link) -> None:
        """The link goes; a joiner the roster has not seated gives its place back (SPEC
        5.3), as the host does when such a connection ends."""
        link.connected = False
        link.up.clear()
        link.down.clear()
        hello = self.hellos[link.joiner]
        if hello is not None and self.seats[link.joiner].my_seat is None:
            self.seats[0].withdraw_hello(hello)

    def _in_lobby(self, link: Link) -> bool:
        """The joiner's hello waits at the host for the roster."""
        hello, host = self.hellos[link.joiner], self.seats[0]
        return hello is not None and not host.flow.rostered \
            and Envelope.decode(hello).hash in host.flow.pending

    def _reconnect(self, link: Link) -> None:
        """SPEC 5.4: the host sends what the joiner's `have` lacks; the joiner resends its
        own messages from the host's count on."""
        host, joiner = self.seats[0], self.seats[link.joiner]
        link.connected = True
        link.down = [d for d in host.lacking(joiner.have())
                     if not self._authored(link, -1, d)]
        link.forwarded = len(host.accepted)
        me = joiner.my_seat
        if me is None:
            link.up = [self.hellos[link.joiner]]
        else:
            link.up = [m.env for m in joiner.flow.chains[me][host.have()[me]:]]

    def _crash(self, index: int) -> None:
        """The seat's program dies and comes back from its records; its links drop."""
        self.crashes += 1
        old = self.seats[index]
        seat = TableSeat.restore(TOWERS_TABLE, self.keys[index], TLS_FP,
                                 list(self.records[index]), is_host=index == 0,
                                 randbytes=DetRand(f"table-walk/{self.seed}/restored"
                                                   f"-{self.crashes}"))
        if seat.status() != old.status():
            raise _Broken(f"seat {index} restored from its records is not where it was")
        self.seats[index] = seat
        for link in self.links:
            if index in (0, link.joiner):
                self._drop(link)

    # -- what an honest seat may do ----------------------------------------------------

    def _choices(self) -> list[tuple[str, str, Callable[[], None]]]:
        found: list[tuple[str, str, Callable[[], None]]] = []
        for link in self.links:
            name = f"{link.joiner}"
            if link.connected:
                if link.up:
                    found.append(("up", f"{name}>h", partial(self._up, link)))
                if link.down:
                    found.append(("down", f"h>{name}", partial(self._down, link)))
                if self._both_seated(link) and (link.up or link.down):
                    found.append(("drop", f"drop{name}", partial(self._drop, link)))
                elif self._in_lobby(link):
                    found.append(("drop", f"leave{name}", partial(self._drop, link)))
            else:
                found.append(("reconnect", f"back{name}", partial(self._reconnect, link)))
        for index, seat in enumerate(self.seats):
            found += self._honest(index, seat)
            if self.crashes < MAX_CRASHES and seat.my_seat is not None:
                found.append(("crash", f"crash{index}", partial(self._crash, index)))
        return found

    def _both_seated(self, link: Link) -> bool:
        return self.seats[0].flow.rostered and self.seats[link.joiner].my_seat is not None

    def _honest(self, index: int, seat: TableSeat) -> list[tuple[str, str, Callable[[], None]]]:
        status = seat.status()
        me = seat.my_seat
        if seat.failed is not None or me is None or not seat.flow.rostered:
            return []
        found: list[tuple[str, str, Callable[[], None]]] = []
        do = partial(self._act, index)
        if not status.over and me not in status.left:
            if status.seat_to_act == me:
                if status.ply >= self.plies:
                    found.append(("act", f"{index}:resign", partial(do, "resign",
                                                                  TableSeat.resign)))
                else:
                    found.append(("act", f"{index}:act", partial(do, "act", self._action)))
            if status.phase == "play":
                found.append(("resign", f"{index}:resign", partial(do, "resign",
                                                                   TableSeat.resign)))
            if seat.flow.chains[me][-1].chats_in_a_row < CHATS_IN_A_ROW:
                found.append(("chat", f"{index}:chat", partial(
                    do, "chat", partial(TableSeat.chat, text="gg"))))
                to = self.rng.choice([s for s in range(self.n) if s != me])
                found.append(("whisper", f"{index}:w{to}", partial(
                    do, "whisper", partial(TableSeat.whisper, to=to, text=f"psst {to}"))))
            for target, _owed in seat.claimable():
                found.append(("claim", f"{index}:claim{target}", partial(
                    do, "claim", partial(TableSeat.claim, seat=target, reason="abandoned"))))
        state = seat.flow.state
        for claim in [] if state is None else state.claims:
            target = claim.value[0]
            key = (me, claim.seat, claim.seq)
            if target == me and key not in self.disputed:
                found.append(("dispute", f"{index}:dispute", partial(
                    self._dispute, index, key)))
        return found

    def _action(self, seat: TableSeat) -> None:
        game = seat.game.game
        seat.act(self.rng.choice(list(game.legal_actions)))

    def _act(self, index: int, name: str, action: Callable[[TableSeat], object]) -> None:
        try:
            action(self.seats[index])
        except LocalProtocolError as exc:
            raise _Broken(f"seat {index} could not do its honest {name}: {exc}") from None

    def _dispute(self, index: int, key: tuple[int, int, int]) -> None:
        self.disputed.add(key)
        self._act(index, "dispute", partial(TableSeat.dispute, claim=(key[1], key[2])))

    # -- the walk -------------------------------------------------------------------------

    def run(self, max_steps: int = 20_000) -> tuple[str, bytes] | WalkFailure:
        try:
            for _ in range(max_steps):
                choices = self._choices()
                moving = [c for c in choices if c[0] not in ("crash", "drop")]
                if not moving or self._settled():
                    return self._check()
                kind, name, do = self.rng.choices(
                    choices, [self.weights[k] for k, _, _ in choices])[0]
                self.steps.append(name)
                self.seen[kind] = self.seen.get(kind, 0) + 1
                do()
                self._collect()
            return self._failure(f"still going after {max_steps} steps")
        except _Broken as exc:
            return self._failure(str(exc))

    def _settled(self) -> bool:
        """Every seat's game is over and nothing is on the wire or owed to a dispute."""
        if not all(link.connected and not link.up and not link.down for link in self.links):
            return False
        return all(seat.status().over for seat in self.seats)

    def _failure(self, problem: str) -> WalkFailure:
        return WalkFailure(self.seed, self.options, problem, self.steps,
                           f"{self.n} seats")

    def _check(self) -> tuple[str, bytes] | WalkFailure:
        """Settle the wire, then: one game at every seat, one verdict from every file."""
        for link in self.links:
            if not link.connected:
                self._reconnect(link)
        try:
            for _ in range(100_000):
                self._collect()
                busy = [link for link in self.links if link.up or link.down]
                if not busy:
                    break
                link = busy[0]
                (self._up if link.up else self._down)(link)
            self._collect()
        except _Broken as exc:
            return self._failure(str(exc))
        games = set()
        for index, seat in enumerate(self.seats):
            if seat.failed is not None:
                return self._failure(f"seat {index} stopped: {seat.failed}")
            s = seat.status()
            if not s.over:
                return self._failure(f"nothing more can happen, but seat {index}'s game is "
                                     f"not over (phase {s.phase}, ply {s.ply})")
            games.add((s.order, s.ply, tuple(sorted(s.left.items())), s.winners,
                       s.termination))
        if len(games) != 1:
            return self._failure(f"the seats hold different games: {sorted(map(str, games))}")
        files = [TableFile(f"seat-{i}", "host" if i == 0 else "joiner",
                           self.seats[i].public_key, self.records[i])
                 for i in range(self.n)]
        verdicts = set()
        for one in [[f] for f in files] + [files]:
            report = judge_table(TOWERS_TABLE, one)
            names = "+".join(f.name for f in one)
            if report.finding not in (Finding.CLEAN, Finding.CLAIMED):
                return self._failure(f"verify of {names}: {report.finding.name}: "
                                     f"{' / '.join(report.lines)}")
            verdicts.add((report.finding, tuple(x for x in report.lines
                                                if not x.startswith("dispute"))))
        if len(verdicts) != 1:
            return self._failure("the files give different verdicts: "
                                 + " || ".join(" / ".join(v[1]) for v in verdicts))
        finding, lines = verdicts.pop()
        state = self.seats[0].flow.state
        voided = 0 if state is None else len(state.void)
        if voided:
            self.seen["void"] = self.seen.get("void", 0) + voided  # (crossings claims voided)
        digest = hashlib.sha256()
        for records in self.records:
            digest.update(repr(records).encode())
        result = next((x for x in lines if x.startswith("result:")), "result: ?")
        how = result.split("(")[-1].split(")")[0] if "(" in result else result
        return f"{self.n} seats, {how}, {finding.name.lower()}", digest.digest()


def walk(seeds: range, seats: int | None = None, plies: int = 60,
         on_failure: Callable[[WalkFailure], None] | None = None) -> WalkCounts:
    """One walk per seed (3 and 4 seats by turns, unless `seats` is given)."""
    counts = WalkCounts()
    for seed in seeds:
        counts.take(TableWalk(seed, seats or (3 + seed % 2), plies), on_failure)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = explorer_parser("python -m protocol.table_walks", __doc__)
    parser.add_argument("--seats", type=int, choices=(3, 4), help="only this many seats")
    parser.add_argument("--plies", type=int, default=60,
                        help="the seat to act resigns from this action on (default 60)")
    args = parser.parse_args(argv)
    seeds = range(args.start, args.start + args.walks)
    return explore(lambda show: walk(seeds, args.seats, args.plies, show))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
