"""Binding the brokers' listening sockets before anything else is imported (`kgc serve`).

The CLI binds every broker's port with the standard library alone, then imports trio and the
server, which adopt these sockets (listener.py): the ports accept connections ~70 ms after exec,
and ApiVersions is answered at once (early_responder.py); other requests wait in the socket until
the server is up. The sockets are bound as trio's open_tcp_listeners binds them (every address of
the host, SO_REUSEADDR, IPv6-only v6 sockets). This module must stay free of trio and the server.
"""

from __future__ import annotations

import socket


def bind_listeners(host: str, port: int, brokers: int) -> list[list[socket.socket]]:
    """Listening sockets for brokers 0..brokers-1 on port + i (port 0: a free port each)."""
    bound: list[list[socket.socket]] = []
    sockets: list[socket.socket] = []
    try:
        for i in range(brokers):
            sockets = []
            for family, kind, proto, _, address in socket.getaddrinfo(
                host, port + i if port else 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            ):
                sock = socket.socket(family, kind, proto)
                sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(address)
                sock.listen(min(socket.SOMAXCONN, 0xFFFF))
            bound.append(sockets)
    except OSError:
        for sock in [s for group in bound for s in group] + sockets:
            sock.close()
        raise
    return bound
