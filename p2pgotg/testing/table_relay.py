"""A table of sans-IO seats wired through a relay loop, for tests and recorded tables (SPEC
5.4).

`Table` holds a host seat and its joiners; `Table.step(rng)` moves one message along one
link: a joiner's next outgoing message to the host (which takes it and so accepts it), or
the host's next accepted message to one joiner (each link in order, the links interleaved
at random). So every run is one causal delivery order of the many a real network can make,
and a seeded `random.Random` replays it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import key_from_seed
from p2pgotg.games.towers.rules.options import RuleOptions
from p2pgotg.games.towers.table import TOWERS_TABLE
from p2pgotg.protocol.events import Event
from p2pgotg.protocol.table import TableRecord, TableSeat
from p2pgotg.protocol.table.flow import WITHDRAWN

TLS = bytes(range(32))


@dataclass
class Link:
    """One joiner's connection: what the joiner sent and the host has not taken yet, and
    how far the host's accepted list has been forwarded to it."""

    joiner: TableSeat
    up: list[bytes] = field(default_factory=list)
    forwarded: int = 0
    #: messages the relay will not forward to this joiner (withholding tests)
    withhold: Callable[[int, bytes], bool] = lambda seat, data: False


@dataclass
class Table:
    host: TableSeat
    links: list[Link]
    records: dict[int, list[TableRecord]] = field(default_factory=dict)  # by id(seat)
    events: dict[int, list[Event]] = field(default_factory=dict)

    @property
    def seats(self) -> list[TableSeat]:
        return [self.host, *(link.joiner for link in self.links)]

    def by_seat(self) -> dict[int, TableSeat]:
        out = {}
        for seat in self.seats:
            assert seat.my_seat is not None
            out[seat.my_seat] = seat
        return out

    def collect(self) -> None:
        """Take every seat's new records and outgoing messages (write-ahead order: the
        records first, as a driver writes them before it sends)."""
        for seat in self.seats:
            self.records.setdefault(id(seat), []).extend(seat.take_records())
        for link in self.links:
            link.up += link.joiner.take_outgoing()
        self.host.take_outgoing()  # (the host's own are in its accepted list)

    def moves(self) -> list[tuple[str, Link]]:
        out = []
        for link in self.links:
            if link.up:
                out.append(("up", link))
            if self._next_down(link) is not None:
                out.append(("down", link))
        return out

    def _next_down(self, link: Link) -> int | None:
        accepted = self.host.accepted
        while link.forwarded < len(accepted):
            seat, data = accepted[link.forwarded]
            mine = link.joiner.my_seat
            if (seat >= 0 and seat == mine) or data == link.joiner._my_hello \
                    or seat == WITHDRAWN:
                link.forwarded += 1  # (never back to its author, nor a place let go)
                continue
            return link.forwarded
        return None

    def step(self, rng: random.Random) -> bool:
        """Deliver one message on a link chosen by `rng`; False when nothing moves."""
        self.collect()
        moves = self.moves()
        if not moves:
            return False
        kind, link = rng.choice(moves)
        if kind == "up":
            data = link.up.pop(0)
            self._give(self.host, data)
        else:
            at = self._next_down(link)
            assert at is not None
            link.forwarded += 1
            seat, data = self.host.accepted[at]
            if not link.withhold(seat, data):
                self._give(link.joiner, data)
        self.collect()
        return True

    def _give(self, seat: TableSeat, data: bytes) -> None:
        self.events.setdefault(id(seat), []).extend(seat.receive(data))

    def settle(self, rng: random.Random, limit: int = 100_000) -> None:
        for _ in range(limit):
            if not self.step(rng):
                return
        raise AssertionError("the relay loop did not settle")


def keys(n: int, salt: int = 0) -> list[Ed25519PrivateKey]:
    return [key_from_seed(bytes([salt, i]) * 16) for i in range(n)]


def make_table(n: int, rng: random.Random, options: RuleOptions | None = None,
               salt: int = 0) -> Table:
    """A host and n-1 joiners whose hellos are made; nothing delivered yet."""
    options = options or RuleOptions(seats=n)
    ks = keys(n, salt)
    host = TableSeat.host(TOWERS_TABLE, ks[0], options, TLS, rng.randbytes)
    host.start()
    hello = host.take_outgoing()[0]
    links = []
    for key in ks[1:]:
        joiner = TableSeat.joiner(TOWERS_TABLE, key, hello, TLS, rng.randbytes)
        joiner.start()
        links.append(Link(joiner))
    table = Table(host, links)
    table.collect()
    return table


def play_random(table: Table, rng: random.Random, max_steps: int = 200_000,
                chooser: Callable[[TableSeat, random.Random], bool] | None = None) -> None:
    """Deliver at random and let each seat to act (in its own view) act at random, with a
    random legal action, until nothing moves and the game is over."""
    for _ in range(max_steps):
        could = act_at_random(table, rng, chooser)
        if not table.step(rng) and not could:
            return
    raise AssertionError("the game did not end")


def act_at_random(table: Table, rng: random.Random,
                  chooser: Callable[[TableSeat, random.Random], bool] | None = None) -> bool:
    """Each seat to act (in its own view) acts, with a random legal action unless `chooser`
    acts for it, or now and then lets the network move first; whether any seat was to act."""
    could = False
    for seat in table.seats:
        status = seat.status()
        if status.phase == "play" and status.seat_to_act == seat.my_seat:
            could = True
            if rng.random() < 0.5:
                continue  # (let the network move first, now and then)
            if chooser is None or not chooser(seat, rng):
                seat.act(rng.choice(list(seat.game.game.legal_actions)))
    return could


def file_bytes(table: Table, seat: TableSeat) -> bytes:
    """`seat`'s file as its driver writes it (SPEC 5.9): header, then its records."""
    from p2pgotg.protocol.table.transcript import encode_table_header, encode_table_record

    table.collect()
    role = "host" if seat.is_host else "joiner"
    return encode_table_header(role, seat.public_key) + b"".join(
        encode_table_record(r) for r in table.records.get(id(seat), []))


def write_files(table: Table, folder: Path) -> list[Path]:
    """Each seat's file (`file_bytes`); the paths in seat order."""
    paths = []
    for seat in table.seats:
        path = folder / f"seat-{seat.my_seat}.gtr"
        path.write_bytes(file_bytes(table, seat))
        paths.append(path)
    return sorted(paths, key=lambda p: p.name)
