"""`python -m p2pgotg` is the same as the `p2pgotg` command."""

from p2pgotg.cli import main

raise SystemExit(main())
