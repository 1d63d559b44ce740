"""The vocabulary of the config APIs: resource types, config sources and types (Kafka's ids), one
described entry, the error a change is refused with, and IncrementalAlterConfigs' operations.

Ids are Kafka's (ConfigResource.Type, DescribeConfigsResponse.ConfigSource / ConfigType,
AlterConfigOp.OpType). `apply_ops` is ConfigurationControlManager.incrementalAlterConfigResource:
SET and DELETE on any config, APPEND and SUBTRACT only on LIST configs (else INVALID_CONFIG),
starting from the current override or, when there is none, the default.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode


class ResourceType(enum.IntEnum):
    """ConfigResource.Type."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    UNKNOWN = 0
    TOPIC_CONFIG = 1  # DYNAMIC_TOPIC_CONFIG
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(enum.IntEnum):
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class AlterOp(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigError(Exception):
    """A resource's change or description refused with Kafka's error code and message."""

    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message or ErrorCode(code).name)
        self.code, self.message = code, message


def invalid_request(message: str) -> ConfigError:
    return ConfigError(ErrorCode.INVALID_REQUEST, message)


def invalid_config(message: str) -> ConfigError:
    return ConfigError(ErrorCode.INVALID_CONFIG, message)


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """One config of a resource type: `check` parses a value or raises ValueError (its text says why)."""

    name: str
    type: ConfigType
    doc: str
    check: Callable[[str], Any]
    default: str | None  # as text, for APPEND/SUBTRACT and descriptions
    read_only: bool = False
    sensitive: bool = False


@dataclass(frozen=True, slots=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class Entry:
    """One config as DescribeConfigs returns it (value None when sensitive)."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool
    sensitive: bool
    type: ConfigType
    doc: str
    synonyms: tuple[Synonym, ...] = field(default_factory=tuple)


def render(value: Any) -> str:
    """Kafka's ConfigDef.convertToString: booleans lower case, lists comma-joined."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def apply_ops(
    current: Mapping[str, str], ops: Sequence[tuple[str, int, str | None]], defs: Mapping[str, ConfigDef]
) -> dict[str, str]:
    """The overrides after IncrementalAlterConfigs' operations (name, op, value), in order.
    Unknown names are left for the resource's validation to refuse (INVALID_CONFIG there)."""
    result = dict(current)
    for name, op, value in ops:
        if op == AlterOp.SET:
            assert value is not None  # null SET values were refused before (INVALID_REQUEST)
            result[name] = value
        elif op == AlterOp.DELETE:
            result.pop(name, None)
        elif op in (AlterOp.APPEND, AlterOp.SUBTRACT):
            definition = defs.get(name)
            if definition is None or definition.type != ConfigType.LIST:
                raise invalid_config(f"Can't {AlterOp(op).name} to key {name} because its type is not LIST.")
            base = result.get(name, definition.default or "")
            parts = [p for p in base.split(",") if p]
            for item in (value or "").split(","):
                if op == AlterOp.APPEND and item not in parts:
                    parts.append(item)
                elif op == AlterOp.SUBTRACT and item in parts:
                    parts.remove(item)
            result[name] = ",".join(parts)
        else:
            raise invalid_request(f"Unknown operations type {op}")
    return result
