"""A game over a connection (SPEC 3.4-3.6): the session that drives a game's `Peer`, writes
its transcript before anything is sent and owns every timeout; the clocks; the host (one
game or many, and its admission policy) and the joiner; saved games and their locks; the
player's name; the bot's worker process; the host's status lines.

It may import `transport`, `reaching`, the protocol, the games, the rules and the players;
never the screen or the command line.
"""
