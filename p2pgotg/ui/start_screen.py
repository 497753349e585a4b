"""The start screen (`p2pgotg` alone, or `p2pgotg start`): play the bot, host or join."""

from __future__ import annotations

from p2pgotg.players.levels import PLAYABLE
from p2pgotg.ui.board import Fragments
from p2pgotg.ui.state import AppState, Mode, Prompt

CHOICES: dict[str, Mode | None] = {"1": Mode.BOT, "b": Mode.BOT, "2": Mode.HOST,
                                   "h": Mode.HOST, "3": Mode.JOIN, "j": Mode.JOIN,
                                   "4": None, "g": None}  # None: the saved games
LEVEL_KEY = "l"  # the bot's next level (easy, normal, hard, then easy again)
GAME_KEY = "t"  # the game to play or host: Game of the Generals, Towers, then again
GAMES: tuple[str | None, ...] = (None, "towers")  # by their names in the game registry


def title(state: AppState) -> str:
    return "p2pgotg - Game of the Generals, peer to peer"


def body(state: AppState) -> Fragments:
    return [
        ("", "\n"),
        ("class:heading", "  What would you like to do?\n\n"),
        ("class:strong", f"   {GAME_KEY}  "), ("", "The game: "),
        ("class:strong", game_title(state)), ("class:dim", f"  ({GAME_KEY} changes it)\n"),
        ("class:strong", "   1  "), ("", "Play against the bot, level "),
        ("class:strong", state.bot_level), ("class:dim", "  (l changes it)\n"),
        ("class:strong", "   2  "), ("", "Host a game: you get a code to give a friend\n"),
        ("class:strong", "   3  "), ("", "Join a game: type the code a friend gave you\n"),
        ("class:strong", "   4  "), ("", "Your saved games: review or resume them\n"),
        ("class:strong", "   ?  "), ("", "How to play: the rules in a screenful, and the keys\n"),
        ("class:strong", "   q  "), ("", "Quit\n\n"),
        ("class:dim", ("  Hosting here uses the standard rules; for others\n"
                       "  (clocks, the two-squares rule...) see: p2pgotg host --help\n")),
    ]


def hints(state: AppState) -> str:
    if state.prompt is Prompt.JOIN_CODE:
        return "type the short code or paste the invite code, then Enter; Esc goes back"
    return ("t game  1 play the bot  l level  2 host  3 join  4 saved games  ? how to play  "
            "q quit")


def next_level(state: AppState) -> None:
    """Step the bot's level on: easy, normal, hard, easy..."""
    levels = list(PLAYABLE)
    at = levels.index(state.bot_level) if state.bot_level in levels else -1
    state.bot_level = levels[(at + 1) % len(levels)]
    state.say(f"the bot will play at level {state.bot_level}")


def game_title(state: AppState) -> str:
    """The game the start screen plays and hosts, for people."""
    from p2pgotg.games import module_for

    return module_for(state.game).title


def next_game(state: AppState) -> None:
    """Step the game on: Game of the Generals, Towers, Game of the Generals..."""
    at = GAMES.index(state.game) if state.game in GAMES else -1
    state.game = GAMES[(at + 1) % len(GAMES)]
    state.say(f"playing and hosting {game_title(state)} (joining plays the host's game)")


def choose(state: AppState, key: str) -> None:
    mode = CHOICES[key]
    if mode is None:
        from p2pgotg.ui import games_screen

        games_screen.open_list(state)
        return
    if mode is Mode.JOIN:
        state.prompt = Prompt.JOIN_CODE
        state.say("type the short code or paste the invite code, and press Enter")
        return
    begin(state, mode)


def begin(state: AppState, mode: Mode, invite: str | None = None) -> None:
    state.mode = mode
    state.prompt = None
    state.say("")
    state.driver.start(mode, invite)


def submit_code(state: AppState, text: str) -> None:
    """Join with what was typed: a short code (found on this network) or an invite code,
    checked as `p2pgotg join CODE` checks it; the join then takes the same path, STUN and
    hole punching included (runner.Controller._join)."""
    from p2pgotg.net.reaching.racing import code_problem, typed_code

    code = typed_code(text)
    problem = code_problem(code)
    if problem is not None:
        state.warn(problem)
        return
    begin(state, Mode.JOIN, code)
