"""Server settings, named as Kafka names them.

Every setting has one definition here (Kafka's property name, type, default, one line of help).
Values come from, in rising precedence: the defaults, a properties file (Kafka's server.properties
works: server_properties.py maps Kafka's names and the rest are noted as ignored), and
`--set name=value` on the command line. Code reads them as attributes with dots turned into
underscores (`config.group_initial_rebalance_delay_ms`). Defaults follow Kafka's broker defaults
except where noted: this server is a test tool, so its initial rebalance delay is short (100 ms,
not 3 s) and it keeps data under the working directory. Errors name the setting, the
expected type and, for a misspelt name, the nearest ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coordinator import server_properties
from coordinator.server_properties import Entry, PropertiesError


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str


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
        "one trio loop per broker, sharing only the files each one owns; leaders are static, so broker "
        "down/up, leader moves, the control plane and topic creation after start are refused",
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
        "rebalance, initial delay, retention) moves only when the control plane advances the clock",
    ),
)

_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


class ConfigError(ValueError):
    """A setting that does not exist or whose value does not parse; the text says which and why."""


class Config:
    """Resolved settings; read as attributes (`config.group_max_size`) or by Kafka name.

    `overrides` may use kgc's names, the Kafka names server_properties maps (`log.dirs`,
    `listeners`, ...) and underscores for dots (`group_max_size`); text values are parsed."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        values = {s.name: s.default for s in SETTINGS}
        values.update(resolve(overrides or {}))
        self._values = values

    def __getattr__(self, attr: str) -> Any:
        try:
            return self._values[attr.replace("_", ".")]
        except KeyError:
            raise AttributeError(attr) from None

    def get(self, name: str) -> Any:
        return self._values[_lookup(name).name]

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)


_MAPPED = server_properties.mapped_names()


def canonical_name(name: str) -> str | None:
    """The setting (or mapped Kafka name) `name` means, dots for underscores; None if none."""
    for candidate in (name, name.replace("_", ".")):
        if candidate in _BY_NAME or candidate in _MAPPED:
            return candidate
    return None


def suggest(name: str) -> str:
    """'; did you mean x or y?' for a misspelt setting name, or ''."""
    close = difflib.get_close_matches(name.replace("_", "."), sorted({*_BY_NAME, *_MAPPED}), n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _lookup(name: str) -> Setting:
    canonical = canonical_name(name)
    if canonical is None or canonical not in _BY_NAME:
        raise ConfigError(f"unknown setting {name!r}{suggest(name)} (`kgc settings` lists them all)")
    return _BY_NAME[canonical]


_EXPECTED = {int: "an integer", float: "a number"}


def _parse(setting: Setting, text: str, where: str = "") -> Any:
    try:
        return setting.parse(text.strip())
    except ValueError as exc:
        expected = _EXPECTED.get(setting.parse)  # type: ignore[call-overload]
        why = f"expected {expected}, got {text.strip()!r}" if expected else str(exc)
        raise ConfigError(f"{where}bad value for {setting.name}: {why}") from None


def resolve(values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """kgc settings from one source of name -> value (our names, mapped Kafka names, underscores);
    text values parsed. An unknown name is an error: only a properties file may hold Kafka's
    other settings (`settings_from_file`)."""
    for name in values:
        if canonical_name(name) is None:
            raise ConfigError(f"{where}unknown setting {name!r}{suggest(name)} (`kgc settings` lists them all)")
    settings, _notes = _translate([Entry(canonical_name(n) or n, v, where) for n, v in values.items()])
    return settings


def _translate(entries: list[Entry]) -> tuple[dict[str, Any], list[str]]:
    """Parsed kgc settings and the mapping notes of one source; Kafka names mapped, ours win."""
    ours = {e.name: e for e in entries if e.name in _BY_NAME}
    kafka = [Entry(e.name, str(e.value), e.where) for e in entries if e.name not in _BY_NAME]
    try:
        mapped = server_properties.translate(kafka, _BY_NAME)
    except PropertiesError as exc:
        raise ConfigError(str(exc)) from None
    settings: dict[str, Any] = {}
    where = {e.name: e.where for e in kafka}
    for name, value in mapped.settings.items():
        if name not in ours:
            settings[name] = _parse(_BY_NAME[name], value, where.get(name, ""))
    for name, entry in ours.items():
        value = entry.value
        settings[name] = _parse(_BY_NAME[name], value, entry.where) if isinstance(value, str) else value
    return settings, mapped.notes


def settings_from_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Settings from a properties file (Kafka's server.properties included) and one note per
    line worth saying: each Kafka name mapped, and each name kgc does not use (ignored, as Kafka
    ignores unknown names; a near miss of one of ours says which). Bad values are errors."""
    try:
        entries = server_properties.read(path)
    except OSError as exc:
        raise ConfigError(f"cannot read --config {path}: {exc.strerror or exc}") from None
    known = [Entry(canonical_name(e.name) or e.name, e.value, e.where) for e in entries if canonical_name(e.name)]
    settings, notes = _translate(known)
    for e in entries:
        if canonical_name(e.name) is None:
            notes.append(f"{e.where}{e.name} is not a kgc setting: ignored{suggest(e.name)}")
    order = {e.where: i for i, e in enumerate(entries)}
    notes.sort(key=lambda note: order.get(note[: note.find(": ") + 2], len(order)))
    return settings, notes


def read_properties(path: Path) -> dict[str, str]:
    """A properties file as name -> text (Java's format; a repeated name: the last one)."""
    return {e.name: e.value for e in server_properties.read(path)}


def parse_assignment(text: str) -> tuple[str, str]:
    """Parses one `--set name=value` argument."""
    if "=" not in text:
        raise ConfigError(f"--set expects name=value, got {text!r}")
    name, value = text.split("=", 1)
    return name.strip(), value


MAX_BROKERS = 64


def check_cluster(config: Config) -> None:
    """cluster.brokers in 1..64, and every broker's port (port + i) a real one (port 0: free ports)."""
    n, port = config.cluster_brokers, config.port
    if not 1 <= n <= MAX_BROKERS:
        raise ConfigError(f"cluster.brokers (--brokers) must be between 1 and {MAX_BROKERS}, got {n}")
    if config.cluster_processes and (config.control_enable or config.control_port >= 0):
        raise ConfigError(
            "the control plane (control.enable, control.port) needs every broker in one process: "
            "it cannot run with cluster.processes (--processes)"
        )
    if port != 0 and not (1 <= port and port + n - 1 <= 65535):
        last = f"..{port + n - 1}" if n > 1 else ""
        raise ConfigError(f"port {port}{last} is outside 1..65535 (port 0 picks free ports)")
