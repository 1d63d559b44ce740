"""The composition root: every part of the cluster built by its constructor, in one place.

`serve(config)` is the whole life of a cluster of `cluster.brokers` brokers inside one trio task:
prepare the data dir, build the topic registry, the data path, the __consumer_offsets writer and
runtime, the cluster (brokers, leaders, epochs) and its controller, one `BrokerContext` and one
listener per broker (ports P..P+N-1, or a free port each for 0), and serve TCP until cancelled.
`task_status.started` hands back the running `Server` once every broker listens, which is how
the CLI, the embedding API and the pytest plugin all start it. Nothing is wired after
construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import trio

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.cluster.controller import Controller
from coordinator.config import Config
from coordinator.datadir import prepare_data_dir
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID, group_runtime
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.record_json import transcript_fields
from coordinator.groups.service import GroupService
from coordinator.groups.shard import GroupShard
from coordinator.handlers.request_context import BrokerContext
from coordinator.net.listener import BrokerListener
from coordinator.observe.logs import get_logger, log_event
from coordinator.observe.tap import open_tap
from coordinator.runtime.clock import TrioClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime

_log = get_logger("server")


@dataclass(slots=True)
class Server:
    brokers: list[BrokerContext]
    cluster: Cluster
    controller: Controller
    runtime: CoordinatorRuntime[GroupShard]
    metrics_port: int | None = None
    cancel_scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    @property
    def broker(self) -> BrokerContext:
        """The first broker (the only one in a one-broker cluster)."""
        return self.brokers[0]

    @property
    def host(self) -> str:
        return self.broker.advertised_host

    @property
    def port(self) -> int:
        return self.broker.advertised_port

    @property
    def bootstrap(self) -> str:
        """Every broker, as a client's bootstrap.servers list."""
        return ",".join(f"{b.advertised_host}:{b.advertised_port}" for b in self.brokers)

    def create_topic(self, name: str, partitions: int, replication_factor: int | None = None) -> Topic:
        factor = self.broker.config.default_replication_factor if replication_factor is None else replication_factor
        return self.broker.topics.ensure(name, partitions, factor)

    def stop(self) -> None:
        self.cancel_scope.cancel()


def cluster_nodes(config: Config, ports: list[int] | None = None) -> list[BrokerNode]:
    """node.id .. node.id + N - 1 on ports P .. P + N - 1 (each port 0: a free one), or on the
    given ports (a restart of an embedded cluster keeps the ports it was first given)."""
    n, port = config.cluster_brokers, config.port
    if ports is None:
        ports = [port + i if port else 0 for i in range(n)]
    return [BrokerNode(config.node_id + i, config.host, ports[i]) for i in range(n)]


async def serve(
    config: Config,
    create_topics: dict[str, int] | None = None,
    *,
    ports: list[int] | None = None,
    task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED,
) -> None:
    data_dir = prepare_data_dir(config, create_topics)  # refuses a dir kgc must not use (datadir.py)
    clock = TrioClock()
    topics = TopicRegistry(data_dir)
    topics.load()
    nodes = cluster_nodes(config, ports)
    for name, partitions in (create_topics or {}).items():
        topics.ensure(name, partitions, min(config.default_replication_factor, len(nodes)))
    tap = open_tap(config, transcript_fields)  # transcript/metrics; before any task that should see it
    data = DataPath(config, topics, clock)
    data.open_all()  # recovers every user-topic log
    runtime = group_runtime(config, clock, observer=tap)  # __consumer_offsets, loaded in run()
    topics.register_internal(Topic(OFFSETS_TOPIC, runtime.num_partitions, OFFSETS_TOPIC_ID, internal=True,
                                   replication_factor=min(config.offsets_topic_replication_factor, len(nodes))))
    cluster = Cluster(nodes, topics, auto_leader_rebalance=config.auto_leader_rebalance_enable)
    brokers = [BrokerContext(config=config, topics=topics, data=data, cluster=cluster,
                             groups=GroupService(runtime, cluster, node.node_id), tap=tap, node=node)
               for node in nodes]
    limiter = trio.CapacityLimiter(config.max_connections)
    listeners = {b.node_id: BrokerListener(b, config.host, limiter) for b in brokers}
    controller = Controller(cluster, {OFFSETS_TOPIC: runtime}, dict(listeners), observer=tap)
    metrics_server = None
    if tap is not None and tap.metrics is not None:
        from coordinator.observe.metrics import MetricsServer  # prometheus_client only when asked for
        metrics_server = MetricsServer(tap.metrics, runtime, config.host, config.metrics_port)
    server = Server(brokers, cluster, controller, runtime, metrics_server.port if metrics_server else None)
    try:
        with server.cancel_scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(runtime.run)  # loads __consumer_offsets; closes it when cancelled
                await nursery.start(data.run)  # retention, flushers; closes every log when cancelled
                for listener in listeners.values():
                    await nursery.start(listener.run)
                log_event(_log, "server.listening", bootstrap=server.bootstrap, data_dir=str(data_dir))
                task_status.started(server)
    finally:
        if metrics_server is not None:
            metrics_server.close()
        if tap is not None:
            tap.close()
    log_event(_log, "server.stopped", bootstrap=server.bootstrap)
