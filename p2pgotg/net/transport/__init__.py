"""Bytes between two ends: TLS 1.3 with a self-signed Ed25519 certificate and a pinned key
(SPEC 3.1), length-prefixed frames with keepalives and a silence timeout (SPEC 3.2), the
accept loop's limits on strangers before admission (SPEC 3.4), the net errors whose
docstrings are the player's messages, and where the player's files and keys live.

The payload of a frame is opaque here: this package imports nothing of `p2pgotg.protocol`,
the games, the rules, the players or the codecs of `p2pgotg.reach`, only trio, the
standard library, `cryptography` and `p2pgotg.crypto`.
"""
