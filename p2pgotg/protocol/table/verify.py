"""`verify FILE [FILE ...]` for tables (SPEC 5.9): one table flow takes the messages of
every file, file after file, each in its own order (which respects the acks, 5.4). Two
different bodies at one place of one author's chain, in one file or across two, are that
author's signed `equivocation`, whoever holds them; then the game is judged as every seat
judged it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from p2pgotg.crypto import equal
from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.referee import Finding
from p2pgotg.protocol.table.coin import seat_coin_commitment
from p2pgotg.protocol.table.flow import TableFlow, TableViolation
from p2pgotg.protocol.table.rules import TableRules
from p2pgotg.protocol.table.seat import TableRecord
from p2pgotg.protocol.transcript import merged_secrets

COLOURS = ("Red", "Blue", "Green", "Yellow")


@dataclass(frozen=True)
class TableFile:
    """One seat's file as read: the header's role and key, its records, a torn tail."""

    name: str
    role: str
    key: bytes
    records: Sequence[TableRecord]
    torn_tail: bool = False
    seat: int | None = None  # its `seat` record (SPEC 5.9), once the roster gave one

    @property
    def secrets(self) -> dict[str, bytes]:
        return merged_secrets(self.records)

    @property
    def join(self) -> bytes:
        """The join secret its seat comes back with (b"" when none is saved)."""
        return self.secrets.get("join", b"")

    @property
    def port(self) -> int | None:
        """The host's listening port as saved, so its invites stay good (SPEC 3.5)."""
        saved = self.secrets.get("port")
        return None if saved is None else int.from_bytes(saved, "big")


@dataclass
class TableReport:
    finding: Finding
    lines: list[str] = field(default_factory=list)  # what verify prints, in order
    flow: TableFlow | None = None


def judge_table(rules: TableRules, files: Sequence[TableFile]) -> TableReport:
    """The verdict of one table from the files of one or more of its seats."""
    flow = TableFlow(rules)
    for f in files:
        problem = _take_file(flow, f)
        if problem:
            return TableReport(Finding.UNREADABLE, [f"cannot verify: {f.name}: {problem}"],
                               flow)
        if flow.violation is not None:
            break
    return _verdict(flow, files)


def _take_file(flow: TableFlow, f: TableFile) -> str:
    """Feed one file's messages; a problem that makes it unreadable, or ""."""
    for record in f.records:
        if record[0] != "msg":
            continue
        _, seat, data = record
        try:
            flow.process(data)
        except TableViolation as v:
            if not v.signed:
                return (f"a message of {v.role}: {v.detail} ({v.rule}; the file is damaged, "
                        "edited or forged)")
            return ""
        if seat is not None:
            taken = flow.by_hash.get(Envelope.decode(data).hash)
            if taken is not None and taken.seat != seat:
                return f"a record says seat {seat} wrote a message of seat {taken.seat}"
    if f.torn_tail:
        return ("damaged tail: the last record is cut short, as a crash while writing "
                "leaves it (it was never sent, and proves nothing about anyone)")
    return _owner_problem(flow, f)


def _owner_problem(flow: TableFlow, f: TableFile) -> str:
    """The header's key must be a seat's, and its saved coin secret open its hello."""
    if not flow.rostered:
        return ""
    seat = flow.seat_of_key(f.key)
    if seat is None:
        return "the header's key is no seat's key at this table"
    coin = f.secrets.get("coin")
    if coin is not None:
        hello = flow.chains[seat][0].body
        nonce = flow.chains[0][0].body["nonce"]
        if not equal(seat_coin_commitment(nonce, f.key, coin), hello["coin"]):
            return "the owner's saved coin secret does not open its hello's commitment"
    return ""


def who(flow: TableFlow, seat: int | None) -> str:
    """`Blue (seat 2)` once the order is known, `seat 2` before."""
    if seat is None:
        return "a joiner not seated"
    state = flow.state
    if state is None or state.order is None:
        return f"seat {seat}"
    return f"{COLOURS[state.order.index(seat)]} (seat {seat})"


def _verdict(flow: TableFlow, files: Sequence[TableFile]) -> TableReport:
    lines = []
    state = flow.state
    if flow.game_id is not None:
        lines.append(f"game id:    {flow.game_id.hex()}")
    if state is not None and state.order is not None:
        lines.append("order:      " + ", ".join(who(flow, s) for s in state.order))
    v = flow.violation
    if v is not None:
        seat = v.seat
        lines.append(f"verdict:    {who(flow, seat)} broke rule {v.rule} in its message "
                     f"{v.seq}: {v.detail}")
        return TableReport(Finding.VIOLATION, lines, flow)
    if state is None or not state.over:
        ply = "" if state is None or state.game is None else f" at ply {state.ply}"
        lines.append(f"verdict:    the table's game is not over{ply}: nothing is proven yet")
        return TableReport(Finding.UNFINISHED, lines, flow)
    termination, winners = flow.ending(state)
    how = (termination or "").replace("_", " ")
    if state.game is not None and state.game.over:
        words = state.game.describe()
        won = " and ".join(who(flow, s) for s in winners)
        result = f"{won} {'wins' if len(winners) == 1 else 'win'} ({how})" if winners \
            else f"no winner ({how})"
        lines.append(f"result:     {result}; {words}")
    else:
        lines.append(f"result:     no winner: the game ended before the turn order ({how})")
    for seat, termination_ in state.left.items():
        lines.append(f"left:       {who(flow, seat)} by {termination_.replace('_', ' ')}")
    for claim in state.claims:
        target, _ = claim.value
        lines.append(f"claim:      {who(flow, claim.seat)} claimed against {who(flow, target)}"
                     " (its word: a claim about time or absence no file can prove)")
    for seat, (claimant, seq) in flow.disputes:
        lines.append(f"dispute:    {who(flow, seat)} disputes the claim of "
                     f"{who(flow, claimant)} (its message {seq})")
    finding = Finding.CLAIMED if state.claims else Finding.CLEAN
    return TableReport(finding, lines, flow)
