"""The composition root: every part of a broker built by its constructor, in one place.

`serve(config)` is the whole life of a broker inside one trio task: prepare the data dir, build
the topic registry, the data path, the __consumer_offsets writer and runtime, the group service
and the observer (transcript/metrics), hand them to the connections through one typed
`BrokerContext`, and serve TCP until cancelled. `task_status.started` hands back the running
`Server` (with the real port when port 0 was asked), which is how the CLI, the embedding API and
the pytest plugin all start it. Nothing is wired after construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import trio

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.config import Config
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID, group_runtime
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.record_json import transcript_fields
from coordinator.groups.service import GroupService
from coordinator.groups.shard import GroupShard
from coordinator.handlers.request_context import BrokerContext
from coordinator.net.connection import serve_connection
from coordinator.observe.logs import get_logger, log_event
from coordinator.observe.tap import open_tap
from coordinator.runtime.clock import TrioClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime

_log = get_logger("server")


@dataclass(slots=True)
class Server:
    broker: BrokerContext
    runtime: CoordinatorRuntime[GroupShard]
    metrics_port: int | None = None
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

    def create_topic(self, name: str, partitions: int) -> Topic:
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
    clock = TrioClock()
    topics = TopicRegistry(data_dir)
    topics.load()
    for name, partitions in (create_topics or {}).items():
        topics.ensure(name, partitions)
    tap = open_tap(config, transcript_fields)  # transcript/metrics; before any task that should see it
    data = DataPath(config, topics, clock)
    data.open_all()  # recovers every user-topic log
    runtime = group_runtime(config, clock, observer=tap, topics=topics)  # __consumer_offsets, loaded in run()
    topics.register_internal(Topic(OFFSETS_TOPIC, runtime.num_partitions, OFFSETS_TOPIC_ID, internal=True))
    listeners = await trio.open_tcp_listeners(config.port, host=config.host)
    port = listeners[0].socket.getsockname()[1]
    broker = BrokerContext(config=config, topics=topics, data=data, groups=GroupService(runtime), tap=tap,
                           advertised_host=config.host, advertised_port=port)
    metrics_server = None
    if tap is not None and tap.metrics is not None:
        from coordinator.observe.metrics import MetricsServer  # prometheus_client only when asked for
        metrics_server = MetricsServer(tap.metrics, runtime, config.host, config.metrics_port)
    server = Server(broker, runtime, metrics_server.port if metrics_server else None)
    limiter = trio.CapacityLimiter(config.max_connections)

    async def on_connection(stream: trio.SocketStream) -> None:
        if limiter.available_tokens == 0:
            await stream.aclose()  # over max.connections: refuse at once, as Kafka does
            return
        async with limiter:
            await serve_connection(stream, broker)

    try:
        with server.cancel_scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(runtime.run)  # loads __consumer_offsets; closes it when cancelled
                await nursery.start(data.run)  # retention, flushers; closes every log when cancelled
                await nursery.start(trio.serve_listeners, on_connection, listeners)
                log_event(_log, "server.listening", host=config.host, port=port, data_dir=str(data_dir))
                task_status.started(server)
    finally:
        if metrics_server is not None:
            metrics_server.close()
        if tap is not None:
            tap.close()
    log_event(_log, "server.stopped", port=port)
