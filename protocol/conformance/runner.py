"""The conformance runner: a scripted, partly dishonest joiner against any implementation
of the p2pgotg protocol that can host a game (in the manner of Autobahn's test suite).

    python -m protocol.conformance.runner \\
        --host-cmd "p2pgotg host --bot --bind 127.0.0.1 --port {port} {options}" \\
        [--cases 1-6] [--report report.json] [--jobs 2] [--list]

For each case the runner picks a free loopback port, starts the host command with `{port}`
and the case's `{options}` filled in (and `{home}`, a fresh empty directory, also exported
as P2PGOTG_HOME, XDG_CONFIG_HOME and XDG_DATA_HOME), reads the host's standard output up to
a line `invite: CODE`, connects to 127.0.0.1 as the joiner (TLS, checking the invite's pin),
says `hi`, plays the case's script, checks what the host did, and kills the host's process
group. Exit status: 0 when no case failed (expected failures allowed), 1 when one did,
2 for a usage error. See protocol/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python protocol/conformance/runner.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import trio

from protocol.conformance.cases import CASES, GROUPS, Case
from protocol.conformance.harness import (
    Ctx,
    Fail,
    HostProcess,
    Missed,
    free_port,
)

DEFAULT_SEED = 20240601
EXIT_GRACE = 5.0  # seconds the host has to exit once its game is over


@dataclass
class Outcome:
    case: Case
    result: str = "FAIL"  # PASS, FAIL, XFAIL, XPASS
    observed: str = ""
    seconds: float = 0.0
    attempts: int = 0
    argv: list[str] = field(default_factory=list)
    exit: int | None = None
    stdout_tail: list[str] = field(default_factory=list)
    stderr_tail: list[str] = field(default_factory=list)
    trace: str | None = None

    def as_json(self) -> dict:
        c = self.case
        return {
            "id": c.id, "group": GROUPS[c.key[0]], "title": c.title, "expect": c.expect,
            "spec": c.spec, "options": list(c.options), "result": self.result,
            "observed": self.observed, "xfail": c.xfail, "seconds": round(self.seconds, 2),
            "attempts": self.attempts,
            "host": {"argv": self.argv, "exit": self.exit, "stdout_tail": self.stdout_tail,
                     "stderr_tail": self.stderr_tail},
            **({"traceback": self.trace} if self.trace else {}),
        }


# -- choosing cases ------------------------------------------------------------------------

def _case_key(text: str) -> tuple[int, ...]:
    try:
        key = tuple(int(p) for p in text.strip().split("."))
    except ValueError:
        raise ValueError(f"{text!r} is not a case number like 3 or 3.4") from None
    if not key or len(key) > 2:
        raise ValueError(f"{text!r} is not a case number like 3 or 3.4")
    return key


def select_cases(spec: str | None, cases: Sequence[Case] = CASES) -> list[Case]:
    """Cases named by `spec`: comma-separated items, each a group (`3`), a case (`3.4`) or
    an inclusive range of either (`1-6`, `3.2-3.9`, `1.10-2`). None or "" selects all."""
    if not spec:
        return list(cases)
    chosen: set[str] = set()
    for item in spec.split(","):
        if not item.strip():
            continue
        if "-" in item:
            lo_text, hi_text = item.split("-", 1)
            lo, hi = _case_key(lo_text), _case_key(hi_text)
            picked = [c for c in cases if c.key[:len(lo)] >= lo and c.key[:len(hi)] <= hi]
        else:
            key = _case_key(item)
            picked = [c for c in cases if c.key[:len(key)] == key]
        if not picked:
            raise ValueError(f"no case matches {item.strip()!r}")
        chosen.update(c.id for c in picked)
    return [c for c in cases if c.id in chosen]


# -- running one case ----------------------------------------------------------------------

def host_argv(template: str, port: int, options: Sequence[str], home: str) -> list[str]:
    text = template.format(port=port, options=shlex.join(options), home=shlex.quote(home))
    return shlex.split(text)


async def _check_host(case: Case, host: HostProcess) -> str:
    if case.host == "exits":
        code = await host.wait_exit(EXIT_GRACE)
        if code is None:
            raise Fail(f"the host was still running {EXIT_GRACE:g} s after its game was over")
        if code != 0:
            raise Fail(f"the host exited with status {code} after its game was over")
        return "; host exited 0"
    if case.host == "runs":
        code = host.returncode
        if code is not None:
            raise Fail(f"the host exited (status {code}) though no game of its was over")
        return "; host still waiting (killed)"
    return ""


async def _attempt(case: Case, template: str, seed: int, outcome: Outcome) -> str:
    """One run of the case against a fresh host: "pass", "fail" or "missed"."""
    with tempfile.TemporaryDirectory(prefix="p2pgotg-conformance-") as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = dict(os.environ, P2PGOTG_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
                   XDG_DATA_HOME=os.path.join(home, "data"), PYTHONUNBUFFERED="1")
        argv = host_argv(template, free_port(), case.options, home)
        outcome.argv = argv
        host = HostProcess(argv, env)
        status = "fail"
        try:
            async with trio.open_nursery() as nursery:
                try:
                    with trio.fail_after(case.timeout):
                        await host.start(nursery)
                        invite = await host.invite(10.0)
                        ctx = Ctx(host, invite, nursery, case.rules, seed)
                        observed = await case.script(ctx)
                        observed += await _check_host(case, host)
                    outcome.observed, status = observed, "pass"
                except Fail as exc:
                    outcome.observed = str(exc)
                except Missed as exc:
                    outcome.observed, status = f"runner: {exc}", "missed"
                except trio.TooSlowError:
                    outcome.observed = f"the case did not finish within {case.timeout:g} s"
                except Exception as exc:  # noqa: BLE001 - a bug in the runner or a case script
                    outcome.observed = f"runner error: {type(exc).__name__}: {exc}"
                    outcome.trace = traceback.format_exc()
                finally:
                    await host.stop()
                    nursery.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - a bug in the runner's background tasks
            outcome.observed = f"runner error: {type(exc).__name__}: {exc}"
            outcome.trace = traceback.format_exc()
            status = "fail"
        outcome.exit = host.returncode
        outcome.stdout_tail = host.output_tail()
        outcome.stderr_tail = host.stderr_tail()
        return status


async def run_case(case: Case, template: str, seed: int, retries: int) -> Outcome:
    outcome = Outcome(case)
    start = time.monotonic()
    status = "fail"
    for attempt in range(retries + 1):
        outcome.attempts = attempt + 1
        status = await _attempt(case, template, seed + 7919 * attempt, outcome)
        if status != "missed":
            break
    outcome.seconds = time.monotonic() - start
    passed = status == "pass"
    if status == "missed":
        outcome.observed += f" ({outcome.attempts} attempts)"
    if case.xfail:
        outcome.result = "XPASS" if passed else "XFAIL"
    else:
        outcome.result = "PASS" if passed else "FAIL"
    return outcome


async def run_all(cases: Sequence[Case], template: str, *, seed: int, jobs: int,
                  retries: int, progress) -> list[Outcome]:
    results: dict[str, Outcome] = {}
    limiter = trio.CapacityLimiter(max(1, jobs))

    async def one(case: Case) -> None:
        async with limiter:
            outcome = await run_case(case, template, seed + case.key[0] * 100 + case.key[1],
                                     retries)
        results[case.id] = outcome
        progress(outcome)

    async with trio.open_nursery() as nursery:
        for case in cases:
            nursery.start_soon(one, case)
    return [results[c.id] for c in cases]


# -- output ----------------------------------------------------------------------------------

def table(outcomes: Sequence[Outcome]) -> str:
    width = max([len(o.case.title) for o in outcomes] + [5])
    width = min(width, 60)
    lines = [f"{'case':<5} {'title':<{width}} {'result':<6} {'time':>6}  observed"]
    group = None
    for o in outcomes:
        if o.case.key[0] != group:
            group = o.case.key[0]
            lines.append(f"-- {group}. {GROUPS[group]}")
        title = o.case.title if len(o.case.title) <= width else o.case.title[:width - 1] + "~"
        note = o.observed
        if o.result in ("XFAIL", "XPASS"):
            note += f" [expected to fail: {o.case.xfail}]"
        lines.append(f"{o.case.id:<5} {title:<{width}} {o.result:<6} {o.seconds:5.1f}s  {note}")
    counts = summary(outcomes)
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items() if n) + f" of {len(outcomes)}")
    return "\n".join(lines)


def summary(outcomes: Sequence[Outcome]) -> dict[str, int]:
    counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0}
    for o in outcomes:
        counts[o.result] += 1
    return counts


def listing(cases: Sequence[Case]) -> str:
    lines = []
    for c in cases:
        extra = f"  host options: {' '.join(c.options)}" if c.options else ""
        xfail = f"\n      expected to fail: {c.xfail}" if c.xfail else ""
        lines.append(f"{c.id:<5} {c.title}{extra}\n      expect: {c.expect} "
                     f"(SPEC {c.spec}){xfail}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m protocol.conformance.runner",
        description="Run the p2pgotg protocol conformance cases against an implementation "
        "that hosts a game. Exit 0: no case failed; 1: some case failed; 2: usage error.")
    p.add_argument("--host-cmd", metavar="TEMPLATE",
                   help="the command that hosts one game headless, with {port} and {options} "
                   "(and optionally {home}); e.g. \"p2pgotg host --bot --bind 127.0.0.1 "
                   "--port {port} {options}\"")
    p.add_argument("--cases", metavar="LIST", default=None,
                   help="which cases: groups, cases or ranges, comma-separated "
                   "(e.g. 1-6, 3, 3.2-3.9, 1.1,4); default all")
    p.add_argument("--report", metavar="FILE", help="write a JSON report here")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help="seed of the runner's own bot and random choices")
    p.add_argument("--retries", type=int, default=2,
                   help="re-runs of a case whose game never reached its moment (default 2)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cases = select_cases(args.cases)
    except ValueError as exc:
        parser.print_usage(sys.stderr)
        print(f"--cases: {exc}", file=sys.stderr)
        return 2
    if args.list:
        print(listing(cases))
        return 0
    if not args.host_cmd:
        parser.print_usage(sys.stderr)
        print("--host-cmd is required", file=sys.stderr)
        return 2
    for needed in ("{port}", "{options}"):
        if needed not in args.host_cmd:
            print(f"--host-cmd must contain {needed}", file=sys.stderr)
            return 2
    try:
        host_argv(args.host_cmd, 1, ["--x"], "/tmp")
    except (KeyError, IndexError, ValueError) as exc:
        print(f"--host-cmd: cannot fill in the template: {exc!r}", file=sys.stderr)
        return 2

    def progress(o: Outcome) -> None:
        print(f"  {o.case.id:<5} {o.result:<5} {o.seconds:5.1f}s  {o.case.title}",
              file=sys.stderr, flush=True)

    started = datetime.datetime.now(datetime.UTC)
    clock = time.monotonic()
    print(f"conformance: {len(cases)} cases against: {args.host_cmd}", file=sys.stderr,
          flush=True)
    outcomes = trio.run(lambda: run_all(cases, args.host_cmd, seed=args.seed, jobs=args.jobs,
                                        retries=args.retries, progress=progress))
    seconds = time.monotonic() - clock
    print(table(outcomes))
    print(f"{seconds:.1f} s")
    if args.report:
        report = {
            "runner": "p2pgotg protocol conformance", "format": 1,
            "host_cmd": args.host_cmd, "started": started.isoformat(timespec="seconds"),
            "seconds": round(seconds, 1), "seed": args.seed, "summary": summary(outcomes),
            "cases": [o.as_json() for o in outcomes],
        }
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n")
    return 1 if any(o.result == "FAIL" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
