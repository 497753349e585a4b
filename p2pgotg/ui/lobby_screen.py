"""The lobby: the host's invite codes, the rules on offer, the connection; the joiner
accepts the host's rules (or declines by quitting). Also the error screen."""

from __future__ import annotations

import ipaddress
import textwrap

from p2pgotg.games import module_of
from p2pgotg.net.play.session import Link
from p2pgotg.protocol import HOST, JOINER
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Mode, Prompt

REPLY_KEY = "r"  # the host takes a joiner's reply code (hole punching, SPEC 3.8)
REPLY_HINT = "paste the reply code the other player sent you, then Enter; Esc goes back"
#: Words around a reply code that people copy with it: the joiner's label, the command.
_AROUND_A_REPLY = {"reply:", "reply", "p2pgotg", "host", "--reply"}
#: What a selection may catch around a code: never part of one (base32 and dashes).
_PUNCTUATION = "()[]{}<>.,;:!?"


def title(state: AppState) -> str:
    if state.mode is Mode.HOST:
        return "p2pgotg - hosting a game"
    if state.mode is Mode.JOIN:
        return "p2pgotg - joining a game"
    return "p2pgotg - a game against the bot"


def _where(code: str) -> str:
    """Who the invite is for, by what it lists: a label that is true of all of it."""
    from p2pgotg.net.reaching.invite import Invite
    from p2pgotg.net.transport.errors import NetError
    from p2pgotg.reach.candidates import LAN, MAPPED, PUNCH

    try:
        invite = Invite.decode(code)
    except NetError:
        return "invite code"
    candidates = invite.all_candidates()
    if _loopback_only(code):
        return f"for a player on this computer ({invite.address})"
    lan = [c.address for c in candidates if c.kind == LAN]
    mapped = [f"{c.address}:{c.port}" for c in candidates if c.kind == MAPPED]
    punch = [c.address for c in candidates if c.kind == PUNCH]
    if mapped:
        return f"for a player anywhere (on the internet it reaches {mapped[0]})"
    if punch:
        here = f"who can reach {lan[0]}, " if lan else ""
        return (f"for a player {here}or anywhere else with a reply code (your public "
                f"address {punch[0]})")
    return f"for a player who can reach {invite.address}"


def _loopback_only(code: str) -> bool:
    from p2pgotg.net.reaching.invite import Invite
    from p2pgotg.net.transport.errors import NetError

    try:
        candidates = Invite.decode(code).all_candidates()
        return all(ipaddress.ip_address(c.address).is_loopback for c in candidates)
    except (NetError, ValueError):  # (a hostname: not loopback as far as we can tell)
        return False


def _link_words(state: AppState) -> str:
    session = state.session
    if session is None:
        if state.mode is Mode.HOST:
            return "waiting for the other player to connect..." if state.invites \
                else "starting..."
        return "connecting..."
    if session.link is not Link.CONNECTED and session.peer.flow.game_id is None:
        if state.mode is Mode.HOST:
            gone = {"declined": "the other player declined your rules",
                    "quit": "the other player left"}.get(session.peer_left or "",
                                                         "the other player's connection "
                                                         "dropped")
            return f"{gone}; waiting for a player (the invite code still works)..."
        if session.peer_left:
            return "the host left before the game began"
    return {
        Link.CONNECTING: "connecting...",
        Link.CONNECTED: "connected",
        Link.RECONNECTING: "connection lost: reconnecting...",
        Link.CLOSED: "closed",
    }[session.link]


def _labelled(label: str, text: str, width: int) -> Fragments:
    """` Label: text`, the text wrapped between words under the screen's width."""
    head = f" {label}: "
    lines = textwrap.wrap(head + text, width)
    return [("class:strong", head), ("", "\n ".join([lines[0][len(head):], *lines[1:]])
                                     + "\n")]


def code_lines(code: str, width: int) -> list[str]:
    """The command that joins with `code`, laid out to copy well: on one line when it fits
    (a plain copy of that line works), else quoted and broken with the rest of the code
    starting at the left edge, so that copying both lines into a shell gives one argument
    (and the join prompt takes either form)."""
    command = f"p2pgotg join {code}"
    if len(command) + 2 <= width:
        return [f"  {command}"]
    quoted = f"  p2pgotg join '{code}'"
    return [quoted[i:i + width - 1] for i in range(0, len(quoted), width - 1)]


def columns() -> int:
    from prompt_toolkit.application.current import get_app_or_none

    app = get_app_or_none()
    return app.output.get_size().columns if app is not None else 80


def shown_invites(invites: list[str]) -> list[str]:
    """The codes worth showing: every address but a second loopback one (::1 when
    127.0.0.1 is there too), at most three, so the screen keeps its 24 lines."""
    loopback = [c for c in invites if _loopback_only(c)]
    others = [c for c in invites if c not in loopback]
    return (others[:2] + loopback[:1])[:3] if loopback else others[:3]


def short_code_box(code: str) -> Fragments:
    """The short code, spaced out in a box, to read aloud across the room."""
    spaced = "  ".join(code.upper().split("-"))
    inner = f"   {spaced}   "
    return [("class:heading", "\n On this network, read out this code "
             "(they type: p2pgotg join CODE):\n"),
            ("class:invite", f" +{'-' * len(inner)}+\n |{inner}|\n +{'-' * len(inner)}+\n")]


def body(state: AppState) -> Fragments:
    out: Fragments = []
    peer = state.peer
    options = (peer.options if peer else None) or state.host_options
    if state.mode is Mode.BOT:
        out.append(("", (" Setting up a game against the bot over a real TLS connection "
                         "on\n this computer, with the full protocol...\n\n")))
    if options is not None:  # (a joiner learns the game from the host's offer)
        out += _labelled("Game", module_of(options).title, columns() - 2)
        who = "The host proposes these rules" if state.mode is Mode.JOIN else "Rules"
        out += _labelled(who, options.describe(), columns() - 2)
    width = columns() - 2
    out += _labelled("Connection", _link_words(state), width)
    if state.mode is not Mode.BOT and state.opponent_label != "your opponent":
        host = state.mode is Mode.JOIN
        out += _labelled("The host" if host else "The other player", state.opponent_label,
                         width)
    if state.net_note:
        for line in textwrap.wrap(f"({state.net_note})", width):
            out.append(("class:dim", f" {line}\n"))
    if state.mode is Mode.JOIN and state.reply_code and state.session is None:
        out.append(("class:heading", "\n Reply code for the host:\n"))
        out.append(("class:invite", f"  {state.reply_code}\n"))
    waiting = _waiting(state)
    if state.mode is Mode.HOST and state.short_code and waiting:
        out += short_code_box(state.short_code)
    if state.mode is Mode.HOST and state.invites and waiting:
        out.append(("class:heading", "\n Give the other player one of these commands"))
        out.append(("class:dim", "\n (copy all of it, quotes too, or paste it at 3 on their "
                    "start screen)\n"))
        for code in shown_invites(state.invites):
            out.append(("", f" {_where(code)}:\n"))
            for part in code_lines(code, width + 2):
                out.append(("class:invite", f"{part}\n"))
    if peer is not None and peer.role == JOINER:
        if peer.flow.has_hello(HOST) and not peer.flow.has_hello(JOINER):
            out.append(("", "\n Press "))
            out.append(("class:strong", "a"))
            out.append(("", " to accept these rules and start, "))
            out.append(("class:strong", "q"))
            out.append(("", " to decline and quit.\n"))
        elif peer.flow.has_hello(JOINER):
            out.append(("", "\n Accepted. Tossing a coin for who plays White...\n"))
    return out


def hints(state: AppState) -> str:
    peer = state.peer
    if state.prompt is Prompt.REPLY_CODE:
        return REPLY_HINT
    if peer is not None and peer.role == JOINER and not peer.flow.has_hello(JOINER):
        return "a accept the rules   q decline and quit"
    if takes_replies(state):
        return f"{REPLY_KEY} take a reply code from the joiner   q quit"
    return "q quit"


def _waiting(state: AppState) -> bool:
    peer = state.peer
    return peer is None or (peer.flow.game_id is None and state.session is not None
                            and state.session.link is not Link.CONNECTED)


def _away(state: AppState) -> bool:
    """A game under way whose other player is not connected now."""
    session = state.session
    return (session is not None and session.peer.flow.game_id is not None
            and not session.done and session.link is not Link.CONNECTED)


def takes_replies(state: AppState) -> bool:
    """A host still waiting, or whose joiner is away in a game, whose invite lists more
    than this computer's LAN: a joiner who cannot connect directly may send it a reply
    code to punch through the NATs (SPEC 3.8)."""
    return state.mode is Mode.HOST and (_waiting(state) or _away(state)) \
        and any(code.startswith("gg2-") for code in state.invites)


def _no_reply_here(state: AppState) -> str | None:
    """Why no reply code can be taken now (None: one can)."""
    if state.mode is not Mode.HOST:
        return "only the host takes reply codes: send yours to the host"
    if not (_waiting(state) or _away(state)):
        return "the other player is already connected: no reply code is needed"
    if not takes_replies(state):
        return ("this host is not set up to punch through NATs (it listens on this "
                "computer only, or is still starting): no reply code can be taken")
    return None


def ask_reply(state: AppState) -> None:
    """Open the input line for a reply code."""
    why_not = _no_reply_here(state)
    if why_not is not None:
        state.warn(why_not)
        return
    state.prompt = Prompt.REPLY_CODE
    state.say("paste the reply code (gr1-...) the other player sent you, then Enter")


def reply_typed(state: AppState, code: str) -> None:
    """`r` or `reply` typed on a game's input line (either game): the code typed with it
    is taken at once, else the reply prompt opens for it; where none can be taken, the
    same words as the prompt's say why."""
    why_not = _no_reply_here(state)
    if why_not is not None:
        state.warn(why_not)
    elif code:
        submit_reply(state, code)
    else:
        ask_reply(state)


def reply_in(text: str) -> str:
    """The reply code in what was pasted: broken over lines, quoted, or with its label."""
    for mark in ("\\\n", "\\", "'", '"', "`"):
        text = text.replace(mark, " ")
    words = [w for w in text.split() if w.lower() not in _AROUND_A_REPLY]
    return "".join(words).strip(_PUNCTUATION)


def submit_reply(state: AppState, text: str) -> None:
    """Check the pasted reply code and hand it to the host's trio side, which punches.
    A code that is mistyped keeps the prompt open with the reason."""
    from p2pgotg.reach.reply_code import ReplyCode, ReplyCodeError

    code = reply_in(text)
    if not code:
        state.warn("paste the reply code first (it starts with gr1-), or Esc to go back")
        return
    try:
        ReplyCode.decode(code)
    except ReplyCodeError as exc:
        state.warn(f"{exc}: check that all of it was copied")
        return
    state.prompt = None
    state.say("taking the reply code: punching through the NATs...")
    state.driver.take_reply(code)


def accept(state: AppState) -> None:
    peer = state.peer
    if peer is None or peer.role != JOINER or not peer.flow.has_hello(HOST):
        state.warn("nothing to accept yet: the host's rules have not arrived")
        return
    if peer.flow.has_hello(JOINER):
        state.warn("you have already accepted")
        return
    state.driver.perform(lambda p: p.accept(), "rules accepted")


def error_body(state: AppState) -> Fragments:
    out: Fragments = [("", "\n"), ("class:status.error", " The game cannot go on.\n\n")]
    for para in (state.fatal or "").splitlines():
        for line in textwrap.wrap(para, 76) or [""]:
            out.append(("", f" {line}\n"))
    out.append(("", "\n Press q to quit.\n"))
    return out
