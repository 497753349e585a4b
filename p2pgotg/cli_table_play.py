"""The commands of a table (SPEC 5): `host --game towers --seats 3|4 [--bot-seats K]` and
`join CODE` when the code is a table's. Wiring only: the net layer plays."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from p2pgotg.net.play.saved_games import GameInUse

#: The seats a table may have (SPEC 5: three or four players).
TABLE_SEATS = (3, 4)


def add_host_arguments(host: argparse.ArgumentParser) -> None:
    """`--seats` and `--bot-seats`: a table of three or four through this host."""
    table = host.add_argument_group("a table of three or four players (Towers, SPEC 5)")
    table.add_argument("--seats", type=int, choices=TABLE_SEATS, default=None,
                       help="host a table of N players with --game towers: you play seat 0 "
                       "and relay for the others, who join with the same invite")
    table.add_argument("--bot-seats", type=int, default=0, metavar="K",
                       help="with --seats: the built-in bot takes K of the joiners' seats "
                       "(each joins over this computer's loopback like any joiner)")


def table_flags_problem(args: argparse.Namespace) -> str | None:
    """Why the table flags do not go together, or None."""
    seats = getattr(args, "seats", None)
    if seats is None:
        return "--bot-seats needs --seats" if getattr(args, "bot_seats", 0) else None
    if args.game != "towers":
        return "--seats: a table of three or four plays Towers: add --game towers"
    if args.teams:
        return "--seats: the team variant is a game of two (--teams), not a table"
    if args.max_games is not None:
        return "--seats: a host plays one table at a time (leave out --max-games)"
    if not 0 <= args.bot_seats <= seats - 1:
        return f"--bot-seats: between 0 and {seats - 1} (the joiners' seats of {seats})"
    if not args.bot and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return ("--seats: your seat's screen needs a terminal: run this in one (or add --bot "
                "to let the bot play your seat)")
    return None


def cmd_host_table(args: argparse.Namespace, config: Any, say: Any, status: Any) -> int:
    """Host the table to its end; the exit status (0: over, 3: not finished)."""
    import trio

    from p2pgotg.net.play.table_bot import table_bot
    from p2pgotg.net.play.table_host import host_table
    from p2pgotg.selfplay import seat_seed

    config.options = dataclasses.replace(config.options, seats=args.seats)
    seed = seat_seed(args.seed)
    result: list[Any] = []
    others = args.seats - 1 - args.bot_seats
    try:
        resumed = resumed_table(args, config, say, status)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    except GameInUse as exc:
        from p2pgotg.cli import GAME_IN_USE_EXIT

        print(exc, file=sys.stderr)
        return GAME_IN_USE_EXIT
    if not args.bot:  # (a person plays the host's seat, on the table screen)
        from p2pgotg.ui.towers.table_launch import host_on_screen

        code, session = host_on_screen(config, args.bot_seats, lambda k: table_bot(
            seed + k, args.level, args.bot_delay), ascii=args.ascii, session=resumed)
        return code or (report(session) if session is not None else 3)

    async def main_task() -> None:
        async with trio.open_nursery() as nursery:
            async def run(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                result.append(await host_table(
                    config, table_bot(seed, args.level, args.bot_delay),
                    bot_seats=args.bot_seats,
                    bot=lambda k: table_bot(seed + k, args.level, args.bot_delay),
                    on_status=status, on_short_code=lambda code: say(f"code: {code}"),
                    on_invite=lambda code: say(f"invite: {code}"), session=resumed,
                    task_status=task_status))

            hosting = await nursery.start(run)
            say(f"rules: {config.options.describe()}")
            for code in hosting.invites:
                say(f"invite: {code}")
            if hosting.short_code:
                say(f"code: {hosting.short_code}")
            for note in hosting.notes:  # (what it found about its network, SPEC 3.8)
                say(f"network: {note}")
            say(f"waiting for {others} other player{'s' if others != 1 else ''} "
                "(share one invite code)..." if others else "the bots take every seat...")

    from p2pgotg.cli import _run_network

    failed = _run_network(main_task)
    if failed or not result:
        return failed or 3
    return report(result[0])


def resumed_table(args: argparse.Namespace, config: Any, say: Any, status: Any) -> Any:
    """Our unfinished hosted table of `args.seats` seats, resumed from its file (the newest
    one), unless `--new` asks for a new table: a host's seat resumes from its own file as
    every seat does (SPEC 5.4), on the port and with the join secret the file keeps, so
    the invites its joiners hold still reach it. None when there is none to resume.
    ValueError: `--resume` with none; GameInUse: another process has it open."""
    from p2pgotg.net.play.table_file import read_table_file
    from p2pgotg.net.play.table_session import TableSession, unfinished_tables

    if args.new:
        return None
    found = unfinished_tables(config.save_dir, "host", config.key)
    same = [path for path in found if _seats_of(read_table_file(path).records) == args.seats]
    if not same:
        if args.resume:
            raise ValueError(f"--resume: you have no unfinished hosted table of {args.seats} "
                             "seats to resume")
        if found:
            say(f"(an unfinished table of {_seats_of(read_table_file(found[0]).records)} seats is "
                f"saved in {found[0].name}: host with those --seats to resume it)")
        return None
    session = TableSession.resume(same[0], config.key, "host", config.limits,
                                  on_status=status)
    say(f"resuming the table saved in {same[0].name} (--new hosts a new one)")
    return session


def _seats_of(records: Any) -> int | None:
    """The seats of the table whose host's hello is among `records`."""
    from p2pgotg.protocol.envelope import Envelope
    from p2pgotg.protocol.table.body import TableBody

    for record in records:
        if record[0] == "msg":
            body = TableBody.decode(Envelope.decode(record[2]).body_bytes)
            if body.type == "hello" and body.get("role") == "host":
                seats = body["options"].get("seats")
                return seats if isinstance(seats, int) else None
    return None


def holds_seat(config: Any) -> bool:
    """Whether we hold an unfinished seat at the table of `config`'s invite (its file)."""
    from p2pgotg.net.play.table_joiner import saved_seat

    return saved_seat(config) is not None


def join_on_screen(config: Any, ascii: bool) -> int:
    """`join CODE` of a table by a person (the interface found it a table, or our seat at
    it is saved): our seat on the table screen; the exit status."""
    from p2pgotg.ui.towers.table_launch import join_on_screen as play

    code, session = play(config, ascii)
    return code or (report(session) if session is not None else 3)


def join_table_instead(config: Any, args: argparse.Namespace, status: Any) -> Any:
    """`join CODE --bot` when the code turned out to be a table's (or when we hold a seat at
    its table): play our seat with the bot."""
    from p2pgotg.net.play.table_bot import table_bot
    from p2pgotg.net.play.table_joiner import join_table
    from p2pgotg.selfplay import seat_seed

    return join_table(config, table_bot(seat_seed(args.seed), args.level, args.bot_delay),
                      on_status=status)


def report(session: Any) -> int:
    """How the table ended and where its file is; the exit status."""
    from p2pgotg.protocol.printable import controls_escaped

    if session.failure is not None:
        print(f"game over: {controls_escaped(session.failure)}")
    elif session.done:
        status = session.status
        winners = ", ".join(f"seat {seat}" for seat in status.winners) or "nobody"
        print(f"game over: {status.termination}; won by {winners}")
    else:
        print("the game is not finished; run the same command again to resume it")
    if session.path is not None:
        print(f"transcript: {session.path}  (check it with: p2pgotg verify {session.path})")
    sys.stdout.flush()
    return 0 if session.done else 3
