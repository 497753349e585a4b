"""How much a side may send in one game (SPEC 2.10), judged from its own signed messages.

Time-based rates cannot be proven from a transcript (only positive signed evidence
convicts: GUIDE 6), so every limit here counts the sender's own chain, which both peers and
`verify` see alike in any delivery order: chats in a row between two of its other messages,
and a ceiling on its sequence numbers. Together they bound a game's messages, and so its
transcript and the memory of whoever replays it.
"""

from __future__ import annotations

from p2pgotg.protocol.messages import MAX_CHAT

#: A side sends at most this many `chat` messages in a row: between two of its own other
#: messages (its hello, a move, a reply, an audit...).
CHATS_IN_A_ROW = 10
#: A side's `move` or `chat` must have a `seq` below this.
MAX_PLAY_MESSAGES = 10_000
#: No message of a side has a `seq` at or above this: the room above MAX_PLAY_MESSAGES is
#: for what ends and closes a game (an answer owed, a resignation, a claim, the audit).
MAX_MESSAGES = MAX_PLAY_MESSAGES + 50
#: The longest `chat` text, in characters (each at most 4 bytes of UTF-8).
MAX_CHAT_CHARS = MAX_CHAT

__all__ = ["CHATS_IN_A_ROW", "MAX_CHAT_CHARS", "MAX_MESSAGES", "MAX_PLAY_MESSAGES",
           "over_limit"]


def over_limit(type_: str, seq: int, chats_in_a_row: int,
               play: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(rule, detail) when a message of `type_` with sequence `seq`, sent after
    `chats_in_a_row` chat messages in a row of the same sender, breaks a limit. `play`: the
    game's types a side can send without end (Game of the Generals: `move`), limited with
    chat."""
    if seq >= MAX_MESSAGES:
        return ("message-limit", f"a {type_} as message {seq} of its sender: no side sends "
                f"more than {MAX_MESSAGES} messages in a game (SPEC 2.10)")
    if (type_ == "chat" or type_ in play) and seq >= MAX_PLAY_MESSAGES:
        return ("message-limit", f"a {type_} as message {seq} of its sender: a side's moves "
                f"and chat come before its message {MAX_PLAY_MESSAGES} (SPEC 2.10)")
    if type_ == "chat" and chats_in_a_row >= CHATS_IN_A_ROW:
        return ("chat-limit",
                f"chat message {chats_in_a_row + 1} in a row: a side sends at most "
                f"{CHATS_IN_A_ROW} chat messages between two of its other messages "
                "(SPEC 2.10)")
    return None
