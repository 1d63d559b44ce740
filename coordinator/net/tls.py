"""TLS on a connection's socket: the handshake, then the same non-blocking reads and writes as
socket_io.py, through OpenSSL.

`start_tls` wraps the connection's descriptor in a non-blocking `ssl.SSLSocket` and runs the
server handshake, waiting on the descriptor (trio's wait_readable/wait_writable) whenever OpenSSL
wants bytes or room; the connection's idle watch bounds a client that never finishes it. After
it, `TlsSocket` is a `RawSocket` whose reads and writes go through OpenSSL: a read tries OpenSSL
first (a record may already be decrypted and waiting), and waits on the descriptor only when
OpenSSL asks for more bytes, so PLAINTEXT connections keep their path untouched and TLS pays one
extra copy. A handshake that fails (garbage, a certificate refused) raises `TlsFailed`.
"""

from __future__ import annotations

import ssl

import trio

from coordinator.net.socket_io import ConnectionLost, RawSocket

_LOST = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, TimeoutError)


class TlsFailed(Exception):
    """The TLS handshake failed; the text says why (OpenSSL's reason), never key material."""


class TlsSocket(RawSocket):
    __slots__ = ()

    def __init__(self, sock: ssl.SSLSocket, fd: int) -> None:  # not RawSocket's: no trio stream here
        self.fd = fd
        self.waited = False
        self._sock = sock

    @property
    def ssl_socket(self) -> ssl.SSLSocket:
        sock = self._sock
        assert isinstance(sock, ssl.SSLSocket)
        return sock

    def recv_into_now(self, buffer: memoryview | bytearray) -> int | None:
        try:
            return self._sock.recv_into(buffer)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return None
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return 0  # the client closed (with or without close_notify)
        except ssl.SSLError as exc:
            raise ConnectionLost(f"TLS: {exc.reason or exc}") from None
        except _LOST as exc:
            raise ConnectionLost(str(exc)) from None

    def send_now(self, data: bytes | memoryview) -> int:
        try:
            return self._sock.send(data)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return 0  # retried with the same bytes first, as OpenSSL requires
        except ssl.SSLError as exc:
            raise ConnectionLost(f"TLS: {exc.reason or exc}") from None
        except _LOST as exc:
            raise ConnectionLost(str(exc)) from None


async def start_tls(raw: RawSocket, context: ssl.SSLContext) -> TlsSocket:
    """The server side of the TLS handshake on `raw`'s descriptor; `raw` must not be used after."""
    fd = raw.fd
    plain = raw._sock  # noqa: SLF001 (the same package's socket; wrap_socket takes it over)
    plain.setblocking(False)  # a non-blocking SSLSocket: OpenSSL's wants surface as exceptions
    try:
        wrapped = context.wrap_socket(plain, server_side=True, do_handshake_on_connect=False)
    except (ssl.SSLError, OSError) as exc:
        raise TlsFailed(f"TLS setup failed: {exc}") from None
    tls = TlsSocket(wrapped, fd)
    try:
        while True:
            try:
                wrapped.do_handshake()
                return tls
            except ssl.SSLWantReadError:
                await trio.lowlevel.wait_readable(fd)
            except ssl.SSLWantWriteError:
                await trio.lowlevel.wait_writable(fd)
    except ssl.SSLError as exc:
        tls.detach()
        raise TlsFailed(f"TLS handshake failed: {exc.reason or exc.__class__.__name__}") from None
    except OSError as exc:
        tls.detach()
        raise TlsFailed(f"TLS handshake failed: {exc.strerror or exc}") from None
    except BaseException:  # cancelled (the idle watch, the broker going down): trio closes the descriptor
        tls.detach()
        raise
