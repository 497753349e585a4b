"""The net layer's errors carry a user-facing message (their docstring) and a detail."""

from __future__ import annotations

import pytest

from p2pgotg.net.transport import errors
from p2pgotg.net.transport.errors import NetError, PinMismatchError, TruncatedFrameError

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


def test_a_session_version_that_is_not_a_number_is_said_so() -> None:
    """`v: "1"` is not version 1: the refusal must not read 'speaks version 1; this program
    speaks version 1'."""
    import msgpack
    import pytest

    from p2pgotg.net.reaching.control_frames import SessionError, expect
    from p2pgotg.protocol import control

    frame = msgpack.packb({"ctl": "ok", "v": "1"}, use_bin_type=True)
    with pytest.raises(SessionError) as caught:
        expect(frame, control.Ok)
    assert "not a number" in str(caught.value) and "version 1; this" not in str(caught.value)
    frame = msgpack.packb({"ctl": "ok", "v": 2}, use_bin_type=True)
    with pytest.raises(SessionError, match="speaks p2pgotg session version 2; this program "
                       "speaks version 1"):
        expect(frame, control.Ok)
