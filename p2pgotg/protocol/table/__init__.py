"""Tables of three and four seats (SPEC chapter 5): one host relays signed messages; every
author keeps its own chain and acknowledges the head of every other author's chain.

Game-generic: a game plugs in its rules (`rules.TableRules`; Towers:
`p2pgotg.games.towers.table`)."""

from p2pgotg.protocol.table.flow import TableFlow, TableViolation
from p2pgotg.protocol.table.seat import TableRecord, TableSeat, TableStatus

__all__ = ["TableFlow", "TableRecord", "TableSeat", "TableStatus", "TableViolation"]
