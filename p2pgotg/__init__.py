"""p2pgotg: Game of the Generals peer to peer, with no arbiter and no one to trust."""

__version__ = "0.1.0"
