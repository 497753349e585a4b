"""The p2pgotg protocol conformance runner (see protocol/README.md).

`python -m protocol.conformance.runner --host-cmd "..."` runs numbered cases, each a
scripted, partly dishonest joiner, against any implementation that hosts a game, and
reports pass or fail per case against the behaviour SPEC.md requires.
"""
