"""Measure the bot: win rate, game length and time per decision, over fixed seeds.

    python bench/bench_bot.py --games 200 --mode open --opponent random
    python bench/bench_bot.py --games 50 --mode blind --opponent bot

Game g uses seeds g (the bot) and 10_000 + g (its opponent); the bot plays White in even
games and Black in odd ones. Timing is reported here, never asserted in a test. The median
is the steadier figure on a busy machine; p99 shows the slow turns (a fresh estimate of the
opponent's ranks, a garbage collection).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

from p2pgotg.players.actions import Action
from p2pgotg.players.bot import Bot
from p2pgotg.players.match import play_match
from p2pgotg.rules import ChallengeMode, Game, RuleOptions, Side


def _timed(bot: Bot, times: list[float]) -> Bot:
    """`bot`, with the duration of each of its decisions appended to `times`."""
    choose = bot.choose_action

    def choose_action(view: Game) -> Action:
        start = time.perf_counter()
        action = choose(view)
        times.append(time.perf_counter() - start)
        return action

    bot.choose_action = choose_action  # type: ignore[method-assign]
    return bot


def run(games: int, mode: ChallengeMode, opponent: str, max_plies: int = 1000) -> dict:
    results: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    plies = 0
    times: list[float] = []
    start = time.perf_counter()
    for g in range(games):
        side = Side(g % 2)
        bot = _timed(Bot(side, random.Random(g)), times)
        other = Bot(side.other, random.Random(10_000 + g), level=0 if opponent == "random" else 1)
        players = {side: bot, side.other: other}
        r = play_match(
            players[Side.WHITE],
            players[Side.BLACK],
            RuleOptions(challenge_mode=mode),
            max_plies=max_plies,
            check_views=False,
        )
        key = (
            "cap"
            if r.outcome is None
            else ("draw" if r.winner is None else "win" if r.winner is side else "loss")
        )
        results[key] += 1
        endings[r.outcome.termination.value if r.outcome else "ply cap"] += 1
        plies += r.plies
    ms = sorted(1000 * t for t in times) or [0.0]
    return {
        "games": games,
        "results": dict(results),
        "endings": dict(endings),
        "mean_plies": plies / games,
        "decisions": len(times),
        "ms_per_decision": statistics.fmean(ms),
        "ms_median": statistics.median(ms),
        "ms_p99": ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))],
        "seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--mode", choices=[m.value for m in ChallengeMode], default="open")
    parser.add_argument("--opponent", choices=["random", "bot"], default="random")
    args = parser.parse_args(argv)
    out = run(args.games, ChallengeMode(args.mode), args.opponent)
    wins = out["results"].get("win", 0)
    print(f"bot vs {args.opponent}, {args.mode} mode, {out['games']} games")
    print(f"  results: {out['results']}  ({100 * wins / out['games']:.1f}% wins)")
    print(f"  endings: {out['endings']}")
    print(f"  mean game length: {out['mean_plies']:.1f} plies")
    print(
        f"  bot decision time: {out['ms_per_decision']:.2f} ms mean, "
        f"{out['ms_median']:.2f} ms median, {out['ms_p99']:.2f} ms p99 "
        f"({out['decisions']} decisions)"
    )
    print(f"  wall time: {out['seconds']:.1f} s")


if __name__ == "__main__":
    main()
