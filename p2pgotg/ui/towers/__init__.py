"""Towers' screens (seed `002_836edfe2f167b267.txt`, SPEC chapter 4) inside the terminal
interface: the play screen, the end screen and the review, drawn and keyed by this
package, on the same application state, runner and session as Game of the Generals.

The interface shows a Towers game wherever a Game of the Generals screen would stand
(`Screen.PLAY`, `Screen.END`, `Screen.REVIEW`): `owns` says when this package draws and
keys the screen. Everything around a game (start, lobby, saved games, the `?` overlay,
quitting, the clocks, the other side's absence and the claims it brings) is the
interface's, shared by both games.

One concern per module: `board` draws the 5x5 board, `panel` the counts beside it, `words`
says results, `commands` reads the input line, `play` is the play screen and its actions,
`log` folds the session's events in, `end` the end screen, `review` and `review_screen`
step through a saved game, `saved` describes one for the games list, `keys`, `layout` and
`help` plug it all into the application, `primer` is how to play.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pgotg.games.towers.peer import TowersPeer

if TYPE_CHECKING:
    from p2pgotg.ui.state import AppState


def towers_peer(state: AppState) -> TowersPeer | None:
    """The session's peer when the game is Towers."""
    session = state.session
    peer = session.peer if session is not None else None
    return peer if isinstance(peer, TowersPeer) else None


def owns(state: AppState) -> bool:
    """This package draws and keys the screen: a Towers game in play or over, or the
    review of a Towers game."""
    from p2pgotg.ui.state import Screen
    from p2pgotg.ui.towers.review import TowersReview

    screen = state.screen
    if screen is Screen.REVIEW:
        return isinstance(state.review, TowersReview)
    return screen in (Screen.PLAY, Screen.END) and towers_peer(state) is not None


def seat_labels(state: AppState, peer: TowersPeer) -> dict[int, str]:
    """Who plays each colour, for the screen's narrow columns: `you`, or the other side
    (`bot`, or the first letters of the name it gave)."""
    game = peer.view
    if game is None:
        return {}
    mine = set(peer.my_seats)
    return {seat: "you" if seat in mine else state.opponent_short
            for seat in range(game.seats)}


def team_labels(state: AppState, peer: TowersPeer) -> dict[int, str]:
    """The same by team (`you` for ours)."""
    game = peer.view
    if game is None or not peer.my_seats:
        return {}
    ours = game.team(peer.my_seats[0])
    return {team: "you" if team == ours else state.opponent_short
            for team in range(len(game.team_points()))}
