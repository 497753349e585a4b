"""The test bed's WAN: an Ethernet hub with a delay, for kernels without netem.

Run inside the WAN namespace with the delay in milliseconds and the interfaces to join:
``python wan_hub.py 40 pS pA pB``. Every frame that comes in on one interface goes out of
all the others ``delay`` ms later (a hub, not a switch: the bed's WAN is a handful of
hosts). The bed crosses the hub once between any two homes, so 40 ms gives 80 ms round
trips, as between two cities. It stops on SIGTERM.
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
            for i, s in enumerate(socks):
                if i != source:
                    with contextlib.suppress(OSError):
                        s.send(frame)
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
