"""Running the interface: prompt_toolkit on asyncio, the network on trio in guest mode on the
same loop (`trio.lowlevel.start_guest_run`), in one thread: prompt_toolkit needs asyncio.

Key handlers run in asyncio; sessions live in trio. Everything a key asks of a session goes
through the trio token (`run_sync_soon`), so it runs inside trio, and every session change
wakes a trio task that folds it into the state and redraws (`app.invalidate()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import outcome
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from prompt_toolkit.application import Application
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from p2pgotg.crypto import equal
from p2pgotg.games import module_for, module_of
from p2pgotg.games.gotg.peer import GotgPeer
from p2pgotg.net.play.hosting import HostConfig, Hosting, host_game
from p2pgotg.net.play.joining import JoinConfig, TableInvite, join_game
from p2pgotg.net.play.saved_games import games_dir, unfinished_games
from p2pgotg.net.play.session import GameSession, Link, Timeouts
from p2pgotg.net.play.table_joiner import saved_seat
from p2pgotg.net.reaching.invite import Invite
from p2pgotg.net.reaching.racing import REPLY_WAIT, prepare_join
from p2pgotg.net.reaching.tor import OFF, TorChoice
from p2pgotg.net.transport.paths import (
    identity_for_joining,
    load_or_create_identity,
    load_or_create_tls_identity,
)
from p2pgotg.net.transport.tls import make_certificate
from p2pgotg.players.levels import PLAY_DEFAULT
from p2pgotg.protocol import HOST, JOINER, LocalProtocolError
from p2pgotg.protocol.peer import Action
from p2pgotg.rules import RuleOptions
from p2pgotg.selfplay import bot_runner
from p2pgotg.ui.app import create_application
from p2pgotg.ui.errors import explain
from p2pgotg.ui.lobby_screen import takes_replies
from p2pgotg.ui.saved_games import BOT_FOLDER, describe_game
from p2pgotg.ui.state import AppState, Mode, Prompt, ResumeOffer

BOT_GAMES = BOT_FOLDER  # games against the bot are kept apart: `host` must never resume them
BOT_SEAT = "bot-seat"  # inside it: the bot's own key and transcripts, so a game can resume


@dataclass
class Launch:
    """Everything a game needs from the command line."""

    options: Any = field(default_factory=RuleOptions)  # either game's (its class says which)
    seed: int | None = None  # the bot's (and the random formations') seed
    think: float = 0.45  # seconds the bot waits before each move, so it can be seen
    level: str = PLAY_DEFAULT  # how well the bot plays (the start screen can change it)
    port: int = 0
    bind: str | None = None
    invite: str | None = None
    limits: Timeouts = field(default_factory=Timeouts)
    save_dir: Path | None = None  # games_dir() when None
    identity: Callable[[], Ed25519PrivateKey] = load_or_create_identity
    tls_identity: Callable[[], tuple[bytes, bytes]] = load_or_create_tls_identity
    #: The key to join an invite with (given the invite's pin): a second seat's key when
    #: the host is this very account (`identity_for_joining`).
    join_identity: Callable[[bytes], Ed25519PrivateKey] | None = None
    review: Path | None = None  # `p2pgotg show FILE`: open this game's review
    join_give_up: float = 60.0  # a new join whose host never answers stops after this
    reach: Any = None  # net.reaching.offer.ReachOptions for `host` beyond loopback (SPEC 3.7-3.8)
    #: Hosting with an unfinished hosted game saved: resume it (True), host a new game
    #: (False), or ask on the screen (None; `host --resume` and `--new` decide).
    resume: bool | None = None
    name: str | None = None  # the player's, sent to the other side (SPEC 3.4)
    stun: list[tuple[str, int]] = field(default_factory=list)  # the joiner's STUN servers
    tor: TorChoice = OFF  # the joiner's tor, for an invite's onion candidate (SPEC 3.8)
    #: The JoinConfig of an invite that turned out to be a table's (or of our saved seat
    #: at one): this screen closes and the table's screen takes the seat (SPEC 5).
    table: Any = None

    def key_for_joining(self, pin: bytes) -> Ed25519PrivateKey:
        if self.join_identity is not None:
            return self.join_identity(pin)
        if self.identity is load_or_create_identity:
            return identity_for_joining(pin)
        return self.identity()

    @property
    def games(self) -> Path:
        return self.save_dir if self.save_dir is not None else games_dir()


class Controller:
    """The trio side: starts games as the screens ask and performs their actions. It is
    the state's `Driver`; its public methods are called from prompt_toolkit's handlers."""

    def __init__(self, state: AppState, launch: Launch) -> None:
        self.state = state
        self.launch = launch
        self.app: Application | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._game: trio.CancelScope | None = None
        self._game_over = trio.Event()  # the last game's task has ended (files closed)
        self._game_over.set()
        self._generation = 0
        self._stopping = False
        self._resume_asked = False  # the offer to resume a bot game is made once a run
        self._resume_choice: tuple[trio.Event, list[int | None]] | None = None
        self.left = False  # the goodbye went out (or there was no one to tell)
        self._offset = 0.0
        self._seed = launch.seed if launch.seed is not None else random.randrange(2**31)
        state.rng = random.Random(self._seed * 7919 + 1)  # not the bot's formations
        state.bot_level = launch.level
        state.game = module_of(launch.options).name
        state.driver = self

    def options(self) -> Any:
        """The rules to play or host: the command line's, or the default rules of another
        game chosen on the start screen."""
        module = module_for(self.state.game)
        options = self.launch.options
        return options if isinstance(options, module.options) else module.options()

    # -- the Driver, called from asyncio -------------------------------------------------

    def perform(self, action: Action[GotgPeer], done: str | None = None) -> None:
        self._soon(partial(self._perform, action, done))

    def start(self, mode: Mode, invite: str | None = None) -> None:
        self._soon(partial(self._start, mode, invite))

    def rematch(self) -> None:
        self._soon(partial(self._start, Mode.BOT, None))

    def leave(self) -> None:
        self._soon(lambda: self._spawn(self._back_to_start))

    def resume_answer(self, choice: int | None) -> None:
        def answer() -> None:
            if self._resume_choice is not None:
                event, box = self._resume_choice
                box.append(choice)
                event.set()

        self._soon(answer)

    def games_folder(self) -> Path:
        return self.launch.games

    def take_reply(self, code: str) -> None:
        self._soon(lambda: self._spawn(partial(self._take_reply, code, self._generation)))

    def say_goodbye(self) -> None:
        """Tell the other side we are leaving (the program is closing); `left` turns True
        once it went out, or at once when there is no one to tell."""
        session = self.state.session
        if session is None or session.done or session.link is not Link.CONNECTED \
                or self.state.mode is Mode.BOT:
            self.left = True
            return

        async def goodbye() -> None:
            try:
                await session.leave(leaving_reason(session))
            finally:
                self.left = True

        self._soon(lambda: self._spawn(goodbye))

    def now(self) -> float:
        return time.perf_counter() + self._offset

    def invalidate(self) -> None:
        if self.app is not None:
            self.app.invalidate()

    def stop(self) -> None:
        """End the trio side (the application is closing), however far it has got."""
        self._stopping = True
        if self._token is not None:
            self._soon(lambda: self._nursery.cancel_scope.cancel() if self._nursery else None)

    def _soon(self, fn: Callable[[], object]) -> None:
        token = self._token
        if token is None:
            self.state.warn("still starting: try again in a moment")
            return

        def guarded() -> None:
            try:
                fn()
            except Exception as exc:  # noqa: BLE001  (a bug must not take trio down)
                self.state.warn(explain(exc))
            self.invalidate()

        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(guarded)

    # -- inside trio -----------------------------------------------------------------------

    def _spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn)
        else:
            self.left = True

    async def _back_to_start(self) -> None:
        """Leave the game in play, telling the other side, and show the start screen."""
        state = self.state
        session = state.session
        if session is not None and not session.done and state.mode is not Mode.BOT:
            await session.leave(leaving_reason(session))
        if self._game is not None:
            self._game.cancel()
        self._generation += 1
        state.session, state.mode, state.fatal = None, None, None
        state.invites, state.net_note, state.resume_offer = [], "", None
        state.reply_code = None
        state.log, state.editor, state.review = [], None, None
        state.say("")
        self.invalidate()

    async def main(self, mode: Mode | None) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._offset = trio.current_time() - time.perf_counter()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self._stopping:  # the player quit before trio got going
                nursery.cancel_scope.cancel()
            nursery.start_soon(self._ticker)
            if mode is not None:
                self._start(mode, self.launch.invite)
            await trio.sleep_forever()

    def _start(self, mode: Mode, invite: str | None) -> None:
        """Start a game (a new one replaces the one before, e.g. a rematch)."""
        if self._game is not None:
            self._game.cancel()
        self._generation += 1
        self.state.session = None
        self.state.invites, self.state.net_note = [], ""
        self.state.reply_code = None
        assert self._nursery is not None
        self._nursery.start_soon(self._run, mode, invite, self._generation)

    def _current(self, generation: int) -> bool:
        """Whether a game's task still speaks for the screen (not a replaced game)."""
        return generation == self._generation

    def _perform(self, action: Action[GotgPeer], done: str | None) -> None:
        session = self.state.session
        if session is None:
            self.state.warn("there is no game yet")
            return
        try:
            session.perform(action)
        except LocalProtocolError as exc:
            self.state.warn(str(exc))
            return
        if done:
            self.state.say(done)
        self.state.absorb()

    async def _run(self, mode: Mode, invite: str | None, generation: int) -> None:
        state = self.state
        before, self._game_over = self._game_over, trio.Event()
        over = self._game_over
        try:
            with trio.CancelScope() as scope:
                self._game = scope
                # The game before (cancelled) closes its transcript first: it holds the
                # lock that resuming that game takes (SPEC 3.5), in this process too.
                await before.wait()
                state.mode, state.fatal, state.finished = mode, None, False
                self.invalidate()
                try:
                    if mode is Mode.BOT:
                        await self._bot_game(generation)
                    elif mode is Mode.HOST:
                        await self._host(generation)
                    else:
                        assert invite is not None
                        await self._join(invite, generation)
                except Exception as exc:  # noqa: BLE001  (shown, and logged when a bug)
                    if self._current(generation) and mode is Mode.JOIN \
                            and state.session is None:
                        self._join_failed(explain(exc))
                        return
                    if self._current(generation):
                        state.fatal = explain(exc)
                if self._current(generation):
                    state.finished = True
                    state.absorb()
                    self.invalidate()
        finally:
            over.set()

    def _join_failed(self, why: str) -> None:
        """No game came of a join (a wrong or stale code, a host that never answered): from
        the start screen, the code prompt opens again saying why; from `p2pgotg join CODE`,
        the program ends saying why, with a failing exit status."""
        state = self.state
        if state.from_start:
            state.mode, state.fatal, state.net_note = None, None, ""
            state.prompt = Prompt.JOIN_CODE
            state.warn(f"{why} (type the code again, or Esc)")
        else:
            state.fatal = why
            if self.app is not None and self.app.is_running:
                self.app.exit()
        self.invalidate()

    async def _ticker(self) -> None:
        """Redraw the clocks while they run, and the countdown while the other side is
        away (the game is claimed when it reaches zero)."""
        while True:
            await trio.sleep(0.5)
            session = self.state.session
            if session is not None and (session.clocks.limit or session.clocks.per_move
                                        or session.link is not Link.CONNECTED):
                self.invalidate()

    def _note(self, generation: int, text: str) -> None:
        if self._current(generation):
            self.state.net_note = text
            self.invalidate()

    def _attach(self, generation: int, session: GameSession) -> None:
        if self._current(generation):
            self.state.attach(session)
            if session.link is Link.CONNECTED:
                self.state.reply_code = None  # (in: no code to send any more)
            self.state.absorb()
            if self.state.prompt is Prompt.REPLY_CODE and not takes_replies(self.state):
                self.state.prompt = None  # (the joiner got in: the keys are the game's now)
            self.invalidate()

    async def _seat(self, generation: int, session: GameSession) -> None:
        """The person's seat: show every change; the keys do the acting."""
        while self._current(generation):
            self._attach(generation, session)
            await session.wait_changed()

    async def _hosted(self, config: HostConfig, generation: int,
                      task_status: trio.TaskStatus[Hosting] = trio.TASK_STATUS_IGNORED
                      ) -> None:
        session = await host_game(config, partial(self._seat, generation),
                                  on_status=partial(self._note, generation),
                                  on_invite=partial(self._new_invite, generation),
                                  on_short_code=partial(self._short_code, generation),
                                  task_status=task_status)
        self._attach(generation, session)

    def _new_invite(self, generation: int, code: str) -> None:
        """The invite changed (our public mapping moved, SPEC 3.8): show the new one."""
        if self._current(generation):
            self.state.invites = [code]
            self.invalidate()

    def _short_code(self, generation: int, code: str) -> None:
        """The short code is announced: its box is drawn now, the long code when ready."""
        if self._current(generation):
            self.state.short_code = code
            self.invalidate()

    async def _host(self, generation: int) -> None:
        launch = self.launch
        key = launch.identity()
        resume_from = await self._choose_hosted(key)
        cert, tls_key = launch.tls_identity()
        config = HostConfig(key, cert, tls_key, self.options(), launch.games,
                            port=launch.port, bind=launch.bind, limits=launch.limits,
                            reach=launch.reach, resume=resume_from is not None,
                            resume_from=resume_from, name=launch.name)
        self.state.host_options = config.options
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(self._hosted, config, generation)
            self.state.invites = hosting.invites
            self.state.short_code = hosting.short_code
            if hosting.notes:
                self._note(generation, hosting.notes[0])
            self.invalidate()

    async def _take_reply(self, code: str, generation: int) -> None:
        """Hand a joiner's reply code to our host, through the same inbox that `p2pgotg
        host --reply CODE` uses (reach.offer serves it), and show its answer."""
        from p2pgotg.net.reaching.reply_inbox import InboxError, send_reply

        reach = self.launch.reach
        if reach is None or self.state.mode is not Mode.HOST:
            self.state.warn("this host listens on this computer only: no reply code to take")
            return
        try:
            lines = await send_reply(reach.data_dir, code)
        except InboxError as exc:
            lines = [f"error: {exc}"]
        except OSError:
            lines = ["error: this host's reply inbox is not open (is another p2pgotg host "
                     "running from the same home?)"]
        if not self._current(generation):
            return
        last = lines[-1] if lines else "error: the host did not answer in time"
        if last.startswith("error: "):
            self.state.warn(last.removeprefix("error: "))
        else:
            self.state.say(last.removeprefix("ok: "))
        self.invalidate()

    async def _join(self, code: str, generation: int) -> None:
        launch = self.launch

        def show_reply(reply: str) -> None:
            if self._current(generation):
                self.state.reply_code = reply  # (shown alone on its line: copied whole)
            self._note(generation, "the host cannot be reached directly: send them the "
                       "reply code below, which they paste on their screen after pressing "
                       f"r (this waits up to {REPLY_WAIT:g} s)")

        invite, opener = await prepare_join(code, launch.stun, launch.limits,
                                            partial(self._note, generation), show_reply,
                                            launch.tor)
        key = launch.key_for_joining(invite.pin)
        config = JoinConfig(key, invite, launch.games, launch.limits,
                            give_up=launch.join_give_up, opener=opener, name=launch.name)
        if saved_seat(config) is not None:  # (our seat at its table: the table's screen)
            self._to_table(config)
            return
        self._note(generation, f"connecting to {invite.address} port {invite.port}")
        try:
            session = await join_game(config, partial(self._seat, generation),
                                      on_status=partial(self._note, generation),
                                      on_session=partial(self._attach, generation))
        except TableInvite:  # (the host's `ok` says: a table, SPEC 3.4)
            self._to_table(config)
            return
        self._attach(generation, session)

    def _to_table(self, config: JoinConfig) -> None:
        """Hand the join over to the table's screen: this one closes."""
        self.launch.table = config
        if self.app is not None:
            self.app.exit()

    async def _bot_game(self, generation: int) -> None:
        """`play`: host on loopback with the person's seat, and let the bot join the
        invite, over real TLS with the full protocol. Both sides keep their transcripts
        (the bot's beside the person's), so an unfinished game can be resumed: `play`
        offers that first."""
        launch = self.launch
        key = launch.identity()
        games = launch.games / BOT_GAMES
        bot_dir = games / BOT_SEAT
        bot_key = load_or_create_identity(bot_dir / "identity.pem")
        resume_from = await self._offer_resume(games, key, bot_dir, bot_key)
        resume = resume_from is not None
        cert, tls_key = make_certificate()
        config = HostConfig(key, cert, tls_key, self.options(), games,
                            port=0, bind="127.0.0.1", limits=launch.limits, resume=resume,
                            resume_from=resume_from, name=launch.name)
        self.state.host_options = config.options
        bot_seed = self._seed + self.state.games
        async with trio.open_nursery() as nursery:
            hosting = await nursery.start(self._hosted, config, generation)
            invite = Invite.decode(hosting.invites[0])
            bot = JoinConfig(bot_key, invite, bot_dir, launch.limits, resume=resume,
                             name=f"the bot ({self.state.bot_level})")
            nursery.start_soon(partial(join_game, bot, bot_runner(bot_seed, launch.think,
                                                                  self.state.bot_level)))

    async def _offer_resume(self, games: Path, key: Ed25519PrivateKey, bot_dir: Path,
                            bot_key: Ed25519PrivateKey) -> Path | None:
        """Which unfinished game against the bot to resume (None: a new game): asked once a
        run, of the games both sides still hold, every one listed, those past their setup
        first."""
        if self._resume_asked:
            return None
        self._resume_asked = True
        held = [b.join_secret for b in unfinished_games(bot_dir, JOINER, bot_key)
                if b.join_secret is not None]
        saved = [g.path for g in unfinished_games(games, HOST, key) if g.join_secret
                 is not None and any(equal(g.join_secret, secret) for secret in held)]
        if not saved:
            return None
        infos = sorted((describe_game(path, against_bot=True) for path in saved),
                       key=lambda info: not info.begun)  # (stable: newest first in each)
        heading = ("You have an unfinished game against the bot." if len(infos) == 1 else
                   f"You have {len(infos)} unfinished games against the bot.")
        offer = ResumeOffer(heading, [info.lines()[0] for info in infos],
                            "Start a new game (the unfinished ones stay saved and are "
                            "offered again)")
        return await self._ask(offer, [info.path for info in infos])

    async def _choose_hosted(self, key: Ed25519PrivateKey) -> Path | None:
        """Which unfinished hosted game to resume (None: host a new one), as `host --resume`
        or `--new` said, else as the player chooses, seeing each game's rules and the new
        game's (rule options are never dropped without a word)."""
        launch = self.launch
        if launch.resume is False:
            return None
        saved = [g for g in unfinished_games(launch.games, HOST, key)
                 if g.join_secret is not None]
        if not saved:
            return None
        if launch.resume:
            return saved[0].path
        lines = []
        for game in saved:
            what = describe_game(game.path, against_bot=False).lines()[0]
            rules = game.options.describe() if game.options is not None else "?"
            lines.append(f"{what}; rules: {rules}")
        heading = ("You have an unfinished game that you hosted: the other player comes back "
                   "to it with the same invite code." if len(saved) == 1 else
                   f"You have {len(saved)} unfinished games that you hosted: the other "
                   "player comes back to one with the same invite code.")
        offer = ResumeOffer(heading, lines, "Host a new game, rules: "
                            f"{self.options().describe()} (the unfinished games stay saved)")
        return await self._ask(offer, [game.path for game in saved])

    async def _ask(self, offer: ResumeOffer, paths: list[Path]) -> Path | None:
        """Show the offer and wait for the player's choice."""
        event, box = trio.Event(), list[int | None]()
        self._resume_choice = (event, box)
        self.state.resume_offer = offer
        self.invalidate()
        try:
            await event.wait()
        finally:
            self._resume_choice = None
            self.state.resume_offer = None
        choice = box[0]
        return None if choice is None else paths[choice]


def leaving_reason(session: GameSession) -> str:
    """`declined` when a joiner leaves before accepting the host's rules, else `quit`."""
    peer = session.peer
    return "declined" if peer.role == JOINER and not peer.flow.has_hello(JOINER) else "quit"


class UI:
    """The whole interface: state, application and controller, wired together."""

    def __init__(self, mode: Mode | None, launch: Launch | None = None, *, ascii: bool = False,
                 input: Input | None = None, output: Output | None = None) -> None:
        self.state = AppState(mode, ascii=ascii)
        self.controller = Controller(self.state, launch or Launch())
        self.app = create_application(self.state, input=input, output=output)
        self.controller.app = self.app
        self._initial = mode
        if launch is not None and launch.review is not None:
            from p2pgotg.ui.review_screen import open_review

            open_review(self.state, launch.review, back=None)

    async def run(self) -> str:
        """Run until the player quits; returns what to print after the screen closes."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[outcome.Outcome] = loop.create_future()

        def done(result: outcome.Outcome) -> None:
            if not finished.done():
                finished.set_result(result)
            if isinstance(result, outcome.Error) and self.app.is_running:
                self.state.fatal = explain(result.error)
                self.app.exit()

        trio.lowlevel.start_guest_run(
            self.controller.main, self._initial,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )
        try:
            await self.app.run_async()
            await self._say_goodbye()
            await self._hand_over_the_end()
        finally:
            self.controller.stop()
            await finished
        return farewell(self.state)

    async def _say_goodbye(self) -> None:
        """Closing mid-game (or a joiner declining the rules): tell the other side in a
        `leave` frame, so that it can say so in words; at most a couple of seconds."""
        self.controller.say_goodbye()
        deadline = time.monotonic() + 3.0
        while not self.controller.left and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # (trio, a guest on this loop, runs meanwhile)

    async def _hand_over_the_end(self) -> None:
        """Quitting right at the end of a game: the other player may still need our last
        messages and our goodbye to finish its own transcript. Give the connection up to
        the goodbye limit (a few seconds) to close by itself before trio is stopped."""
        session = self.state.session
        if session is None or not session.done or session.link is not Link.CONNECTED:
            return
        deadline = time.monotonic() + session.limits.bye
        while session.link is Link.CONNECTED and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # (trio, a guest on this loop, runs meanwhile)


def farewell(state: AppState) -> str:
    """The lines left on the terminal after the screen closes."""
    from p2pgotg.ui.end_screen import headline
    from p2pgotg.ui.words import verdict_words

    session = state.session
    lines = []
    if state.fatal and (session is None or not session.done):
        lines.append(state.fatal)
    if session is not None:
        peer = session.peer
        verdict = session.verdict
        if peer.flow.is_over or peer.failed is not None:
            lines.append("game over: " + "".join(t for _, t, *_ in headline(state)).strip())
        if verdict is not None:
            lines.append(verdict_words(verdict, peer.role, state.opponent))
        elif state.in_game and state.mode is Mode.BOT:
            lines.append("the game against the bot is saved: p2pgotg play offers to resume it")
        elif state.in_game and not state.began:
            lines.append("the game had not begun: run the same command again to go on with "
                         "the setup")
        elif state.in_game:
            lines.append("the game is not finished: run the same command again to resume it")
        if session.path is not None and state.began:
            lines.append(f"saved game: {session.path}")
            lines.append(f"check it any time with: p2pgotg verify {session.path}")
    return "\n".join(lines)


def run_terminal(mode: Mode | None, launch: Launch, ascii: bool = False) -> int:
    """The command line's entry: run the interface in this terminal; never a traceback."""
    ui = UI(mode, launch, ascii=ascii)
    try:
        message = asyncio.run(ui.run())
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001  (never a traceback: the log has it)
        print(f"p2pgotg stopped: {explain(exc)}")
        return 1
    if message:
        print(message)
    return 1 if failed(ui.state) else 0


def failed(state: AppState) -> bool:
    """The program ends because no game could go on (the error screen, a join that found
    no game): its exit status says so."""
    session = state.session
    return state.fatal is not None and (session is None or not session.done)
