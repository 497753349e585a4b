"""The control frames of a table (SPEC 3.4, 5.4): a joiner's `hi` carries `have` as one
count per seat, the host's `ok` says `seats`, its `names` pair each hello's key with a name;
what breaks that shape is refused with words that say what is wrong (a `names` frame's as
advice only), and a host of two seats refuses a table seat's greeting."""

from __future__ import annotations

import msgpack
import pytest

from p2pgotg.net.play.host_policy import HostPolicy, HostState, Refuse, decide
from p2pgotg.protocol import control
from p2pgotg.protocol.control import ControlError, Hi, Ok

SECRET = bytes(range(16))
GID = b"g" * 32


def raw(**keys: object) -> bytes:
    data: bytes = msgpack.packb({"v": 1, **keys}, use_bin_type=True)
    return data


@pytest.mark.parametrize("have", [(0, 0, 0), (7, 3, 5, 2)])
def test_a_table_hi_carries_one_count_per_seat(have: tuple[int, ...]) -> None:
    frame = control.encode(Hi(SECRET, GID, have, None))
    assert msgpack.unpackb(frame)["have"] == list(have)  # an array on the wire (SPEC 5.4)
    assert control.decode(frame) == Hi(SECRET, GID, have, None)


def test_an_ok_names_a_tables_rules_and_seats_and_a_game_of_two_leaves_seats_out() -> None:
    table = Ok(None, 0, None, rules="towers", seats=4)
    assert control.decode(control.encode(table)) == table
    two = control.encode(Ok(None, 0, None, rules="towers"))
    assert "seats" not in msgpack.unpackb(two)  # (a game of two keeps its bytes)


@pytest.mark.parametrize(("have", "words"), [
    ([1, 2], "an array of one count per seat (3 or 4)"),
    ([1, 2, 3, 4, 5], "an array of one count per seat (3 or 4)"),
    ([1, -1, 0], "must be a count"),
    ([1, "2", 0], "must be a count"),
    ([True, 0, 0], "must be a count"),
])
def test_a_malformed_have_array_is_refused_saying_what_is_wrong(have: list[object],
                                                                 words: str) -> None:
    frame = raw(ctl="hi", secret=SECRET, game=None, have=have, first=None)
    with pytest.raises(ControlError, match="the hi frame's have") as caught:
        control.decode(frame)
    assert words in str(caught.value)


@pytest.mark.parametrize("seats", [2, 5, True, "4"])
def test_an_ok_with_seats_other_than_three_or_four_is_malformed(seats: object) -> None:
    frame = raw(ctl="ok", game=None, have=0, first=None, seats=seats)
    with pytest.raises(ControlError, match=r"the ok frame's seats must be the seats of a "
                                           r"table \(3 or 4\)"):
        control.decode(frame)


def test_a_host_of_two_refuses_a_table_seats_greeting() -> None:
    decision = decide(Hi(SECRET, None, (0, 0, 0), None), HostState(SECRET, ()), HostPolicy())
    assert isinstance(decision, Refuse)
    assert "not a table" in decision.reason


def test_a_hi_names_the_seat_it_comes_back_to_and_a_bye_carries_a_tables_counts() -> None:
    back = Hi(SECRET, GID, (4, 9, 3), b"h" * 32, seat=2)
    assert control.decode(control.encode(back)) == back
    assert control.decode(control.encode(control.Bye((4, 9, 3)))) == control.Bye((4, 9, 3))


@pytest.mark.parametrize("seat", [0, 4, True, "1"])
def test_a_hi_for_a_seat_that_no_joiner_holds_is_malformed(seat: object) -> None:
    frame = raw(ctl="hi", secret=SECRET, game=GID, have=[1, 1, 1], first=None, seat=seat)
    with pytest.raises(ControlError, match=r"the hi frame's seat must be a joiner's seat "
                                           r"\(1 to 3\)"):
        control.decode(frame)


def test_a_names_frame_pairs_keys_with_names_and_leaves_each_name_to_its_receiver() -> None:
    # SPEC 3.4 `names`: [[bin[32], name], ...], at most 4; a name that is not one (here
    # not text) is the receiver's to judge, so it costs only itself, not the frame
    names = control.Names(((b"a" * 32, "Ana"), (b"b" * 32, 42)))
    frame = control.encode(names)
    assert msgpack.unpackb(frame) == {"ctl": "names", "v": 1,
                                      "names": [[b"a" * 32, "Ana"], [b"b" * 32, 42]]}
    assert control.decode(frame) == names


@pytest.mark.parametrize("names", [
    "Ana", [[b"a" * 32]], [[b"a" * 31, "Ana"]], [["a" * 32, "Ana"]],
    [[bytes([n]) * 32, "Ana"] for n in range(5)],
])
def test_a_names_frame_of_another_shape_is_advisory_malformed(names: object) -> None:
    # SPEC 3.4: its receiver says so and plays on, so it is told apart from the malformed
    # frames that drop a connection
    with pytest.raises(control.AdvisoryError, match=r"the names frame's names must be an "
                                                    r"array of at most 4 \[key, name\] pairs"):
        control.decode(raw(ctl="names", names=names))
    with pytest.raises(control.AdvisoryError, match="the names frame has unknown keys seat"):
        control.decode(raw(ctl="names", names=[], seat=1))
