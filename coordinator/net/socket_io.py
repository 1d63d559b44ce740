"""Non-blocking reads and writes on a connection's socket, straight on its file descriptor.

trio's SocketStream yields to the scheduler after every successful send or receive (a full pass of
its run loop, an epoll_wait included); a request-response cycle paid two of them. Here a read
or write that succeeds at once returns at once, and only one that would block waits (trio's
`wait_readable`/`wait_writable`, which are checkpoints: cancellation still reaches us). The
connection yields once per batch of frames it handles (connection.py), so a client that keeps
its socket full cannot starve the others. `RawSocket` borrows the descriptor of trio's socket and
must be `detach`ed before that socket closes.
"""

from __future__ import annotations

import socket

import trio

_LOST = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, TimeoutError)


class ConnectionLost(Exception):
    """The peer reset the connection (or it broke) while we read or wrote."""


class RawSocket:
    __slots__ = ("_sock", "fd", "waited")

    def __init__(self, stream: trio.SocketStream) -> None:
        self.fd = stream.socket.fileno()
        self.waited = False  # a recv_into waited (so it yielded) since the owner last reset this
        # A second Python socket object on the same descriptor (detached before trio closes it).
        self._sock = socket.socket(fileno=self.fd)

    def detach(self) -> None:
        self._sock.detach()

    def recv_into_now(self, buffer: memoryview | bytearray) -> int | None:
        """Bytes read into `buffer` (0: end of stream), or None when nothing is there yet."""
        try:
            return self._sock.recv_into(buffer)
        except BlockingIOError:
            return None
        except _LOST as exc:
            raise ConnectionLost(str(exc)) from None

    async def recv_into(self, buffer: memoryview | bytearray) -> int:
        """Read at least one byte into `buffer` (0: end of stream), waiting if none is there."""
        while True:
            n = self.recv_into_now(buffer)
            if n is not None:
                return n
            self.waited = True
            await trio.lowlevel.wait_readable(self.fd)

    def send_now(self, data: bytes | memoryview) -> int:
        """Bytes of `data` written without waiting (0 when the socket buffer is full)."""
        try:
            return self._sock.send(data)
        except BlockingIOError:
            return 0
        except _LOST as exc:
            raise ConnectionLost(str(exc)) from None

    async def send_all(self, data: bytes | memoryview) -> None:
        view: bytes | memoryview = data
        while view:
            sent = self.send_now(view)
            if sent == len(view):
                return
            if sent:
                view = memoryview(view)[sent:]
            await trio.lowlevel.wait_writable(self.fd)
