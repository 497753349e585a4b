"""Command line: argument parsing, wiring and exit codes. No game logic lives here."""

from __future__ import annotations

import argparse
import random
import sys
from typing import Sequence

from p2pgotg import __version__
from p2pgotg.rules import Game, Setup, Side


def _cmd_demo(args: argparse.Namespace) -> int:
    """Random self-play in the rules engine alone, printed move by move."""
    rng = random.Random(args.seed)
    game = Game.from_setups(Setup.random(Side.WHITE, rng), Setup.random(Side.BLACK, rng))
    print(game.ascii())
    while not game.is_over and game.ply < args.max_moves:
        move = rng.choice(game.legal_moves)
        record = game.push(move)
        line = f"{game.ply:4d}. {record.side.display_name:<5} {move.text()}"
        if record.result is not None:
            line += f"  challenge: {record.result.value.replace('_', ' ')}"
        print(line)
    print(game.ascii())
    print(game.outcome.describe() if game.outcome else f"stopped after {game.ply} moves")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p2pgotg", description="Game of the Generals, peer to peer, with no arbiter."
    )
    parser.add_argument("--version", action="version", version=f"p2pgotg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="random self-play in the rules engine")
    demo.add_argument("--seed", type=int, default=None)
    demo.add_argument("--max-moves", type=int, default=2000)
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
