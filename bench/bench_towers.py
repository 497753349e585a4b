"""Measure the Towers bot's levels: scores with 95% confidence intervals and time per
decision, over fixed seeds.

    python bench/bench_towers.py hard:normal hard:easy normal:easy --games 200
    python bench/bench_towers.py hard:random normal:random easy:random --games 200
    python bench/bench_towers.py hard:normal:normal --games 120          # 3 seats
    python bench/bench_towers.py hard:normal --teams --games 100          # 2 players, 4 colours
    python bench/bench_towers.py hard:random:random hard:random:random:random --games 20 \
        --leave-at 40                        # a random other seat leaves after 40 actions

A pairing lists one level per player. With two players `A:B` game g gives A the seed g
and B the seed 10_000 + g, and A takes seat 0 in even games and seat 1 in odd ones (seat 0
makes the first setup choice; the first to claim plays first). With three or four
players, player i takes seat (i + g) mod N in game g, with seed 10_000 * i + g. With
`--teams` two players play two colours each: A seats 0 and 2 (or 1 and 3 in odd games).
With `--leave-at K` one seat of another player than the first, drawn with seed g, leaves
(abandons: SPEC 4.13) once the game has made K actions, and the game goes on without it.

The score is the first player's: 1 for a win, 1/k for a tie among k, 0 for a loss, over
the games, with a 95% interval from the normal approximation (Wilson's when every game
went one way); with N players an even match scores 1/N. Decision times are wall time
inside `choose_action` (the machine's other load included: run one benchmark at a time,
and read the median before the p99). `--out FILE` appends each pairing's figures as a JSON
line; `--start N` begins at game N (to split a run over processes).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from bench_bot import report, timing, timing_lines, wilson

from p2pgotg.games.towers.players import Budget, RandomPlayer, TowersBot, play_game
from p2pgotg.games.towers.rules import RuleOptions


def make_player(level: str, seat: int, seed: int, budget: Budget | None):
    rng = random.Random(seed)
    if level == "random":
        return RandomPlayer(seat, rng)
    return TowersBot(seat, rng, level, budget)


def seats_of(player: int, players: int, game: int, teams: bool) -> list[int]:
    """The seats a player takes in game `game` (two in the team variant)."""
    if teams:
        first = (player + game) % 2
        return [first, first + 2]
    return [(player + game) % players]


def share(outcome, teams_of_first: set[int]) -> float:
    """The first player's score in one game: 1 win, 1/k in a tie among k, 0 else."""
    won = [t for t in outcome.winners if t in teams_of_first]
    return len(won) / len(outcome.winners) if won else 0.0


def score_interval(scores: list[float]) -> tuple[float, float, float]:
    """The mean score and its 95% interval (Wilson's when every game went one way)."""
    n = len(scores)
    mean = sum(scores) / n
    if all(s == scores[0] for s in scores) and scores[0] in (0.0, 1.0):
        return wilson(round(sum(scores)), n)
    var = sum((s - mean) ** 2 for s in scores) / n
    half = 1.96 * math.sqrt(var / n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def run_pairing(pairing: str, games: int, teams: bool = False, start_game: int = 0,
                budget: Budget | None = None, options: RuleOptions | None = None,
                leave_at: int | None = None) -> dict:
    levels = pairing.split(":")
    players = len(levels)
    seats = 4 if teams else players
    if teams and players != 2:
        raise SystemExit("--teams plays two players: a pairing A:B")
    options = replace(options or RuleOptions(), seats=seats, teams=teams)
    scores: list[float] = []
    results: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    times: dict[str, list[float]] = {level: [] for level in levels}
    actions = 0
    margins: list[int] = []
    started = time.perf_counter()
    for g in range(start_game, start_game + games):
        by_seat = {}
        level_of_seat = {}
        for i, level in enumerate(levels):
            for seat in seats_of(i, players, g, teams):
                by_seat[seat] = make_player(level, seat, 10_000 * i + g, budget)
                level_of_seat[seat] = (i, level)
        others = [s for s in by_seat if level_of_seat[s][0] != 0]
        leaves = None if leave_at is None else {leave_at: random.Random(g).choice(others)}
        result = play_game(by_seat, options, leaves=leaves)
        outcome = result.game.outcome
        assert outcome is not None
        first_teams = {result.game.team(s) for s in by_seat if level_of_seat[s][0] == 0}
        s = share(outcome, first_teams)
        scores.append(s)
        results["win" if s == 1 else "loss" if s == 0 else "tie"] += 1
        endings[outcome.termination.value] += 1
        actions += result.game.ply
        mine = max(outcome.scores[t] for t in first_teams)
        margins.append(mine - max(v for t, v in enumerate(outcome.scores)
                                  if t not in first_teams))
        for seat, seconds in result.seconds.items():
            if level_of_seat[seat][1] != "random":
                times[level_of_seat[seat][1]].extend(seconds)
    return {
        "pairing": pairing, "teams": teams, "games": games, "start": start_game,
        "leave_at": leave_at,
        "results": dict(results), "endings": dict(endings),
        "mean_actions": actions / games, "mean_margin": sum(margins) / games,
        "score": score_interval(scores), "even": 1 / players,
        "seconds": time.perf_counter() - started,
        "timing": {level: timing(t) for level, t in times.items() if t},
    }


def describe(out: dict) -> str:
    kind = "2 players, 4 colours" if out["teams"] else f"{len(out['pairing'].split(':'))} seats"
    if out.get("leave_at") is not None:
        kind += f", one other seat leaves after {out['leave_at']} actions"
    s, lo, hi = out["score"]
    r = out["results"]
    lines = [f"{out['pairing']} ({kind}, {out['games']} games, {out['mean_actions']:.0f} "
             f"actions on average, {out['seconds']:.0f} s)",
             f"  +{r.get('win', 0)} ={r.get('tie', 0)} -{r.get('loss', 0)}: score "
             f"{100 * s:.1f}% (95% CI {100 * lo:.1f} to {100 * hi:.1f}%; even "
             f"{100 * out['even']:.0f}%), mean margin {out['mean_margin']:+.1f} points",
             f"  endings: {out['endings']}"]
    return "\n".join(lines + timing_lines(out["timing"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pairings", nargs="+", metavar="A:B[:C[:D]]",
                        help="levels (easy, normal, hard, random), one per player")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--teams", action="store_true", help="2 players, 2 colours each")
    parser.add_argument("--start", type=int, default=0,
                        help="the first game's number (split a run over processes)")
    parser.add_argument("--nodes", type=int, default=None,
                        help="the hard level's node budget (default: Budget()'s)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="the hard level's deadline (default: Budget()'s; 0: none)")
    parser.add_argument("--leave-at", type=int, default=None, metavar="K",
                        help="another player's seat leaves after K actions (SPEC 4.13)")
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    args = parser.parse_args(argv)
    budget = None
    if args.nodes is not None or args.seconds is not None:
        default = Budget()
        budget = Budget(nodes=args.nodes if args.nodes is not None else default.nodes,
                        seconds=(default.seconds if args.seconds is None
                                 else args.seconds or None))
    for pairing in args.pairings:
        out = run_pairing(pairing, args.games, args.teams, args.start, budget,
                          leave_at=args.leave_at)
        report(out, describe(out), args.out)


if __name__ == "__main__":
    main()
