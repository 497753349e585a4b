"""bench/abuse.py runs end to end at a tiny scale and reports its figures as JSON.

Timing is never asserted here (the machine is shared): only that the flood ran, every kind
of it, and that every real game played beside it was audited clean on both sides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_abuse_bench_reports_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "abuse.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "abuse.py"), "--games", "2", "--connections",
         "60", "--seconds", "3", "--hold", "3", "--keepalive-hold", "3", "--ramp", "1",
         "--drain", "30", "--chats", "50", "--sources", "4", "--procs", "1",
         "--joiner-procs", "1", "--no-calm", "--action-limit", "3",
         "--tmp", str(tmp_path), "--json", str(out)],
        capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "summary over 1 round(s)" in run.stdout
    figures = json.loads(out.read_text())
    (flood_run,) = [r["flood"] for r in figures["rounds"]]
    flood = flood_run["flood_figures"]
    assert flood["connections"] == 60
    kinds = flood["kinds"]
    assert set(kinds) == {"half_open", "tls_no_hi", "wrong_secret", "keepalive", "oversized",
                          "chat", "stall"}
    for kind in kinds.values():
        assert kind["ended"] == kind["planned"] > 0
    assert flood["chats_sent"] > 0
    # a joiner that never moves holds its slot until the host's limit per owed action
    assert set(kinds["stall"]["outcomes"]) == {"claimed by the host"}
    assert set(flood_run["latency_ms"]) == {"p50", "p90", "p99", "max"}
    assert flood_run["host"]["rss_growth_mib"] is not None
    real, verified = flood_run["real"], flood_run["verify"]
    assert real["started"] >= 2
    assert real["clean"] == real["started"] and real["unclean"] == 0
    assert verified["joiners"] == {"CLEAN": real["clean"]}
    assert verified["host_real"] == {"CLEAN": real["clean"]}
