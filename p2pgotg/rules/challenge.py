"""Who leaves the board in a challenge (seed 000 "Determining result of a Challenge")."""

from __future__ import annotations

import enum

from p2pgotg.rules.ranks import Rank


class ChallengeResult(enum.Enum):
    """What the arbiter would do: remove the defender, the attacker, or both."""

    ATTACKER_WINS = "attacker_wins"
    DEFENDER_WINS = "defender_wins"
    BOTH_ELIMINATED = "both_eliminated"


def resolve_challenge(attacker: Rank, defender: Rank) -> ChallengeResult:
    """The result of `attacker` moving onto `defender`.

    >>> resolve_challenge(Rank.PRIVATE, Rank.SPY)
    <ChallengeResult.ATTACKER_WINS: 'attacker_wins'>
    >>> resolve_challenge(Rank.FLAG, Rank.FLAG)
    <ChallengeResult.ATTACKER_WINS: 'attacker_wins'>
    """
    if defender is Rank.FLAG:  # any piece takes a flag, the challenging flag too
        return ChallengeResult.ATTACKER_WINS
    if attacker is Rank.FLAG:  # a flag takes nothing but a flag
        return ChallengeResult.DEFENDER_WINS
    if attacker == defender:
        return ChallengeResult.BOTH_ELIMINATED
    if Rank.SPY in (attacker, defender):
        other = defender if attacker is Rank.SPY else attacker
        spy_wins = other is not Rank.PRIVATE  # only the Private eliminates the Spy
        if spy_wins == (attacker is Rank.SPY):
            return ChallengeResult.ATTACKER_WINS
        return ChallengeResult.DEFENDER_WINS
    return ChallengeResult.ATTACKER_WINS if attacker > defender else ChallengeResult.DEFENDER_WINS
