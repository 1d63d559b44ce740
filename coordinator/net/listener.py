"""One broker's listener: its port, its connections, and going down and coming back up.

A broker that goes down closes its listening socket and every connection it holds (clients see
the connection drop, then connection refused); one that comes back listens again on the same
port. The first bind reports the real port (port 0 picks a free one) through `task_status`.
Connections over `max.connections` (counted across the whole process) are refused at once, as
Kafka refuses them. The connections of all listeners share one `RequestMemory`
(queued.max.request.bytes); each listener watches its own connections for idleness (idle.py).
"""

from __future__ import annotations

import socket
from typing import Any

import trio

from coordinator.cluster.cluster import BrokerNode
from coordinator.handlers.request_context import BrokerContext
from coordinator.net.connection import ListenerShared, serve_connection
from coordinator.net.idle import ConnectionWatch
from coordinator.net.request_memory import RequestMemory
from coordinator.observe.logs import get_logger, log_event

_log = get_logger("listener")


class BrokerListener:
    def __init__(
        self,
        broker: BrokerContext,
        bind_host: str,
        limiter: trio.CapacityLimiter,
        memory: RequestMemory,
        bound: list[socket.socket] | None = None,
    ) -> None:
        self.broker = broker
        self._bound = bound  # sockets the CLI bound before the server was built: the first listen adopts them
        self.shared = ListenerShared(memory, ConnectionWatch(broker.config.connections_max_idle_ms))
        self.node: BrokerNode = broker.node
        self._bind_host = bind_host
        self._limiter = limiter
        self._up = trio.Event()
        self._listening = trio.Event()  # set while the port is bound
        self._stopped = trio.Event()  # set once a down() finished closing everything
        self._scope: trio.CancelScope | None = None
        if self.node.up:
            self._up.set()

    async def down(self) -> None:
        """Stop listening and drop every connection (the cluster already marked the node down);
        returns once the port is closed."""
        self._up = trio.Event()
        self._stopped = trio.Event()
        if self._scope is not None:
            self._scope.cancel()
            await self._stopped.wait()

    async def up(self) -> None:
        """Listen again on the same port; returns once it listens."""
        self._up.set()
        await self._listening.wait()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        started = False
        while True:
            await self._up.wait()
            if self._bound:
                listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(s)) for s in self._bound]
                self._bound = None
            else:
                listeners = await trio.open_tcp_listeners(self.node.port, host=self._bind_host)
            self.node.port = listeners[0].socket.getsockname()[1]  # port 0: keep what was picked
            with trio.CancelScope() as scope:
                self._scope = scope
                self._listening.set()
                log_event(_log, "broker.listening", node=self.node.node_id, port=self.node.port)
                if not started:
                    started = True
                    task_status.started()
                async with trio.open_nursery() as connections:
                    connections.start_soon(self.shared.watch.run)
                    await trio.serve_listeners(self._on_connection, listeners, handler_nursery=connections)
            self._scope = None
            self._listening = trio.Event()
            self._stopped.set()
            log_event(_log, "broker.down", node=self.node.node_id, port=self.node.port)

    async def _on_connection(self, stream: trio.SocketStream) -> None:
        if self._limiter.available_tokens == 0:
            await stream.aclose()  # over max.connections: refuse at once, as Kafka does
            return
        async with self._limiter:
            await serve_connection(stream, self.broker, self.shared)
