"""Whatever a hostile or broken device on a LAN can answer, for the tests on netbed's
build_lan: each kind runs as ``python lan_fakes.py KIND ARGS`` inside a namespace, prints
``ready`` once it is up, then one line per thing it saw.

- ``host NUMBER PORT ADDRESS...``: announces game NUMBER by multicast DNS with all the
  ADDRESSes (already on its interface) and runs the short code's PAKE on PORT with a guess
  of its own, printing ``guess ADDRESS`` for each joiner confirmation it gets: each one is a
  guess of the joiner's code it can check offline.
- ``guesser ADDRESS PORT CODE SESSIONS``: opens SESSIONS connections to a host at once and
  sends each the PAKE message of CODE before confirming any, printing ``answered`` or
  ``refused REASON`` per session, then confirms on every answered one.
- ``flood NUMBER ADDRESS``: multicast DNS announcements of hundreds of names no one
  answers for, named like games NUMBER or like nothing at all, and of services whose records
  are garbage (bad numbers, port 0, address 0.0.0.0, terminal escapes).
- ``router [SCENARIO]``: a PCP and NAT-PMP server on UDP port 5351 whose answers follow a
  scenario (SCENARIOS, or ``random:SEED`` for random bytes); the datagram ``scenario NAME``
  switches it (answered ``ok``).
- ``igd EXTERNAL_IP ADDRESS``: a UPnP internet gateway device (SSDP and its HTTP/SOAP
  control) whose external address is EXTERNAL_IP, whatever that text is.
"""

from __future__ import annotations

import http.server
import os
import random
import socket
import struct
import sys
import threading
import time

import frames

SERVICE = "_p2pgotg._tcp.local."


def say(line: str) -> None:
    print(line, flush=True)


# -- a fake host of a game number ---------------------------------------------------------

def fake_host(number: int, port: int, addresses: list[str]) -> None:
    import trio
    from zeroconf import ServiceInfo, Zeroconf

    from p2pgotg.net.transport.framing import FramedChannel
    from p2pgotg.net.transport.tls import certificate_fingerprint, make_certificate, server_context
    from p2pgotg.reach.pake import HOST_ROLE, PakeError, PakeSide

    cert, key = make_certificate()
    fingerprint = certificate_fingerprint(cert)
    context = server_context(cert, key)
    zc = Zeroconf(interfaces=[addresses[0]])
    zc.register_service(ServiceInfo(
        SERVICE, f"p2pgotg game {number} on fake.{SERVICE}", port=port,
        addresses=[socket.inet_aton(a) for a in addresses],
        properties={"v": "1", "n": str(number), "r": "fake"}, server="fake.local."))

    async def handle(tcp: trio.SocketStream) -> None:
        where = tcp.socket.getsockname()[0]
        stream = trio.SSLStream(tcp, context, server_side=True, https_compatible=False)
        channel = FramedChannel(stream)
        try:
            with trio.move_on_after(10):
                first = frames.fields(await channel.receive()) or {}
                if first.get("ctl") != "pake":
                    return
                say(f"pake {where}")
                side = PakeSide(f"{number}-aardvark-absurd".encode(), fingerprint, HOST_ROLE)
                side.finish(first.get("msg"))
                await channel.send(frames.raw("pake", msg=side.message))
                answer = frames.fields(await channel.receive()) or {}
                if "confirm" in answer:
                    say(f"guess {where}")
                await channel.send(frames.raw("error", reason="wrong short code"))
        except (PakeError, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        except Exception as exc:  # noqa: BLE001 (a fake: say what happened, keep serving)
            say(f"fake host: {type(exc).__name__}: {exc}")
        finally:
            with trio.move_on_after(1):
                await stream.aclose()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_tcp, handle, port)
            say("ready")

    try:
        trio.run(main)
    finally:
        zc.close()


# -- a joiner that guesses on many sessions at once ----------------------------------------

def guesser(address: str, port: int, code: str, sessions: int) -> None:
    import trio

    from p2pgotg.net.reaching.control_frames import SessionError, expect
    from p2pgotg.net.transport.framing import FramedChannel
    from p2pgotg.net.transport.tls import certificate_fingerprint, client_context, peer_certificate
    from p2pgotg.protocol import control
    from p2pgotg.reach.pake import JOINER_ROLE, PakeSide

    async def main() -> None:
        answered: list[tuple[FramedChannel, PakeSide]] = []

        async def open_one() -> None:
            tcp = await trio.open_tcp_stream(address, port)
            stream = trio.SSLStream(tcp, client_context(), https_compatible=False)
            await stream.do_handshake()
            side = PakeSide(code.encode(), certificate_fingerprint(peer_certificate(stream)),
                            JOINER_ROLE)
            channel = FramedChannel(stream)
            await channel.send(frames.raw("pake", msg=side.message))
            try:
                with trio.fail_after(10):
                    side.finish(expect(await channel.receive(), control.Pake).msg)
            except SessionError as exc:
                say(f"refused {exc}")
                return
            say("answered")
            answered.append((channel, side))

        async with trio.open_nursery() as nursery:
            for _ in range(sessions):
                nursery.start_soon(open_one)
        say(f"{len(answered)} of {sessions} answered")

        async def confirm(channel: FramedChannel, side: PakeSide) -> None:
            await channel.send(frames.raw("pake", confirm=side.confirm()))
            try:
                with trio.fail_after(10):
                    expect(await channel.receive(), control.Pake)
                say("confirmed")
            except SessionError as exc:
                say(f"wrong {exc}")

        async with trio.open_nursery() as nursery:
            for channel, side in answered:
                nursery.start_soon(confirm, channel, side)
        say("done")

    trio.run(main)


# -- a multicast DNS flood ----------------------------------------------------------------

def flood(number: int, address: str) -> None:
    from zeroconf import Zeroconf
    from zeroconf._dns import DNSAddress, DNSPointer, DNSService, DNSText
    from zeroconf._protocol.outgoing import DNSOutgoing
    from zeroconf.const import (
        _CLASS_IN,
        _CLASS_IN_UNIQUE,
        _FLAGS_AA,
        _FLAGS_QR_RESPONSE,
        _TYPE_A,
        _TYPE_PTR,
        _TYPE_SRV,
        _TYPE_TXT,
    )

    def txt(**pairs: str) -> bytes:
        out = b""
        for k, v in pairs.items():
            item = f"{k}={v}".encode()
            out += bytes([len(item)]) + item
        return out

    bogus = ([f"p2pgotg game {number} on bogus{i}.{SERVICE}" for i in range(200)]
             + [f"bogus {i}.{SERVICE}" for i in range(200)])
    # Services that answer, every one wrong in some way: none may count as a game
    garbage = [
        ("arabic", txt(v="1", n="\u0667"), 4000, "10.15.1.200"),  # a digit, not a decimal
        ("zero", txt(v="1", n=f"0{number}"), 4000, "10.15.1.200"),  # leading zero
        ("port0", txt(v="1", n=str(number)), 0, "10.15.1.200"),
        ("unspecified", txt(v="1", n=str(number)), 4000, "0.0.0.0"),
        ("multicast", txt(v="1", n=str(number)), 4000, "224.0.0.251"),
        ("v2", txt(v="2", n=str(number)), 4000, "10.15.1.200"),
        ("huge", txt(v="1", n="9" * 240), 4000, "10.15.1.200"),
        ("escape\x1b]0;pwned\x07", txt(v="1", n="x\x1b[2J", r="\x1b[31mred"), 4000,
         "10.15.1.200"),
    ]
    zc = Zeroconf(interfaces=[address])
    say("ready")
    try:
        while True:
            for start in range(0, len(bogus), 40):
                out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
                for name in bogus[start:start + 40]:
                    out.add_answer_at_time(DNSPointer(SERVICE, _TYPE_PTR, _CLASS_IN, 120, name), 0)
                zc.send(out)
            for label, text, port, where in garbage:
                name = f"p2pgotg game {number} on {label}.{SERVICE}"
                server = f"garbage-{len(label)}.local."
                out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
                out.add_answer_at_time(DNSPointer(SERVICE, _TYPE_PTR, _CLASS_IN, 120, name), 0)
                out.add_answer_at_time(DNSService(name, _TYPE_SRV, _CLASS_IN_UNIQUE, 120, 0, 0,
                                                  port, server), 0)
                out.add_answer_at_time(DNSText(name, _TYPE_TXT, _CLASS_IN_UNIQUE, 120, text), 0)
                out.add_answer_at_time(DNSAddress(server, _TYPE_A, _CLASS_IN_UNIQUE, 120,
                                                  socket.inet_aton(where)), 0)
                zc.send(out)
            time.sleep(0.5)
    finally:
        zc.close()


# -- a router's PCP and NAT-PMP -----------------------------------------------------------

GOOD_ADDRESS = bytes([11, 0, 15, 1])
V4_MAPPED = bytes(10) + b"\xff\xff"

#: name: (PCP answer, NAT-PMP address answer, NAT-PMP mapping answer); each a function of
#: the request (nonce, internal port) giving the datagram, or None for no answer.
SCENARIOS: dict[str, tuple] = {}


def _pcp(nonce: bytes, internal: int, *, external: int | None = None, lifetime: int = 3600,
         address: bytes = V4_MAPPED + GOOD_ADDRESS, result: int = 0,
         protocol: int = 6) -> bytes:
    return (struct.pack(">BBBBII", 2, 0x81, 0, result, lifetime, 7) + bytes(12) + nonce
            + struct.pack(">B3xHH", protocol, internal,
                          internal if external is None else external) + address)


def _pmp_address(address: bytes = GOOD_ADDRESS, result: int = 0) -> bytes:
    return struct.pack(">BBHI", 0, 128, result, 7) + address


def _pmp_map(internal: int, *, external: int | None = None, lifetime: int = 3600) -> bytes:
    return struct.pack(">BBHIHHI", 0, 130, 0, 7, internal,
                       internal if external is None else external, lifetime)


NATPMP_ONLY = struct.pack(">BBHI", 0, 0x81, 1, 0)  # RFC 6887 9: "unsupported version"


def _scenarios() -> None:
    refuse = lambda n, i: struct.pack(">BBHI", 0, 130, 2, 7) + bytes(8)  # noqa: E731
    refuse_address = lambda n, i: _pmp_address(bytes(4), result=2)  # noqa: E731
    natpmp_only = lambda n, i: NATPMP_ONLY  # noqa: E731
    for name, pcp_answer in {
        "pcp-ok": lambda n, i: _pcp(n, i),
        "pcp-port0": lambda n, i: _pcp(n, i, external=0),
        "pcp-lifetime0": lambda n, i: _pcp(n, i, lifetime=0),
        "pcp-unspecified": lambda n, i: _pcp(n, i, address=V4_MAPPED + bytes(4)),
        "pcp-unspecified6": lambda n, i: _pcp(n, i, address=bytes(16)),
        "pcp-multicast": lambda n, i: _pcp(n, i, address=V4_MAPPED + bytes([224, 0, 0, 1])),
        "pcp-loopback": lambda n, i: _pcp(n, i, address=V4_MAPPED + bytes([127, 0, 0, 1])),
        "pcp-other-internal": lambda n, i: _pcp(n, i + 1),
        "pcp-udp": lambda n, i: _pcp(n, i, protocol=17),
        "pcp-other-nonce": lambda n, i: _pcp(bytes(12), i),
        "pcp-cut": lambda n, i: _pcp(n, i)[:40],
        "pcp-garbage": lambda n, i: bytes([2, 0x81]) + os.urandom(58),
    }.items():
        SCENARIOS[name] = (pcp_answer, refuse_address, refuse)
    for name, (address, mapping) in {
        "natpmp-ok": (lambda n, i: _pmp_address(), lambda n, i: _pmp_map(i)),
        "natpmp-port0": (lambda n, i: _pmp_address(), lambda n, i: _pmp_map(i, external=0)),
        "natpmp-lifetime0": (lambda n, i: _pmp_address(),
                             lambda n, i: _pmp_map(i, lifetime=0)),
        "natpmp-other-internal": (lambda n, i: _pmp_address(), lambda n, i: _pmp_map(i + 1)),
        "natpmp-unspecified": (lambda n, i: _pmp_address(bytes(4)), lambda n, i: _pmp_map(i)),
        "natpmp-broadcast": (lambda n, i: _pmp_address(b"\xff" * 4), lambda n, i: _pmp_map(i)),
        "natpmp-cut": (lambda n, i: _pmp_address()[:10], lambda n, i: _pmp_map(i)),
        "natpmp-map-cut": (lambda n, i: _pmp_address(), lambda n, i: _pmp_map(i)[:13]),
        "natpmp-garbage": (lambda n, i: bytes([0, 128]) + os.urandom(10),
                           lambda n, i: bytes([0, 130]) + os.urandom(14)),
    }.items():
        SCENARIOS[name] = (natpmp_only, address, mapping)
    SCENARIOS["silent"] = (None, None, None)


_scenarios()


def _scenario(name: str) -> tuple:
    if name.startswith("random:"):
        rng = random.Random(name)
        return tuple((lambda n, i, r=rng: r.randbytes(r.randrange(64))) for _ in range(3))
    return SCENARIOS[name]


def router(first: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", 5351))
    scenario = _scenario(first)
    say("ready")
    while True:
        data, peer = sock.recvfrom(2048)
        if data.startswith(b"scenario "):
            scenario = _scenario(data[9:].decode())
            sock.sendto(b"ok", peer)
            continue
        answer = None
        if len(data) >= 60 and data[0] == 2 and data[1] == 1:
            nonce, internal = data[24:36], struct.unpack_from(">H", data, 40)[0]
            answer = scenario[0] and scenario[0](nonce, internal)
        elif data[:2] == b"\x00\x00":
            answer = scenario[1] and scenario[1](b"", 0)
        elif len(data) >= 12 and data[:2] == b"\x00\x02":
            internal = struct.unpack_from(">H", data, 4)[0]
            answer = scenario[2] and scenario[2](b"", internal)
        if answer is not None:
            sock.sendto(answer, peer)


# -- a UPnP internet gateway device -------------------------------------------------------

IGD_PORT = 49152
DESCRIPTION = """<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0">
<specVersion><major>1</major><minor>0</minor></specVersion>
<URLBase>http://{address}:{port}/</URLBase>
<device>
<deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:1</deviceType>
<friendlyName>a fake gateway</friendlyName><UDN>uuid:00000000-0000-0000-0000-00000000f00d</UDN>
<deviceList><device>
<deviceType>urn:schemas-upnp-org:device:WANDevice:1</deviceType>
<serviceList><service>
<serviceType>urn:schemas-upnp-org:service:WANCommonInterfaceConfig:1</serviceType>
<serviceId>urn:upnp-org:serviceId:WANCommonIFC1</serviceId>
<controlURL>/ctl/CmnIfCfg</controlURL><eventSubURL>/evt/CmnIfCfg</eventSubURL>
<SCPDURL>/WANCfg.xml</SCPDURL>
</service></serviceList>
<deviceList><device>
<deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:1</deviceType>
<serviceList><service>
<serviceType>urn:schemas-upnp-org:service:WANIPConnection:1</serviceType>
<serviceId>urn:upnp-org:serviceId:WANIPConn1</serviceId>
<controlURL>/ctl/IPConn</controlURL><eventSubURL>/evt/IPConn</eventSubURL>
<SCPDURL>/WANIPCn.xml</SCPDURL>
</service></serviceList>
</device></deviceList>
</device></deviceList>
</device>
</root>
"""
SOAP = """<?xml version="1.0"?>
<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" \
s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>\
<u:{action}Response xmlns:u="{service}">{fields}</u:{action}Response></s:Body></s:Envelope>
"""


def igd(external: str, address: str) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, body: str, content: str = "text/xml") -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", f'{content}; charset="utf-8"')
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(DESCRIPTION.format(address=address, port=IGD_PORT))

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            service, _, action = self.headers.get("SOAPAction", "").strip('"').partition("#")
            say(f"soap {action}")
            fields = {
                "GetStatusInfo": "<NewConnectionStatus>Connected</NewConnectionStatus>"
                                 "<NewLastConnectionError>ERROR_NONE</NewLastConnectionError>"
                                 "<NewUptime>100</NewUptime>",
                "GetExternalIPAddress": f"<NewExternalIPAddress>{external}"
                                        "</NewExternalIPAddress>",
                "GetConnectionTypeInfo": "<NewConnectionType>IP_Routed</NewConnectionType>"
                                         "<NewPossibleConnectionTypes>IP_Routed"
                                         "</NewPossibleConnectionTypes>",
            }.get(action, "")
            self._send(SOAP.format(action=action, service=service, fields=fields))

    server = http.server.ThreadingHTTPServer((address, IGD_PORT), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ssdp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ssdp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ssdp.bind(("0.0.0.0", 1900))
    ssdp.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                    socket.inet_aton("239.255.255.250") + socket.inet_aton(address))
    say("ready")
    while True:
        data, peer = ssdp.recvfrom(2048)
        if not data.startswith(b"M-SEARCH"):
            continue
        st = "urn:schemas-upnp-org:device:InternetGatewayDevice:1"
        for line in data.decode("latin-1").split("\r\n"):
            if line.lower().startswith("st:"):
                st = line[3:].strip()
        ssdp.sendto((f"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\nST: {st}\r\n"
                     f"USN: uuid:00000000-0000-0000-0000-00000000f00d::{st}\r\nEXT:\r\n"
                     f"SERVER: fake/1 UPnP/1.1 fake/1\r\n"
                     f"LOCATION: http://{address}:{IGD_PORT}/rootDesc.xml\r\n\r\n").encode(),
                    peer)
        say(f"ssdp {peer[0]}")


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "host":
        fake_host(int(args[0]), int(args[1]), args[2:])
    elif kind == "guesser":
        guesser(args[0], int(args[1]), args[2], int(args[3]))
    elif kind == "flood":
        flood(int(args[0]), args[1])
    elif kind == "router":
        router(args[0] if args else "silent")
    elif kind == "igd":
        igd(args[0], args[1])
    else:
        raise SystemExit(f"unknown fake {kind!r}")
