"""Free TCP ports on 127.0.0.1 that outgoing connections will not take.

A port the kernel hands out for `bind(0)` comes from the ephemeral range, the same range every
outgoing connection draws its local port from; once the probing socket closes, a connection to
the API server may take that port before the process meant to listen on it starts, and the
listener fails with EADDRINUSE (seen in CI). Ports below the ephemeral range are never given to
outgoing connections, so a port found free there stays free unless someone binds it on purpose.
"""

from __future__ import annotations

from pathlib import Path
import random
import socket

_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_SPAN = 10000  # how far below the ephemeral range to look


def _ephemeral_low() -> int:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_ports(count: int) -> list[int]:
    """`count` distinct ports, free now, below the ephemeral range (the kernel's choice when
    that range leaves no room below it)."""
    high = _ephemeral_low()
    low = max(1024, high - _SPAN)
    if high - low < count:
        return _kernel_ports(count)
    ports: list[int] = []
    for port in random.sample(range(low, high), high - low):
        if _is_free(port):
            ports.append(port)
            if len(ports) == count:
                return ports
    raise OSError(f"no {count} free ports in {low}..{high - 1}")


def _kernel_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port() -> int:
    return free_ports(1)[0]
