"""Reaching the other player, whatever the network between (SPEC 3.3, 3.7, 3.8): invite
codes, LAN announcements by multicast DNS, short codes and their PAKE, STUN, port mapping
on the home router, TCP hole punching, tor and onion services; the host's offer
(`offer.py`) and the joiner's race over every candidate (`racing.py`). What comes out is a
pinned TLS stream (or a framed channel) for `play` to run a game over.

It may import `transport`, the sans-IO codecs of `p2pgotg.reach` and the protocol's
control frames (`p2pgotg.protocol.control`); never `play`, the screen or the command line.
"""
