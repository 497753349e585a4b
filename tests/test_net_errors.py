"""The net layer's errors carry a user-facing message (their docstring) and a detail."""

from __future__ import annotations

import pytest

from p2pgotg.net import errors
from p2pgotg.net.errors import NetError, PinMismatchError, TruncatedFrameError

ALL = [
    cls
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, NetError) and cls is not NetError
]


@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.__name__)
def test_every_error_has_a_sentence_for_the_player(cls):
    assert cls.__doc__ and cls.summary().endswith(".")
    assert "\n" not in cls.summary()


def test_detail_is_the_str_and_follows_the_summary():
    err = TruncatedFrameError("7 bytes of an unfinished frame")
    assert str(err) == "7 bytes of an unfinished frame"
    assert err.user_message == f"{TruncatedFrameError.summary()}\n7 bytes of an unfinished frame"
    assert str(NetError()) == NetError.summary()


def test_pin_mismatch_shows_both_pins():
    err = PinMismatchError(expected=b"\x01" * 32, got=b"\x02" * 32)
    assert str(err) == f"expected pin {'01' * 32}, got {'02' * 32}"
