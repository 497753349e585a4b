"""The command line of playing across networks: `--stun`, `--no-port-map`, `host --reply`,
`join SHORT-CODE` and `join` alone (the games on this LAN). cli.py wires these in; the
work is done by `net.reaching` (offer.py, racing.py, pake_link.py, lan.py)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any

LOOPBACK_NAMES = {"localhost"}
#: The defaults of --stun and --tor when they are not given (the tests set both to off, so
#: that no test uses the public STUN servers or starts a tor that knows the public network).
STUN_ENV, TOR_ENV = "P2PGOTG_STUN", "P2PGOTG_TOR"


def _add_reaching_out(p: argparse.ArgumentParser, port_map_help: str,
                      ) -> argparse._ArgumentGroup:
    """The options of everything that hosts: STUN servers and port mapping."""
    g = p.add_argument_group("reaching the other player (SPEC 3.7-3.8)")
    g.add_argument("--stun", action="append", default=None, metavar="HOST:PORT",
                   help="a STUN server (TCP) to learn your public address; repeat for more; "
                   f"'off' for none (default: ${STUN_ENV}, else two public servers)")
    g.add_argument("--no-port-map", action="store_true", help=port_map_help)
    _add_tor(g)
    return g


def _add_tor(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--tor", default=None, metavar="auto|off|CONTROL",
                   help="Tor, the way through when no direct path exists (SPEC 3.8): auto "
                   "starts tor (if installed) when needed; off never; or a running tor's "
                   f"control port HOST:PORT or socket path (default: ${TOR_ENV}, else auto)")


def add_host_arguments(p: argparse.ArgumentParser) -> None:
    g = _add_reaching_out(
        p, "do not ask the router to forward a port (PCP, NAT-PMP, UPnP-IGD)")
    g.add_argument("--reply", default=None, metavar="CODE",
                   help="give the host running on this computer the reply code a joiner "
                   "sent you, so that both punch through your NATs")


def add_join_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reaching the host")
    g.add_argument("--stun", action="append", default=None, metavar="HOST:PORT",
                   help="STUN servers (TCP) for hole punching; 'off' for none")
    _add_tor(g)


def add_top_arguments(p: argparse.ArgumentParser) -> None:
    """`p2pgotg --stun HOST:PORT` with no command opens the start screen, which hosts and
    joins: so the top level takes what `start` takes (kept apart, then merged)."""
    p.add_argument("--stun", action="append", default=None, metavar="HOST:PORT",
                   dest="top_stun", help="for the start screen: as `start --stun`")
    p.add_argument("--no-port-map", action="store_true", dest="top_no_port_map",
                   help="for the start screen: as `start --no-port-map`")


def merge_top_arguments(args: argparse.Namespace) -> str | None:
    """Give the top level's --stun and --no-port-map to the start screen (no command, or
    `start`); an error for another command, which takes its own."""
    given = args.top_stun is not None or args.top_no_port_map
    if not given:
        return None
    if args.command not in (None, "start"):
        return (f"--stun before a command is for the start screen: write it after the "
                f"command (p2pgotg {args.command} ... --stun HOST:PORT)")
    args.stun = (getattr(args, "stun", None) or []) + (args.top_stun or []) or None
    args.no_port_map = getattr(args, "no_port_map", False) or args.top_no_port_map
    return None


def add_start_arguments(p: argparse.ArgumentParser) -> None:
    """The start screen hosts and joins as `host` and `join` do, so it takes their options."""
    _add_reaching_out(p, "when hosting, do not ask the router to forward a port")


def stun_servers(args: argparse.Namespace) -> list[tuple[str, int]] | None:
    """The servers asked for (defaults when none), [] for 'off'; None after printing an
    error for a malformed one."""
    from p2pgotg.net.reaching.stun_client import DEFAULT_SERVERS, parse_server

    given = getattr(args, "stun", None)
    source = "--stun"
    if not given and os.environ.get(STUN_ENV, "").strip():
        given, source = os.environ[STUN_ENV].replace(",", " ").split(), STUN_ENV
    given = given or list(DEFAULT_SERVERS)
    if any(text.strip().lower() == "off" for text in given):
        return []
    try:
        return [parse_server(text) for text in given]
    except ValueError as exc:
        print(f"bad {source}: {exc}", file=sys.stderr)
        return None


def tor_choice(args: argparse.Namespace) -> Any:
    """The --tor asked for (net.reaching.tor.TorChoice), None after printing an error."""
    from p2pgotg.net.reaching.tor import TorChoice

    given, source = getattr(args, "tor", None), "--tor"
    if given is None and os.environ.get(TOR_ENV, "").strip():
        given, source = os.environ[TOR_ENV], TOR_ENV
    try:
        return TorChoice.parse(given or "auto")
    except ValueError as exc:
        print(f"bad {source}: {exc}", file=sys.stderr)
        return None


def loopback_only(bind: str | None) -> bool:
    if bind is None:
        return False
    if bind in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


def reach_options(args: argparse.Namespace, rules: str) -> Any:
    """ReachOptions for `host`, None when listening on loopback only (nothing to reach from
    outside), False after printing an error."""
    from p2pgotg.net.reaching.offer import ReachOptions
    from p2pgotg.net.transport.paths import data_dir

    if loopback_only(getattr(args, "bind", None)):
        return None
    servers = stun_servers(args)
    tor = tor_choice(args)
    if servers is None or tor is None:
        return False
    mapping = not getattr(args, "no_port_map", False)
    return ReachOptions(data_dir(), servers, port_mapping=mapping, lan=True, rules=rules,
                        tor=tor)


def print_offer(hosting: Any) -> None:
    """The host's lines: `invite:`, then what it found about its network (the `code:`
    line came as soon as the short code was announced, before these)."""
    for code in hosting.invites:
        print(f"invite: {code}", flush=True)
    for note in hosting.notes:
        print(f"network: {note}", flush=True)


def cmd_host_reply(args: argparse.Namespace) -> int:
    """`host --reply CODE`: hand the code to the running host and print what it did."""
    import trio

    from p2pgotg.net.reaching.reply_inbox import InboxError, send_reply
    from p2pgotg.net.transport.paths import data_dir
    from p2pgotg.reach.reply_code import ReplyCode, ReplyCodeError

    try:
        ReplyCode.decode(args.reply)
    except ReplyCodeError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    try:
        lines = trio.run(send_reply, data_dir(), args.reply)
    except InboxError as exc:
        print(f"the code was not handed over: {exc}", file=sys.stderr)
        return 2
    except OSError:
        print("no host is running from this p2pgotg home on this computer: start "
              "`p2pgotg host` first, then give it the reply code", file=sys.stderr)
        return 2
    for line in lines:
        print(line, flush=True)
    if not lines:
        print("error: the host did not answer in time", file=sys.stderr)
        return 1
    return 0 if lines[-1].startswith("ok") else 1


def cmd_list_lan_games() -> int:
    """`join` with no code: the games announced on this LAN."""
    import trio

    from p2pgotg.net.reaching.lan import BROWSE_TIME, browse

    games = trio.run(browse)
    if not games:
        print(f"no p2pgotg game is announced on this network (looked for {BROWSE_TIME:g} s); "
              "ask the host for its short code or invite code", file=sys.stderr)
        return 1
    print("games announced on this network:")
    for game in games:
        print(f"  {game.number:>2}  {game.name}  at {game.addresses[0]}:{game.port}"
              f"{'  ' + game.rules if game.rules else ''}")
    print("join one with: p2pgotg join NUMBER-WORD-WORD (the short code the host shows)")
    return 0


def given_code(words: list[str]) -> str | None:
    """The code in `join`'s words: None for none, else as racing.typed_code reads it."""
    from p2pgotg.net.reaching.racing import typed_code

    return typed_code(" ".join(words)) if words else None


def check_join_code(code: str) -> str | None:
    """What is wrong with a code given to `join` (None when it can be tried)."""
    from p2pgotg.net.reaching.racing import code_problem

    return code_problem(code)
