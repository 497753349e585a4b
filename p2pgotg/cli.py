"""Command line: argument parsing, wiring and exit codes. No game logic lives here."""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from p2pgotg import __version__
from p2pgotg.players.levels import PLAY_DEFAULT, PLAYABLE, SEAT_DEFAULT
from p2pgotg.rules import Game, Setup, Side

_N = TypeVar("_N", int, float)

if TYPE_CHECKING:
    from p2pgotg.net.play.lines import LineWriter
    from p2pgotg.protocol import Report


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
    moves = f"{game.ply} move{'' if game.ply == 1 else 's'}"  # (no screen module: start-up)
    print(game.outcome.describe() if game.outcome else f"stopped after {moves}")
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    """How to play, in a screenful: the same text as `?` in the game and the README."""
    from p2pgotg.rules.primer import TITLE, primer

    if args.which == "towers":
        from p2pgotg.ui.towers.primer import PRIMER
        from p2pgotg.ui.towers.primer import TITLE as TOWERS

        print(f"{TOWERS}\n\n{PRIMER}\nEvery rule, and how the seed's text was read where it "
              "leaves a choice:\nchapter 4 of SPEC.md.")
        return 0
    print(f"{TITLE}\n\n{primer()}\nEvery rule, and what was decided where the rule texts "
          "disagree:\nchapter 1 of SPEC.md.")
    return 0


#: How much of a transcript `verify` reads at a time: it streams the file (SPEC 2.8).
VERIFY_CHUNK = 1 << 16


def _judge_file(path: str) -> tuple[str, Report, int, dict[str, bytes]]:
    """Stream a transcript through the referee: memory grows with the game, never with the
    file. Returns (the owner's role, the report, how many message records, the players'
    names as saved); raises OSError or TranscriptError."""
    from p2pgotg.games import referee as open_referee
    from p2pgotg.protocol import RecordReader, Referee
    from p2pgotg.protocol.transcript import NAME_FIELDS

    reader = RecordReader()
    referee: Referee | None = None
    names: dict[str, bytes] = {}
    with open(path, "rb") as f:
        while chunk := f.read(VERIFY_CHUNK):
            records = reader.feed(chunk)
            if referee is None and reader.role is not None and reader.key is not None:
                referee = open_referee(reader.role, reader.key)
            for record in records:
                assert referee is not None
                if record[0] == "secrets":
                    names.update((k, v) for k, v in record[1].items() if k in NAME_FIELDS)
                referee.add(record)
        torn = reader.finish()
    assert referee is not None  # (finish raised if the header never came)
    return referee.role, referee.finish(torn), referee.messages, names


def _cmd_verify(args: argparse.Namespace) -> int:
    """Replay a saved transcript and say whether the game was clean."""
    from p2pgotg import cli_table
    from p2pgotg.protocol import TranscriptError

    if any(cli_table.is_table(path) for path in args.file):
        return cli_table.verify_tables(args.file)  # (SPEC 5.9)
    if len(args.file) > 1:
        print("several files are verified together only for a table of three or four "
              "seats (SPEC 5.9); give one file of a two-player game", file=sys.stderr)
        return 2
    args.file = args.file[0]
    try:
        role, report, messages, names = _judge_file(args.file)
    except OSError as exc:
        print(f"cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except TranscriptError as exc:
        print(f"{args.file} is not a readable transcript: {exc}", file=sys.stderr)
        return 2
    print(f"transcript: {args.file}")
    print(f"written by: the {role}; {messages} signed messages")
    if report.flow is not None:
        _print_game(report, role, names)
    print(f"exit {int(report.finding)}:     {_FINDINGS[int(report.finding)]}")
    return int(report.finding)


def _print_game(report: Report, role: str, names: dict[str, bytes]) -> None:
    """`verify`'s lines on a game that began: who played, the rules, the result and the
    verdict, each side named as the reader knows it (`you` for the reader's own key)."""
    from p2pgotg.net.play.player_name import player_label, saved_names
    from p2pgotg.net.transport.paths import own_public_keys
    from p2pgotg.protocol import Finding
    from p2pgotg.protocol.flow import other
    from p2pgotg.protocol.verdict import colour_of, result_words

    flow, verdict = report.flow, report.verdict
    assert flow is not None
    first, colours = flow.first, flow.colours()
    own_keys = own_public_keys()
    labels = {r: player_label(name, flow.key_of(r), own_keys)
              for r, name in saved_names(names, role, other(role)).items()}

    def yours(text: str) -> str:
        """`White (host) wins` says `White (host, you) wins` to the reader who was White."""
        for r, label in labels.items():
            if label == "you":
                text = text.replace(f"({r})", f"({r}, you)")
        return text

    for n, player in enumerate((role, other(role))):
        colour = colour_of(player, first, colours)
        print(f"{'players:' if n == 0 else '':<12}{labels[player]}"
              f"{'' if colour is None else ', ' + colour} (the {player})")
    if flow.game_id is not None:
        print(f"game id:    {flow.game_id.hex()}")
    if flow.options is not None:
        print(f"rules:      {flow.options.describe()}")
    if first is not None:
        print(f"{colours[0].lower() + ':':<11} the {first}")
    for label, value in flow.summary():
        print(f"{label + ':':<11} {value}")
    if flow.result is not None:
        ended = result_words(*flow.result, first, colours)
        if verdict is not None and verdict.result() != ended:
            print(f"game ended: {yours(ended)}")
        print(f"result:     {yours(verdict.result() if verdict is not None else ended)}")
    elif verdict is not None:
        print(f"result:     {yours(verdict.result())}")
    print(f"verdict:    {yours(report.describe())}")
    if report.torn_tail and report.finding is not Finding.UNREADABLE:
        print("note:       the last record is cut short (a crash while writing): it was "
              "never sent and proves nothing; the verdict rests on the records before it")


#: What each exit code of `verify` means (SPEC 2.8; README).
_FINDINGS = {
    0: "finished and clean, no claim: the transcript proves the result (a complete "
       "audit, or a resignation and the winner's audit, or a game that hides nothing)",
    1: "a rule was broken, proven by a message its breaker signed",
    2: "the file cannot be read: missing, damaged, edited, forged or cut short",
    3: "the game or its audit is not finished: nothing is proven yet",
    4: "finished with no rule broken, but the result rests on a claim about time or "
       "absence: its claimant's word, which no transcript can prove",
}


def _cmd_show(args: argparse.Namespace) -> int:
    """Step through a finished game (in a terminal), or print it move by move."""
    from p2pgotg import cli_table
    from p2pgotg.ui.review import ReviewError, load_review

    if cli_table.is_table(args.file):
        return cli_table.show_table(args.file)  # (a table's: printed, SPEC 5.9)
    path = Path(args.file)
    try:
        review = load_review(path)
    except ReviewError as exc:
        print(f"cannot show it: {exc}", file=sys.stderr)
        return 2
    if _has_terminal() and not args.text:
        from p2pgotg.ui.runner import Launch, run_terminal

        return run_terminal(None, Launch(review=path), ascii=args.ascii)
    for line in review.text_lines():
        print(line)
    return 0


def _cmd_games(args: argparse.Namespace) -> int:
    """List the saved games: unfinished first, each with the command that resumes it."""
    from p2pgotg.net.play.saved_games import games_dir
    from p2pgotg.ui.saved_games import list_saved_games

    folder = games_dir()
    games = list_saved_games(folder)
    if not games:
        print(f"no saved games yet (they are kept in {folder})")
        return 0
    unfinished = sum(g.unfinished for g in games)
    print(f"{len(games)} saved game{'s' if len(games) != 1 else ''} in {folder}, "
          f"{unfinished} unfinished:")
    for game in games:
        for line in game.lines():
            print(line)
    return 0


def _cmd_selfplay(args: argparse.Namespace) -> int:
    """Bot against bot over TLS on loopback; non-zero if any audit fails."""
    import tempfile

    import trio

    from p2pgotg.selfplay import play_one
    from p2pgotg.ui.words import plural

    options = _options_from(args)
    base = Path(args.save_dir) if args.save_dir else Path(tempfile.mkdtemp(prefix="p2pgotg-"))
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    failures = 0
    print(f"self-play: {plural(args.games, 'game')}, seed {seed}, level {args.level}, "
          f"{options.describe()}")
    if not args.save_dir:
        print(f"the transcripts go to a new temporary folder, {base}, which stays after the "
              "run (--save-dir DIR keeps them elsewhere)")
    for n in range(args.games):
        game_dir = base / f"game-{n + 1}"
        result = trio.run(play_one, options, game_dir, seed + n, None, args.level)
        verdict = result.verdict
        view = getattr(result.host.peer, "view", None)
        played = view.ply if view else 0
        unit = "move" if getattr(args, "game", None) != "towers" else "action"
        ok = verdict is not None and verdict.clean and verdict.audit_complete and result.agreed
        failures += not ok
        print(f"game {n + 1}: {plural(played, unit)}; "
              f"{verdict.describe() if verdict else 'no verdict'}"
              f"{'' if result.agreed else ' (the two sides disagree!)'}")
        print(f"         transcripts: {result.host.path} and {result.joiner.path}")
    print(f"{args.games - failures} of {plural(args.games, 'game')} audited clean")
    if not args.save_dir:
        print(f"the transcripts stay in {base}: delete that folder when you no longer need "
              "them")
    return 1 if failures else 0


def _limits(args: argparse.Namespace):
    from p2pgotg.net.play.session import Timeouts

    return Timeouts(abandon=float(args.abandon), audit=float(args.audit_timeout),
                  duty=float(args.duty_timeout),
                  setup=float(getattr(args, "setup_timeout", 300)))


def _status(text: str) -> None:
    """A status line, from inside the event loop: queued, never blocking it (SPEC 3.4:
    a stalled reader of the host's output must not freeze its games). The net layer
    escapes a peer's text where it enters a line; what reaches the terminal is escaped
    once more against any path that did not (escaping twice changes nothing)."""
    from p2pgotg.protocol.printable import controls_escaped

    _lines().write(sys.stderr, controls_escaped(text))


def _say(text: str) -> None:
    """A line for standard output, from inside the event loop (as `_status`)."""
    from p2pgotg.protocol.printable import controls_escaped

    _lines().write(sys.stdout, controls_escaped(text))


@functools.cache
def _lines() -> LineWriter:
    """The one writer of the loop's lines, made on first use: importing the net layer
    (trio with it) at start-up would slow every command, `verify` and `demo` included."""
    from p2pgotg.net.play.lines import LineWriter

    return LineWriter()


def _ended_words(session) -> str:
    """How a game ended, for a terminal: the violation's words may quote the peer, so
    they are escaped."""
    from p2pgotg.protocol.printable import controls_escaped

    if session.peer.failed is not None:
        return controls_escaped(str(session.peer.failed))
    verdict = session.verdict
    return controls_escaped(verdict.describe()) if verdict is not None else ""


def _report(session) -> int:
    """Print how the game ended and where its transcript is; the exit code."""
    _lines().drain()  # (the loop's lines first, in order)
    verdict = session.verdict
    if session.peer.failed is not None or verdict is not None:
        print(f"game over: {_ended_words(session)}")
    else:
        print("the game is not finished; run the same command again to resume it")
    if session.path is not None:
        print(f"transcript: {session.path}  (check it with: p2pgotg verify {session.path})")
    return 0 if (verdict is not None or session.peer.failed is not None) else 3


def _cmd_host(args: argparse.Namespace) -> int:
    """Listen for one joiner, print the invite codes, play with the bot seat."""
    import trio

    from p2pgotg import cli_internet, cli_table_play
    from p2pgotg.net.play.hosting import HostConfig
    from p2pgotg.net.play.player_name import BadNameError
    from p2pgotg.net.play.saved_games import games_dir
    from p2pgotg.net.transport.errors import NetError
    from p2pgotg.net.transport.paths import load_or_create_identity, load_or_create_tls_identity
    from p2pgotg.selfplay import bot_runner, seat_seed

    if args.reply is not None:
        return cli_internet.cmd_host_reply(args)
    problem = cli_table_play.table_flags_problem(args) or _host_flags_problem(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    try:
        key = load_or_create_identity()
        cert, tls_key = load_or_create_tls_identity()
    except NetError as exc:
        print(f"cannot load your keys: {exc.user_message}", file=sys.stderr)
        return 2
    resume = True  # (the many-game host resumes every unfinished game it holds)
    if args.max_games is None and args.seats is None:
        try:
            decided = _host_again(args, key, interactive=not args.bot)
        except _CannotHost as exc:
            print(exc, file=sys.stderr)
            return 2
        if not args.bot:
            return _interface(args, "host", resume=decided)
        resume = bool(decided)
    try:
        name = _player_name(args, ask=False)
    except BadNameError as exc:
        print(f"--name: {exc}", file=sys.stderr)
        return 2
    config = HostConfig(key, cert, tls_key, _options_from(args), games_dir(),
                        port=args.port, bind=args.bind, limits=_limits(args), resume=resume,
                        name=name)
    if args.max_games is not None:
        return _host_many(args, config)
    reach = cli_internet.reach_options(args, config.options.describe())
    if reach is False:
        return 2
    config.reach = reach  # (a table's host too: port mapping, STUN, SPEC 3.8)
    if args.seats is not None:
        return cli_table_play.cmd_host_table(args, config, _say, _status)

    async def main_task() -> None:
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(_host_and_report, config,
                                          bot_runner(seat_seed(args.seed), args.bot_delay,
                                                     args.level))
            print(f"rules: {config.options.describe()}")
            cli_internet.print_offer(hosting)
            print("waiting for the other player (share one invite code)...", flush=True)

    failed = _run_network(main_task)
    return failed or _LAST_EXIT[0]


def _host_flags_problem(args: argparse.Namespace) -> str | None:
    """Why `host`'s flags do not go together (the many-game host's flags without it), or
    None."""
    if args.max_games is not None and not args.bot:
        return "--max-games needs --bot: the bot plays every game of a many-game host"
    for given, flag in ((args.games_total, "--games-total"),
                        (args.action_limit, "--action-limit"),
                        (args.games_per_address, "--games-per-address")):
        if given is not None and args.max_games is None:
            return f"{flag} needs --max-games"
    if args.max_games is not None and (args.resume or args.new):
        return ("--resume and --new choose for one game: the many-game host resumes every "
                "unfinished game it holds")
    return None


#: The exit status of `host` and `join` when the game to resume is open in another
#: p2pgotg process (SPEC 3.5): sysexits' EX_TEMPFAIL, as it works once that one stops.
GAME_IN_USE_EXIT = 75


def _failure_code(exc: BaseException) -> int:
    """The exit status for an error that stopped `host` or `join`."""
    from p2pgotg.net.play.saved_games import GameInUse

    return GAME_IN_USE_EXIT if isinstance(exc, GameInUse) else 1


def _run_network(main_task: Callable[[], Awaitable[object]]) -> int:
    """`trio.run(main_task)`; a network or session error (even inside a nursery's group)
    is printed for the user instead of a traceback, and its exit status returned (0 when
    none)."""
    import trio

    from p2pgotg.net.play.session import unwrap
    from p2pgotg.net.reaching.control_frames import SessionError
    from p2pgotg.net.transport.errors import NetError

    try:
        try:
            trio.run(main_task)
        except BaseExceptionGroup as group:
            raise unwrap(group) from None
    except (NetError, SessionError) as exc:
        _lines().drain()
        print(f"error: {_words(exc)}", file=sys.stderr)
        return _failure_code(exc)
    finally:
        _lines().drain()
    return 0


_LAST_EXIT = [0]


def _words(exc: BaseException) -> str:
    """An error for the person: our own words, never a library's (those go to the log)."""
    from p2pgotg.ui.errors import explain

    return explain(exc)


def _host_many(args: argparse.Namespace, config) -> int:
    """Many games at once with the bot, until SIGINT/SIGTERM or --games-total games."""
    import dataclasses

    import trio

    from p2pgotg.net.play.bot_worker_client import open_bot_worker
    from p2pgotg.net.play.multihost import ACTION_LIMIT, host_many, tune_collector_for_many_games
    from p2pgotg.net.reaching.invite import one_invite
    from p2pgotg.selfplay import bot_runner, seat_seed
    from p2pgotg.ui.words import plural

    action_limit = float(args.action_limit) if args.action_limit is not None else ACTION_LIMIT
    if args.games_per_address is not None:
        config.admission = dataclasses.replace(config.admission,
                                               games_per_source=args.games_per_address)

    async def main_task() -> None:
        # (each game's bot is seeded on its own: `seat_seed`)
        if args.max_games == 1:
            await host_all(lambda n: bot_runner(seat_seed(args.seed, n), args.bot_delay,
                                                args.level))
            return
        async with open_bot_worker() as worker:  # the bots think beside the event loop
            await host_all(lambda n: worker.runner(seat_seed(args.seed, n), level=args.level,
                                                   delay=args.bot_delay))

    async def host_all(runner) -> None:
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            async def run(task_status=trio.TASK_STATUS_IGNORED) -> None:
                stats = await host_many(
                    config, runner, args.max_games,
                    games_total=args.games_total, action_limit=action_limit,
                    on_status=_status, on_game_end=_game_over, stop=stop,
                    task_status=task_status)
                result.append(stats)
                nursery.cancel_scope.cancel()

            nursery.start_soon(_stop_on_signal, stop)
            hosting = await nursery.start(run)
            _say(f"rules: {config.options.describe()}")
            _say(f"invite: {one_invite(hosting.invites)}")  # (README: why v2)
            _say(f"hosting up to {plural(args.max_games, 'game')} at once: share one invite "
                 "code with every player...")
            _say(f"a player who has owed a move (or anything) for {action_limit:g} s loses "
                 "that game by this host's claim (--action-limit)")

    result: list = []
    if args.max_games > 1:
        tune_collector_for_many_games()
    failed = _run_network(main_task)
    if failed:
        return failed
    if result:
        s = result[0]
        print(f"done: {plural(s.started, 'game')} started, {s.resumed} resumed, "
              f"{s.finished} ended, "
              f"{s.refused_full} joiners refused as the host was full", flush=True)
    return 0


def _game_over(number: int, session) -> None:
    """The many-game host's line on each game that ends."""
    what = _ended_words(session) or "not finished (the other player stayed away)"
    _say(f"game {number} over: {what}; transcript: {session.path}")


async def _stop_on_signal(stop) -> None:
    """SIGINT or SIGTERM stops the many-game host (its unfinished games are kept)."""
    import signal

    import trio

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            _status(f"{signal.Signals(signum).name}: stopping; unfinished games "
                    "resume when this host runs again")
            stop.set()
            return


async def _host_and_report(config, runner, task_status=None) -> None:
    from p2pgotg.net.play.hosting import host_game

    session = await host_game(config, runner, on_status=_status,
                              on_invite=lambda code: _say(f"invite: {code}"),
                              on_short_code=lambda code: _say(f"code: {code}"),
                              task_status=task_status)
    _LAST_EXIT[0] = _report(session)


def _cmd_join(args: argparse.Namespace) -> int:
    """Connect to an invite and play with the bot seat."""
    import trio

    from p2pgotg import cli_internet, cli_table_play
    from p2pgotg.net.play.joining import JoinConfig, TableInvite, join_game
    from p2pgotg.net.play.player_name import BadNameError
    from p2pgotg.net.play.saved_games import games_dir
    from p2pgotg.net.play.session import GameSession
    from p2pgotg.net.reaching.control_frames import SessionError
    from p2pgotg.net.reaching.racing import prepare_join
    from p2pgotg.net.transport.errors import NetError
    from p2pgotg.net.transport.paths import identity_for_joining
    from p2pgotg.selfplay import bot_runner, seat_seed

    if args.code is None:
        return cli_internet.cmd_list_lan_games()
    if not args.bot:
        return _interface(args, "join")
    problem = cli_internet.check_join_code(args.code)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    servers = cli_internet.stun_servers(args)
    tor = cli_internet.tor_choice(args)
    if servers is None or tor is None:
        return 2
    try:
        name = _player_name(args, ask=False)
    except BadNameError as exc:
        print(f"--name: {exc}", file=sys.stderr)
        return 2
    limits = _limits(args)

    def show_reply(code: str) -> None:
        _say(f"reply: {code}")

    async def main_task() -> object:  # (a GameSession, or a seat at a table)
        invite, opener = await prepare_join(args.code, servers, limits, _status, show_reply,
                                            tor)
        key = identity_for_joining(invite.pin)  # (a short code's pin is known only now)
        config = JoinConfig(key, invite, games_dir(), limits, opener=opener, name=name)
        if cli_table_play.holds_seat(config):  # (our seat at its table: resumed from its file)
            return await cli_table_play.join_table_instead(config, args, _status)
        try:
            return await join_game(config, bot_runner(seat_seed(args.seed), args.bot_delay,
                                                      args.level), on_status=_status)
        except TableInvite:  # (the host's `ok` says: a table, SPEC 3.4)
            return await cli_table_play.join_table_instead(config, args, _status)

    from p2pgotg.net.play.session import unwrap

    try:
        try:
            session = trio.run(main_task)
        except BaseExceptionGroup as group:
            raise unwrap(group) from None
    except (NetError, SessionError) as exc:
        _lines().drain()
        print(f"error: {_words(exc)}", file=sys.stderr)
        return _failure_code(exc)
    _lines().drain()
    if not isinstance(session, GameSession):  # (a seat at a table)
        return cli_table_play.report(session)
    return _report(session)


def _player_name(args: argparse.Namespace, ask: bool) -> str | None:
    """This player's name, shown to the other side with the key's fingerprint (SPEC 3.4):
    `--name` (kept for next time), else P2PGOTG_NAME (this run only), else the one kept
    beside the keys, else, once, asked for (`ask`: a person at a terminal). Raises
    BadNameError for a name that cannot be one."""
    import os

    from p2pgotg.net.play.player_name import NAME_ENV, clean_name, load_name, save_name

    given = getattr(args, "name", None)
    if given is not None:
        save_name(given)
        return clean_name(given)
    if os.environ.get(NAME_ENV):
        return clean_name(os.environ[NAME_ENV])
    kept = load_name()
    if kept is not None or not ask:
        return kept
    return _ask_name()


def _ask_name() -> str | None:
    """The first time: ask for a name, keep it beside the keys (Enter skips, for now)."""
    from p2pgotg.net.play.player_name import BadNameError, name_path, save_name

    if not sys.stdin.isatty():
        return None
    import textwrap

    print(textwrap.fill("What name should the players you meet see? They see it beside your "
                        f"key's fingerprint. Asked once: it is kept in {name_path()} (--name "
                        "changes it). Enter skips.", 78))
    while True:
        try:
            typed = input("Your name: ")
        except (EOFError, OSError):
            return None
        if not typed.strip():
            return None
        try:
            save_name(typed)
        except BadNameError as exc:
            print(f"{exc}: try another")
            continue
        return " ".join(typed.split())


def _has_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _interface(args: argparse.Namespace, mode: str | None, resume: bool | None = None) -> int:
    """Open the terminal game: `play` (the bot), `host`, `join`, or the start screen."""
    from p2pgotg import cli_internet

    if mode == "join":
        problem = cli_internet.check_join_code(args.code)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
    if not _has_terminal():
        bot = " (or add --bot to let the bot play this side)" if mode in ("host", "join") else ""
        print(f"the game's screen needs a terminal: run this in one{bot}", file=sys.stderr)
        return 2
    from p2pgotg.net.play.player_name import BadNameError
    from p2pgotg.ui.runner import Launch, run_terminal
    from p2pgotg.ui.state import Mode

    launch = Launch()
    try:
        launch.name = _player_name(args, ask=True)
    except BadNameError as exc:
        print(f"--name: {exc}", file=sys.stderr)
        return 2
    if hasattr(args, "arbiter"):
        launch.options = _options_from(args)
    if getattr(args, "seed", None) is not None:
        launch.seed = args.seed
    if getattr(args, "think", None) is not None:
        launch.think = args.think
    if getattr(args, "level", None) is not None:
        launch.level = args.level
    if hasattr(args, "abandon"):
        launch.limits = _limits(args)
    launch.resume = resume
    launch.port = getattr(args, "port", 0)
    launch.bind = getattr(args, "bind", None)
    launch.invite = getattr(args, "code", None)
    if mode in ("host", "join", None):  # the start screen hosts and joins the same way
        servers = cli_internet.stun_servers(args)
        tor = cli_internet.tor_choice(args)
        if servers is None or tor is None:
            return 2
        launch.stun, launch.tor = servers, tor
        if mode != "join":
            launch.reach = cli_internet.reach_options(args, launch.options.describe())
    code = run_terminal(Mode(mode) if mode else None, launch, ascii=args.ascii)
    if launch.table is not None:  # (the code was a table's: its own screen, SPEC 5)
        from p2pgotg import cli_table_play

        return cli_table_play.join_on_screen(launch.table, args.ascii)
    return code


def _cmd_play(args: argparse.Namespace) -> int:
    """A game against the built-in bot, over a real TLS connection on this computer."""
    return _interface(args, "bot")


def _cmd_start(args: argparse.Namespace) -> int:
    """The start screen: play the bot, host or join."""
    return _interface(args, None)


def _duration(text: str) -> int:
    """`15m`, `90s`, `1h`, or plain seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration like 90s, 15m or 1h") from None


def _number(text: str, parse: Callable[[str], _N], ok: Callable[[_N], bool], what: str) -> _N:
    """`text` read by `parse` and in range by `ok`; argparse's error saying it is not
    `what` otherwise."""
    try:
        value = parse(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def _seconds(text: str) -> float:
    """A number of seconds, 0 or more (fractions allowed)."""
    return _number(text, float, lambda v: 0 <= v < float("inf"),
                   "a number of seconds (0 or more)")


def _positive(text: str) -> int:
    """A whole number, 1 or more."""
    return _number(text, int, lambda v: v >= 1, "a whole number of 1 or more")


def _port(text: str) -> int:
    """A TCP port: 1 to 65535, or 0 for any free one."""
    return _number(text, int, lambda v: 0 <= v <= 65535,
                   "a port: use a number from 1 to 65535 (or 0 for any free port)")


def _bind_address(text: str) -> str:
    """An address this computer has (a quick trial bind says whether it does)."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(text, 0, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an address of this computer (it does not resolve): leave out "
            "--bind to listen on all addresses") from None
    for family, kind, proto, _, sockaddr in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.bind(sockaddr)
            return text
        except OSError as exc:
            if exc.errno not in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                return text  # (the address exists; the real listen will say what is wrong)
    raise argparse.ArgumentTypeError(
        f"this computer has no address {text}: leave out --bind to listen on all its "
        "addresses, or give one it has (127.0.0.1 for this computer only)")


#: The rule options' argument names: each is None unless given (the defaults are
#: RuleOptions'), so that `host` can tell options given for a new game from none given.
GENERALS_ARGUMENTS = ("arbiter", "flag_rule", "two_squares", "chasing", "move_time")
TOWERS_ARGUMENTS = ("teams", "capture", "climb_limit", "descent_limit", "start_gap",
                    "short_turn", "stuck_loses", "partners_block", "bonus_highest_tower",
                    "bonus_most_pawns", "turn_time")
RULE_ARGUMENTS = (*GENERALS_ARGUMENTS, *TOWERS_ARGUMENTS, "clock")


class _BadOptions(Exception):
    """Rule options that do not go together; `str()` says why, for the user."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _options_from(args: argparse.Namespace) -> Any:
    """The rule options of the game chosen with --game (Game of the Generals' by default);
    _BadOptions when an option of the other game is given."""
    towers = getattr(args, "game", None) == "towers"
    stray = [_flag(name) for name in (GENERALS_ARGUMENTS if towers else TOWERS_ARGUMENTS)
             if getattr(args, name, None) is not None]
    if stray:
        game = "Towers" if towers else "Game of the Generals"
        raise _BadOptions(f"{', '.join(stray)}: not a rule option of {game}"
                          + ("" if towers else " (add --game towers to host Towers)"))
    return _towers_options(args) if towers else _generals_options(args)


def _generals_options(args: argparse.Namespace) -> Any:
    from p2pgotg.rules import ChallengeMode, FlagRule, RuleOptions

    default = RuleOptions()
    return RuleOptions(
        flag_rule=FlagRule(args.flag_rule) if args.flag_rule else default.flag_rule,
        two_squares=bool(args.two_squares),
        chasing=bool(args.chasing),
        challenge_mode=ChallengeMode(args.arbiter) if args.arbiter else default.challenge_mode,
        clock_seconds=args.clock or 0,
        move_seconds=args.move_time or 0,
    )


def _towers_options(args: argparse.Namespace) -> Any:
    from p2pgotg.games.towers.rules.options import CaptureRule, RuleOptions

    default = RuleOptions()
    try:
        return RuleOptions(
            seats=4 if args.teams else 2, teams=bool(args.teams),
            capture=CaptureRule(args.capture) if args.capture else default.capture,
            climb_limit=args.climb_limit or 0, descent_limit=args.descent_limit or 0,
            start_gap=args.start_gap or default.start_gap,
            short_turn=bool(args.short_turn), stuck_loses=bool(args.stuck_loses),
            partners_block=bool(args.partners_block),
            bonus_highest_tower=bool(args.bonus_highest_tower),
            bonus_most_pawns=bool(args.bonus_most_pawns),
            clock_seconds=args.clock or 0, turn_seconds=args.turn_time or 0)
    except ValueError as exc:
        raise _BadOptions(str(exc).replace("teams", "--teams")) from None


def _rules_given(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) is not None for name in RULE_ARGUMENTS)


class _CannotHost(Exception):
    """`host` was asked for what it cannot do; `str()` says why, for the user."""


def _host_again(args: argparse.Namespace, key, interactive: bool) -> bool | None:
    """Whether `host` resumes its newest unfinished hosted game: True or False when decided
    (`--resume`, `--new`, or nothing to resume), None for the screen to ask. Raises
    _CannotHost when neither can be done: rule options given for a new game are never
    dropped to resume a game hosted with other rules."""
    from p2pgotg.net.play.saved_games import games_dir, unfinished_games
    from p2pgotg.protocol import HOST

    saved = [g for g in unfinished_games(games_dir(), HOST, key) if g.join_secret is not None]
    if not saved:
        if args.resume:
            raise _CannotHost("--resume: you have no unfinished hosted game to resume "
                              "(p2pgotg games lists your games); leave it out to host a new "
                              "game")
        return False
    if args.new:
        return False
    game, options = saved[0], _options_from(args)
    if _rules_given(args) and game.options != options and (args.resume or not interactive):
        rules = game.options.describe() if game.options is not None else "unknown rules"
        raise _CannotHost(f"your unfinished hosted game ({game.path.name}) has the rules: "
                          f"{rules}. The rule options given ({options.describe()}) are for a "
                          "new game: add --new to host one (the unfinished game stays "
                          "saved), or leave them out to resume it")
    if not interactive:
        print(f"your unfinished hosted game ({game.path.name}) resumes; --new hosts a new game "
              "instead", flush=True)
    return True if args.resume or not interactive else None


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", choices=["generals", "towers"], default="generals",
                   help="the game: generals (Game of the Generals, the default) or towers "
                   "(Towers, seed 002: p2pgotg rules --game towers)")
    g = p.add_argument_group("rule options of Game of the Generals (proposed by the host)")
    g.add_argument("--arbiter", choices=["open", "blind"], default=None,
                   help="open (default): both ranks of a challenge are declared; blind: a "
                   "two-party computation tells both players only who won, as an arbiter "
                   "would")
    g.add_argument("--flag-rule", choices=["safe_or_survive", "always_survive", "immediate"],
                   default=None,
                   help="when a Flag that reaches the far back rank wins: safe_or_survive "
                   "(default) at once if no enemy piece stands beside it, else once it has "
                   "survived the opponent's next move; always_survive only once it has "
                   "survived the opponent's next move; immediate at once")
    g.add_argument("--two-squares", action="store_true", default=None,
                   help="forbid moving one piece between the same two squares more than "
                   "three turns in a row (off by default)")
    g.add_argument("--chasing", action="store_true", default=None,
                   help="forbid chasing: threatening the piece that just moved away from you "
                   "again, when that repeats an earlier position (off by default)")
    g.add_argument("--move-time", type=_duration, default=None, metavar="TIME",
                   help="the most one move may take, e.g. 60s (default: none)")
    t = p.add_argument_group("rule options of Towers, with --game towers (SPEC 4.10)")
    t.add_argument("--teams", action="store_true", default=None,
                   help="each player plays two colours, alternately (the seed's 2-player "
                   "variant: 4 colours, 9 flags each)")
    t.add_argument("--capture", choices=["higher", "not_lower"], default=None,
                   help="a pawn takes another from a higher tower (default), or from one at "
                   "least as high (not_lower)")
    t.add_argument("--climb-limit", type=_positive, default=None, metavar="N",
                   help="a move climbs at most N layers (default: any)")
    t.add_argument("--descent-limit", type=_positive, default=None, metavar="N",
                   help="a move goes down at most N layers (default: any)")
    t.add_argument("--start-gap", type=int, choices=[1, 2], default=None,
                   help="border squares that must lie between two starting squares "
                   "(default: 2)")
    t.add_argument("--short-turn", action="store_true", default=None,
                   help="a turn whose second action is impossible ends, not the game")
    t.add_argument("--stuck-loses", action="store_true", default=None,
                   help="a colour that cannot act loses")
    t.add_argument("--partners-block", action="store_true", default=None,
                   help="with --teams: a partner's pawn blocks like your own")
    t.add_argument("--bonus-highest-tower", action="store_true", default=None,
                   help="1 point for the colour whose flags alone top the highest tower")
    t.add_argument("--bonus-most-pawns", action="store_true", default=None,
                   help="1 point for the colour with the most pawns on the board")
    t.add_argument("--turn-time", type=_duration, default=None, metavar="TIME",
                   help="the most one turn (two actions) may take, e.g. 60s (default: none)")
    p.add_argument("--clock", type=_duration, default=None, metavar="TIME",
                   help="each player's total time, e.g. 15m (default: none)")


def _add_level_option(p: argparse.ArgumentParser, default: str, what: str) -> None:
    p.add_argument("--level", choices=PLAYABLE, default=default,
                   help=f"{what} (default: {default})")


def _add_name(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default=None, metavar="NAME",
                   help="your name, shown to the other player beside your key's fingerprint "
                   "(kept for next time; asked once when a terminal game starts without one; "
                   "P2PGOTG_NAME sets one for a single run)")


def _add_ascii(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ascii", action="store_true",
                   help="no colour: marks drawn as plain text, for any terminal")


def _add_seat_options(p: argparse.ArgumentParser, away: str) -> None:
    """What host and join share: the bot seat, the driver's timeouts, the display."""
    p.add_argument("--bot", action="store_true", help="let the bot play this side")
    _add_level_option(p, SEAT_DEFAULT, "with --bot: how well the bot plays")
    p.add_argument("--seed", type=int, default=None,
                   help="the bot's random seed, to repeat games (with --max-games, game N's "
                   "bot gets SEED + N); default: fresh randomness for every game")
    p.add_argument("--bot-delay", type=_seconds, default=0.0, metavar="SECONDS",
                   help="the bot thinks this long before each move (default: 0)")
    p.add_argument("--abandon", type=_duration, default=180, metavar="TIME",
                   help=f"claim the game when {away} is away this long")
    p.add_argument("--audit-timeout", type=_duration, default=60, metavar="TIME",
                   help="after our audit, claim the game if the other's has not come")
    p.add_argument("--duty-timeout", type=_duration, default=30, metavar="TIME",
                   help="claim the game if the other side withholds an automatic answer "
                   "(its coin, its setup reveal, a challenge's answer)")
    p.add_argument("--setup-timeout", type=_duration, default=300, metavar="TIME",
                   help="claim the game if the other side does not commit a setup in time")
    _add_name(p)
    _add_ascii(p)


#: The `add_subparsers` of the parser, to which each command is added.
Commands = argparse._SubParsersAction


def build_parser() -> argparse.ArgumentParser:
    from p2pgotg import cli_internet

    parser = argparse.ArgumentParser(
        prog="p2pgotg", description="Game of the Generals, peer to peer, with no arbiter.",
        epilog="Run p2pgotg with no command (or p2pgotg start) for the start screen: play "
        "the bot, host, join, your saved games. Files live in ~/.config/p2pgotg (keys) and "
        "~/.local/share/p2pgotg (games); set P2PGOTG_HOME=DIR to keep everything in DIR "
        "instead (DIR/config, DIR/data). Each command has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"p2pgotg {__version__}")
    cli_internet.add_top_arguments(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add_command in (_add_demo_command, _add_rules_command, _add_verify_command,
                        _add_host_command, _add_join_command, _add_play_command,
                        _add_start_command, _add_show_command, _add_games_command,
                        _add_selfplay_command):
        add_command(sub)
    return parser


def _add_demo_command(sub: Commands) -> None:
    """`demo`: random moves in the rules engine."""
    demo = sub.add_parser("demo", help="random moves in the rules engine, printed (no network)",
                          description="Both sides play random legal moves in the rules "
                          "engine alone; every move is printed, then the final board.")
    demo.add_argument("--seed", type=int, default=None,
                      help="the random seed, to repeat a game (default: a new one)")
    demo.add_argument("--max-moves", type=_positive, default=2000, metavar="N",
                      help="stop after N moves if the game has not ended (default: 2000)")
    demo.set_defaults(func=_cmd_demo)


def _add_rules_command(sub: Commands) -> None:
    """`rules`: how to play, in a screenful."""
    rules = sub.add_parser("rules", help="how to play: the ranks, challenges, how to win, keys",
                           description="The rules in a screenful (the same text as ? in "
                           "the game): the ranks in order, who beats whom, the Spy and the "
                           "Private, the Flag and how to win, the keys.")
    rules.add_argument("--game", choices=["generals", "towers"], default="generals",
                       dest="which", help="the game: generals (Game of the Generals, the "
                       "default) or towers (Towers)")
    rules.set_defaults(func=_cmd_rules)


def _add_verify_command(sub: Commands) -> None:
    """`verify FILE`: judge a saved transcript."""
    verify = sub.add_parser(
        "verify",
        help="check a saved game transcript",
        description="Replay a saved transcript: exit 0 finished and clean (proven), 1 a rule "
        "was broken (the message names who, which rule and where), 2 the file cannot be read "
        "(damaged, edited, forged or cut short), 3 the game is unfinished, 4 finished and "
        "clean but the result rests on a claim about time or absence (the claimant's word).",
    )
    verify.add_argument("file", nargs="+", help="a saved game (see: p2pgotg games); for a "
                        "table of three or four, the files of one or more of its seats")
    verify.set_defaults(func=_cmd_verify)


def _add_host_command(sub: Commands) -> None:
    """`host`: one game, or many with the bot; its reach and rule options."""
    from p2pgotg import cli_internet, cli_table_play

    host = sub.add_parser("host", help="host a game and print invite codes")
    host.add_argument("--port", type=_port, default=0,
                      help="port to listen on, 1-65535 (default: any free port)")
    host.add_argument("--bind", type=_bind_address, default=None, metavar="ADDRESS",
                      help="an address of this computer to listen on (default: all)")
    _add_seat_options(host, away="the other player")
    host.add_argument("--action-limit", type=_duration, default=None, metavar="TIME",
                      help="with --max-games: claim a game whose player has owed the same "
                      "thing this long (a move, with or without a clock; its setup; an "
                      "answer), so that no slot is held by a player who makes no progress "
                      "(default: 5m)")
    host.add_argument("--games-per-address", type=_positive, default=None, metavar="N",
                      help="with --max-games: at most N games in progress with one address "
                      "(an IPv4 address or an IPv6 /64) at once (default: 8)")
    cli_internet.add_host_arguments(host)
    host.add_argument("--max-games", type=_positive, default=None, metavar="N",
                      help="with --bot: host up to N games at once (one invite for all), "
                      "until interrupted; with N > 1 the bots think in a worker process")
    host.add_argument("--games-total", type=_positive, default=None, metavar="M",
                      help="with --max-games: stop once M games have ended")
    again = host.add_argument_group(
        "an unfinished hosted game (without these, the screen asks; headless, it resumes)")
    choice = again.add_mutually_exclusive_group()
    choice.add_argument("--resume", action="store_true",
                        help="resume your unfinished hosted game without asking")
    choice.add_argument("--new", action="store_true",
                        help="host a new game without asking (the unfinished one stays saved)")
    _add_rule_options(host)
    cli_table_play.add_host_arguments(host)
    host.set_defaults(func=_cmd_host)


def _add_join_command(sub: Commands) -> None:
    """`join [CODE]`: a game by its code, or the list of the games announced here."""
    from p2pgotg import cli_internet

    join = sub.add_parser("join", help="join a game by its short code or invite code; "
                          "alone, list the games announced on this network")
    join.add_argument("code", nargs="*", help="the short code (7-crossover-clockwork) or the "
                      "invite code the host gave you (pasted as it came: line breaks, quotes "
                      "and spaces do not matter); leave it out to list the games on this "
                      "network")
    _add_seat_options(join, away="the host")
    cli_internet.add_join_arguments(join)
    join.set_defaults(func=_cmd_join)


def _add_play_command(sub: Commands) -> None:
    """`play`: against the bot, in this terminal."""
    play = sub.add_parser("play", help="play against the built-in bot in this terminal")
    play.add_argument("--seed", type=int, default=None,
                      help="the bot's random seed (and your random formations')")
    _add_level_option(play, PLAY_DEFAULT, "how well the bot plays")
    play.add_argument("--think", type=_seconds, default=0.45, metavar="SECONDS",
                      help="the bot waits this long before each move (default: 0.45)")
    _add_name(play)
    _add_ascii(play)
    _add_rule_options(play)
    play.set_defaults(func=_cmd_play)


def _add_start_command(sub: Commands) -> None:
    """`start`: the start screen."""
    from p2pgotg import cli_internet

    start = sub.add_parser("start", help="the start screen: play the bot, host or join")
    _add_level_option(start, PLAY_DEFAULT, "how well the bot plays (l changes it there)")
    _add_name(start)
    _add_ascii(start)
    cli_internet.add_start_arguments(start)
    start.set_defaults(func=_cmd_start)


def _add_show_command(sub: Commands) -> None:
    """`show FILE`: review a finished game."""
    show = sub.add_parser(
        "show", help="review a finished game move by move",
        description="Step through a finished game from its saved transcript (yours or the "
        "other player's): both armies revealed, each challenge explained. Keys: Right/Left "
        "step, PgDn/PgUp ten moves, Home/End, q quit. Without a terminal (or with --text) "
        "the moves are printed instead. Exit 2 when the file cannot be shown, saying why.")
    show.add_argument("file", help="a saved game (see: p2pgotg games)")
    show.add_argument("--text", action="store_true", help="print the moves, no screen")
    _add_ascii(show)
    show.set_defaults(func=_cmd_show)


def _add_games_command(sub: Commands) -> None:
    """`games`: the saved games."""
    games = sub.add_parser(
        "games", help="list your saved games, unfinished first",
        description="Your saved games, with the opponent, the date and the result; "
        "unfinished ones first, each with the command that resumes it, finished ones with "
        "the command that shows them.")
    games.set_defaults(func=_cmd_games)


def _add_selfplay_command(sub: Commands) -> None:
    """`selfplay`: bot against bot over TLS on loopback."""
    selfplay = sub.add_parser("selfplay", help="bot against bot over TLS on loopback",
                              description="The bot plays itself over real TLS connections on "
                              "this computer, with the full protocol and audit; exits 1 if "
                              "any game's audit is not clean.")
    selfplay.add_argument("--games", type=_positive, default=1, metavar="N",
                          help="how many games to play, one after another (default: 1)")
    selfplay.add_argument("--seed", type=int, default=None,
                          help="the bots' random seed, to repeat games (default: a new one)")
    _add_level_option(selfplay, SEAT_DEFAULT, "how well both bots play")
    selfplay.add_argument("--save-dir", default=None,
                          help="where the transcripts go (default: a new temporary folder)")
    _add_rule_options(selfplay)
    selfplay.set_defaults(func=_cmd_selfplay)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from p2pgotg.cli_internet import merge_top_arguments

    problem = merge_top_arguments(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    if isinstance(getattr(args, "code", None), list):
        from p2pgotg.cli_internet import given_code

        args.code = given_code(args.code)
    if hasattr(args, "game"):
        try:
            _options_from(args)
        except _BadOptions as exc:
            parser.error(str(exc))
    if not hasattr(args, "func"):
        if args.command is None and _has_terminal():
            args.ascii = False
            return _interface(args, None)
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader stopped reading (`show FILE | head`): nothing is wrong with the file.
        # Python flushes stdout again at exit, so point it at devnull first (the recipe of
        # Python's `signal` documentation) or that flush fails with a traceback of its own.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
