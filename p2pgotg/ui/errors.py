"""What the player sees when something goes wrong: a short message saying what happened and
what to do; the details (a traceback, for a bug) go to a log file under the data dir."""

from __future__ import annotations

import datetime
import traceback
from pathlib import Path

from p2pgotg.net.play.session import unwrap
from p2pgotg.net.reaching.control_frames import SessionError
from p2pgotg.net.transport.errors import IdentityFileError, NetError
from p2pgotg.net.transport.paths import data_dir


def error_log() -> Path:
    return data_dir() / "errors.log"


def log_exception(exc: BaseException) -> Path | None:
    """Append the details to the error log; the player sees a short message instead."""
    path = error_log()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"--- {datetime.datetime.now().isoformat(timespec='seconds')}\n")
            f.write("".join(traceback.format_exception(exc)))
        return path
    except OSError:
        return None


def explain(exc: BaseException) -> str:
    """What went wrong and what the player can do, in words; details go to the log."""
    if isinstance(exc, BaseExceptionGroup):
        exc = unwrap(exc)
    if isinstance(exc, IdentityFileError):  # (its detail is ours: which file, and why)
        return exc.user_message
    if isinstance(exc, NetError):  # its detail may hold a library's words: logged only
        if exc.detail:
            log_exception(exc)
        return exc.summary()
    if isinstance(exc, SessionError):
        return str(exc)
    path = log_exception(exc)
    where = f" The details are in {path}." if path else ""
    return (f"Something unexpected went wrong ({type(exc).__name__}: {exc}).{where} "
            "A game in progress is saved: run the same command again to resume it.")
