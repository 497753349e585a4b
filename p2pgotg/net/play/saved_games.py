"""Saved games on disk: where they live, which are unfinished, how to pick one up again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pgotg.crypto import equal, public_bytes
from p2pgotg.games import game_of, replay
from p2pgotg.net.play.game_lock import GameInUseError
from p2pgotg.net.play.player_name import saved_name
from p2pgotg.net.play.session import GameSession, Timeouts
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.transport.paths import data_dir
from p2pgotg.protocol import TranscriptError, parse
from p2pgotg.rules import RuleOptions


def games_dir(base: Path | None = None) -> Path:
    """One transcript per game, named by game id."""
    return (base or data_dir()) / "games"


@dataclass(frozen=True)
class SavedGame:
    path: Path
    role: str
    join_secret: bytes | None
    port: int = 0  # where the host listened (0: not saved)
    options: RuleOptions | None = None  # the rules the host proposed (None before its hello)


def unfinished_games(directory: Path, role: str, key: Ed25519PrivateKey) -> list[SavedGame]:
    """Our unfinished games in `directory` for `role`, newest first. Damaged files are
    skipped (never touched), except a torn last record: a crash while writing leaves one,
    and the game goes on from the records before it (`TranscriptFile.open_existing`)."""
    found = []
    if not directory.is_dir():
        return []
    mine = public_bytes(key)
    for path in sorted(directory.glob("*.gtr"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            transcript = parse(path.read_bytes())
        except (OSError, TranscriptError):
            continue
        if transcript.role != role or not equal(transcript.key, mine):
            continue
        report = replay(transcript)
        if not report.unfinished:  # (a torn tail too: resuming cuts it off)
            continue
        port = transcript.secrets.get("port")
        found.append(SavedGame(path, role, transcript.secrets.get("join"),
                               int.from_bytes(port, "big") if port else 0,
                               report.flow.options if report.flow else None))
    return found


class GameInUse(SessionError):
    """The saved game to resume is open in another p2pgotg process (SPEC 3.5): this one
    stops without touching it. `str()` names the game and the holder's process id."""

    def __init__(self, error: GameInUseError) -> None:
        super().__init__(str(error))
        self.pid = error.pid


def resume_session(saved: SavedGame, key: Ed25519PrivateKey, tls_fingerprint: bytes,
                   limits: Timeouts) -> GameSession:
    """Rebuild a session from its transcript, ready to reconnect. Raises GameInUse while
    another process has the game open (its lock is taken before the file is read)."""
    try:
        file, transcript = TranscriptFile.open_existing(saved.path)
    except GameInUseError as exc:
        raise GameInUse(exc) from None
    try:
        peer = game_of(transcript).peer.restore(saved.role, key, tls_fingerprint,
                                                transcript.records)
    except BaseException:
        file.close()  # (and its lock with it)
        raise
    assert saved.join_secret is not None
    session = GameSession(peer, saved.path.parent, saved.join_secret, limits, file=file)
    names = transcript.secrets
    session.own_name, session.peer_name = saved_name(names.get("name")), \
        saved_name(names.get("peer_name"))
    session.peer_name_saved = session.peer_name is not None
    session._after([])  # anything the restore found due (a reply, an audit) is written now
    return session
