"""The server: prepare the data dir, build the broker context, serve TCP until cancelled.

`serve(config)` is the whole life of a broker inside one trio task; `task_status.started` hands
back the running `Server` (with the real port when port 0 was asked), which is how the CLI, the
embedding API and the pytest plugin all start it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import trio

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import TopicRegistry
from coordinator.runtime.clock import SystemClock
from coordinator.config import Config
from coordinator.net.connection import serve_connection
from coordinator.net.request_context import BrokerContext
from coordinator.runtime.group_service import start_groups
from coordinator.observe.logs import get_logger, log_event
from coordinator.observe.tap import open_tap

_log = get_logger("server")


@dataclass(slots=True)
class Server:
    broker: BrokerContext
    cancel_scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    @property
    def host(self) -> str:
        return self.broker.advertised_host

    @property
    def port(self) -> int:
        return self.broker.advertised_port

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def create_topic(self, name: str, partitions: int):
        return self.broker.topics.ensure(name, partitions)

    def stop(self) -> None:
        self.cancel_scope.cancel()


async def serve(
    config: Config,
    create_topics: dict[str, int] | None = None,
    *,
    task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED,
) -> None:
    data_dir = config.data_path
    data_dir.mkdir(parents=True, exist_ok=True)
    topics = TopicRegistry(data_dir)
    topics.load()
    for name, partitions in (create_topics or {}).items():
        topics.ensure(name, partitions)

    listeners = await trio.open_tcp_listeners(config.port, host=config.host)
    port = listeners[0].socket.getsockname()[1]
    broker = BrokerContext(config=config, topics=topics, advertised_host=config.host, advertised_port=port)
    data = DataPath(config, topics, SystemClock())  # the data path: opens (recovers) every log
    data.open_all()
    broker.services["data"] = data
    server = Server(broker)
    limiter = trio.CapacityLimiter(config.max_connections)

    async def on_connection(stream: trio.SocketStream) -> None:
        if limiter.available_tokens == 0:
            await stream.aclose()  # over max.connections: refuse at once, as Kafka does
            return
        async with limiter:
            await serve_connection(stream, broker)

    tap = open_tap(config, config.host)  # transcript/metrics; before any task that should see it
    if tap is not None:
        broker.services["tap"] = tap
    try:
        with server.cancel_scope:
            async with trio.open_nursery() as nursery:
                broker.services["groups"] = await start_groups(nursery, config, topics)
                if tap is not None:
                    tap.attach(broker.services["groups"])
                await nursery.start(data.run)  # retention, flushers; closes every log when cancelled
                await nursery.start(trio.serve_listeners, on_connection, listeners)
                log_event(_log, "server.listening", host=config.host, port=port, data_dir=str(data_dir))
                task_status.started(server)
    finally:
        if tap is not None:
            tap.close()
    log_event(_log, "server.stopped", port=port)
