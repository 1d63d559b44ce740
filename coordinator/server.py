"""The composition root: every part of the cluster built by its constructor, in one place.

`serve(config)` is the whole life of a cluster of `cluster.brokers` brokers inside one trio task:
prepare the data dir, build the topic registry, the data path, the __consumer_offsets writer and
runtime, the cluster (brokers, leaders, epochs), the __transaction_state runtime (txn/wiring.py:
its markers go to the data path and to the group runtime, and with cluster.processes to the
partitions other processes lead over the broker link, cluster/peer_link.py), the
__share_group_state runtime and its in-process persister (not in cluster.processes mode, which
serves no share groups) and the controller, one `BrokerContext` and one listener per broker
(ports P..P+N-1, or a free port each for 0), and serve TCP until cancelled.
`task_status.started` hands back the running `Server` (running_server.py) once every broker
listens, which is how the CLI, the embedding API and the pytest plugin all start it. Nothing is
wired after construction.
"""

from __future__ import annotations

import socket
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coordinator.admin.broker_configs import BrokerSettings
from coordinator.admin.client_metrics_configs import ClientMetricsConfigs
from coordinator.admin.config_file import DynamicConfigFile
from coordinator.admin.configs import ConfigService
from coordinator.broker.data_path import DataPath
from coordinator.broker.producer_expiry import ProducerExpiry
from coordinator.broker.producer_ids import ProducerIdManager
from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.cluster.cluster_sync import ClusterSync
from coordinator.cluster.controller import Controller
from coordinator.cluster.elections import LeaderMoves, Relocatable
from coordinator.cluster.features import served_versions
from coordinator.cluster.shared_cluster import SharedClusterState
from coordinator.cluster.shared_file import follow_every
from coordinator.cluster.shared_topics import SharedTopicRegistry, TopicSync, shared_registry
from coordinator.config import Config
from coordinator.control.versions import VersionLimits
from coordinator.datadir import data_dir_lock, prepare_data_dir
from coordinator.groups.dynamic_config import GroupConfigManager
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID, group_runtime
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.record_json import transcript_fields
from coordinator.groups.service import GroupService
from coordinator.handlers.request_context import BrokerContext
from coordinator.net.listener import BrokerListener
from coordinator.net.request_memory import RequestMemory
from coordinator.observe.logs import get_logger, log_event
from coordinator.observe.tap import open_tap
from coordinator.running_server import Server
from coordinator.runtime.clock import ManualClock, TrioClock
from coordinator.security.setup import Security, open_security
from coordinator.share.persister import SharePersister
from coordinator.share.service import ShareService
from coordinator.share.settings import ShareSettings
from coordinator.share.state.lifecycle import SHARE_STATE_TOPIC_ID, share_state_runtime
from coordinator.share.state.placement import SHARE_STATE_TOPIC
from coordinator.share.state.service import ShareStateService
from coordinator.share.wiring import share_services
from coordinator.telemetry.wiring import telemetry_parts
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from coordinator.txn.wiring import txn_parts
from protocol.api import SUPPORTED_VERSIONS
from storage.cleaner import CleanerConfig
from storage.log_manager import LogManager, LogManagerConfig

if TYPE_CHECKING:
    from coordinator.cluster.peer_link import PeerLink
    from coordinator.net.early_responder import EarlyResponder
    from coordinator.processes import PeerSockets

_log = get_logger("server")


def cluster_nodes(config: Config, ports: list[int] | None = None, security: Security | None = None) -> list[BrokerNode]:
    """node.id .. node.id + N - 1 on ports P .. P + N - 1 (each port 0: a free one), or on the
    given ports (a restart of an embedded cluster keeps the ports it was first given); each
    further listener of `security` on its own port + i."""
    n, port = config.cluster_brokers, config.port
    if ports is None:
        ports = [port + i if port else 0 for i in range(n)]
    nodes = [BrokerNode(config.node_id + i, config.host, ports[i]) for i in range(n)]
    plans = security.plans if security is not None else []
    for plan in plans[1:]:  # the first listener is host:port (which the advertised host set)
        for i, node in enumerate(nodes):
            node.endpoints[plan.name] = (plan.advertised_host or plan.bind_host, plan.port_for(i))
    return nodes


async def serve(
    config: Config,
    create_topics: dict[str, int] | None = None,
    *,
    ports: list[int] | None = None,
    bound: list[list[socket.socket]] | None = None,
    only_broker: int | None = None,
    share_persister: SharePersister | None = None,
    prepared: bool = False,
    early: EarlyResponder | None = None,
    peers: PeerSockets | None = None,
    task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`share_persister`: a share coordinator to use instead of the in-process one over
    __share_group_state (tests bring an in-memory one).
    `bound`: listening sockets per broker, already bound (the CLI binds before it imports the
    server, so the ports accept connections at once); their ports are the brokers' ports.
    `only_broker` (cluster.processes, coordinator/processes.py): this process serves broker
    `only_broker` of the cluster alone, with `ports` naming every broker's port and `bound`
    holding its own sockets only; it opens only the logs it leads (leaders move through the data
    dir: cluster/shared_cluster.py; only broker 0's process serves the control plane). The
    parent process holds the data dir's lock and prepared the dir for all of them. `prepared`:
    so did the caller (`kgc serve` claims the dir before it binds: coordinator/preflight.py).
    `early`: what answered ApiVersions on `bound` meanwhile (the listeners take its connections).
    `peers`: with `only_broker`, this process's ends of the broker link (processes.py)."""
    if bound is not None and only_broker is None:
        ports = [group[0].getsockname()[1] for group in bound]
    if only_broker is not None or prepared:
        await _serve_locked(
            config, create_topics, ports, task_status, bound, only_broker, share_persister, True, early, peers
        )
        return
    with data_dir_lock(config.data_dir):  # one server per data dir (Kafka's .lock)
        await _serve_locked(
            config, create_topics, ports, task_status, bound, share_persister=share_persister, early=early
        )


async def _serve_locked(
    config: Config,
    create_topics: dict[str, int] | None,
    ports: list[int] | None,
    task_status: trio.TaskStatus[Server],
    bound: list[list[socket.socket]] | None = None,
    only_broker: int | None = None,
    share_persister: SharePersister | None = None,
    prepared: bool = False,
    early: EarlyResponder | None = None,
    peer_sockets: PeerSockets | None = None,
) -> None:
    if prepared:
        data_dir = Path(config.data_dir)
    else:
        data_dir = prepare_data_dir(config, create_topics)  # refuses a dir kgc must not use (datadir.py)
    clock = TrioClock()
    # clock.mode=manual: every coordinator timer, and the logs' time (retention, segment.ms, the
    # cleaner's delete horizons, producer-id expiry), move only when the control plane says so.
    timer_clock = ManualClock() if config.clock_mode == "manual" else clock
    security = open_security(config, data_dir, clock.time_ms)  # listeners, credentials, ACLs
    config_file = DynamicConfigFile(data_dir, shared=config.cluster_processes)  # AlterConfigs' broker and group configs
    stored = config_file.load()
    broker_settings = BrokerSettings(config, stored.broker, config_file.save_broker)  # applied before any read
    group_configs = GroupConfigManager(config, stored.groups, config_file.save_groups)
    nodes = cluster_nodes(config, ports, security)
    topics = TopicRegistry(data_dir) if only_broker is None else shared_registry(data_dir, nodes, only_broker)
    topics.load()
    for name, partitions in (create_topics or {}).items():
        topics.ensure(name, partitions, min(config.default_replication_factor, len(nodes)))
    tap = open_tap(config, transcript_fields)  # transcript/metrics; before any task that should see it
    logs = LogManager(
        data_dir,
        timer_clock,
        LogManagerConfig(  # every log of the data dir, internal or not
            retention_check_interval_ms=config.log_retention_check_interval_ms,
            cleaner_backoff_ms=config.log_cleaner_backoff_ms,
            cleaner=CleanerConfig(dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size),
        ),
    )
    cluster = Cluster(nodes, topics, auto_leader_rebalance=config.auto_leader_rebalance_enable)  # leaders: lazily
    me = None if only_broker is None else nodes[only_broker].node_id
    shared = None  # cluster.processes: the brokers' states and leaders every process follows
    if only_broker is not None and isinstance(topics, SharedTopicRegistry):
        shared = SharedClusterState(data_dir, cluster, only_broker)
        shared.catch_up()  # the others' decisions so far (none, unless this process started late)
        topics.leads = shared.holds_dir  # a deleted topic's dirs: removed by whoever led them
    owns = None if shared is None else shared.owns  # only the logs it leads, once no other holds them
    producer_ids = None if me is None else ProducerIdManager(data_dir, owner=only_broker)
    data = DataPath(config, topics, timer_clock, logs, owns=owns, producer_ids=producer_ids)
    data.open_all()  # recovers every user-topic log (that this process leads)
    producer_expiry = ProducerExpiry(  # producer.id.expiration.ms, on the timer clock
        data, timer_clock, config.producer_id_expiration_ms, config.producer_id_expiration_check_interval_ms
    )
    share_settings = ShareSettings.from_config(config)  # one mutable object: the control plane may change it
    runtime = group_runtime(
        config, timer_clock, logs, observer=tap, topics=topics, share=share_settings, group_configs=group_configs
    )  # __consumer_offsets
    if tap is not None and isinstance(timer_clock, ManualClock):  # the transcript says what a group waits for
        from coordinator.control.waits import waits_of

        tap.waits = waits_of(runtime, timer_clock)
        timer_clock.before_move.append(tap.flush_waits)
    topics.register_internal(
        Topic(
            OFFSETS_TOPIC,
            runtime.num_partitions,
            OFFSETS_TOPIC_ID,
            internal=True,
            replication_factor=min(config.offsets_topic_replication_factor, len(nodes)),
        )
    )
    link: PeerLink | None = None  # cluster.processes: the other broker processes (processes.py socketpairs)
    answering: list[tuple[int, trio.SocketStream]] = []
    if me is not None and peer_sockets is not None:  # (imported only here: one process has no link)
        from coordinator.cluster.peer_link import PeerLink, peer_clients

        clients, answering = peer_clients(peer_sockets, [n.node_id for n in nodes], me)
        link = PeerLink(cluster, topics, me, clients)
    txn, txn_services = txn_parts(config, timer_clock, logs, data, runtime, cluster, topics, nodes, link)
    share_runtime, share_state = None, None
    if me is None:  # cluster.processes serves no share groups: no __share_group_state there
        share_runtime = share_state_runtime(config, timer_clock, logs, topics)  # loaded in run()
        topics.register_internal(
            Topic(
                SHARE_STATE_TOPIC,
                share_runtime.num_partitions,
                SHARE_STATE_TOPIC_ID,
                internal=True,
                replication_factor=min(config.get("share.coordinator.state.topic.replication.factor"), len(nodes)),
            )
        )
        share_state = ShareStateService(share_runtime)  # one for the cluster: it follows the leaders
    if share_persister is None:  # a test may bring its own share coordinator
        share_persister = share_state
    if me is not None:  # another process leads (and alone reads and writes) the other partitions
        for topic, internal in ((OFFSETS_TOPIC, runtime), (TRANSACTION_STATE_TOPIC, txn)):
            for partition in range(internal.num_partitions):
                if cluster.leader(topic, partition) != me:
                    internal.relocate(partition, led=False)

    def high_watermark(topic: str, index: int) -> int | None:
        part = data.partition(topic, index)
        return None if part is None else part.high_watermark

    services = {
        node.node_id: GroupService(runtime, cluster, node.node_id, share_persister, high_watermark) for node in nodes
    }
    shares: dict[int, ShareService] = {}
    if share_settings.enabled and me is None and share_persister is not None:
        node_ids = [node.node_id for node in nodes]
        shares = share_services(
            node_ids, topics, cluster, data, share_persister, share_settings, group_configs, timer_clock
        )
    versions = VersionLimits(served_versions(SUPPORTED_VERSIONS, bool(shares)))
    limiter = trio.CapacityLimiter(config.max_connections)  # max.connections, changed live by AlterConfigs
    telemetry = telemetry_parts(  # KIP-714 client metrics, on the timers' clock (manual mode too)
        config, timer_clock, [n.node_id for n in nodes], stored.client_metrics, config_file.save_client_metrics
    )
    configs = ConfigService(
        broker_settings,
        group_configs,
        data,
        limiter,
        shared=config_file if config.cluster_processes else None,
        client_metrics=ClientMetricsConfigs(telemetry.subscriptions),
    )
    coordinators: dict[str, Relocatable] = {OFFSETS_TOPIC: runtime, TRANSACTION_STATE_TOPIC: txn}
    if share_runtime is not None:
        coordinators[SHARE_STATE_TOPIC] = share_runtime
    moves = LeaderMoves(cluster, coordinators, observer=tap)
    parts = None
    control_on = config.control_enable or config.control_port >= 0
    if control_on and (only_broker or 0) == 0:  # the control plane: imported only when on (broker 0's process)
        from coordinator.control.wiring import control_parts

        parts = control_parts(config, clock, services, topics, tap)
    brokers = [
        BrokerContext(
            config=config,
            topics=topics,
            data=data,
            cluster=cluster,
            groups=services[node.node_id],
            tap=tap,
            node=node,
            versions=versions,
            control=parts.hook if parts and me is None else None,  # faults/request log: one process only
            txn=txn_services[node.node_id],
            group_configs=group_configs,
            share=shares.get(node.node_id),
            configs=configs,
            elections=moves,
            authorizer=security.authorizer,
            credentials=security.credentials,
            share_state=share_state,
            telemetry=telemetry.managers[node.node_id],
        )
        for node in nodes
    ]
    memory = RequestMemory(config.queued_max_request_bytes)  # one bound across every connection
    if me is None:
        listeners = {
            b.node_id: BrokerListener(
                b, config.host, limiter, memory, bound[i] if bound else None, security.plans, early
            )
            for i, b in enumerate(brokers)
        }
    else:  # the other brokers are other processes: their nodes answer Metadata, nothing listens here
        listeners = {
            me: BrokerListener(
                brokers[only_broker or 0], config.host, limiter, memory, bound[0] if bound else None, security.plans
            )
        }
    sync = None
    if shared is not None and me is not None:  # the shared cluster state, followed by this process
        sync = ClusterSync(shared, moves, data, logs, topics, listener=listeners[me])
        cluster.follow = sync.catch_up
        moves.publish = sync.change  # ElectLeaders' moves reach every process too
    controller = Controller(moves, dict(listeners), shared=sync)
    control = None
    if parts is not None:
        from coordinator.control.plane import ServerControl

        control = ServerControl(
            cluster=cluster,
            controller=controller,
            topics=topics,
            services=services,
            group_runtime=runtime,
            runtimes=[r for r in (runtime, txn, share_runtime) if r is not None],
            rules=parts.rules,
            log=parts.log,
            transitions=parts.transitions,
            limits=versions,
            clock=timer_clock,
            timer_sources=[producer_expiry, *(share.manager for share in shares.values())],
            share_settings=share_settings,
            shares=shares,
            security=security,
            telemetry=telemetry,
            configs=configs,
        )
    metrics_server = None
    if tap is not None and tap.metrics is not None:
        from coordinator.observe.metrics import MetricsServer  # prometheus_client only when asked for

        metrics_server = MetricsServer(tap.metrics, runtime, config.host, config.metrics_port)
    server = Server(
        brokers,
        cluster,
        controller,
        runtime,
        control,
        metrics_server.port if metrics_server else None,
        txn_runtime=txn,
        request_memory=memory,
        group_configs=group_configs,
        share_settings=share_settings,
        shares=shares,
        security=security,
        share_state_runtime=share_runtime,
        share_state=share_state,
        telemetry=telemetry,
    )
    try:
        with server.cancel_scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(logs.run)  # checkpoints, flushers, cleaner, retention; closes every log
                await nursery.start(runtime.run)  # loads __consumer_offsets; closes it when cancelled
                await nursery.start(txn.run)  # loads __transaction_state; resends undecided markers
                if share_runtime is not None:
                    await nursery.start(share_runtime.run)  # loads __share_group_state
                await nursery.start(data.run)  # retention, flushers; closes every log when cancelled
                if isinstance(topics, SharedTopicRegistry):  # the other processes' topic changes
                    await nursery.start(TopicSync(topics, data).run)
                if sync is not None:  # ... and their broker and leader changes
                    await nursery.start(sync.run)
                if config.cluster_processes:  # ... and their ACL, credential and config changes
                    await nursery.start(follow_every, [security.follow, configs.follow])
                await nursery.start(producer_expiry.run)  # idle producers forgotten on the clock
                for share in shares.values():
                    await nursery.start(share.manager.run)  # acquisition locks expire on the clock
                if link is not None:  # the other processes' requests; the answers to ours
                    from coordinator.cluster.peer_link import serve_peers

                    await nursery.start(serve_peers, brokers[only_broker or 0], link.peers, answering, memory)
                for listener in listeners.values():
                    await nursery.start(listener.run)
                if control is not None and config.control_port >= 0:
                    from coordinator.control.http_api import serve_control  # the HTTP stack only when asked for

                    http = await nursery.start(
                        partial(
                            serve_control,
                            control,
                            config.control_host,
                            config.control_port,
                            config.control_token or None,
                            cluster_only=me is not None,  # cluster.processes: what every process follows
                        )
                    )
                    server.control_url = http.url
                log_event(_log, "server.listening", bootstrap=server.bootstrap, data_dir=str(data_dir))
                task_status.started(server)
    finally:
        if metrics_server is not None:
            metrics_server.close()
        if tap is not None:
            tap.close()
    log_event(_log, "server.stopped", bootstrap=server.bootstrap)
