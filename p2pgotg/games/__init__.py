"""The games this program plays on the protocol kernel, found by name as python-chess finds
a variant: each is a module with its flow (messages and rules of play, `Flow` subclass) and
its peer (duties and actions, `Peer` subclass). A hello that names no game is Game of the
Generals (SPEC 2.4)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
    options: type  # its rule options' class: a host's options say which game it hosts
    #: Its bot as a seat, from its randomness and level: an object whose `step(peer)`
    #: says what to do next (imported when first asked for: reading a file needs no bot).
    bot_seat: Callable[[random.Random, str], Any]


def _modules() -> dict[str | None, GameModule]:
    from p2pgotg.games.gotg import MODULE as GOTG
    from p2pgotg.games.towers.module import MODULE as TOWERS

    return {module.name: module for module in (GOTG, TOWERS)}


def module_for(name: str | None) -> GameModule:
    """The game a hello's `rules` names (None: Game of the Generals); KeyError if unknown."""
    return _modules()[name]


def module_of(options: Any) -> GameModule:
    """The game whose rule options `options` are (a host's choice of game)."""
    for module in _modules().values():
        if isinstance(options, module.options):
            return module
    raise TypeError(f"{type(options).__name__} are the options of no game")


def module_of_peer(peer: Peer) -> GameModule:
    """The game a peer plays."""
    return module_for(peer.FLOW.GAME)


def rules_of(hello: bytes) -> str | None:
    """The `rules` a hello names, read without checking it (the flow checks it); None when
    it names none, or it is not a hello (the flow says what is wrong with it then)."""
    try:
        body = Envelope.decode(hello).body()
    except WireError:
        return None
    rules = body.get("rules") if body.type == "hello" else None
    return rules if isinstance(rules, str) else None


def game_of(transcript: Transcript) -> GameModule:
    """The game of a saved transcript: the one its first message (the host's hello) names;
    Game of the Generals when it holds no message, or names a game this program does not
    know (whose flow then refuses that hello with the reason)."""
    messages = transcript.messages
    try:
        return module_for(rules_of(messages[0][1]) if messages else None)
    except KeyError:
        return module_for(None)


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
