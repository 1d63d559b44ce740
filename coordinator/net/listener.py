"""One broker's listener: its port, its connections, and going down and coming back up.

A broker that goes down closes its listening socket and every connection it holds (clients see
the connection drop, then connection refused); one that comes back listens again on the same
port. The first bind reports the real port (port 0 picks a free one) through `task_status`.
Connections over `max.connections` (counted across the whole process) are refused at once, as
Kafka refuses them. The connections of all listeners share one `RequestMemory`
(queued.max.request.bytes); each listener watches its own connections for idleness (idle.py).
A broker serves each of its listeners (`listeners`: coordinator/security/listeners.py) on its own
port: the first on the node's port, the others on the ports in `node.endpoints`, all going down
and up together. A PLAINTEXT listener's connections take the plain path; the others first do what
the listener asks (TLS, SASL: net/secure.py). The first listen on sockets the CLI bound also takes
the connections `kgc serve` accepted before the server was up (net/early_responder.py).
"""

from __future__ import annotations

import socket
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from coordinator.cluster.cluster import BrokerNode
from coordinator.handlers.request_context import BrokerContext
from coordinator.net.connection import ListenerShared, serve_connection
from coordinator.net.idle import ConnectionWatch
from coordinator.net.request_memory import RequestMemory
from coordinator.observe.logs import get_logger, log_event

if TYPE_CHECKING:
    from coordinator.net.early_responder import EarlyResponder
    from coordinator.security.listeners import ListenerPlan

_log = get_logger("listener")


class BrokerListener:
    def __init__(
        self,
        broker: BrokerContext,
        bind_host: str,
        limiter: trio.CapacityLimiter,
        memory: RequestMemory,
        bound: list[socket.socket] | None = None,
        plans: list[ListenerPlan] | None = None,
        early: EarlyResponder | None = None,
    ) -> None:
        """`plans`: the broker's listeners, the first one on the node's port (None: one PLAINTEXT);
        `early`: what answered on `bound` until now (the first listen takes its connections)."""
        self.broker = broker
        self._plans = plans or []
        self._bound = bound  # sockets the CLI bound before the server was built: the first listen adopts them
        self._early = early
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
            handed: list[tuple[socket.socket, tuple[str, str] | None]] = []
            if self._bound:
                if self._early is not None:  # stops it answering; its connections go on here
                    handed = self._early.take(self._bound)
                listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(s)) for s in self._bound]
                self._bound = None
            else:
                listeners = await trio.open_tcp_listeners(self.node.port, host=self._bind_host)
            self.node.port = listeners[0].socket.getsockname()[1]  # port 0: keep what was picked
            others = []
            for plan in self._plans[1:]:
                host, port = self.node.endpoints[plan.name]
                opened = await trio.open_tcp_listeners(port, host=plan.bind_host)
                self.node.endpoints[plan.name] = (host, opened[0].socket.getsockname()[1])
                others.append((plan, opened))
            first = self._plans[0] if self._plans and _secured(self._plans[0]) else None
            with trio.CancelScope() as scope:
                self._scope = scope
                self._listening.set()
                log_event(_log, "broker.listening", node=self.node.node_id, port=self.node.port)
                if not started:
                    started = True
                    task_status.started()
                async with trio.open_nursery() as connections:
                    connections.start_soon(self.shared.watch.run)
                    for plan, opened in others:
                        on_connection = partial(self._on_connection, plan=plan)  # its listener name, at least
                        connections.start_soon(
                            partial(trio.serve_listeners, handler_nursery=connections), on_connection, opened
                        )
                    on_first = partial(self._on_connection, plan=first)
                    for sock, software in handed:  # PLAINTEXT only (early_plan): no plan to pass
                        stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
                        connections.start_soon(partial(self._on_connection, stream, software=software))
                    await trio.serve_listeners(on_first, listeners, handler_nursery=connections)
            self._scope = None
            self._listening = trio.Event()
            self._stopped.set()
            log_event(_log, "broker.down", node=self.node.node_id, port=self.node.port)

    async def _on_connection(
        self, stream: trio.SocketStream, plan: ListenerPlan | None = None, software: tuple[str, str] | None = None
    ) -> None:
        """`software`: what the connection's ApiVersions named, answered before the server was up."""
        if self._limiter.available_tokens == 0:
            await stream.aclose()  # over max.connections: refuse at once, as Kafka does
            return
        async with self._limiter:
            await serve_connection(stream, self.broker, self.shared, plan, software=software)


def _secured(plan: ListenerPlan) -> bool:
    return plan.ssl_context is not None or plan.sasl is not None
