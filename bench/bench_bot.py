"""Measure the bot's levels: scores with 95% confidence intervals, time per decision, and
the general raid, over fixed seeds.

    python bench/bench_bot.py hard:legacy normal:easy --games 400
    python bench/bench_bot.py easy:random normal:random hard:random --games 400 --mode blind
    python bench/bench_bot.py raid:hard raid:legacy --games 200

A pairing `A:B` plays A against B; game g gives A the seed g and B the seed 10_000 + g, and A
plays White in even games and Black in odd ones. `raid:L` sends the scripted general raid
(`p2pgotg.testing.raid`) against level L and counts the raids that took L's Flag
(`raid-through:L`: the blunter raid that also walks through moved pieces). The score is
(wins + draws / 2) / games, with a 95% interval from the normal approximation (Wilson's
when every game went one way); a raid rate's interval is Wilson's. Decision times are wall
time inside `choose` on one core (the machine's other load included: run one
benchmark at a time, and read the median before the p99). `--out FILE` appends each
pairing's figures as a JSON line; `--start N` begins at game N (to split a run over
processes).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from p2pgotg.players.bot import Bot
from p2pgotg.players.choices import Choice, ClaimFlag
from p2pgotg.players.match import play_match
from p2pgotg.rules import ChallengeMode, Game, RuleOptions, Setup, Side
from p2pgotg.testing.raid import RaidPlayer, took_flag


class Timed:
    """A player whose decisions are timed into `times`."""

    def __init__(self, player: Bot, times: list[float]) -> None:
        self.player = player
        self.side = player.side
        self.times = times

    def choose_setup(self) -> Setup:
        return self.player.choose_setup()

    def choose(self, view: Game) -> Choice:
        start = time.perf_counter()
        choice = self.player.choose(view)
        self.times.append(time.perf_counter() - start)
        return choice

    def after_move_claim(self, view: Game) -> ClaimFlag | None:
        return self.player.after_move_claim(view)

    def wants_draw(self, view: Game) -> bool:
        return self.player.wants_draw(view)


def score_interval(wins: int, draws: int, games: int) -> tuple[float, float, float]:
    """The score and its 95% interval (normal approximation over per-game scores)."""
    if games == 0:
        return 0.0, 0.0, 0.0
    score = (wins + draws / 2) / games
    losses = games - wins - draws
    if wins == games or losses == games:
        return wilson(wins, games)  # (no spread to take a normal interval from)
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / games
    half = 1.96 * math.sqrt(var / games)
    return score, max(0.0, score - half), min(1.0, score + half)


def wilson(k: int, n: int) -> tuple[float, float, float]:
    """k/n and Wilson's 95% interval."""
    if n == 0:
        return 0.0, 0.0, 0.0
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def timing(times: list[float]) -> dict:
    ms = sorted(1000 * t for t in times) or [0.0]
    return {
        "decisions": len(times),
        "ms_median": statistics.median(ms),
        "ms_p99": ms[min(len(ms) - 1, math.ceil(0.99 * len(ms)) - 1)],
        "ms_max": ms[-1],
    }


def run_pairing(pairing: str, games: int, mode: ChallengeMode, max_plies: int = 1000,
                start_game: int = 0) -> dict:
    first, second = pairing.split(":")
    options = RuleOptions(challenge_mode=mode)
    results: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    times: dict[str, list[float]] = {first: [], second: []}
    plies = 0
    start = time.perf_counter()
    for g in range(start_game, start_game + games):
        side = Side(g % 2)
        if first.startswith("raid"):
            a = RaidPlayer(side, random.Random(g), through=first == "raid-through")
            b = Timed(Bot(side.other, random.Random(10_000 + g), level=second), times[second])
            players = {side: a, side.other: b}
        else:
            players = {side: Timed(Bot(side, random.Random(g), level=first), times[first]),
                       side.other: Timed(Bot(side.other, random.Random(10_000 + g),
                                             level=second), times[second])}
        r = play_match(players[Side.WHITE], players[Side.BLACK], options,
                       max_plies=max_plies, check_views=False)
        if first.startswith("raid"):
            results["took the flag" if took_flag(r, side) else "held"] += 1
        else:
            results["cap" if r.outcome is None else "draw" if r.winner is None
                    else "win" if r.winner is side else "loss"] += 1
        endings[r.outcome.termination.value if r.outcome else "ply cap"] += 1
        plies += r.plies
    out: dict = {
        "pairing": pairing, "mode": mode.value, "games": games, "start": start_game,
        "results": dict(results),
        "endings": dict(endings), "mean_plies": plies / games,
        "seconds": time.perf_counter() - start,
        "timing": {level: timing(t) for level, t in times.items() if t},
    }
    if first.startswith("raid"):
        out["raid_rate"] = wilson(results["took the flag"], games)
    else:
        out["score"] = score_interval(results["win"], results["draw"] + results["cap"], games)
    return out


def describe(out: dict) -> str:
    lines = [f"{out['pairing']} ({out['mode']} mode, {out['games']} games, "
             f"{out['mean_plies']:.0f} plies on average, {out['seconds']:.0f} s)"]
    if "raid_rate" in out:
        p, lo, hi = out["raid_rate"]
        lines.append(f"  the raid took the flag in {out['results'].get('took the flag', 0)} "
                     f"games: {100 * p:.1f}% (95% CI {100 * lo:.1f} to {100 * hi:.1f}%)")
    else:
        s, lo, hi = out["score"]
        r = out["results"]
        lines.append(f"  +{r.get('win', 0)} ={r.get('draw', 0) + r.get('cap', 0)} "
                     f"-{r.get('loss', 0)}: score {100 * s:.1f}% "
                     f"(95% CI {100 * lo:.1f} to {100 * hi:.1f}%)")
    lines.append(f"  endings: {out['endings']}")
    return "\n".join(lines + timing_lines(out["timing"]))


def timing_lines(timings: dict) -> list[str]:
    """One line per level: its decision times (`timing`'s figures)."""
    return [f"  {level}: {t['ms_median']:.2f} ms median, {t['ms_p99']:.2f} ms p99, "
            f"{t['ms_max']:.1f} ms max a decision ({t['decisions']} decisions)"
            for level, t in timings.items()]


def report(out: dict, text: str, path: Path | None) -> None:
    """Print a pairing's figures, and append them to `path` as a JSON line."""
    print(text, flush=True)
    if path is not None:
        with path.open("a") as f:
            f.write(json.dumps(out) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pairings", nargs="+", metavar="A:B",
                        help="levels (easy, normal, hard, legacy, random) or raid:LEVEL")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--mode", choices=[m.value for m in ChallengeMode], default="open")
    parser.add_argument("--start", type=int, default=0,
                        help="the first game's number (split a run over processes)")
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    args = parser.parse_args(argv)
    for pairing in args.pairings:
        out = run_pairing(pairing, args.games, ChallengeMode(args.mode), start_game=args.start)
        report(out, describe(out), args.out)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
