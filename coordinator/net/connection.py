"""One task per client connection: bytes in, frames out, responses back in request order.

Like a Kafka broker, a connection handles one request at a time (Kafka mutes the socket until the
response is queued), so responses leave in request order however the client pipelines. Memory
per connection is bounded by the frame decoder (one max-size frame). A connection that sends
nothing for `connections.max.idle.ms` is closed. Anything the connection cannot understand
closes it, and only it: errors never escape to the server.
"""
from __future__ import annotations

import itertools
import logging

import trio

from coordinator.handlers.request_context import BrokerContext, CloseConnection
from coordinator.net.dispatch import Connection, dispatch
from coordinator.observe.logs import get_logger, log_event
from protocol.framing import FrameDecoder, FrameError, frame

RECEIVE_CHUNK = 65536
_log = get_logger("connection")
_ids = itertools.count(1)


async def serve_connection(stream: trio.SocketStream, broker: BrokerContext) -> None:
    conn = Connection(next(_ids), _peer_host(stream))
    decoder = FrameDecoder(broker.config.socket_request_max_bytes)
    idle_seconds = broker.config.connections_max_idle_ms / 1000
    log_event(_log, "connection.open", logging.DEBUG, conn=conn.connection_id, peer=conn.client_host)
    reason = "client closed"
    try:
        async with stream:
            while True:
                with trio.move_on_after(idle_seconds) as idle:
                    data = await stream.receive_some(RECEIVE_CHUNK)
                if idle.cancelled_caught:
                    reason = "idle"
                    return
                if not data:
                    return
                for payload in decoder.feed(data):
                    response = await dispatch(payload, conn, broker)
                    if response is not None:
                        await stream.send_all(frame(*response))
    except FrameError as exc:
        reason = f"bad frame: {exc}"
    except CloseConnection as exc:
        reason = str(exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        reason = "connection lost"
    except Exception as exc:  # a handler bug must cost one connection, never the server
        reason = f"internal error: {exc!r}"
        _log.exception("handler failed on connection %s", conn.connection_id)
    finally:
        level = logging.DEBUG if reason in ("client closed", "connection lost") else logging.WARNING
        log_event(_log, "connection.close", level, conn=conn.connection_id, peer=conn.client_host, reason=reason)
        tap = broker.tap  # the transcript records why a connection ended
        if tap is not None:
            tap.closed(conn.connection_id, conn.client_host, reason)


def _peer_host(stream: trio.SocketStream) -> str:
    try:
        return str(stream.socket.getpeername()[0])
    except OSError:
        return "unknown"
