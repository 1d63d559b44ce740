"""One task per client connection: bytes in, frames out, responses back in request order.

Like a Kafka broker, a connection handles one request at a time (Kafka mutes the socket until the
response is queued), so responses leave in request order however the client pipelines; responses
that are ready together leave with one send (outbox.py). Memory: each frame holds its size in the
listener's `RequestMemory` (queued.max.request.bytes) from before its body is buffered until it
has been handled, so all connections together stay within the bound; past it, connections wait.
`connections.max.idle.ms` closes a connection that is idle or whose frame is still arriving after
that long (idle.py). Anything the connection cannot understand closes it, and only it: errors
never escape to the server.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from coordinator.handlers.request_context import BrokerContext, CloseConnection
from coordinator.net.dispatch import Connection, dispatch
from coordinator.net.frame_reader import SCRATCH_BYTES, FrameReader
from coordinator.net.idle import ConnectionState, ConnectionWatch
from coordinator.net.outbox import Outbox
from coordinator.net.request_memory import RequestMemory
from coordinator.net.socket_io import ConnectionLost, RawSocket
from coordinator.net.tls import TlsFailed  # (ssl: trio imports it anyway)
from coordinator.observe.logs import get_logger, log_event
from coordinator.security.authorization import BROKER_PRINCIPAL
from protocol.framing import FrameError, frame_response

if TYPE_CHECKING:
    from coordinator.security.listeners import ListenerPlan

_log = get_logger("connection")
_ids = itertools.count(1)


@dataclass
class ListenerShared:
    """What the connections of one listener share: the request-memory bound (one for the whole
    server), the idle watch, and the scratch buffer reads go into (one trio loop per listener)."""

    memory: RequestMemory
    watch: ConnectionWatch
    scratch: bytearray = field(default_factory=lambda: bytearray(SCRATCH_BYTES))


async def serve_connection(
    stream: trio.SocketStream,
    broker: BrokerContext,
    shared: ListenerShared,
    plan: ListenerPlan | None = None,
    software: tuple[str, str] | None = None,
    peer_broker: str | None = None,
) -> None:
    """`plan`: the TLS and SASL of the listener (None: PLAINTEXT, nothing to do); `software`: what
    its ApiVersions named, answered before the server was up (net/early_responder.py);
    `peer_broker`: the broker process on the other end of this socketpair (cluster/peer_link.py),
    whose requests carry the broker principal."""
    state = ConnectionState(next(_ids), peer_broker or _peer_host(stream), trio.current_time())
    conn = Connection(state.connection_id, state.client_host)
    if peer_broker is not None:
        conn.principal = BROKER_PRINCIPAL
    if software is not None and broker.telemetry is not None:  # as k18 records it (KIP-714 selectors)
        broker.telemetry.client_software(conn.connection_id, *software)
    log_event(_log, "connection.open", logging.DEBUG, conn=conn.connection_id, peer=conn.client_host)
    reason = "client closed"
    shared.watch.add(state)
    try:
        async with stream:
            sock: RawSocket = RawSocket(stream)
            limit = broker.config.socket_request_max_bytes
            reader: FrameReader | None = None
            try:
                with state.scope:
                    if plan is not None:  # TLS handshake, SASL session (net/secure.py; loaded when used)
                        from coordinator.net.secure import secure_connection

                        sock = await secure_connection(plan, sock, conn, broker.tap)
                        if plan.sasl is not None:  # until it authenticates (sasl_session.on_authenticated)
                            limit = min(limit, plan.sasl.max_receive_size)
                    reader = FrameReader(sock, shared.scratch, limit, shared.memory, state)
                    if conn.session is not None:
                        conn.session.on_authenticated(reader.set_max_frame_size, broker.config.socket_request_max_bytes)
                    async with trio.open_nursery() as nursery:
                        outbox = Outbox(sock, state, nursery)
                        reason = await _serve(reader, outbox, conn, broker, shared.memory, state)
                        if conn.session is not None and conn.session.failed:
                            from coordinator.net.sasl_session import linger

                            await linger(sock)  # the client reads the refusal, then closes (sasl_session.py)
                        nursery.cancel_scope.cancel()  # the sender, idle now
            except TlsFailed as exc:  # the handshake failed: it costs its connection only
                reason = str(exc)
            finally:
                if reader is not None:
                    reader.release()
                sock.detach()  # trio's socket closes the descriptor
            if state.closed_because is not None:
                reason = state.closed_because
    finally:
        shared.watch.discard(state)
        if plan is not None:
            plan.connections.pop(conn.connection_id, None)
        level = logging.DEBUG if reason in ("client closed", "connection lost") else logging.WARNING
        log_event(_log, "connection.close", level, conn=conn.connection_id, peer=conn.client_host, reason=reason)
        tap = broker.tap  # the transcript records why a connection ended
        if tap is not None:
            tap.closed(conn.connection_id, conn.client_host, reason)
        if broker.share is not None:  # its share sessions end; what they held is released
            broker.share.manager.connection_closed_soon(conn.connection_id)
        if broker.telemetry is not None:  # the client-metrics instance it made goes (KIP-714)
            broker.telemetry.connection_closed(conn.connection_id)


async def _serve(
    reader: FrameReader,
    outbox: Outbox,
    conn: Connection,
    broker: BrokerContext,
    memory: RequestMemory,
    state: ConnectionState,
) -> str:
    """Handle frames until the client closes or something closes the connection; the reason."""
    try:
        while True:
            frames = await reader.read()
            if frames is None:
                await outbox.drain()  # answers to everything the client sent before closing
                return "client closed"
            last = len(frames) - 1
            for i, payload in enumerate(frames):
                reserved = reader.take_reservation()
                if not reserved:
                    reserved = len(payload)
                    if not memory.try_reserve(reserved):
                        state.waiting_memory = True
                        try:
                            await memory.reserve(reserved)
                        finally:
                            state.waiting_memory = False
                state.busy = True
                try:
                    response = await dispatch(payload, conn, broker)
                finally:
                    state.busy = False
                    memory.release(reserved)
                if response is not None:
                    outbox.send(frame_response(*response), more_coming=i < last)
            state.last_active = trio.current_time()  # bytes came and answers left: not idle from now
            if not reader.yielded:
                await trio.lowlevel.checkpoint()  # a client that keeps its socket full must not starve others
    except FrameError as exc:
        await outbox.drain()  # the answers to the frames before the bad one
        return f"bad frame: {exc}"
    except CloseConnection as exc:
        if exc.final is not None:  # a failed authentication's answer (net/sasl_session.py)
            outbox.send(exc.final, more_coming=False)
        await outbox.drain()
        return str(exc)
    except ConnectionLost:
        return "connection lost"
    except Exception as exc:  # a handler bug must cost one connection, never the server
        _log.exception("handler failed on connection %s", conn.connection_id)
        return f"internal error: {exc!r}"


def _peer_host(stream: trio.SocketStream) -> str:
    try:
        peer = stream.socket.getpeername()
    except OSError:
        return "unknown"
    return str(peer[0]) if isinstance(peer, tuple) else "local"  # an AF_UNIX peer has no address
