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


#: Each Towers cheat and the rule SPEC 4.11's table (and 2.4, 2.6 for the hello and the
#: claims) convicts it with: `verify` of the host's own file exits 1 naming it.
TOWERS_CONVICTIONS = {
    "8.4": "options", "8.5": "options", "8.6": "illegal-action", "8.7": "illegal-action",
    "8.8": "illegal-action", "8.9": "out-of-turn", "8.10": "out-of-turn",
    "8.11": "equivocation", "8.13": "false-claim", "8.14": "false-claim",
    "8.15": "no-draw-offer", "8.16": "illegal-action",
}
TOWERS_CLEAN = ("8.1", "8.2", "8.12", "8.17", "8.18")  # verify exits 0 (SPEC 4.11 the end)

#: The host under test, then `p2pgotg verify` of each game it saved, written where the test
#: reads it (the runner itself never reads the host's files).
VERIFYING_HOST = """\
out=$1; home=$2; py=$3; port=$4; shift 4
"$py" -m p2pgotg host --bot --bind 127.0.0.1 --port "$port" "$@"
status=$?
find "$home" -name '*.gtr' | while read -r game; do
    "$py" -m p2pgotg verify "$game" > "$out/$(basename "$(dirname "$home")")" 2>&1
    echo "verify exit $?" >> "$out/$(basename "$(dirname "$home")")"
done
exit $status
"""


@pytest.mark.slow
def test_the_towers_cases_pass_and_the_hosts_own_files_convict_each_cheater(tmp_path):
    verdicts = tmp_path / "verdicts"
    verdicts.mkdir()
    wrapper = tmp_path / "host.sh"
    wrapper.write_text(VERIFYING_HOST)
    host_cmd = (f"sh {shlex.quote(str(wrapper))} {shlex.quote(str(verdicts))} {{home}} "
                f"{shlex.quote(sys.executable)} {{port}} {{options}}")
    proc, report = run_runner(tmp_path, "--cases", "8", "--jobs", "2", host_cmd=host_cmd)
    assert report is not None, proc.stderr
    results = {c["id"]: c for c in report["cases"]}
    assert list(results) == [c.id for c in CASES if c.key[0] == 8]
    assert set(TOWERS_CONVICTIONS) | set(TOWERS_CLEAN) | {"8.3"} == set(results)
    failed = [f"{c['id']} {c['title']}: {c['observed']}" for c in results.values()
              if c["result"] != "PASS"]
    assert not failed, "\n".join(failed) + "\n\n" + proc.stdout
    assert proc.returncode == 0
    for case_id, c in results.items():
        assert c["host"]["argv"][:2] == ["sh", str(wrapper)]
        assert c["options"][:2] == ["--game", "towers"], case_id
        home = Path(c["host"]["argv"][3])
        said = verdicts / home.parent.name
        if case_id == "8.3":  # (the joiner left before its hello: no game, host killed)
            assert not said.exists()
            continue
        text = said.read_text()
        if case_id in TOWERS_CLEAN:
            assert text.endswith("verify exit 0\n") and "clean" in text, (case_id, text)
        else:
            rule = TOWERS_CONVICTIONS[case_id]
            assert text.endswith("verify exit 1\n"), (case_id, text)
            assert names_rule(text, rule) and "joiner" in text and "broke rule" in text, \
                (case_id, text)
    assert "draw agreed" in results["8.18"]["observed"]  # (this host's bot takes a draw
    # when it is not ahead, and the case offers one only then)


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
    ("8.17-8", ["8.17", "8.18"]),
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
