"""Fuzzing the decoders, live peers and tables. `python bench/fuzz.py [--inputs 100000]`

Targets, each checked against what its documentation promises:

- frames: `FrameDecoder` fed streams of frames, keepalives, oversized lengths and garbage
  in random chunks (a byte at a time up to whole reads). Its frames must be exactly those
  of a reference parser, the only exception FrameTooLargeError (a NetError), and the bytes
  it keeps between reads never more than MAX_FRAME + the 4-byte header.
- codecs: msgpack `unpack`, `Envelope.decode`, `Body.decode` (only WireError) and the
  session's control-frame validator (`protocol.control.decode`: a frame, None, or a
  ControlError, never anything else) on mutated real messages and bodies.
- files: `parse` (only TranscriptError) and `replay` (never raises: `verify` reports) on
  mutated recorded transcripts from protocol/transcripts/.
- verifier: a `GotgFlow` replaying a recorded transcript, fed a mutated next message at a
  random point (re-signed with the recorded game's key, so it gets past the signature):
  only RuleViolation, and no state change when it is refused.
- peer: a live `GotgPeer` at each phase (hello, coin, setup, reveal, play, a challenge's
  reply, blind play and reply, audit), fed mutations of the real next message of the other
  side (bytes flipped; fields changed, dropped, added, retyped; other message types
  re-chained; all re-signed), hypothesis-generated bodies, resends and random bytes: only
  RemoteProtocolError, and no state change on refused input (beyond the documented
  evidence: the signed offending message is kept).
- table-files (SPEC 5.9): the recorded seat files of tables (`table-*.gtr`) damaged
  (bytes, records dropped, repeated, moved, cut, taken from another seat's file, a body
  changed and signed again by its author), alone or with another seat's file: the reader
  raises only TranscriptError; `verify`'s judgement, `show` (only ReviewError) and the
  games list never raise; and no verdict convicts a seat that signed nothing that breaks
  a rule (the recorded verdicts in expected.json name the only ones, with whichever key
  signed a changed body).
- table-resume (SPEC 3.5, 5.4): a copy of a seat's file, cut after a random record and
  often damaged, taken by the games list's unfinished tables and `TableSession.resume`:
  resumed, or refused with OSError, ValueError or RuleViolation and the file untouched
  (but for a torn last record, cut as 3.5 says); resumed, no record lost.
- table-frames (SPEC 5.2 to 5.8): a seat of a running honest table of three or four
  (hellos, roster, coin openings, setup, actions, heads, talk, a resignation, a claim and
  its dispute, after the end) fed mutations of another seat's real next message (re-signed,
  re-chained as its own or a third seat's, acks pointed elsewhere), resends, bytes, and
  messages that wait followed by the real one; and a joiner fed a damaged host hello. Only
  TableViolation (LocalProtocolError for the hello); refused input that proves nothing
  changes nothing; a signed violation keeps its evidence and names its signer, never
  another seat; the real message after one that waited is taken with its own events.

Findings (anything else) are printed with the input's hex; the run never stops on one.
`--only` picks targets, `--keep DIR` writes each finding's whole input to DIR.
`--atheris N` runs the two-party checks under atheris (coverage-guided) for N inputs
instead.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Under atheris, p2pgotg is imported with coverage instrumentation (before anything else).
_ATHERIS = "--atheris" in sys.argv and __name__ == "__main__"
if _ATHERIS:
    import atheris

    _instrumenting = atheris.instrument_imports(include=["p2pgotg"])
    _instrumenting.__enter__()

import trio

import p2pgotg.games.gotg  # noqa: F401  (its message types: the fuzzers use them all)
from p2pgotg.crypto import public_bytes, sign
from p2pgotg.games import replay
from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.games.towers.table import TOWERS_TABLE  # (also registers the table's `action`)
from p2pgotg.net.play.saved_games import GameInUse
from p2pgotg.net.play.session import Timeouts
from p2pgotg.net.play.table_file import CHUNK, read_table_file
from p2pgotg.net.play.table_session import TableSession, unfinished_tables
from p2pgotg.net.play.transcript_file import TranscriptFile
from p2pgotg.net.transport.errors import FrameTooLargeError
from p2pgotg.net.transport.framing import HEADER, MAX_FRAME, FrameDecoder
from p2pgotg.protocol import (
    HOST,
    JOINER,
    LocalProtocolError,
    RemoteProtocolError,
    RuleViolation,
    TranscriptError,
    control,
    parse,
)
from p2pgotg.protocol.envelope import ZERO_HASH, Envelope
from p2pgotg.protocol.messages import Body, registered
from p2pgotg.protocol.referee import Finding as Exit
from p2pgotg.protocol.table import TableSeat, TableViolation
from p2pgotg.protocol.table.body import TABLE_MESSAGES
from p2pgotg.protocol.table.transcript import (
    TableRecordReader,
    encode_table_record,
    is_table_file,
)
from p2pgotg.protocol.table.verify import TableReport, judge_table
from p2pgotg.protocol.wire import WireError, pack, unpack
from p2pgotg.rules import ChallengeMode, RuleOptions, Setup
from p2pgotg.testing.pair import Pair, det_key
from p2pgotg.testing.table_relay import TLS as TABLE_TLS
from p2pgotg.testing.table_relay import Table, act_at_random, make_table
from p2pgotg.testing.table_relay import keys as table_keys
from p2pgotg.ui.review import ReviewError
from p2pgotg.ui.saved_games import describe_game
from p2pgotg.ui.towers.table_review import table_lines

if _ATHERIS:
    _instrumenting.__exit__(None, None, None)

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "protocol" / "transcripts"
READ_SIZE = MAX_FRAME + HEADER.size  # what FramedChannel reads at most at once


# -- findings -------------------------------------------------------------------------------

@dataclass
class Finding:
    target: str
    what: str
    detail: str
    example: bytes
    count: int = 1


@dataclass
class Harness:
    rng: random.Random
    findings: dict[tuple[str, str], Finding] = field(default_factory=dict)
    inputs: Counter = field(default_factory=Counter)
    seconds: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)  # (target, refused/accepted/...)
    peak_kept: int = 0  # the most bytes a frame decoder kept between reads
    slowest: dict[str, float] = field(default_factory=dict)  # target -> seconds of one case

    @contextlib.contextmanager
    def timed(self, target: str) -> Iterator[None]:
        """Keep the longest time one case of `target` took (where a near-hang shows)."""
        start = time.perf_counter()
        yield
        took = time.perf_counter() - start
        self.slowest[target] = max(self.slowest.get(target, 0.0), took)

    def find(self, target: str, what: str, detail: str, example: bytes) -> None:
        key = (target, what)
        if key in self.findings:
            self.findings[key].count += 1
        else:
            self.findings[key] = Finding(target, what, detail, example)

    def crash(self, target: str, exc: BaseException, example: bytes) -> None:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        self.find(target, f"{type(exc).__name__} at {where}",
                  "".join(traceback.format_exception(exc))[-1500:], example)


# -- mutations ------------------------------------------------------------------------------

INTERESTING_BYTES = (0x00, 0x01, 0x7f, 0x80, 0xff, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6,
                     0xca, 0xcb, 0xcc, 0xcf, 0xd0, 0xd3, 0xd9, 0xdc, 0xdd, 0xde, 0xdf, 0x90,
                     0x80, 0xa0, 0xe0)


def mutate_bytes(data: bytes, rng: random.Random, corpus: list[bytes]) -> bytes:
    """One to four byte-level changes: flips, interesting bytes, cuts, inserts, splices."""
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
        op = rng.randrange(9)
        if not b:
            b += rng.randbytes(rng.randint(1, 8))
            continue
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.choice(INTERESTING_BYTES)
        elif op == 2:
            b[i] = rng.randrange(256)
        elif op == 3:
            del b[i:i + rng.randint(1, 16)]
        elif op == 4:
            b[i:i] = rng.randbytes(rng.randint(1, 16))
        elif op == 5:
            del b[rng.randrange(len(b) + 1):]
        elif op == 6:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randint(1, 32)]
        elif op == 7 and corpus:
            other = rng.choice(corpus)
            b = b[:i] + other[rng.randrange(len(other) + 1):]
        else:
            b[i:i + 2] = rng.choice((b"\x00\x00", b"\xff\xff", b"\x7f\xff", b"\x80\x00"))
    return bytes(b)


POOL: list[Any] = [
    None, True, False, 0, 1, -1, 2, 14, 15, 20, 21, 26, 27, 44, 45, 71, 72, 255, 256, 65535,
    65536, 2**31 - 1, 2**31, 2**31 + 1, 2**32, 2**63 - 1, -2**63, 2**64 - 1, 0.0, -0.0, 1.5,
    math.inf, math.nan, "", "x", "x" * 281, "\x00", "\u00e9", "host", "joiner", "time",
    "abandoned", "move", "hello", "open", "blind", b"", b"\x00", bytes(16), bytes(21),
    bytes(31), bytes(32), b"\xff" * 32, bytes(33), bytes(160), bytes(480), bytes(672),
    bytes(673), [], [0], [None], [0, bytes(32)], [14, bytes(32)], [15, bytes(32)],
    [0, bytes(31)], [-1, bytes(32)], [0, 0, bytes(32)], [20, 0, bytes(32)], [21, 0, bytes(32)],
    [0, 0, bytes(32), 1], [[0, bytes(32)]], {}, {"a": 1}, {"x": [1, {"y": b""}]},
]
COMMON = ("t", "seq", "prev", "ack", "game")
ALL_FIELDS = sorted({name for fields in registered().values() for name in fields} | set(COMMON))
OPTION_KEYS = ("flag_rule", "two_squares", "chasing", "challenge_mode", "clock_seconds",
               "move_seconds")


def random_value(rng: random.Random, like: Any = None) -> Any:
    """A value from the pool, or one near `like` (a number off by one, bytes with a bit
    flipped or a length changed, a list with an element changed)."""
    if like is not None and rng.random() < 0.5:
        if isinstance(like, bool):
            return not like
        if isinstance(like, int):
            return like + rng.choice((-1, 1, -2, 2, 7, 64))
        if isinstance(like, bytes) and like:
            b = bytearray(like)
            r = rng.random()
            if r < 0.6:
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            elif r < 0.8:
                del b[rng.randrange(len(b)):]
            else:
                b += rng.randbytes(rng.randint(1, 4))
            return bytes(b)
        if isinstance(like, list) and like:
            out = list(like)
            i = rng.randrange(len(out))
            out[i] = random_value(rng, out[i])
            return out
        if isinstance(like, dict) and like:
            out = dict(like)
            k = rng.choice(sorted(out))
            r = rng.random()
            if r < 0.5:
                out[k] = random_value(rng, out[k])
            elif r < 0.75:
                del out[k]
            else:
                out[rng.choice(("extra", *OPTION_KEYS))] = random_value(rng)
            return out
    return rng.choice(POOL)


def near_value(v: Any, rng: random.Random) -> Any:
    """A value of the same shape, still well-formed most of the time: a rank, square,
    ply or piece id a little off, one bit of a salt, hash or point flipped."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return max(0, v + rng.choice((-1, 1, -9, 9, 2, -2)))
    if isinstance(v, bytes) and v:
        b = bytearray(v)
        i = rng.randrange(len(b))
        if len(b) in (21,) and rng.random() < 0.5:  # squares or ranks: another value
            b[i] = rng.randrange(72 if rng.random() < 0.5 else 15)
        else:
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if isinstance(v, list) and v:
        out = list(v)
        i = rng.randrange(len(out))
        out[i] = near_value(out[i], rng)
        return out
    if isinstance(v, dict) and v:
        out = dict(v)
        k = rng.choice(sorted(out))
        out[k] = near_value(out[k], rng)
        return out
    if isinstance(v, str):
        return rng.choice(("time", "abandoned", "host", "joiner", v + "!", v[:-1]))
    return v


@dataclass(frozen=True)
class Vocabulary:
    """The message types, field names and chain keys a mutation draws on: a game of two's
    (chapter 2) or a table's (SPEC 5.2)."""

    types: tuple[str, ...]
    fields: tuple[str, ...]
    chain: tuple[str, ...]


TWO_SEATS = Vocabulary(tuple(sorted(registered())), tuple(ALL_FIELDS),
                       ("seq", "prev", "ack", "game"))


def mutate_body(raw: dict, rng: random.Random, others: list[dict],
                words: Vocabulary = TWO_SEATS) -> dict:
    """One to three structured changes to a decoded body map; most often one field gets
    a well-formed value a little off, which reaches the protocol's own checks."""
    body = dict(raw)
    fields = sorted(k for k in body if k not in COMMON)
    if fields and rng.random() < 0.55:
        k = rng.choice(fields)
        body[k] = near_value(body[k], rng)
        if rng.random() < 0.2:
            k = rng.choice(fields)
            body[k] = near_value(body[k], rng)
        return body
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(8)
        keys = sorted(body)
        if op <= 2 and keys:  # change a field, often to something near its value
            k = rng.choice(keys)
            body[k] = random_value(rng, body[k])
        elif op == 3 and keys:
            del body[rng.choice(keys)]
        elif op == 4:
            body[rng.choice([*words.fields, "x", "T", ""])] = random_value(rng)
        elif op == 5:
            body["t"] = (rng.choice(words.types) if rng.random() < 0.8
                         else random_value(rng))
        elif op == 6 and others:  # graft another real message's fields
            donor = rng.choice(others)
            for k in rng.sample(sorted(donor), k=min(len(donor), rng.randint(1, 3))):
                body[k] = donor[k]
        else:
            k = rng.choice(words.chain)
            body[k] = random_value(rng, body.get(k))
    return body


def signed(key, body: dict) -> bytes | None:
    """The body packed and signed with `key` into an envelope (None: not packable)."""
    try:
        data = pack(body)
    except (OverflowError, TypeError, ValueError):
        return None
    return pack({"body": data, "sig": sign(key, data)})


# -- target: frames -------------------------------------------------------------------------

def frame_stream(rng: random.Random) -> tuple[bytes, list[bytes], bool, int]:
    """(stream, its frames, whether a bad length ends it, bytes left after the frames)."""
    if rng.random() < 0.1:
        data = rng.randbytes(rng.randint(0, 3000))
        return (data, *reference_frames(data))
    parts: list[bytes] = []
    for _ in range(rng.randint(0, 12)):
        r = rng.random()
        if r < 0.15:
            n = 0
        elif r < 0.85:
            n = rng.randint(1, 300)
        elif r < 0.97:
            n = rng.randint(301, 20_000)
        else:
            n = rng.choice((MAX_FRAME - 1, MAX_FRAME))
        parts.append(HEADER.pack(n) + os.urandom(n))
    r = rng.random()
    if r < 0.2:
        parts.append(HEADER.pack(rng.choice((MAX_FRAME + 1, MAX_FRAME + 2, 2**32 - 1,
                                             rng.randint(MAX_FRAME + 1, 2**32 - 1))))
                     + rng.randbytes(rng.randint(0, 50)))
    elif r < 0.35 and parts:
        last = parts.pop()
        parts.append(last[:rng.randrange(len(last))])  # cut short
    data = b"".join(parts)
    return (data, *reference_frames(data))


def reference_frames(data: bytes) -> tuple[list[bytes], bool, int]:
    frames, pos = [], 0
    while len(data) - pos >= 4:
        n = int.from_bytes(data[pos:pos + 4], "big")
        if n > MAX_FRAME:
            return frames, True, 0
        if len(data) - pos - 4 < n:
            break
        frames.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return frames, False, len(data) - pos


def chunks(data: bytes, rng: random.Random) -> list[bytes]:
    mode = rng.randrange(4)
    if mode == 0 and len(data) <= 4000:
        def sizes():
            return 1  # a byte at a time, as a trickle would
    elif mode == 1:
        def sizes():
            return rng.randint(1, 64)
    elif mode == 2:
        def sizes():
            return rng.randint(1, READ_SIZE)
    else:
        return [data] if data else []
    out, pos = [], 0
    while pos < len(data):
        n = sizes()
        out.append(data[pos:pos + n])
        pos += n
    return out


def fuzz_frames(h: Harness, data: bytes, pieces: list[bytes], frames: list[bytes],
                bad: bool, left: int, use_feed: bool) -> None:
    decoder = FrameDecoder()
    got: list[bytes] = []
    failed = False
    try:
        for piece in pieces:
            if use_feed:
                got += decoder.feed(piece)
            else:
                decoder.receive_data(piece)
                while (frame := decoder.next_frame()) is not None:
                    got.append(frame)
            kept = decoder.buffered
            h.peak_kept = max(h.peak_kept, kept)
            if kept > MAX_FRAME + HEADER.size:
                h.find("frames", "kept more than MAX_FRAME + header",
                       f"{kept} bytes kept between reads", data[:64])
    except FrameTooLargeError:
        failed = True
    except Exception as exc:  # noqa: BLE001  (anything else is a finding)
        h.crash("frames", exc, data[:200])
        return
    if failed != bad:
        h.find("frames", "error mismatch", f"raised {failed}, expected {bad}", data[:200])
        return
    if use_feed and failed:  # feed loses the frames of the call that raised
        if got != frames[:len(got)]:
            h.find("frames", "wrong frames (feed)", "not a prefix of the stream's frames",
                   data[:200])
    elif got != frames:
        h.find("frames", "wrong frames", f"{len(got)} frames, expected {len(frames)}",
               data[:200])
    elif not failed and decoder.buffered != left:
        h.find("frames", "wrong leftover", f"{decoder.buffered} != {left}", data[:200])
    if failed:  # broken for good, and not holding what it is fed from then on
        for _ in range(3):
            try:
                decoder.feed(b"\x00\x00\x00\x01x" * (READ_SIZE // 5))
                h.find("frames", "usable after an oversized length", "", data[:200])
            except FrameTooLargeError:
                pass
        if decoder.buffered > MAX_FRAME + HEADER.size:
            h.find("frames", "a broken decoder keeps what it is fed",
                   f"{decoder.buffered} bytes", data[:64])
    h.outcomes["frames", "error" if failed else "ok"] += 1


def run_frames(h: Harness, n: int) -> None:
    rng = h.rng
    for _ in range(n):
        data, frames, bad, left = frame_stream(rng)
        fuzz_frames(h, data, chunks(data, rng), frames, bad, left, rng.random() < 0.3)
    h.inputs["frames"] += n


# -- corpus ---------------------------------------------------------------------------------

@dataclass
class Corpus:
    files: dict[str, bytes]
    messages: list[bytes]  # envelopes from every recorded transcript
    bodies: list[bytes]
    body_maps: list[dict]
    controls: list[bytes]


def load_corpus() -> Corpus:
    # (two-player transcripts: a table's files, `table-*.gtr`, are SPEC chapter 5's: the
    # table targets take them, `load_table_corpus`)
    files = {p.name: p.read_bytes() for p in sorted(TRANSCRIPTS.glob("*.gtr"))
             if not is_table_file(p.read_bytes()[:4096])}
    messages: list[bytes] = []
    for data in files.values():
        messages += [m for _, m in parse(data).messages]
    bodies, maps = [], []
    for m in messages:
        try:
            b = Envelope.decode(m).body_bytes
            bodies.append(b)
            maps.append(unpack(b))
        except WireError:
            pass
    controls = [control.encode(frame) for frame in (
        control.Hi(bytes(16), None, 0, None), control.Hi(bytes(16), bytes(32), 3, None),
        control.Ok(bytes(32), 1, bytes(32)), control.Bye(7), control.Refusal("no"))]
    return Corpus(files, messages, bodies, maps, controls)


# -- target: codecs -------------------------------------------------------------------------

def fuzz_codecs(h: Harness, data: bytes) -> None:
    for name, fn, allowed in (("unpack", unpack, WireError),
                              ("envelope", Envelope.decode, WireError),
                              ("body", Body.decode, WireError)):
        try:
            fn(data)
            h.outcomes["codecs", f"{name} ok"] += 1
        except allowed:
            h.outcomes["codecs", f"{name} refused"] += 1
        except Exception as exc:  # noqa: BLE001
            h.crash(f"codecs/{name}", exc, data)
    try:
        control.decode(data)
    except control.ControlError:
        pass
    except Exception as exc:  # noqa: BLE001
        h.crash("codecs/control", exc, data)


def run_codecs(h: Harness, corpus: Corpus, n: int) -> None:
    rng = h.rng
    pool = corpus.messages + corpus.bodies + corpus.controls
    for _ in range(n):
        r = rng.random()
        if r < 0.7:
            data = mutate_bytes(rng.choice(pool), rng, pool)
        elif r < 0.9:
            body = mutate_body(rng.choice(corpus.body_maps), rng, corpus.body_maps)
            try:
                data = pack(body)
            except (OverflowError, TypeError, ValueError):
                data = rng.randbytes(40)
            if rng.random() < 0.5:
                data = pack({"body": data, "sig": rng.randbytes(64)})
        else:
            data = rng.randbytes(rng.randint(0, 400))
        fuzz_codecs(h, data)
    h.inputs["codecs"] += n


# -- target: transcript files ---------------------------------------------------------------

def fuzz_file(h: Harness, data: bytes) -> None:
    try:
        transcript = parse(data)
    except TranscriptError:
        h.outcomes["files", "unreadable"] += 1
        return
    except Exception as exc:  # noqa: BLE001
        h.crash("files/parse", exc, data[:400])
        return
    try:
        report = replay(transcript)
        report.describe()
        h.outcomes["files", report.finding.name] += 1
    except Exception as exc:  # noqa: BLE001
        h.crash("files/replay", exc, data[:400])


def frames_of(data: bytes) -> list[bytes]:
    """A file's length-prefixed records, each with its prefix (a torn last one as it is)."""
    records, pos = [], 0
    while len(data) - pos >= 4:
        n = int.from_bytes(data[pos:pos + 4], "big")
        records.append(data[pos:pos + 4 + n])
        pos += 4 + n
    return records


def mutate_file(data: bytes, rng: random.Random) -> bytes:
    records = frames_of(data)
    r = rng.random()
    if r < 0.5 or len(records) < 3:
        i = rng.randrange(len(data))  # somewhere in the file, often in the early records
        i = min(i, rng.randrange(len(data)))
        return data[:i] + mutate_bytes(data[i:i + 64], rng, []) + data[i + 64:]
    i, j = rng.randrange(1, len(records)), rng.randrange(1, len(records))
    if r < 0.65:
        del records[i]
    elif r < 0.8:
        records.insert(i, records[j])
    elif r < 0.9:
        records[i], records[j] = records[j], records[i]
    else:
        del records[i:]
    return b"".join(records)


def run_files(h: Harness, corpus: Corpus, n: int) -> None:
    rng = h.rng
    small = sorted(corpus.files.values(), key=len)[: max(4, len(corpus.files) * 2 // 3)]
    for _ in range(n):
        fuzz_file(h, mutate_file(rng.choice(small), rng))
    h.inputs["files"] += n


# -- state fingerprints ---------------------------------------------------------------------

def flow_state(flow: GotgFlow) -> tuple:
    g = flow.game
    game = None if g is None else (
        g.ply, g.turn, g.is_over, g.outcome, tuple(g.piece_at(sq) for sq in range(72)),
        tuple(sorted(g.known_ranks().items())), len(g.history), g.eliminated)
    return (
        flow.phase, flow.options, flow.game_id, tuple(sorted(flow.hellos)),
        flow.host_coin, flow.white, tuple(sorted(flow.setup_commits.items())),
        tuple(sorted(flow.reveals)), repr(flow.pending), flow.draw_offer, flow.end_role,
        flow.end_seq, flow.result, tuple(sorted(flow.audits)), flow.verdict,
        flow.end_kind, tuple(sorted(flow.endings.items())),
        flow.claimants, tuple((r, tuple(sorted(c))) for r, c in sorted(flow.claims.items())),
        tuple((r, tuple(sorted(c))) for r, c in sorted(flow.claims_made.items())),
        flow.audit_claim, tuple(sorted(flow.disputes.items())), flow.progress,
        tuple(sorted(flow.audit_seq.items())),
        len(flow.blind_log), len(flow.used_points), len(flow.transcript),
        tuple((r, s.key, len(s.hashes), len(s.envelopes), len(s.index_of), s.last_ack)
              for r, s in sorted(flow.senders.items())),
        game,
    )


def peer_state(peer: GotgPeer) -> tuple:
    return (flow_state(peer.flow), len(peer._out), len(peer._records), peer._coin,
            peer._own is not None, peer._accepted)


# -- target: a live peer at each phase --------------------------------------------------------

@dataclass
class Fixture:
    name: str
    build: Callable[[], tuple[GotgPeer, GotgPeer, bytes]]
    receiver: GotgPeer | None = None
    sender: GotgPeer | None = None
    message: bytes = b""  # the sender's real next message
    sent: list[bytes] = field(default_factory=list)  # the sender's earlier messages
    maps: list[dict] = field(default_factory=list)  # their bodies, and the next one's
    builds: int = 0

    def ready(self) -> None:
        if self.receiver is None:
            self.receiver, self.sender, self.message = self.build()
            self.sent = list(self.sender.flow.senders[self.sender.role].envelopes)
            self.maps = [unpack(Envelope.decode(m).body_bytes) for m in
                         [*self.sent, self.message]]
            self.builds += 1

    def spoil(self) -> None:
        self.receiver = None


def _pair(seed: str, blind: bool = False) -> Pair:
    options = RuleOptions(challenge_mode=ChallengeMode.BLIND) if blind else RuleOptions()
    return Pair.new(options, seed=seed)


def _hello_host() -> tuple[GotgPeer, GotgPeer, bytes]:
    pair = _pair("fz-hello")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    return pair.host, pair.joiner, pair.joiner.data_to_send()[0]


def _hello_joiner() -> tuple[GotgPeer, GotgPeer, bytes]:
    pair = _pair("fz-hello-j")
    pair.host.start()
    return pair.joiner, pair.host, pair.host.data_to_send()[0]


def _coin() -> tuple[GotgPeer, GotgPeer, bytes]:
    pair = _pair("fz-coin")
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.host.receive(pair.joiner.data_to_send()[0])
    return pair.joiner, pair.host, pair.host.data_to_send()[0]  # the host's coin


def _to_setup(seed: str, blind: bool = False) -> Pair:
    pair = _pair(seed, blind)
    pair.host.start()
    pair.deliver()
    pair.joiner.accept()
    pair.deliver()
    return pair


def _setup() -> tuple[GotgPeer, GotgPeer, bytes]:
    pair = _to_setup("fz-setup")
    rng = random.Random(1)
    pair.joiner.commit_setup(Setup.random(pair.joiner.side, rng))
    return pair.host, pair.joiner, pair.joiner.data_to_send()[0]


def _reveal() -> tuple[GotgPeer, GotgPeer, bytes]:
    pair = _to_setup("fz-reveal")
    rng = random.Random(2)
    pair.host.commit_setup(Setup.random(pair.host.side, rng))
    pair.deliver()
    pair.joiner.commit_setup(Setup.random(pair.joiner.side, rng))
    commit, reveal = pair.joiner.data_to_send()
    pair.host.receive(commit)
    pair.host.data_to_send()  # the host's own reveal, not delivered
    return pair.host, pair.joiner, reveal


def _play_to(seed: str, plies: int, blind: bool = False, want_challenge: bool = False
             ) -> tuple[Pair, GotgPeer, GotgPeer]:
    """A game `plies` moves in (quiet moves only), the side to move, and the other."""
    pair = _pair(seed, blind)
    pair.handshake(rng=random.Random(seed))
    rng = random.Random(seed)
    for _ in range(plies + 400):
        mover = pair.host if pair.host.my_turn else pair.joiner
        view = mover.view
        assert view is not None
        challenges = [m for m in view.legal_moves if view.is_challenge(m)]
        if view.ply >= plies and (challenges or not want_challenge):
            return pair, mover, pair.peer(mover.other_role)
        quiet = [m for m in view.legal_moves if not view.is_challenge(m)]
        mover.move(rng.choice(quiet or view.legal_moves))
        pair.deliver()
    raise RuntimeError("no position found")


def _play(blind: bool, plies: int) -> Callable[[], tuple[GotgPeer, GotgPeer, bytes]]:
    def build() -> tuple[GotgPeer, GotgPeer, bytes]:
        _, mover, other = _play_to(f"fz-play-{blind}-{plies}", plies, blind)
        view = mover.view
        assert view is not None
        rng = random.Random(plies)
        challenges = [m for m in view.legal_moves if view.is_challenge(m)]
        move = rng.choice(challenges) if challenges and plies % 2 else \
            rng.choice(view.legal_moves)
        mover.move(move)
        return other, mover, mover.data_to_send()[0]
    return build


def _reply(blind: bool) -> Callable[[], tuple[GotgPeer, GotgPeer, bytes]]:
    """The defender's automatic answer to a challenge (its opening, or its OT table)."""
    def build() -> tuple[GotgPeer, GotgPeer, bytes]:
        _, mover, other = _play_to(f"fz-reply-{blind}", 12, blind, want_challenge=True)
        view = mover.view
        assert view is not None
        move = next(m for m in view.legal_moves if view.is_challenge(m))
        mover.move(move)
        (challenge,) = mover.data_to_send()
        other.receive(challenge)
        return mover, other, other.data_to_send()[0]
    return build


def _outcome() -> tuple[GotgPeer, GotgPeer, bytes]:
    """Blind: the attacker's token, after the defender's table."""
    _, mover, other = _play_to("fz-outcome", 14, True, want_challenge=True)
    view = mover.view
    assert view is not None
    mover.move(next(m for m in view.legal_moves if view.is_challenge(m)))
    other.receive(mover.data_to_send()[0])
    for data in other.data_to_send():
        mover.receive(data)
    return other, mover, mover.data_to_send()[0]


def _audit() -> tuple[GotgPeer, GotgPeer, bytes]:
    _, mover, other = _play_to("fz-audit", 20)
    mover.resign()
    resign, audit = mover.data_to_send()
    other.receive(resign)
    other.data_to_send()  # its own audit, not delivered
    return other, mover, audit


FIXTURES: list[tuple[str, Callable[[], tuple[GotgPeer, GotgPeer, bytes]]]] = [
    ("hello", _hello_host), ("hello-joiner", _hello_joiner), ("coin", _coin),
    ("setup", _setup), ("reveal", _reveal), ("play", _play(False, 9)),
    ("play-challenge", _play(False, 25)), ("reply", _reply(False)),
    ("blind-play", _play(True, 9)), ("blind-reply", _reply(True)),
    ("blind-outcome", _outcome), ("audit", _audit),
]


def rechain(fx: Fixture, body: dict) -> dict:
    """Put the chain fields a real next message would carry (so that the handlers are
    reached), keeping whatever else the body says."""
    real = fx.maps[-1]  # the real next message: its chain fields are the right ones
    body = dict(body)
    for k in ("seq", "prev", "ack"):
        body[k] = real[k]
    game = real.get("game") or (fx.receiver.flow.game_id if fx.receiver else None)
    if body.get("t") != "hello" and game is not None:
        body["game"] = game
    else:
        body.pop("game", None)
    return body


def peer_input(fx: Fixture, rng: random.Random) -> bytes:
    fx.ready()
    assert fx.sender is not None
    key = fx.sender._key
    r = rng.random()
    if r < 0.5:  # the real next message, a structured change, re-signed
        data = signed(key, mutate_body(fx.maps[-1], rng, fx.maps))
    elif r < 0.65:  # another type, correctly chained: is it refused as out of turn?
        body = rechain(fx, rng.choice(fx.maps))
        if rng.random() < 0.5:
            body = mutate_body(body, rng, fx.maps)
        data = signed(key, body)
    elif r < 0.75:  # the real body with bytes changed, re-signed
        body_bytes = mutate_bytes(Envelope.decode(fx.message).body_bytes, rng, [])
        data = pack({"body": body_bytes, "sig": sign(key, body_bytes)})
    elif r < 0.9:  # bytes changed anywhere (the signature, the envelope)
        data = mutate_bytes(fx.message, rng, fx.sent)
    elif r < 0.95 and fx.sent:  # a resend: must change nothing
        data = rng.choice(fx.sent)
    else:
        data = rng.randbytes(rng.randint(0, 300))
    return data if data is not None else rng.randbytes(50)


def check_peer(h: Harness, fx: Fixture, data: bytes, target: str = "peer") -> None:
    fx.ready()
    peer, sender = fx.receiver, fx.sender
    assert peer is not None and sender is not None
    before = peer_state(peer)
    n_records, n_transcript = len(peer._records), len(peer.flow.transcript)
    try:
        peer.receive(data)
    except RemoteProtocolError as exc:
        h.outcomes[target, f"refused: {exc.violation.rule}"] += 1
        evidence = ("msg", sender.role, data)
        if exc.violation.signed:  # documented: the signed offending message is kept
            if peer._records[n_records:] != [evidence] \
                    or peer.flow.transcript[n_transcript:] != [(sender.role, data)]:
                h.find(f"{target}/{fx.name}", "evidence not kept as documented", "", data)
                fx.spoil()
                return
            del peer._records[n_records:]
            del peer.flow.transcript[n_transcript:]
        # documented: a signed violation fails the connection for good; input that proves
        # nothing about its sender leaves the peer usable (the driver resumes)
        if peer.failed is not (exc if exc.violation.signed else None):
            h.find(f"{target}/{fx.name}", "not in the documented state after a violation",
                   "", data)
        peer._error = None  # back to the state before, to reuse the fixture
        after = peer_state(peer)
        if after != before:
            diff = [i for i, (a, b) in enumerate(zip(before[0], after[0], strict=False)) if a != b]
            h.find(f"{target}/{fx.name}", f"state changed on refused input ({exc.violation.rule})",
                   f"flow fields {diff}; {exc}", data)
            fx.spoil()
        return
    except Exception as exc:  # noqa: BLE001
        h.crash(f"{target}/{fx.name}", exc, data)
        fx.spoil()
        return
    if peer_state(peer) == before:
        h.outcomes[target, "ignored (a resend)"] += 1
    else:
        h.outcomes[target, "accepted"] += 1
        fx.spoil()  # a valid message moved the game on: start again from the fixture


def run_peer(h: Harness, fixtures: list[Fixture], n: int) -> None:
    rng = h.rng
    for i in range(n):
        fx = fixtures[i % len(fixtures)]
        check_peer(h, fx, peer_input(fx, rng))
    h.inputs["peer"] += n


def run_peer_hypothesis(h: Harness, fixtures: list[Fixture], n: int, seed: int) -> None:
    """Bodies generated by hypothesis (schema-aware and arbitrary), chained and signed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    scalar = (st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
              | st.floats(allow_nan=True) | st.text(max_size=12) | st.binary(max_size=40)
              | st.sampled_from(POOL))
    anything = st.recursive(scalar, lambda c: st.lists(c, max_size=4)
                            | st.dictionaries(st.text(max_size=6), c, max_size=4),
                            max_leaves=8)
    def b(n: int):
        return st.binary(min_size=n, max_size=n)

    opening = st.tuples(st.integers(0, 15), b(32)).map(list)
    options = st.fixed_dictionaries({
        "flag_rule": st.sampled_from(["safe_or_survive", "always_survive", "immediate", "x"]),
        "two_squares": st.booleans(), "chasing": st.booleans(),
        "challenge_mode": st.sampled_from(["open", "blind", "x"]),
        "clock_seconds": st.integers(-1, 4000), "move_seconds": st.integers(-1, 400)})
    valid = {  # a well-formed value for each field name (or nearly: ranges overshoot by one)
        "version": st.integers(0, 2), "role": st.sampled_from(["host", "joiner"]),
        "options": options, "nonce": b(32), "key": b(32), "tls": b(32), "coin": b(32),
        "secret": b(32), "hash": b(32), "squares": st.lists(st.integers(0, 72), min_size=21,
                                                           max_size=21).map(bytes),
        "commits": b(672), "seed_commit": b(32), "ot": b(32), "ply": st.integers(0, 300),
        "from": st.integers(0, 72), "to": st.integers(0, 72), "open": opening,
        "ot_r": b(32), "claim": st.tuples(st.integers(0, 21), st.integers(0, 15),
                                          b(32)).map(list),
        "draw": st.just(True), "cts": b(480), "token": b(32), "x": b(32),
        "text": st.text(max_size=300), "reason": st.sampled_from(["time", "abandoned"]),
        "ranks": st.lists(st.integers(0, 15), min_size=21, max_size=21).map(bytes),
        "salts": b(672), "seed": b(32),
    }

    @st.composite
    def bodies(draw):
        t = draw(st.sampled_from(sorted(registered()))) if draw(st.integers(0, 9)) \
            else draw(st.text(max_size=8))
        schema = registered().get(t, {})
        body: dict[str, Any] = {"t": t}
        for name in schema:
            if name == "commits" and t == "blind_reply":
                body[name] = draw(b(160))
            elif draw(st.integers(0, 39)):
                body[name] = draw(valid.get(name, anything))
            elif draw(st.booleans()):
                body[name] = draw(anything)
        if draw(st.integers(0, 9)) == 0:  # now and then a field the type does not have
            body[draw(st.sampled_from(ALL_FIELDS) | st.text(max_size=5))] = draw(anything)
        return body, draw(st.integers(0, len(fixtures) - 1)), draw(st.integers(0, 9))

    done = [0]

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(bodies())
    def generated(case) -> None:
        body, which, chain = case
        fx = fixtures[which]
        fx.ready()
        if chain:  # (one in ten keeps whatever chain fields it has, or none)
            body = rechain(fx, body)
        assert fx.sender is not None
        data = signed(fx.sender._key, body)
        if data is not None:
            check_peer(h, fx, data, "peer-hypothesis")
        done[0] += 1

    generated()
    h.inputs["peer-hypothesis"] += done[0]


# -- target: the verifier on recorded games -------------------------------------------------

def recorded_keys() -> dict[bytes, Any]:
    """The private keys of the recorded transcripts' games (they were made by
    `protocol.scenarios` with deterministic keys), by public key."""
    keys = {}
    for label in [f"scenario-{i}" for i in range(8)] + [f"blind-scenario-{i}" for i in range(8)]:
        for role in (HOST, JOINER):
            key = det_key(f"{label}/{role}-key")
            keys[public_bytes(key)] = key
    return keys


@dataclass
class Position:
    file: str
    messages: list[tuple[str, bytes]]
    index: int
    keys: dict[str, Any]
    flow: GotgFlow | None = None

    def ready(self) -> GotgFlow:
        if self.flow is None:
            flow = GotgFlow()
            for role, data in self.messages[:self.index]:
                flow.process(role, data)
            self.flow = flow
        return self.flow


def verifier_positions(corpus: Corpus, rng: random.Random, count: int) -> list[Position]:
    keys = recorded_keys()
    found: list[Position] = []
    for name, data in corpus.files.items():
        messages = parse(data).messages
        flow = GotgFlow()
        good = 0
        role_keys: dict[str, Any] = {}
        for role, m in messages:
            try:
                flow.process(role, m)
            except RuleViolation:
                break
            good += 1
            k = flow.senders[role].key
            if k in keys:
                role_keys[role] = keys[k]
        if good == 0 or len(role_keys) < 2:
            continue
        for index in rng.sample(range(good), k=min(good, max(1, count // len(corpus.files)))):
            found.append(Position(name, messages, index, role_keys))
    return found


def run_verifier(h: Harness, positions: list[Position], n: int) -> None:
    rng = h.rng
    for i in range(n):
        pos = positions[i % len(positions)]
        flow = pos.ready()
        role, real = pos.messages[pos.index]
        raw = unpack(Envelope.decode(real).body_bytes)
        if rng.random() < 0.8:
            data = signed(pos.keys[role], mutate_body(raw, rng, [raw])) or real
        else:
            data = mutate_bytes(real, rng, [])
        before = flow_state(flow)
        try:
            flow.process(role, data)
        except RuleViolation as v:
            h.outcomes["verifier", f"refused: {v.rule}"] += 1
            if flow_state(flow) != before:
                h.find(f"verifier/{pos.file}", f"state changed on refused input ({v.rule})",
                       str(v), data)
                pos.flow = None
            continue
        except Exception as exc:  # noqa: BLE001
            h.crash(f"verifier/{pos.file}", exc, data)
            pos.flow = None
            continue
        if flow_state(flow) != before:
            h.outcomes["verifier", "accepted"] += 1
            pos.flow = None
    h.inputs["verifier"] += n


# -- tables (SPEC chapter 5): recorded seat files and their mutations -------------------------

TABLE_WORDS = Vocabulary(
    tuple(sorted(TABLE_MESSAGES)),
    tuple(sorted({name for fields in TABLE_MESSAGES.values() for name in fields}
                 | {"t", "seq", "prev", "from", "acks", "game"})),
    ("seq", "prev", "from", "acks", "game"))


def table_key_pairs() -> dict[bytes, Any]:
    """The private keys of the recorded tables' seats (`protocol/table_scenarios.py` seats
    them with the relay loop's deterministic keys), by public key."""
    return {public_bytes(k): k for k in table_keys(4)}


def seats_of_file(data: bytes) -> tuple[bytes, dict[int, bytes]]:
    """(body hash of the host's hello, each seat's key) as a recorded file's messages say:
    seat 0 is the host's hello, the roster's `acks` name the joiners' hellos (SPEC 5.3)."""
    hellos: dict[bytes, bytes] = {}
    first, roster = b"", None
    for record in TableRecordReader().feed_table(data):
        if record[0] != "msg":
            continue
        env = Envelope.decode(record[2])
        body = unpack(env.body_bytes)
        if body["t"] == "hello":
            hellos[env.hash] = body["key"]
            if body["role"] == "host":
                first = env.hash
        elif body["t"] == "roster" and roster is None:
            roster = body["acks"]
    seats = {0: hellos[first]}
    for j, hello in enumerate(roster or []):
        if j:
            seats[j] = hellos[hello]
    return first, seats


@dataclass
class TableCorpus:
    files: dict[str, bytes]  # the recorded seat files, by name
    table: dict[str, str]  # file name -> its table (expected.json's `game`)
    #: (author key, body hash of the table's host hello) of every seat a recorded verdict
    #: convicts (expected.json's `cheater`, alone or `together`): nobody else signed a
    #: message that breaks a rule, so no damage to these files may convict anybody else
    guilty: set[tuple[bytes, bytes]]
    keys: dict[bytes, Any]

    def same_table(self, name: str) -> list[bytes]:
        return [d for n, d in self.files.items() if self.table[n] == self.table[name]]


def load_table_corpus() -> TableCorpus:
    expected = json.loads((TRANSCRIPTS / "expected.json").read_text())
    files, table, guilty = {}, {}, set()
    for path in sorted(TRANSCRIPTS.glob("table-*.gtr")):
        data = path.read_bytes()
        entry = expected[path.name]
        files[path.name], table[path.name] = data, entry["game"]
        first, seats = seats_of_file(data)
        for verdict in (entry, entry.get("together") or {}):
            if verdict.get("cheater"):
                guilty.add((seats[int(verdict["cheater"].removeprefix("seat "))], first))
    return TableCorpus(files, table, guilty, table_key_pairs())


def resigned_record(record: bytes, rng: random.Random, keys: dict[bytes, Any]
                    ) -> tuple[bytes, bytes] | None:
    """A `msg` record whose body is mutated and signed again by its author: (the record,
    the author's public key); None when it is no message of a key we hold."""
    try:
        rec = unpack(record[4:])
        env = Envelope.decode(rec["env"])
        raw = unpack(env.body_bytes)
    except (WireError, KeyError, TypeError):
        return None
    signer = next((pub for pub in keys if env.verified_by(pub)), None)
    if signer is None or not isinstance(raw, dict):
        return None
    data = signed(keys[signer], mutate_body(raw, rng, [raw], TABLE_WORDS))
    if data is None:
        return None
    body = pack({**rec, "env": data})
    return len(body).to_bytes(4, "big") + body, signer


def mutate_table_file(data: bytes, rng: random.Random, same: list[bytes], every: list[bytes],
                      keys: dict[bytes, Any]) -> tuple[bytes, set[bytes]]:
    """A recorded seat file damaged once or twice (bytes, a record dropped, repeated,
    moved, cut, or taken from another seat's file, most often of the same table; a message
    changed and signed again by its author), and the keys that signed a changed body."""
    signers: set[bytes] = set()
    for _ in range(1 if rng.random() < 0.8 else 2):
        records = frames_of(data)
        r = rng.random()
        if r < 0.55 or len(records) < 3:  # bytes, or a record dropped, repeated, moved, cut
            data = mutate_file(data, rng)
            continue
        i = rng.randrange(1, len(records))
        donor = frames_of(rng.choice(same if rng.random() < 0.7 else every))
        k = rng.randrange(1, len(donor)) if len(donor) > 1 else 0
        if r < 0.7:
            changed = resigned_record(records[i], rng, keys)
            if changed is not None:
                records[i] = changed[0]
                signers.add(changed[1])
        elif r < 0.75:  # a torn last record, as a crash while writing leaves it
            records[i:] = [records[i][:rng.randrange(len(records[i]))]]
        elif r < 0.88:
            records.insert(i, donor[k])
        else:
            records[i:] = donor[k:]
        data = b"".join(records)
    return data, signers


def convicted_wrongly(tc: TableCorpus, report: TableReport, signers: set[bytes]) -> str | None:
    """Why a violation verdict convicts a seat that signed nothing that breaks a rule (a
    damaged record proves nothing about its signer, SPEC 5.2 and 5.9); None when it does
    not."""
    flow = report.flow
    if report.finding is not Exit.VIOLATION or flow is None or flow.violation is None:
        return None
    v = flow.violation
    if v.seat is None or not 0 <= v.seat < flow.n:
        return f"a verdict against {v.seat!r}, no seat of the table ({v.rule})"
    key = flow.key_of(v.seat)
    assert flow.host_hello is not None  # (a violation is of a message after the host's hello)
    if key in signers or (key, flow.host_hello.hash) in tc.guilty:
        return None
    return f"a verdict against seat {v.seat}, which signed nothing wrong ({v.rule}: {v.detail})"


# -- target: table files (read, verify, show, the games list) ----------------------------------

def check_table_files(h: Harness, tc: TableCorpus, datas: list[bytes], signers: set[bytes],
                      folder: Path, target: str = "table-files") -> None:
    """`verify` of one or more seat files of a table (SPEC 5.9), and `show` and the games
    list of one: only TranscriptError from the reader (a file error that says what is
    wrong), never an exception from the verdict, and no verdict against a seat that
    signed nothing wrong."""
    paths = []
    for i, data in enumerate(datas):
        path = folder / f"seat-{i}.gtr"
        path.write_bytes(data)
        paths.append(path)
        try:
            is_table_file(data[:CHUNK])
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/is_table_file", exc, data)
    files = []
    for path, data in zip(paths, datas, strict=True):
        try:
            files.append(read_table_file(path))
        except TranscriptError:
            h.outcomes[target, "unreadable file"] += 1
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/read", exc, data)
    if len(files) == len(datas):
        try:
            report = judge_table(TOWERS_TABLE, files)
            h.outcomes[target, f"verify {report.finding.name.lower()}"] += 1
            wrong = convicted_wrongly(tc, report, signers)
            if wrong:
                h.find(target, "verdict against an honest seat", wrong, b"".join(datas))
            if len(files) == 1:
                with contextlib.suppress(ReviewError):  # (show: nothing to show)
                    table_lines(files[0], report)
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/verify", exc, b"".join(datas))
    if len(datas) == 1:
        try:
            describe_game(paths[0], False)
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/games", exc, datas[0])


def run_table_files(h: Harness, tc: TableCorpus, n: int) -> None:
    rng = h.rng
    names = sorted(tc.files)
    small = sorted(names, key=lambda name: len(tc.files[name]))[: len(names) * 2 // 3]
    every = list(tc.files.values())
    with tempfile.TemporaryDirectory(prefix="p2pgotg-fuzz-") as folder:
        for _ in range(n):
            name = rng.choice(small if rng.random() < 0.8 else names)
            same = tc.same_table(name)
            data, signers = mutate_table_file(tc.files[name], rng, same, every, tc.keys)
            datas = [data]
            if len(same) > 1 and rng.random() < 0.25:  # verify A.gtr B.gtr, one damaged
                datas.append(rng.choice([d for d in same if d != tc.files[name]]))
                rng.shuffle(datas)
            with h.timed("table-files"):
                check_table_files(h, tc, datas, signers, Path(folder))
    h.inputs["table-files"] += n


# -- target: resuming a seat from its file ------------------------------------------------------

def with_join_secret(data: bytes, role: str) -> bytes:
    """A recorded file as a seat's session writes it: the join secret (and a host's port)
    saved after the header (SPEC 3.5, 5.4), which a seat comes back with."""
    records = frames_of(data)
    secrets = {"join": bytes(range(16))}
    if role == "host":
        secrets["port"] = (4242).to_bytes(2, "big")
    return records[0] + encode_table_record(("secrets", secrets)) + b"".join(records[1:])


def check_resume(h: Harness, data: bytes, key: Any, role: str, folder: Path,
                 target: str = "table-resume") -> None:
    """What a seat does with its file when it comes back (the games list's unfinished
    tables, `TableSession.resume`), on a copy: a file error, a ValueError or a
    RuleViolation saying what is wrong, the file untouched when it is refused, no record
    lost when it is resumed."""
    path = folder / "seat.gtr"
    path.write_bytes(data)
    reader = TableRecordReader()
    try:
        reader.feed_table(data)
        intact = data[:reader.offset]  # (what is left once a torn last record is cut)
    except TranscriptError:
        intact = data
    try:
        try:
            offered = unfinished_tables(folder, role, key)
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/unfinished", exc, data)
            offered = []
        try:
            session = TableSession.resume(path, key, role, Timeouts())
        except (OSError, ValueError, RuleViolation, GameInUse) as exc:
            # (the games list reads a file without its owner's key: a file it offers may
            # still be refused, with the error that says why)
            h.outcomes[target, ("offered, then refused: " if offered else "refused: ")
                       + type(exc).__name__] += 1
            if path.read_bytes() not in (data, intact):  # (a torn tail is cut first, 3.5)
                h.find(target, "a refused resume changed the file", str(exc), data)
            return
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/resume", exc, data)
            return
        try:
            session.status  # noqa: B018  (what the screen shows first)
            session.seat.lacking(session.have())
            session.seat.claimable()
        except Exception as exc:  # noqa: BLE001
            h.crash(f"{target}/resumed", exc, data)
        finally:
            session.close()
        h.outcomes[target, "resumed" + (" (offered)" if offered else "")] += 1
        if not path.read_bytes().startswith(intact):
            h.find(target, "resuming lost records of the file", "", data)
    finally:
        path.unlink(missing_ok=True)


def run_table_resume(h: Harness, tc: TableCorpus, n: int) -> None:
    """Unfinished seats (a recorded file cut after a random record), often damaged too."""
    rng = h.rng
    every = list(tc.files.values())

    async def batch() -> None:  # (a session keeps its clocks on trio's)
        with tempfile.TemporaryDirectory(prefix="p2pgotg-fuzz-") as folder:
            for _ in range(n):
                name = rng.choice(sorted(tc.files))
                reader = TableRecordReader()
                reader.feed_table(tc.files[name])
                assert reader.role is not None and reader.key is not None
                records = frames_of(with_join_secret(tc.files[name], reader.role))
                data = b"".join(records[:rng.randint(3, len(records))])
                if rng.random() < 0.6:
                    data, _ = mutate_table_file(data, rng, tc.same_table(name), every,
                                                tc.keys)
                with h.timed("table-resume"):
                    check_resume(h, data, tc.keys[reader.key], reader.role, Path(folder))

    threaded = TranscriptFile.THREADED
    TranscriptFile.THREADED = False  # (fsync in line: no worker threads to outlive a case)
    try:
        trio.run(batch)
    finally:
        TranscriptFile.THREADED = threaded
    h.inputs["table-resume"] += n


# -- target: a seat of a running honest table -----------------------------------------------------

def clone_seat(seat: TableSeat) -> TableSeat:
    """A copy of a seat to spoil (its message bodies, rules and key shared: never changed)."""
    memo: dict[int, Any] = {id(seat.rules): seat.rules, id(seat._key): seat._key}
    for chain in seat.flow.chains:
        for taken in chain:
            memo[id(taken.body)] = taken.body
    for pending in seat.flow.pending.values():
        memo[id(pending.body)] = pending.body
    return copy.deepcopy(seat, memo)


def table_seat_state(seat: TableSeat) -> tuple:
    flow, state = seat.flow, seat.flow.state
    game = None if state is None else (
        tuple(sorted(state.opened.items())), state.order, tuple(sorted(state.left.items())),
        len(state.claims), state.ended_early, tuple((e.seat, e.seq) for e in state.applied),
        tuple((e.seat, e.seq) for e in state.void),
        None if state.last_turn_end is None else (state.last_turn_end.seat,
                                                  state.last_turn_end.seq),
        None if state.game is None else (state.game.ply, state.game.to_act, state.game.over))
    return (
        flow.n, flow.game_id, flow.options, tuple(tuple(t.hash for t in c) for c in flow.chains),
        tuple(sorted(flow.pending)), len(flow.by_hash), len(flow.accepted),
        tuple((e.kind, e.seat, e.seq, e.place) for e in flow.events), flow.violation,
        tuple(flow.disputes), game, len(seat._out), len(seat._records), len(seat._waiting),
        seat._error, seat._my_hello, seat._seat_recorded,
    )


@dataclass
class TableFixture:
    """A seat of an honest table about to take another seat's real next message."""

    name: str
    build: Callable[[], tuple[TableSeat, bytes, dict[bytes, Any]]]
    pristine: TableSeat | None = None
    receiver: TableSeat | None = None
    message: bytes = b""  # the real next message
    author: Any = None  # its author's private key
    keys: dict[bytes, Any] = field(default_factory=dict)  # every seat's, by public key
    sent: list[bytes] = field(default_factory=list)  # messages the receiver holds
    maps: list[dict] = field(default_factory=list)  # their bodies, and the next one's
    taken: list[Any] = field(default_factory=list)  # the events the real message makes
    builds: int = 0

    def ready(self) -> TableSeat:
        if self.pristine is None:
            self.pristine, self.message, self.keys = self.build()
            self.sent = [data for _, data in self.pristine.accepted]
            self.maps = [unpack(Envelope.decode(m).body_bytes) for m in
                         [*self.sent, self.message]]
            self.author = self.keys[signer_of(self.message, self.keys) or b""]
            self.taken = clone_seat(self.pristine).receive(self.message, "fuzz")
            self.builds += 1
        if self.receiver is None:
            self.receiver = clone_seat(self.pristine)
        return self.receiver

    def spoil(self) -> None:
        self.receiver = None


def signer_of(data: bytes, keys: dict[bytes, Any]) -> bytes | None:
    """The public key, of those we hold, under which `data`'s signature verifies."""
    try:
        env = Envelope.decode(data)
    except WireError:
        return None
    return next((pub for pub in keys if env.verified_by(pub)), None)


Want = Callable[[Table, TableSeat, dict], bool]
Script = Callable[[Table, random.Random], None]


def table_walk(n: int, seed: int, want: Want, script: Script | None = None
               ) -> tuple[TableSeat, bytes, dict[bytes, Any]]:
    """A table of `n` seats played at random through a random relay order until the next
    message on some link is one `want` picks (given the table, its receiver and its body):
    (the receiver, the message, every seat's key)."""
    rng = random.Random(f"fz-table-{n}-{seed}")
    table = make_table(n, rng)
    pairs = {public_bytes(k): k for k in table_keys(n)}
    for _ in range(50_000):
        table.collect()
        if script is not None:
            script(table, rng)
            table.collect()
        for kind, link in table.moves():
            if kind == "up":
                receiver, data = table.host, link.up[0]
            else:
                at = table._next_down(link)  # (the relay's next message on that link)
                assert at is not None
                receiver, data = link.joiner, table.host.accepted[at][1]
            if want(table, receiver, unpack(Envelope.decode(data).body_bytes)):
                return receiver, data, pairs
        could = act_at_random(table, rng)
        if not table.step(rng) and not could:
            break
    raise RuntimeError("the table ended before the message wanted")


def _of(t: str, to_host: bool | None = None, ply: int = -1) -> Want:
    def want(table: Table, receiver: TableSeat, body: dict) -> bool:
        state = receiver.flow.state
        return (body.get("t") == t and (to_host is None or receiver.is_host is to_host)
                and (state.ply if state is not None else -1) >= ply)
    return want


def _once(act: Callable[[Table, random.Random], bool]) -> Script:
    """A script that makes `act` happen once, as soon as it can."""
    done = [False]

    def script(table: Table, rng: random.Random) -> None:
        if not done[0]:
            done[0] = act(table, rng)
    return script


def _in_play(table: Table, ply: int) -> bool:
    status = table.host.status()
    return status.phase == "play" and status.ply >= ply


def _talk(kind: str) -> Script:
    def act(table: Table, rng: random.Random) -> bool:
        if not _in_play(table, 3):
            return False
        seat = table.links[-1].joiner
        if kind == "chat":
            seat.chat("who takes the north tower?")
        else:
            seat.whisper(0, "let us take Green first")
        return True
    return _once(act)


def _resign(table: Table, rng: random.Random) -> bool:
    if not _in_play(table, 5):
        return False
    table.links[0].joiner.resign()
    return True


def _claim(table: Table, rng: random.Random) -> bool:
    """The first seat that may claim against one that owes claims (its word, SPEC 5.7)."""
    if not _in_play(table, 4):
        return False
    for seat in table.seats:
        for target, _ in seat.claimable():
            seat.claim(target, "abandoned")
            return True
    return False


def _claim_and_dispute() -> Script:
    claimed = _once(_claim)

    def dispute(table: Table, rng: random.Random) -> bool:
        for seat in table.seats:
            state = seat.flow.state
            for claim in [] if state is None else state.claims:
                if claim.value[0] == seat.my_seat:
                    seat.dispute((claim.seat, claim.seq))
                    return True
        return False
    disputed = _once(dispute)

    def script(table: Table, rng: random.Random) -> None:
        claimed(table, rng)
        disputed(table, rng)
    return script


def _after_end(table: Table, rng: random.Random) -> bool:
    if not table.host.status().over:
        return False
    table.links[-1].joiner.chat("good game")
    return True


TABLE_FIXTURES: list[tuple[str, Callable[[], tuple[TableSeat, bytes, dict[bytes, Any]]]]] = [
    ("hello", lambda: table_walk(3, 1, _of("hello", True))),
    ("hello-relayed", lambda: table_walk(4, 2, _of("hello", False))),
    ("roster", lambda: table_walk(3, 3, _of("roster"))),
    ("coin", lambda: table_walk(3, 4, _of("coin_open", True))),
    ("coin-relayed", lambda: table_walk(4, 5, _of("coin_open", False))),
    ("setup-choice", lambda: table_walk(3, 6, _of("action", True))),
    ("action", lambda: table_walk(3, 7, _of("action", True, 14))),
    ("action-relayed", lambda: table_walk(4, 8, _of("action", False, 20))),
    ("heads", lambda: table_walk(4, 9, _of("heads", None, 8))),
    ("chat", lambda: table_walk(3, 10, _of("chat"), _talk("chat"))),
    ("whisper", lambda: table_walk(4, 11, _of("whisper"), _talk("whisper"))),
    ("resign", lambda: table_walk(4, 12, _of("resign"), _once(_resign))),
    ("claim", lambda: table_walk(3, 13, _of("forfeit_claim"), _once(_claim))),
    ("dispute", lambda: table_walk(4, 14, _of("dispute"), _claim_and_dispute())),
    ("after-end", lambda: table_walk(3, 15, _of("chat"), _once(_after_end))),
]

#: A body of every table type (SPEC 5.3 to 5.8), to send where another is due.
TABLE_TEMPLATES: list[dict] = [
    {"t": "roster"}, {"t": "coin_open", "secret": bytes(32)}, {"t": "heads"},
    {"t": "resign"}, {"t": "chat", "text": "hi"},
    {"t": "whisper", "to": 1, "box": bytes(40)}, {"t": "whisper", "to": 0, "box": bytes(1160)},
    {"t": "forfeit_claim", "seat": 1, "reason": "time"},
    {"t": "forfeit_claim", "seat": 2, "reason": "abandoned"},
    {"t": "dispute", "claim": [1, 3]}, {"t": "dispute", "claim": [0, 1]},
    {"t": "action", "ply": 0, "code": 0}, {"t": "action", "ply": 7, "code": 99},
]


def table_rechain(fx: TableFixture, body: dict, seat: int | None = None) -> dict:
    """The chain fields a real next message of `seat` (the real author's by default) would
    carry, as the receiver holds the chains (so that the type's checks are reached)."""
    real = fx.maps[-1]
    body = dict(body)
    flow = fx.receiver.flow if fx.receiver is not None else None
    if seat is None or flow is None or not flow.rostered:
        for k in ("seq", "prev", "from", "acks", "game"):
            if k in real:
                body[k] = real[k]
        return body
    chain = flow.chains[seat]
    body.update({"seq": len(chain), "prev": chain[-1].hash, "from": seat,
                 "game": flow.game_id, "acks": [
                     ZERO_HASH if j == seat or not flow.chains[j] else flow.chains[j][-1].hash
                     for j in range(flow.n)]})
    return body


def retarget_acks(fx: TableFixture, body: dict, rng: random.Random) -> dict:
    """The body with one `acks` entry naming another message its receiver holds (an older
    one, one of another seat, or none): SPEC 5.2 step 5's checks."""
    flow = fx.receiver.flow if fx.receiver is not None else None
    acks = body.get("acks")
    if flow is None or not isinstance(acks, list) or not acks or not flow.rostered:
        return body
    acks = list(acks)
    j = rng.randrange(len(acks))
    held = [t.hash for chain in flow.chains for t in chain]
    acks[j] = ZERO_HASH if rng.random() < 0.2 else rng.choice(held)
    return {**body, "acks": acks}


def signing_key(fx: TableFixture, body: dict, rng: random.Random) -> Any:
    """Mostly the real author's key; now and then the key of the seat the body names (its
    `from`, or a hello's `key`), which makes that seat the author."""
    if rng.random() < 0.7:
        return fx.author
    key = body.get("key")
    if body.get("t") == "hello" and isinstance(key, bytes) and key in fx.keys:
        return fx.keys[key]
    seat, flow = body.get("from"), fx.receiver.flow if fx.receiver is not None else None
    if flow is not None and flow.rostered and isinstance(seat, int) and 0 <= seat < flow.n:
        return fx.keys.get(flow.key_of(seat), fx.author)
    return fx.author


def table_input(fx: TableFixture, rng: random.Random) -> bytes:
    fx.ready()
    real = fx.maps[-1]
    r = rng.random()
    if r < 0.45:  # the real next message, a structured change, signed again
        body = mutate_body(real, rng, fx.maps, TABLE_WORDS)
        data = signed(signing_key(fx, body, rng), body)
    elif r < 0.55:  # its acks naming other messages held
        body = retarget_acks(fx, real, rng)
        data = signed(fx.author, mutate_body(body, rng, fx.maps, TABLE_WORDS)
                      if rng.random() < 0.3 else body)
    elif r < 0.67:  # another type, chained as the next message: refused where it is not due?
        body = table_rechain(fx, rng.choice(TABLE_TEMPLATES + fx.maps))
        if rng.random() < 0.4:
            body = mutate_body(body, rng, fx.maps, TABLE_WORDS)
        data = signed(signing_key(fx, body, rng), body)
    elif r < 0.72 and fx.receiver is not None and fx.receiver.flow.rostered:
        seat = rng.randrange(fx.receiver.flow.n)  # a message of another seat, by its key
        body = table_rechain(fx, rng.choice(TABLE_TEMPLATES + fx.maps), seat)
        data = signed(fx.keys[fx.receiver.flow.key_of(seat)], body)
    elif r < 0.8:  # the real body with bytes changed, signed again
        body_bytes = mutate_bytes(Envelope.decode(fx.message).body_bytes, rng, [])
        data = pack({"body": body_bytes, "sig": sign(fx.author, body_bytes)})
    elif r < 0.92:  # bytes changed anywhere (the signature, the envelope)
        data = mutate_bytes(fx.message, rng, fx.sent[-8:])
    elif r < 0.96 and fx.sent:  # a resend of a message held: must change nothing
        data = rng.choice(fx.sent)
    else:
        data = rng.randbytes(rng.randint(0, 300))
    return data if data is not None else rng.randbytes(50)


def convicts_its_signer(seat: TableSeat, exc: TableViolation, data: bytes,
                        keys: dict[bytes, Any]) -> bool:
    """Whether a signed violation names the seat whose key signed `data` (SPEC 5.2: only
    what a seat signed convicts it)."""
    if exc.seat is None or not 0 <= exc.seat < seat.flow.n:
        return False
    return seat.flow.key_of(exc.seat) == signer_of(data, keys)


def check_table_seat(h: Harness, fx: TableFixture, data: bytes, then_real: bool = False,
                     target: str = "table-frames") -> None:
    """A seat takes a frame (SPEC 5.2, 5.4): it is taken, ignored, waits, or is refused with
    a TableViolation; one that proves nothing changes nothing; a signed one keeps the
    message as evidence, stops the table and names its signer, never another seat."""
    seat = fx.ready()
    before = table_seat_state(seat)
    n_accepted, n_records, n_waiting = len(seat.flow.accepted), len(seat._records), \
        len(seat._waiting)
    where = f"{target}/{fx.name}"
    try:
        seat.receive(data, "fuzz")
    except TableViolation as exc:
        h.outcomes[target, f"refused: {exc.rule}"] += 1
        if exc.signed:
            if not convicts_its_signer(seat, exc, data, fx.keys):
                h.find(where, f"convicted a seat that did not sign it ({exc.rule})", str(exc),
                       data)
            if (seat.flow.accepted[n_accepted:] != [(exc.seat, data)]
                    or seat._records[n_records:] != [("msg", exc.seat, data)]
                    or seat.failed is not exc or seat.flow.violation is not exc):
                h.find(where, "evidence not kept as documented", str(exc), data)
                fx.spoil()
                return
            del seat.flow.accepted[n_accepted:]
            del seat._records[n_records:]
            seat.flow.violation = seat._error = None  # back to before, to reuse the seat
        elif seat.failed is not None or seat.flow.violation is not None:
            h.find(where, "stopped by a violation that proves nothing", str(exc), data)
        if table_seat_state(seat) != before:
            h.find(where, f"state changed on refused input ({exc.rule})", str(exc), data)
            fx.spoil()
        return
    except Exception as exc:  # noqa: BLE001
        h.crash(where, exc, data)
        fx.spoil()
        return
    try:
        seat.status()
        seat.claimable()
    except Exception as exc:  # noqa: BLE001
        h.crash(f"{where}/status", exc, data)
        fx.spoil()
        return
    after = table_seat_state(seat)
    if after == before:
        h.outcomes[target, "ignored (a resend)"] += 1
    elif len(seat._waiting) == n_waiting + 1 and seat._waiting[-1][1] == data:
        h.outcomes[target, "waits for what it acknowledges"] += 1
        if then_real:
            take_real_after(h, fx, data, target)
            return
        del seat._waiting[-1]
        if table_seat_state(seat) != before:
            h.find(where, "state changed by a message that waits", "", data)
            fx.spoil()
    else:
        h.outcomes[target, "accepted"] += 1
        fx.spoil()  # a valid message moved the table on: start again from the copy


def take_real_after(h: Harness, fx: TableFixture, waiting: bytes, target: str) -> None:
    """The real next message, after `waiting` (which waits for what it acknowledges): it is
    taken with the events it makes alone; what waited is taken after it, or refused (SPEC
    5.4), convicting none but its own signer."""
    seat = fx.ready()
    where = f"{target}/{fx.name}"
    try:
        events = seat.receive(fx.message, "fuzz")
    except TableViolation as exc:
        h.outcomes[target, f"then the real one: refused ({exc.rule})"] += 1
        if not exc.signed:
            h.find(where, f"the real next message refused for one that waited ({exc.rule})",
                   str(exc), waiting)
        elif not convicts_its_signer(seat, exc, waiting, fx.keys):
            h.find(where, f"convicted a seat that did not sign it ({exc.rule})", str(exc),
                   waiting)
        fx.spoil()
        return
    except Exception as exc:  # noqa: BLE001
        h.crash(where, exc, waiting)
        fx.spoil()
        return
    h.outcomes[target, "then the real one: taken"] += 1
    if events[:len(fx.taken)] != fx.taken:
        h.find(where, "the real next message's events lost after one that waited",
               f"{events} instead of {fx.taken}", waiting)
    fx.spoil()


def check_joining(h: Harness, fx: TableFixture, rng: random.Random,
                  target: str = "table-frames") -> None:
    """A joiner's first frame, the host's hello, damaged (SPEC 5.3): it joins, or is
    refused with LocalProtocolError saying why."""
    seat = fx.ready()
    host = seat.flow.host_hello
    assert host is not None
    key = fx.keys[host.body["key"]]
    raw = unpack(host.body.encode())
    r = rng.random()
    if r < 0.6:
        data = signed(key, mutate_body(raw, rng, [raw], TABLE_WORDS))
    elif r < 0.8:
        body = mutate_bytes(host.body.encode(), rng, [])
        data = pack({"body": body, "sig": sign(key, body)})
    else:
        data = mutate_bytes(host.env, rng, [])
    joiner_key = next(k for pub, k in fx.keys.items() if pub != host.body["key"])
    try:
        TableSeat.joiner(TOWERS_TABLE, joiner_key, data or b"", TABLE_TLS)
        h.outcomes[target, "joined"] += 1
    except LocalProtocolError:
        h.outcomes[target, "refused to join"] += 1
    except Exception as exc:  # noqa: BLE001
        h.crash(f"{target}/joining", exc, data or b"")


def run_table_frames(h: Harness, fixtures: list[TableFixture], n: int) -> None:
    rng = h.rng
    for fx in fixtures:
        fx.ready()  # (each table is played once, before the timed cases)
    for i in range(n):
        fx = fixtures[i % len(fixtures)]
        with h.timed("table-frames"):
            if rng.random() < 0.05:
                check_joining(h, fx, rng)
            else:
                check_table_seat(h, fx, table_input(fx, rng), rng.random() < 0.3)
    h.inputs["table-frames"] += n


# -- the whole run ----------------------------------------------------------------------------

SHARES = {"frames": 0.25, "codecs": 0.25, "peer": 0.33, "peer-hypothesis": 0.08,
          "verifier": 0.08, "files": 0.01,
          "table-files": 0.01, "table-resume": 0.004, "table-frames": 0.02}
TABLE_TARGETS = ("table-files", "table-resume", "table-frames")


def run(total: int, seed: int = 1, quiet: bool = False,
        only: Sequence[str] | None = None) -> Harness:
    """`total` inputs shared among the targets `only` names (all by default) as SHARES
    weighs them."""
    h = Harness(random.Random(seed))
    names = list(only or SHARES)
    weight = sum(SHARES[name] for name in names)
    budget = {name: max(1, round(total * SHARES[name] / weight)) for name in names}
    corpus = load_corpus()
    fixtures = [Fixture(name, build) for name, build in FIXTURES]
    positions = verifier_positions(corpus, h.rng, 60) if "verifier" in names else []
    tables = load_table_corpus()
    table_fixtures = [TableFixture(name, build) for name, build in TABLE_FIXTURES]
    runners: dict[str, Callable[[int], None]] = {
        "frames": lambda n: run_frames(h, n),
        "codecs": lambda n: run_codecs(h, corpus, n),
        "files": lambda n: run_files(h, corpus, n),
        "verifier": lambda n: run_verifier(h, positions, n),
        "peer": lambda n: run_peer(h, fixtures, n),
        "peer-hypothesis": lambda n: run_peer_hypothesis(h, fixtures, n, seed),
        "table-files": lambda n: run_table_files(h, tables, n),
        "table-resume": lambda n: run_table_resume(h, tables, n),
        "table-frames": lambda n: run_table_frames(h, table_fixtures, n),
    }
    for name, n in budget.items():
        t = time.perf_counter()
        runners[name](n)
        h.seconds[name] += time.perf_counter() - t
        if not quiet:
            rate = h.inputs[name] / max(h.seconds[name], 1e-9)
            print(f"  {name}: {h.inputs[name]} inputs in {h.seconds[name]:.1f} s "
                  f"({rate:,.0f}/s)", flush=True)
    if "peer" in names or "peer-hypothesis" in names:
        h.outcomes["peer", "fixtures built"] = sum(fx.builds for fx in fixtures)
    if "table-frames" in names:
        h.outcomes["table-frames", "tables built"] = sum(fx.builds for fx in table_fixtures)
    return h


def report(h: Harness) -> None:
    total, secs = sum(h.inputs.values()), sum(h.seconds.values())
    print(f"{total} inputs in {secs:.1f} s ({total / max(secs, 1e-9):,.0f} inputs/s); "
          f"frame decoder kept at most {h.peak_kept} bytes between reads "
          f"(limit {MAX_FRAME + HEADER.size})")
    for target in sorted({t for t, _ in h.outcomes}):
        top = sorted(((k, v) for (t, k), v in h.outcomes.items() if t == target),
                     key=lambda kv: -kv[1])
        print(f"  {target}: " + ", ".join(f"{k} {v}" for k, v in top[:12])
              + (f", ... ({len(top) - 12} more)" if len(top) > 12 else ""))
    for target, took in sorted(h.slowest.items()):
        print(f"  {target}: the slowest case took {took * 1000:.0f} ms")
    if not h.findings:
        print("findings: none")
    for f in h.findings.values():
        print(f"FINDING {f.target}: {f.what} (x{f.count})\n  {f.detail}\n  input: "
              f"{f.example[:120].hex()}")


# -- atheris (coverage-guided) ----------------------------------------------------------------

def run_atheris(runs: int, seed: int) -> None:
    h = Harness(random.Random(seed))
    corpus = load_corpus()
    fixtures = [Fixture(name, build) for name, build in FIXTURES]
    for fx in fixtures:
        fx.ready()
    started = time.perf_counter()

    def one_input(data: bytes) -> None:
        # byte 0: the target; byte 1: the fixture (or the chunk size); the rest: the input
        h.inputs["atheris"] += 1
        if h.inputs["atheris"] == runs:  # (libFuzzer ends the process without atexit)
            secs = time.perf_counter() - started
            h.seconds["atheris"] = secs
            print(f"atheris: coverage-guided; corpus in {out_dir}", flush=True)
            report(h)
        if len(data) < 2:
            return
        which, arg, rest = data[0] % 5, data[1], data[2:]
        if which == 0:
            frames, bad, left = reference_frames(rest)
            chunk = arg + 1
            pieces = [rest[i:i + chunk] for i in range(0, len(rest), chunk)]
            fuzz_frames(h, rest, pieces, frames, bad, left, chunk % 2 == 0)
        elif which == 1:
            fuzz_codecs(h, rest)
        else:
            fx = fixtures[arg % len(fixtures)]
            fx.ready()
            assert fx.sender is not None
            if which == 2:  # the bytes as a body map (if they are one), chained, signed
                try:
                    body = unpack(rest)
                except WireError:
                    body = None
                if isinstance(body, dict):
                    rest = signed(fx.sender._key, rechain(fx, body)) or rest
            elif which == 3:  # the bytes as body bytes, signed
                rest = pack({"body": rest, "sig": sign(fx.sender._key, rest)})
            check_peer(h, fx, rest, "peer-atheris")
        if h.findings:
            report(h)
            raise RuntimeError("finding (see above)")

    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"p2pgotg-atheris-{os.getpid()}"
    out_dir, seeds = base / "found", base / "seeds"  # libFuzzer adds to the first
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds.mkdir(parents=True, exist_ok=True)
    for i, fx in enumerate(fixtures):  # the real next messages and bodies as seeds
        assert fx.sender is not None
        body = Envelope.decode(fx.message).body_bytes
        (seeds / f"b{i}").write_bytes(bytes([2, i]) + body)
        (seeds / f"s{i}").write_bytes(bytes([3, i]) + body)
        (seeds / f"e{i}").write_bytes(bytes([4, i]) + fx.message)
    for i, m in enumerate(corpus.messages[:100]):
        (seeds / f"m{i}").write_bytes(bytes([1, 0]) + m)
        (seeds / f"f{i}").write_bytes(bytes([0, i]) + HEADER.pack(len(m)) + m)
    atheris.Setup([sys.argv[0], f"-runs={runs}", f"-seed={seed}", "-max_len=4096",
                   str(out_dir), str(seeds)], one_input)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000,
                        help="inputs in total across the targets (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", type=lambda text: text.split(","), default=None,
                        metavar="TARGET,...",
                        help=f"only these targets ({', '.join(SHARES)}; tables: "
                             f"{','.join(TABLE_TARGETS)})")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write each finding's whole input to a file in DIR")
    parser.add_argument("--atheris", type=int, metavar="RUNS", default=0,
                        help="instead: atheris, coverage-guided, for RUNS inputs")
    args = parser.parse_args(argv)
    if args.only and not set(args.only) <= set(SHARES):
        parser.error(f"--only: no target {', '.join(set(args.only) - set(SHARES))}")
    if args.atheris:
        run_atheris(args.atheris, args.seed)
        return 0
    print(f"fuzzing {args.inputs} inputs, seed {args.seed}", flush=True)
    h = run(args.inputs, args.seed, only=args.only)
    report(h)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(h.findings.values()):
            (args.keep / f"{i}-{f.target.replace('/', '-')}.bin").write_bytes(f.example)
    return 1 if h.findings else 0


if __name__ == "__main__":
    sys.exit(main())
