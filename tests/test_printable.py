"""Peer text shown on a terminal carries no control sequence (issue 13, finding 5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from p2pgotg.protocol.printable import printable


def test_an_osc_title_sequence_is_shown_not_obeyed() -> None:
    assert printable("\x1b]0;owned\x07hi") == "\\x1b]0;owned\\x07hi"


def test_line_erasure_and_fake_lines_are_escaped() -> None:
    assert printable("ok\r\x1b[2K\njoiner wins") == "ok\\x0d\\x1b[2K\\x0ajoiner wins"


def test_c1_controls_and_bidi_overrides_are_escaped() -> None:
    # U+009B is the one-byte CSI; U+202E reverses the reading order of what follows.
    assert printable("\x9b31m") == "\\x9b31m"
    assert printable("abc\u202edcba") == "abc\\u202edcba"


def test_a_typed_backslash_cannot_pose_as_an_escape() -> None:
    assert printable("\\x1b") == "\\\\x1b"


def test_ordinary_text_is_unchanged() -> None:
    assert printable("Salpakan! 5-star General takes the Flag, é ñ 漢") == (
        "Salpakan! 5-star General takes the Flag, é ñ 漢"
    )


def test_a_limit_cuts_with_an_ellipsis_and_never_splits_an_escape() -> None:
    assert printable("abcdef", limit=3) == "abc…"
    assert printable("ab\x1bcd", limit=4) == "ab…"


def test_a_non_string_is_shown_by_its_repr() -> None:
    assert printable(b"\x1b[31m") == "b'\\\\x1b[31m'"


@given(st.text())
def test_nothing_printed_can_reach_the_terminal_as_a_control(text: str) -> None:
    shown = printable(text)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in shown)
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in shown)


def test_our_own_line_with_peer_text_in_it_is_escaped_once_only() -> None:
    from p2pgotg.protocol.printable import controls_escaped

    reason = "\x1b]0;owned\x07"
    assert controls_escaped(f"refused: {reason}") == "refused: \\x1b]0;owned\\x07"
    already = f"refused: {printable(reason)}"
    assert controls_escaped(already) == already  # nothing escaped twice
    assert controls_escaped("C:\\games\\x.gtr") == "C:\\games\\x.gtr"  # our paths stay
