"""Per-topic settings: which Kafka topic configs we accept, their defaults, and their file.

A topic's overrides (only what CreateTopics set, as Kafka's ConfigRepository keeps them) are
written as a Java properties file `topic.properties` in every partition dir, before the
`partition.metadata` that makes the topic exist; the effective value of a setting is the
override, else the broker setting it falls back to (Kafka's LogConfig/ServerTopicConfigSynonyms),
else Kafka's default. Unknown names or unparseable values raise TopicConfigError (INVALID_CONFIG).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.log import LogConfig

CONFIG_FILE = "topic.properties"
# DescribeConfigsResponse ConfigSource values reported by CreateTopics v5+.
SOURCE_DYNAMIC_TOPIC_CONFIG = 1
SOURCE_DEFAULT_CONFIG = 5


class TopicConfigError(ValueError):
    """A topic config Kafka would refuse (INVALID_CONFIG)."""


def _long(text: str) -> int:
    return int(text.strip())


def _ratio(text: str) -> float:
    value = float(text.strip())
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


def _policy(text: str) -> str:
    value = text.strip().lower()
    if value not in ("delete", "compact"):
        # Kafka also allows "compact,delete"; storage has no such mode, so we refuse it.
        raise ValueError("must be delete or compact")
    return value


def _timestamp_type(text: str) -> str:
    if text.strip() != "CreateTime":
        raise ValueError("only CreateTime is supported (batches are stored as sent)")
    return "CreateTime"


def _positive(parse: Callable[[str], int]) -> Callable[[str], int]:
    def check(text: str) -> int:
        value = parse(text)
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    return check


@dataclass(frozen=True, slots=True)
class TopicSetting:
    name: str
    parse: Callable[[str], Any]
    broker_setting: str | None  # the broker default it falls back to (config.py name)
    default: Any  # used when there is no broker setting
    kind: str  # Kafka's ConfigDef type: LONG, INT, DOUBLE, STRING, LIST
    doc: str  # one line, after Kafka's TopicConfig documentation


TOPIC_SETTINGS: tuple[TopicSetting, ...] = (
    TopicSetting(
        "cleanup.policy",
        _policy,
        None,
        "delete",
        "LIST",
        "delete: old segments go by time or size; compact: the latest record of each key is kept "
        "(kgc serves one of the two, not both)",
    ),
    TopicSetting(
        "retention.ms", _long, "log.retention.ms", 604800000, "LONG", "how long a segment is kept (-1: forever)"
    ),
    TopicSetting(
        "retention.bytes", _long, "log.retention.bytes", -1, "LONG", "how large a partition may grow (-1: no limit)"
    ),
    TopicSetting(
        "segment.bytes",
        _positive(_long),
        "log.segment.bytes",
        1073741824,
        "INT",
        "a segment file's size before it rolls",
    ),
    TopicSetting(
        "segment.ms", _positive(_long), None, 604800000, "LONG", "a segment's age before it rolls, even if not full"
    ),
    TopicSetting(
        "max.message.bytes",
        _positive(_long),
        "message.max.bytes",
        1048588,
        "INT",
        "the largest record batch a producer may append",
    ),
    TopicSetting(
        "delete.retention.ms",
        _long,
        "log.cleaner.delete.retention.ms",
        86400000,
        "LONG",
        "how long compaction keeps a tombstone",
    ),
    TopicSetting(
        "min.compaction.lag.ms",
        _long,
        "log.cleaner.min.compaction.lag.ms",
        0,
        "LONG",
        "records younger than this are not compacted",
    ),
    TopicSetting(
        "min.cleanable.dirty.ratio",
        _ratio,
        "log.cleaner.min.cleanable.ratio",
        0.5,
        "DOUBLE",
        "the dirty share of a log that starts a cleaning round",
    ),
    # Accepted for compatibility; one replica makes them moot.
    TopicSetting(
        "min.insync.replicas",
        _positive(_long),
        None,
        1,
        "INT",
        "accepted for compatibility: replicas are logical here, every acknowledged append is durable",
    ),
    TopicSetting(
        "message.timestamp.type",
        _timestamp_type,
        None,
        "CreateTime",
        "STRING",
        "CreateTime: batches keep the producer's timestamps (LogAppendTime is not served)",
    ),
)
_BY_NAME = {s.name: s for s in TOPIC_SETTINGS}


def validate_overrides(overrides: Mapping[str, str | None]) -> dict[str, str]:
    """Checks CreateTopics configs; returns them normalised (null values dropped, as Kafka does)."""
    result: dict[str, str] = {}
    for name, value in overrides.items():
        setting = _BY_NAME.get(name)
        if setting is None:
            raise TopicConfigError(f"Unknown topic config name: {name}")
        if value is None:
            continue
        try:
            setting.parse(value)
        except ValueError as exc:
            raise TopicConfigError(f"Invalid value {value} for configuration {name}: {exc}") from None
        result[name] = value.strip()
    return result


def effective(overrides: Mapping[str, str], broker: Any) -> dict[str, tuple[Any, int]]:
    """Every topic setting's value and config source (override or default)."""
    values: dict[str, tuple[Any, int]] = {}
    for setting in TOPIC_SETTINGS:
        if setting.name in overrides:
            values[setting.name] = (setting.parse(overrides[setting.name]), SOURCE_DYNAMIC_TOPIC_CONFIG)
        elif setting.broker_setting is not None:
            values[setting.name] = (broker.get(setting.broker_setting), SOURCE_DEFAULT_CONFIG)
        else:
            values[setting.name] = (setting.default, SOURCE_DEFAULT_CONFIG)
    return values


def log_config(overrides: Mapping[str, str], broker: Any) -> LogConfig:
    """The storage LogConfig of one partition of a topic with these overrides."""
    values = {name: value for name, (value, _) in effective(overrides, broker).items()}
    return LogConfig(
        segment_bytes=values["segment.bytes"],
        segment_ms=values["segment.ms"],
        durability=broker.get("log.flush.mode"),
        flush_interval_ms=broker.get("log.flush.interval.ms"),
        cleanup_policy=values["cleanup.policy"],
        retention_ms=values["retention.ms"],
        retention_bytes=values["retention.bytes"],
        min_cleanable_dirty_ratio=values["min.cleanable.dirty.ratio"],
        delete_retention_ms=values["delete.retention.ms"],
        min_compaction_lag_ms=values["min.compaction.lag.ms"],
        max_message_bytes=values["max.message.bytes"],
    )


def render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_properties(overrides: Mapping[str, str]) -> str:
    return "".join(f"{name}={value}\n" for name, value in sorted(overrides.items()))


def read_overrides(partition_dir: Path) -> dict[str, str]:
    """The overrides stored in a partition dir ({} when the file is missing)."""
    path = partition_dir / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    result: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line and line[0] not in "#!" and "=" in line:
            name, value = line.split("=", 1)
            if name.strip() in _BY_NAME:
                result[name.strip()] = value.strip()
    return result
