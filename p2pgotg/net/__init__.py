"""The trio side of a game between two players, in three parts, each importing only the
parts listed before it (tests/test_layers.py checks this):

- `transport`: bytes between two ends. TLS 1.3 with a pinned key (SPEC 3.1), length-prefixed
  frames with keepalives (SPEC 3.2), the accept loop's limits before admission (SPEC 3.4),
  the net errors, and where the player's files and keys live. It moves opaque frames:
  it imports nothing of the protocol, the games, the rules, the players or the codecs of
  `p2pgotg.reach`.
- `reaching`: getting a pinned connection to the other player across networks (SPEC 3.3,
  3.7, 3.8): invite codes, LAN announcements, short codes and the PAKE, STUN, port
  mapping, hole punching, tor, the host's offer and the joiner's race. It may import
  `transport`, the codecs of `p2pgotg.reach` and the protocol's control frames.
- `play`: a game over that connection (SPEC 3.4-3.6): the session driving a game's `Peer`,
  its transcript file and clocks, the host and the joiner, saved games, the bot's worker
  process. It may import `transport`, `reaching`, the protocol and the games.

No part knows the screen (`p2pgotg.ui`) or the command line (`p2pgotg.cli`).
"""
