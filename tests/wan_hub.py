"""The test bed's WAN: an Ethernet hub with a delay, for kernels without netem.

Run inside the WAN namespace with the delay in milliseconds and the interfaces to join:
``python wan_hub.py 40 pS pA pB``. Every frame that comes in on one interface goes out of
all the others ``delay`` ms later (a hub, not a switch: the bed's WAN is a handful of
hosts). The bed crosses the hub once between any two homes, so 40 ms gives 80 ms round
trips, as between two cities. It stops on SIGTERM.

It also stands for the provider's routers between two homes: every IPv4 packet that
crosses it loses one from its TTL, and one whose TTL runs out is dropped and answered
with an ICMP "time exceeded" from ISP_ROUTER, as a router on the internet does. So a SYN
sent with a TTL of 2 opens its own home router's NAT and expires before the other home's
router sees it (the hole punching of SPEC 3.8 counts on that).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ETH_HEADER = 14
ETHERTYPE_IPV4 = b"\x08\x00"
ISP_ROUTER = bytes([11, 0, 14, 254])  # the address that says "time exceeded"


def _checksum(data: bytes) -> int:
    """The internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def hop(frame: bytes) -> tuple[bytes | None, bytes | None]:
    """A frame as a router passes it on: (the frame with its IPv4 TTL one less, or None
    when the TTL ran out; then the ICMP "time exceeded" to send back, else None). Frames
    that are not IPv4 pass unchanged."""
    if frame[12:14] != ETHERTYPE_IPV4 or len(frame) < ETH_HEADER + 20:
        return frame, None
    ip = bytearray(frame[ETH_HEADER:])
    header = (ip[0] & 0x0F) * 4
    if ip[8] > 1:
        ip[8] -= 1
        ip[10:12] = b"\0\0"
        ip[10:12] = _checksum(bytes(ip[:header])).to_bytes(2, "big")
        return frame[:ETH_HEADER] + bytes(ip), None
    if ip[9] == 1 and len(ip) > header and ip[header] != 8:  # (ICMP: only an echo request
        # is answered, so that an error never answers an error)
        return None, None
    quoted = bytes(ip[:header + 8])
    icmp = bytearray(b"\x0b\x00\0\0\0\0\0\0" + quoted)
    icmp[2:4] = _checksum(bytes(icmp)).to_bytes(2, "big")
    reply = bytearray(b"\x45\x00" + (20 + len(icmp)).to_bytes(2, "big")
                      + b"\0\0\0\0\x40\x01\0\0" + ISP_ROUTER + bytes(ip[12:16]))
    reply[10:12] = _checksum(bytes(reply)).to_bytes(2, "big")
    ethernet = frame[6:12] + frame[0:6] + ETHERTYPE_IPV4  # back where it came from
    return None, ethernet + bytes(reply) + bytes(icmp)


def main(argv: list[str]) -> int:
    delay = float(argv[0]) / 1000
    names = argv[1:]
    socks = []
    for name in names:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setblocking(False)
        socks.append(s)
    by_fd = {s.fileno(): i for i, s in enumerate(socks)}
    queue: list[tuple[float, int, int, bytes]] = []
    order = itertools.count()
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    print("hub ready", flush=True)
    while running[0]:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _due, _n, source, frame = heapq.heappop(queue)
            passed, answer = hop(frame)
            if answer is not None:
                with contextlib.suppress(OSError):
                    socks[source].send(answer)
            for i, s in enumerate(socks):
                if i != source and passed is not None:
                    with contextlib.suppress(OSError):
                        s.send(passed)
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else 0.5
        try:
            ready, _, _ = select.select(socks, [], [], timeout)
        except InterruptedError:
            continue
        for s in ready:
            while True:
                try:
                    frame, address = s.recvfrom(65535)
                except (BlockingIOError, OSError):
                    break
                if address[2] == PACKET_OUTGOING:
                    continue
                heapq.heappush(queue, (time.monotonic() + delay, next(order),
                                       by_fd[s.fileno()], frame))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
