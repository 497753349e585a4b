"""The conformance runner (protocol/conformance/) against this implementation.

The runner is what another implementation would use: it starts `p2pgotg host --bot` as a
separate process for every case, plays a scripted, partly dishonest joiner against it over
a real TLS socket, and judges it only by what comes over the wire, its output and its exit
status. Every case must pass; a case may be marked expected-to-fail only with a reason
(a bug or a missing flag for the other side of the house to fix).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.conformance.cases import CASES
from protocol.conformance.harness import names_rule
from protocol.conformance.runner import select_cases

ROOT = Path(__file__).resolve().parents[1]  # (pytest puts it on sys.path: pyproject.toml)

HOST_CMD = (f"{shlex.quote(sys.executable)} -m p2pgotg host --bot --bind 127.0.0.1 "
            "--port {port} {options}")
SAFETY = 300  # seconds: a net against a hung run, never a measure of speed


def run_runner(tmp_path: Path, *args: str, host_cmd: str = HOST_CMD
               ) -> tuple[subprocess.CompletedProcess, dict | None]:
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "protocol.conformance.runner", "--host-cmd", host_cmd,
         "--report", str(report), *args],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=SAFETY)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


@pytest.mark.slow
def test_every_case_passes_against_p2pgotg(tmp_path):
    proc, report = run_runner(tmp_path, "--jobs", "2")
    assert report is not None, proc.stderr
    results = {c["id"]: c for c in report["cases"]}
    assert list(results) == [c.id for c in CASES], "every case ran, in order"
    failed = [f"{c['id']} {c['title']}: {c['observed']}" for c in results.values()
              if c["result"] == "FAIL"]
    assert not failed, "\n".join(failed) + "\n\n" + proc.stdout
    for c in results.values():
        if c["result"] in ("XFAIL", "XPASS"):
            assert c["xfail"], f"{c['id']} is expected to fail without a stated reason"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # one line per case in the table, with its verdict
    for case_id, c in results.items():
        assert any(line.split()[:1] == [case_id] and c["result"] in line.split()
                   for line in proc.stdout.splitlines()), case_id


def test_a_host_that_does_not_start_fails_every_case_and_the_exit_status_says_so(tmp_path):
    broken = f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)' {{port}} {{options}}"
    proc, report = run_runner(tmp_path, "--cases", "1.1,3.1", host_cmd=broken)
    assert proc.returncode == 1
    assert report is not None
    assert [c["result"] for c in report["cases"]] == ["FAIL", "FAIL"]
    assert all("exited (status 3) before printing an invite" in c["observed"]
               for c in report["cases"])


def test_a_template_without_its_placeholders_is_a_usage_error(tmp_path):
    proc, report = run_runner(tmp_path, host_cmd="p2pgotg host --bot")
    assert proc.returncode == 2 and report is None
    assert "{port}" in proc.stderr


def test_cases_are_numbered_once_and_each_states_what_spec_requires():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert [c.key for c in CASES] == sorted(c.key for c in CASES)
    for c in CASES:
        assert c.title and c.expect and c.spec, c.id
        assert c.host in ("exits", "runs", "any"), c.id
    xfails = [c for c in CASES if c.xfail]
    assert all(len(c.xfail) > 40 for c in xfails), "a reason, not a word"


@pytest.mark.parametrize("spec, expected", [
    (None, None),
    ("3.4", ["3.4"]),
    ("1.1,4", ["1.1", "4.1", "4.2", "4.3", "4.4"]),
    ("3.8-3.10", ["3.8", "3.9", "3.10"]),
    ("5-6", [c.id for c in CASES if c.key[0] in (5, 6)]),
    ("1-40", None),
])
def test_case_selection(spec, expected):
    chosen = [c.id for c in select_cases(spec)]
    assert chosen == (expected if expected is not None else [c.id for c in CASES])


@pytest.mark.parametrize("spec", ["3.99", "x", "9"])
def test_selecting_nothing_is_an_error(spec):
    with pytest.raises(ValueError):
        select_cases(spec)


def test_rule_names_are_matched_as_whole_words():
    reason = "you broke the protocol: joiner broke rule chain-ack at message 9"
    assert names_rule(reason, "chain-ack")
    assert not names_rule(reason, "ack")
    assert not names_rule("joiner broke rule chain-prev", "chain")
    assert not names_rule("rule false-opening-extra", "false-opening")
