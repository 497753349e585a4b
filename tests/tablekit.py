"""`p2pgotg verify` of table files run in this process, for the table tests (the relay loop
itself is `p2pgotg.testing.table_relay`)."""

from __future__ import annotations

from pathlib import Path


def verdict_of(*paths: Path) -> tuple[int, str]:
    """`p2pgotg verify` of the files, run in this process: (exit code, what it printed)."""
    import contextlib
    import io

    from p2pgotg.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["verify", *map(str, paths)])
    return code, out.getvalue()
