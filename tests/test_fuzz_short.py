"""The fuzzing harness of bench/fuzz.py, run short: a few thousand inputs over every target
(the frame decoder, the codecs, transcript files, the verifier on recorded games, a live
peer at each phase, hypothesis-generated bodies, and SPEC chapter 5's tables: seat files,
resuming from them, a seat of a running table) must give no finding. Then planted bugs
show that the harness would catch one."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import pytest

from p2pgotg.games.gotg.flow import GotgFlow
from p2pgotg.net.transport.framing import FrameDecoder
from p2pgotg.protocol.table.flow import TableFlow, TableViolation
from p2pgotg.protocol.table.transcript import TableRecordReader
from p2pgotg.protocol.transcript import TranscriptError

_PATH = Path(__file__).resolve().parent.parent / "bench" / "fuzz.py"


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("bench_fuzz", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_fuzz"] = module  # (dataclasses look their module up by name)
    spec.loader.exec_module(module)
    return module


def _describe(h) -> str:
    return "\n".join(f"{f.target}: {f.what} x{f.count}\n{f.detail}\ninput {f.example.hex()}"
                     for f in h.findings.values())


def test_a_short_fuzz_run_finds_nothing(fuzz):
    h = fuzz.run(4000, seed=20240, quiet=True)
    assert not h.findings, _describe(h)
    assert sum(h.inputs.values()) >= 3900
    assert set(h.inputs) == set(fuzz.SHARES)
    # the inputs reached the protocol's own checks, not only the decoders
    rules = {k for (t, k) in h.outcomes if t == "peer"}
    assert {"refused: out-of-turn", "refused: false-opening", "accepted"} <= rules, rules
    assert h.peak_kept <= fuzz.MAX_FRAME + fuzz.HEADER.size


def test_the_harness_catches_a_decoder_that_keeps_growing(fuzz, monkeypatch):
    def keeps_everything(self, data):
        self._buffer += data

    monkeypatch.setattr(FrameDecoder, "receive_data", keeps_everything)
    h = fuzz.Harness(fuzz.random.Random(1))
    fuzz.run_frames(h, 300)
    assert any("keeps what it is fed" in f.what for f in h.findings.values())


def test_the_harness_catches_a_state_change_on_refused_input(fuzz, monkeypatch):
    original = GotgFlow.MESSAGES["move"]
    calls = itertools.count()

    def leaky(self, role, body, ack, fail):
        self.draw_offer = f"leak {next(calls)}"  # changed before the checks refuse the move
        return original(self, role, body, ack, fail)

    monkeypatch.setitem(GotgFlow.MESSAGES, "move", leaky)
    h = fuzz.Harness(fuzz.random.Random(2))
    fixtures = [fuzz.Fixture(name, build) for name, build in fuzz.FIXTURES
                if name == "play"]
    fuzz.run_peer(h, fixtures, 300)
    assert any("state changed on refused input" in f.what for f in h.findings.values())


def test_a_short_table_fuzz_run_finds_nothing(fuzz):
    h = fuzz.run(1000, seed=20241, quiet=True, only=fuzz.TABLE_TARGETS)
    assert not h.findings, _describe(h)
    assert set(h.inputs) == set(fuzz.TABLE_TARGETS)
    # the inputs reached the kernel's own checks, signed and not, and every verdict of
    # verify; and damaged seats' files were both resumed and refused
    rules = {k for (t, k) in h.outcomes if t == "table-frames"}
    assert {"refused: chain-ack", "refused: out-of-turn", "refused: bad-signature",
            "refused: equivocation", "accepted", "waits for what it acknowledges"} <= rules
    verdicts = {k for (t, k) in h.outcomes if t == "table-files"}
    assert {"unreadable file", "verify unreadable", "verify violation", "verify clean",
            "verify unfinished", "verify claimed"} <= verdicts, verdicts
    resumed = {k for (t, k) in h.outcomes if t == "table-resume"}
    assert {"resumed (offered)", "refused: TableViolation"} <= resumed, resumed


def test_the_harness_catches_a_table_conviction_on_a_broken_signature(fuzz, monkeypatch):
    original = TableFlow._authentic

    def trusting(self, seat, env, data):  # a broken signature kept as the seat's evidence
        try:
            return original(self, seat, env, data)
        except TableViolation as v:
            if v.rule != "bad-signature":
                raise
            raise self._signed(TableViolation(seat, v.rule, v.detail, v.index, True),
                               data) from None

    monkeypatch.setattr(TableFlow, "_authentic", trusting)
    h = fuzz.Harness(fuzz.random.Random(3))
    fixtures = [fuzz.TableFixture(name, build) for name, build in fuzz.TABLE_FIXTURES
                if name == "action"]
    fuzz.run_table_frames(h, fixtures, 300)
    assert any("did not sign" in f.what for f in h.findings.values()), _describe(h)


def test_the_harness_catches_a_table_file_error_of_another_type(fuzz, monkeypatch):
    original = TableRecordReader._record

    def careless(self, rec):
        try:
            return original(self, rec)
        except TranscriptError as exc:
            raise KeyError(str(exc)) from None

    monkeypatch.setattr(TableRecordReader, "_record", careless)
    h = fuzz.Harness(fuzz.random.Random(4))
    fuzz.run_table_files(h, fuzz.load_table_corpus(), 200)
    assert any(f.target == "table-files/read" and f.what.startswith("KeyError")
               for f in h.findings.values()), _describe(h)
