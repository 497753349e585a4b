"""Saved games made fast, for tests that open them on the real screen: two bots play in
memory over the real protocol (sans-IO peers), and each side's records go to its transcript
file as the session writes them (SPEC 2.8, 3.5: a `secrets` record with the join secret,
then every record in processing order), where `p2pgotg play` (or `host`, `join`, `games`,
`show`) finds them.

A game can stop anywhere: when a condition holds, or with the bot's challenge on the
person's Flag made and saved by the bot but not yet delivered (as a dropped connection
leaves it), so that resuming delivers it and the game ends at once."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.transport.paths import SECOND_SEAT_FILE, load_or_create_identity
from p2pgotg.players.bot import Bot
from p2pgotg.players.bot_seat import action_for, decide_turn
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.rules import Move, Piece, Rank, RuleOptions, neighbours
from p2pgotg.testing.pair import TLS_FP


@dataclass
class Seat:
    """One side: its peer, its bot, its transcript (made once the game has its id)."""

    peer: GotgPeer
    folder: Path
    secret: bytes
    name: str = ""  # a file name of its own (both seats of one account share a folder)
    file: TranscriptFile | None = None

    def __post_init__(self) -> None:
        self.bot: Bot | None = None
        self._buffer: list = []

    def save(self) -> None:
        self._buffer += self.peer.take_records()
        gid = self.peer.flow.game_id
        if gid is None:
            return
        if self.file is None:
            path = self.folder / f"{gid.hex()}{self.name}.gtr"
            self.file = TranscriptFile.create(path, self.peer.role, self.peer.public_key)
            self._buffer.insert(0, ("secrets", {"join": self.secret}))
        self.file.append(self._buffer)
        self._buffer = []

    @property
    def path(self) -> Path:
        assert self.file is not None
        return self.file.path


@dataclass
class SavedGame:
    person: Seat  # the host: the person at `p2pgotg play`, or at `host`
    other: Seat  # the joiner: the bot seat, or the account's second seat

    def close(self) -> None:
        for seat in (self.person, self.other):
            if seat.file is not None:
                seat.file.sync()
                seat.file.close()


def _deliver(seats: tuple[Seat, Seat]) -> None:
    while True:
        moved = False
        for sender, receiver in (seats, seats[::-1]):
            sender.save()  # (write-ahead: saved before it is sent)
            for data in sender.peer.data_to_send():
                receiver.peer.receive(data)
                receiver.save()
                moved = True
        if not moved:
            return


def flag_challenge(person: GotgPeer, bot: GotgPeer) -> Move | None:
    """A challenge the bot (to move) can make on the person's Flag, known to this test."""
    view, own = bot.view, person.own_setup
    if view is None or own is None or not bot.my_turn or view.is_over:
        return None
    person_view = person.view
    assert person_view is not None and person.side is not None
    flag = person_view.square_of(Piece(person.side, own.ranks.index(Rank.FLAG)))
    if flag is None:
        return None
    for sq in neighbours(flag):
        piece = view.piece_at(sq)
        if piece is not None and piece.side is bot.side:
            return Move(sq, flag)
    return None


def play(home: Path, seed: int, *, against_bot: bool = True,
         until: Callable[[GotgPeer, GotgPeer], bool] = lambda person, other: False,
         take_flag: bool = False, options: RuleOptions | None = None,
         finish: Callable[[GotgPeer], object] | None = None) -> SavedGame:
    """A game between two bots, saved under `home` (a P2PGOTG_HOME) as the person's game
    against the bot (`against_bot`), or as a game this account hosted and joined from its
    second seat. It stops once `until` holds on the person's turn, or, with `take_flag`,
    with the bot's challenge on the person's Flag saved by the bot and not delivered; else
    it plays to its end, audit included. With `finish`, the person does that (resigns,
    say) once `until` holds, and the game ends there, audit included."""
    config, games = home / "config", home / "data" / "games"
    secret = secrets.token_bytes(16)
    person_key = load_or_create_identity(config / "identity.pem")
    if against_bot:
        other_folder = games / "bot" / "bot-seat"
        other_key = load_or_create_identity(other_folder / "identity.pem")
        person = Seat(GotgPeer(HOST, person_key, TLS_FP, options or RuleOptions()),
                      games / "bot", secret)
    else:
        other_folder = games
        other_key = load_or_create_identity(config / SECOND_SEAT_FILE)
        person = Seat(GotgPeer(HOST, person_key, TLS_FP, options or RuleOptions()), games, secret)
    other = Seat(GotgPeer(JOINER, other_key, TLS_FP), other_folder, secret,
                 "" if against_bot else "-joiner")
    seats = (person, other)
    rng = random.Random(seed)
    person.peer.start()
    _deliver(seats)
    other.peer.accept()
    _deliver(seats)
    for seat in seats:
        assert seat.peer.side is not None
        seat.bot = Bot(seat.peer.side, random.Random(rng.random()))
        seat.peer.commit_setup(seat.bot.choose_setup())
        _deliver(seats)
    while not person.peer.flow.is_over:
        mover = person if person.peer.my_turn else other
        if mover is person and until(person.peer, other.peer):
            if finish is not None:
                finish(person.peer)
                _deliver(seats)
            break
        if mover is other and take_flag:
            move = flag_challenge(person.peer, other.peer)
            if move is not None:
                other.peer.move(move)
                other.save()  # (made and saved; the connection drops before it arrives)
                break
        assert mover.bot is not None and mover.peer.view is not None
        decision = decide_turn(mover.bot, mover.peer.view, mover.peer.draw_offered_to_me)
        action_for(decision)(mover.peer)
        _deliver(seats)
    else:
        _deliver(seats)
    game = SavedGame(person, other)
    game.close()
    return game


def lost(peer: GotgPeer, side_of_person: bool = True) -> int:
    """Pieces the person's side (or the other side) has lost so far."""
    view = peer.view
    assert view is not None and peer.side is not None
    side = peer.side if side_of_person else peer.side.other
    return sum(1 for p in view.eliminated if p.side is side)
