"""What the port mapper takes from the LAN (SPEC 3.8): only an SSDP answer whose
LOCATION is an http URL, and only a mapping anyone could connect to; everything else is
no mapping, with the reason in plain words. The whole path, over UDP and HTTP against
routers that answer garbage, runs in test_net_lan.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pgotg.net.reaching.portmap import MappingFailed, PortMapping, ssdp_location

IGD_ANSWER = (b"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\n"
              b"ST: urn:schemas-upnp-org:device:InternetGatewayDevice:1\r\n"
              b"Location: http://192.168.1.1:5000/rootDesc.xml\r\nEXT:\r\n\r\n")


def test_an_ssdp_answer_gives_its_location() -> None:
    assert ssdp_location(IGD_ANSWER) == "http://192.168.1.1:5000/rootDesc.xml"


@pytest.mark.parametrize("answer", [
    b"",
    b"NOTIFY * HTTP/1.1\r\nLOCATION: http://192.168.1.1:5000/r.xml\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nST: x\r\n\r\n",
    IGD_ANSWER.replace(b"http://", b"https://"),
    IGD_ANSWER.replace(b"192.168.1.1", b"router.example"),
    IGD_ANSWER.replace(b":5000", b":99999"),
    IGD_ANSWER.replace(b"rootDesc", b"root\x1b[2JDesc"),
    IGD_ANSWER.replace(b"rootDesc", b"r" * 600),
    IGD_ANSWER.replace(b"rootDesc", "r\u00e9".encode("latin-1")),
])
def test_an_ssdp_answer_without_a_plain_http_location_is_none(answer: bytes) -> None:
    assert ssdp_location(answer) is None


@settings(deadline=None)  # (a loaded machine may pause any example)
@given(st.binary(max_size=600))
def test_no_ssdp_answer_crashes_the_reader(answer: bytes) -> None:
    location = ssdp_location(b"HTTP/1.1 200 OK\r\n" + answer)
    assert location is None or (location.startswith("http://") and location.isprintable())


@pytest.mark.parametrize(("address", "port", "says"), [
    ("not-an-ip", 4000, "'not-an-ip' is not an IP address"),
    ("0.0.0.0", 4000, "unspecified"),
    ("224.0.0.1", 4000, "multicast"),
    ("198.51.100.9", 0, "port 0"),
    ("198.51.100.9", 70000, "port 70000"),
    ("\x1b]0;x\x07", 4000, r"\\x1b"),
])
def test_a_mapping_no_one_could_use_is_never_made(address: str, port: int, says: str) -> None:
    with pytest.raises(MappingFailed, match=says) as info:
        PortMapping("UPnP-IGD", address, port, 4000, 3600)
    assert "\x1b" not in str(info.value)


def test_a_usable_mapping_is_made() -> None:
    mapping = PortMapping("PCP", "11.0.15.1", 4000, 4000, 3600)
    assert mapping.public and mapping.external_port == 4000
