"""Whether the network may be asked: the offline switches the HF libraries read, and a bounded probe of a host.

A leaf (standard library only): the command line probes the Hub before any HF library is imported (they read
``HF_HUB_OFFLINE`` when imported), and a named evaluator's Hub step probes the endpoint before a download.
"""

from __future__ import annotations

import os
import socket
import threading

#: The values of an environment switch such as ``HF_HUB_OFFLINE`` that turn it on.
TRUE_VALUES = ("1", "true", "yes", "on")
#: With a proxy a host cannot be probed directly: the client's own timeouts apply.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def switched_on(name: str) -> bool:
    """Whether the environment variable ``name`` is set to a true value (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get(name, "").lower() in TRUE_VALUES


def behind_proxy() -> bool:
    """Whether a proxy variable is set (a direct probe then says nothing about reachability)."""
    return any(os.environ.get(name) for name in PROXY_VARIABLES)


def accepts_connection(host: str, port: int, timeout: float) -> bool:
    """Whether ``host:port`` accepts a TCP connection within ``timeout`` seconds. The probe runs in a daemon thread
    joined for ``timeout``: name resolution can hang past any socket timeout."""
    reached: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            reached.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(reached)
