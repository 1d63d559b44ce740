"""The table of server settings (`SETTINGS`): each one's Kafka property name, parser, default and
one line of help, in one place: config.py parses and resolves values against it and `kgc settings`
lists it. Defaults follow Kafka's broker defaults except where a help line says
otherwise (this server is a test tool: short initial rebalance delay, data under the cwd).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Setting", "SETTINGS"]


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    secret: bool = False  # a password or key: never printed, logged or answered (shown as [hidden])


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


SETTINGS: tuple[Setting, ...] = (
    # Listener and connections.
    Setting("host", str, "127.0.0.1", "address to listen on and to advertise"),
    Setting("port", int, 9092, "port to listen on and to advertise (0 picks a free one)"),
    Setting("data.dir", str, "data", "directory holding every log (Kafka: log.dirs)"),
    Setting(
        "data.dir.adopt",
        _bool,
        False,
        "use a non-empty data dir that kgc did not create (no "
        "kgc.meta.properties): kgc may rewrite or truncate what it finds there (--adopt-data-dir)",
    ),
    Setting("node.id", int, 0, "the first broker's id (brokers are node.id .. node.id + cluster.brokers - 1)"),
    Setting(
        "cluster.brokers",
        int,
        1,
        "brokers in this process, each on its own port (1-64; not a Kafka "
        "setting: replicas are logical, one copy of each log serves them all)",
    ),
    Setting(
        "cluster.processes",
        _bool,
        False,
        "run each broker in a process of its own (kgc serve --processes): "
        "one trio loop per broker, sharing the data dir (topic changes reach every broker through it); "
        "leaders are static, so broker down/up, leader moves and the control plane are refused",
    ),
    Setting("default.replication.factor", int, 1, "replicas of a topic created without a factor"),
    Setting("offsets.topic.replication.factor", int, 3, "replicas of __consumer_offsets (capped at the brokers)"),
    Setting(
        "auto.leader.rebalance.enable", _bool, True, "a broker that comes back leads its preferred partitions again"
    ),
    Setting(
        "coordinator.load.delay.ms",
        int,
        0,
        "stretch every coordinator load (a moved coordinator answers "
        "COORDINATOR_LOAD_IN_PROGRESS meanwhile; not a Kafka setting: for tests)",
    ),
    Setting("cluster.id", str, "kgc-local-cluster", "cluster id reported in Metadata"),
    Setting("socket.request.max.bytes", int, 104857600, "largest request frame accepted"),
    Setting(
        "connections.max.idle.ms",
        int,
        600000,
        "close connections idle this long, and those whose request frame is still arriving this long after it started",
    ),
    Setting(
        "queued.max.request.bytes",
        int,
        104857600,
        "request bytes all connections together may hold "
        "while receiving and handling them; past it, connections wait (backpressure). Kafka's default "
        "is -1 (no bound); <= 0 here too",
    ),
    Setting("max.connections", int, 10000, "refuse connections beyond this many"),
    # Listeners and security (docs/security.md). Per listener: listener.name.<listener>.<name>, and
    # for the SASL settings per mechanism too: listener.name.<listener>.<mechanism>.<name>.
    Setting("listeners", str, "", "NAME://host:port,... (empty: one PLAINTEXT listener on host:port)"),
    Setting("advertised.listeners", str, "", "NAME://host:port,... the hosts clients are told (ports: as bound)"),
    Setting(
        "listener.security.protocol.map",
        str,
        "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "listener name -> security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)",
    ),
    Setting("inter.broker.listener.name", str, "", "the listener served first (host and port name it)"),
    Setting("controller.listener.names", str, "", "listeners kgc does not serve (it has no KRaft controller)"),
    Setting("sasl.enabled.mechanisms", str, "GSSAPI", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"),
    Setting("sasl.jaas.config", str, "", 'login modules (PLAIN users: user_NAME="PASSWORD")', secret=True),
    Setting("connections.max.reauth.ms", int, 0, "SASL session lifetime sent to clients (KIP-368; 0: none)"),
    Setting("connection.failed.authentication.delay.ms", int, 100, "wait before answering a failed authentication"),
    Setting("sasl.server.max.receive.size", int, 524288, "largest frame accepted before authentication"),
    Setting("ssl.keystore.type", str, "JKS", "PEM or PKCS12 (a JKS file is read as PKCS12)"),
    Setting("ssl.keystore.location", str, "", "the server's certificate and key"),
    Setting("ssl.keystore.password", str, "", "password of the keystore", secret=True),
    Setting("ssl.key.password", str, "", "password of the private key", secret=True),
    Setting("ssl.keystore.certificate.chain", str, "", "PEM certificate chain (ssl.keystore.type=PEM)"),
    Setting("ssl.keystore.key", str, "", "PEM private key (ssl.keystore.type=PEM)", secret=True),
    Setting("ssl.truststore.type", str, "JKS", "PEM or PKCS12: CAs that sign client certificates"),
    Setting("ssl.truststore.location", str, "", "the trusted CA certificates"),
    Setting("ssl.truststore.password", str, "", "password of the truststore", secret=True),
    Setting("ssl.truststore.certificates", str, "", "PEM CA certificates (ssl.truststore.type=PEM)"),
    Setting("ssl.client.auth", _choice("required", "requested", "none"), "none", "ask clients for certificates"),
    Setting("ssl.enabled.protocols", str, "TLSv1.2,TLSv1.3", "TLS versions accepted"),
    Setting("ssl.principal.mapping.rules", str, "DEFAULT", "certificate DN -> user name (DEFAULT: the whole DN)"),
    Setting("authorizer.class.name", str, "", "StandardAuthorizer turns ACLs on (empty: everything allowed)"),
    Setting("super.users", str, "", "principals allowed everything, ';'-separated (User:admin;User:ops)"),
    Setting("allow.everyone.if.no.acl.found", _bool, False, "allow when no ACL names the resource"),
    # Classic groups (GroupCoordinatorConfig).
    Setting(
        "group.initial.rebalance.delay.ms",
        int,
        100,
        "delay before the first rebalance of an empty group, extended while members keep joining "
        "(Kafka's code default is 3000, its shipped server.properties 0; 100 here, measured with "
        "bench/group_bench.py: consumers started together form one generation (two started 30 ms "
        "apart, as librdkafka's tests 0102 and 0113 expect; 0 takes two), and 16 are stable in ~0.3 s)",
    ),
    Setting("group.min.session.timeout.ms", int, 6000, "smallest session timeout a member may ask"),
    Setting("group.max.session.timeout.ms", int, 1800000, "largest session timeout a member may ask"),
    Setting("group.max.size", int, 2147483647, "most members a classic group may hold"),
    Setting(
        "group.classic.new.member.join.timeout.ms",
        int,
        300000,
        "how long a member that joined during a rebalance may stay parked before it is dropped "
        "(Kafka's fixed 5 minutes, classicGroupNewMemberJoinTimeoutMs; a setting here so tests "
        "can shorten it)",
    ),
    # Consumer groups, the KIP-848 protocol (GroupCoordinatorConfig, Kafka 4.x defaults).
    Setting(
        "group.coordinator.rebalance.protocols",
        str,
        "classic,consumer",
        "rebalance protocols served (comma-separated; 'consumer' enables ConsumerGroupHeartbeat)",
    ),
    Setting("group.consumer.session.timeout.ms", int, 45000, "session timeout of consumer-protocol members"),
    Setting("group.consumer.min.session.timeout.ms", int, 45000, "smallest group.consumer.session.timeout.ms"),
    Setting("group.consumer.max.session.timeout.ms", int, 60000, "largest group.consumer.session.timeout.ms"),
    Setting("group.consumer.heartbeat.interval.ms", int, 5000, "heartbeat interval given to consumer-protocol members"),
    Setting("group.consumer.min.heartbeat.interval.ms", int, 5000, "smallest group.consumer.heartbeat.interval.ms"),
    Setting("group.consumer.max.heartbeat.interval.ms", int, 15000, "largest group.consumer.heartbeat.interval.ms"),
    Setting("group.consumer.max.size", int, 2147483647, "most members a consumer group may hold"),
    Setting(
        "group.consumer.assignors",
        str,
        "uniform,range",
        "server assignors by name or Kafka class name, comma-separated; the first is the default",
    ),
    Setting(
        "group.consumer.migration.policy",
        _choice("disabled", "upgrade", "downgrade", "bidirectional"),
        "bidirectional",
        "online migration between the classic and consumer protocols",
    ),
    Setting("group.consumer.regex.refresh.interval.ms", int, 600000, "how often regex subscriptions are re-resolved"),
    Setting(
        "group.consumer.regex.batch.refresh.min.interval.ms",
        int,
        10000,
        "least time between two resolutions of a group's regexes (Kafka's fixed 10 s, "
        "REGEX_BATCH_REFRESH_MIN_INTERVAL_MS; a setting here so tests can shorten it)",
    ),
    # Share groups, KIP-932 (GroupCoordinatorConfig and ShareGroupConfig, Kafka 4.2 defaults). The
    # per-group overrides of these (share.session.timeout.ms, share.record.lock.duration.ms, ...)
    # are GROUP configs (coordinator/groups/dynamic_config.py).
    Setting(
        "group.share.enable",
        _bool,
        True,
        "serve share groups (Kafka 4.2 enables them with the share.version feature, finalized 1 by default)",
    ),
    Setting("group.share.session.timeout.ms", int, 45000, "session timeout of share-group members"),
    Setting("group.share.min.session.timeout.ms", int, 45000, "smallest share.session.timeout.ms a group may set"),
    Setting("group.share.max.session.timeout.ms", int, 60000, "largest share.session.timeout.ms a group may set"),
    Setting("group.share.heartbeat.interval.ms", int, 5000, "heartbeat interval given to share-group members"),
    Setting("group.share.min.heartbeat.interval.ms", int, 5000, "smallest share.heartbeat.interval.ms"),
    Setting("group.share.max.heartbeat.interval.ms", int, 15000, "largest share.heartbeat.interval.ms"),
    Setting("group.share.max.size", int, 200, "most members a share group may hold"),
    Setting("group.share.assignors", str, "simple", "share-group assignors (Kafka's SimpleAssignor)"),
    Setting("group.share.record.lock.duration.ms", int, 30000, "how long an acquired record stays locked"),
    Setting("group.share.min.record.lock.duration.ms", int, 15000, "smallest share.record.lock.duration.ms"),
    Setting("group.share.max.record.lock.duration.ms", int, 60000, "largest share.record.lock.duration.ms"),
    Setting("group.share.delivery.count.limit", int, 5, "delivery attempts before a record is archived"),
    Setting("group.share.min.delivery.count.limit", int, 2, "smallest share.delivery.count.limit"),
    Setting("group.share.max.delivery.count.limit", int, 10, "largest share.delivery.count.limit"),
    Setting("group.share.partition.max.record.locks", int, 2000, "most records in flight per share-partition"),
    Setting("group.share.max.share.sessions", int, 2000, "most share sessions a broker keeps"),
    # The share coordinator, __share_group_state (ShareCoordinatorConfig).
    Setting("share.coordinator.state.topic.num.partitions", int, 50, "partitions of __share_group_state"),
    Setting(
        "share.coordinator.state.topic.replication.factor",
        int,
        3,
        "replicas of __share_group_state (capped at the brokers)",
    ),
    Setting("share.coordinator.state.topic.segment.bytes", int, 104857600, "segment size of __share_group_state"),
    Setting(
        "share.coordinator.snapshot.update.records.per.snapshot",
        int,
        500,
        "ShareUpdate records written for a share-partition before a new ShareSnapshot",
    ),
    Setting(
        "share.coordinator.state.topic.prune.interval.ms",
        int,
        300000,
        "how often the share coordinator deletes __share_group_state records no state needs",
    ),
    Setting(
        "share.coordinator.cold.partition.snapshot.interval.ms",
        int,
        300000,
        "how often states not snapshotted since are snapshotted again (so pruning can pass them)",
    ),
    # Offsets topic (OffsetConfig).
    Setting("offsets.topic.num.partitions", int, 50, "partitions of __consumer_offsets"),
    Setting("offsets.topic.segment.bytes", int, 104857600, "segment size of __consumer_offsets"),
    Setting("offsets.retention.minutes", int, 10080, "how long committed offsets are kept"),
    Setting("offsets.retention.check.interval.ms", int, 600000, "how often expired offsets are removed"),
    Setting("offset.metadata.max.bytes", int, 4096, "largest metadata string on a committed offset"),
    # Transactions (TransactionLogConfig, TransactionStateManagerConfig).
    Setting("transaction.state.log.num.partitions", int, 50, "partitions of __transaction_state"),
    Setting(
        "transaction.state.log.replication.factor", int, 3, "replicas of __transaction_state (capped at the brokers)"
    ),
    Setting("transaction.state.log.segment.bytes", int, 104857600, "segment size of __transaction_state"),
    Setting("transaction.max.timeout.ms", int, 900000, "largest transaction.timeout.ms a producer may ask"),
    Setting(
        "transactional.id.expiration.ms",
        int,
        604800000,
        "an idle transactional id (no open transaction) is forgotten after this long",
    ),
    Setting(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        int,
        10000,
        "how often transactions past their timeout are aborted",
    ),
    Setting(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        int,
        3600000,
        "how often expired transactional ids are removed",
    ),
    Setting(
        "transaction.partition.verification.enable",
        _bool,
        True,
        "check with the transaction coordinator that a partition is in the transaction before its "
        "first transactional batch is appended (KIP-890 part 1)",
    ),
    Setting(
        "producer.id.expiration.ms",
        _at_least_one,
        86400000,
        "a partition forgets a producer (its epoch and sequences) idle this long with no open transaction",
    ),
    Setting(
        "producer.id.expiration.check.interval.ms",
        _at_least_one,
        600000,
        "how often partitions look for idle producers (Kafka's internal setting of the same name)",
    ),
    # Topics (the small data path).
    Setting("auto.create.topics.enable", _bool, True, "create unknown topics on Metadata requests"),
    Setting("num.partitions", int, 1, "partitions of an auto-created topic"),
    Setting(
        "max.partitions",
        int,
        10000,
        "most user-topic partitions this server creates (each costs about "
        "3 open files and a few ms to create; KIP-578's proposed name, not a Kafka setting)",
    ),
    Setting("log.segment.bytes", int, 1073741824, "segment size of user topics"),
    Setting("log.retention.ms", int, 604800000, "time retention of user topics (-1 = forever)"),
    Setting("log.retention.bytes", int, -1, "size retention per partition of user topics (-1 = none)"),
    Setting("log.retention.check.interval.ms", int, 300000, "how often retention deletes old segments"),
    Setting("message.max.bytes", int, 1048588, "largest record batch a producer may send"),
    # Storage durability and the cleaner.
    Setting(
        "log.flush.mode",
        _choice("group_commit", "every_append", "interval"),
        "group_commit",
        "when appends are fsync'd (not a Kafka setting: Kafka relies on replication)",
    ),
    Setting("log.flush.interval.ms", int, 1000, "fsync period when log.flush.mode=interval"),
    Setting("log.cleaner.min.cleanable.ratio", float, 0.5, "dirty ratio that triggers compaction"),
    Setting("log.cleaner.delete.retention.ms", int, 86400000, "how long tombstones survive cleaning"),
    Setting("log.cleaner.min.compaction.lag.ms", int, 0, "records younger than this are not compacted"),
    Setting("log.cleaner.dedupe.buffer.size", int, 134217728, "memory for the cleaner's key -> offset map"),
    Setting("log.cleaner.backoff.ms", int, 15000, "pause between cleaner passes over __consumer_offsets"),
    # Client telemetry, KIP-714 (coordinator/telemetry; docs/telemetry.md).
    Setting("telemetry.max.bytes", int, 1048576, "largest metrics payload a client may push (at least 1)"),
    Setting(
        "client.metrics.default.metrics",
        str,
        "",
        "kgc's default client-metrics subscription (not a Kafka setting): metric-name prefixes, "
        "comma-separated, * for all, that every client is asked to push; empty = none (subscriptions "
        "are then only CLIENT_METRICS config resources, as in Kafka)",
    ),
    Setting(
        "client.metrics.default.interval.ms",
        int,
        300000,
        "push interval of kgc's default client-metrics subscription, 100..3600000 (not a Kafka setting)",
    ),
    # Seeing inside (not Kafka settings).
    Setting(
        "transcript.file",
        str,
        "",
        "write every request, response, state change and record as JSON lines to this file (empty = off)",
    ),
    Setting("metrics.port", int, -1, "serve Prometheus metrics on this port (-1 = off, 0 = a free port)"),
    # The control plane (not Kafka settings): faults, brokers, clock, request tracking.
    Setting(
        "control.enable",
        _bool,
        False,
        "fault rules and request tracking in the request path (on when "
        "control.port is set, and for the embedded server and the pytest fixture)",
    ),
    Setting("control.port", int, -1, "serve the HTTP/JSON control API on this port (-1 = off, 0 = a free port)"),
    Setting("control.host", str, "127.0.0.1", "address of the control API (beyond loopback only with control.token)"),
    Setting("control.token", str, "", "bearer token the control API requires (needed off loopback)"),
    Setting(
        "control.requests.max",
        int,
        10000,
        "requests the control plane keeps for GET /v1/requests (0: tracking off, the cheapest control plane)",
    ),
    Setting(
        "clock.mode",
        _choice("system", "manual"),
        "system",
        "manual: every coordinator timer (session, "
        "rebalance, initial delay, retention) and the logs' time (log retention, segment.ms, the "
        "cleaner's delete horizons, producer-id expiry) move only when the control plane advances the clock",
    ),
)
