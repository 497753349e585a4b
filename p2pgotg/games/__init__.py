"""The games this program plays on the protocol kernel, found by name as python-chess finds
a variant: each is a module with its flow (messages and rules of play, `Flow` subclass) and
its peer (duties and actions, `Peer` subclass). A hello that names no game is Game of the
Generals (SPEC 2.4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2pgotg.protocol.envelope import Envelope
from p2pgotg.protocol.flow import Flow
from p2pgotg.protocol.peer import Peer
from p2pgotg.protocol.referee import Referee, Report
from p2pgotg.protocol.transcript import Transcript
from p2pgotg.protocol.wire import WireError


@dataclass(frozen=True)
class GameModule:
    name: str | None  # the hello's `rules` (None: Game of the Generals)
    title: str  # for people
    flow: type[Flow]
    peer: type[Peer]


def _modules() -> dict[str | None, GameModule]:
    from p2pgotg.games.gotg import MODULE as GOTG
    from p2pgotg.games.towers.module import MODULE as TOWERS

    return {module.name: module for module in (GOTG, TOWERS)}


def module_for(name: str | None) -> GameModule:
    """The game a hello's `rules` names (None: Game of the Generals); KeyError if unknown."""
    return _modules()[name]


def rules_of(hello: bytes) -> str | None:
    """The `rules` a hello names, read without checking it (the flow checks it); None when
    it names none, or it is not a hello (the flow says what is wrong with it then)."""
    try:
        body = Envelope.decode(hello).body()
    except WireError:
        return None
    rules = body.get("rules") if body.type == "hello" else None
    return rules if isinstance(rules, str) else None


def flow_for(first_message: bytes) -> Flow:
    """A fresh flow of the game a transcript's first message (the host's hello) names; an
    unknown game's flow is Game of the Generals', which refuses its hello as such."""
    try:
        return module_for(rules_of(first_message)).flow()
    except KeyError:
        return module_for(None).flow()


def referee(role: str, key: bytes) -> Referee:
    """`verify`'s judge of a transcript, whatever its game."""
    return Referee(role, key, flow_for)


def replay(transcript: Transcript) -> Report:
    """Judge a transcript held in memory, whatever its game (see `Referee`)."""
    judge = referee(transcript.role, transcript.key)
    for record in transcript.records:
        judge.add(record)
    return judge.finish(transcript.torn_tail)


FlowFactory = Callable[[bytes], Flow]
