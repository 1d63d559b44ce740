"""The consumer embedded protocol (ProtocolType "consumer", protocol.md §4), for display.

JoinGroup `Protocols[].Metadata` / DescribeGroups `MemberMetadata` hold a
ConsumerProtocolSubscription; SyncGroup `Assignments[].Assignment` / DescribeGroups
`MemberAssignment` hold a ConsumerProtocolAssignment. Both are `int16 Version` followed by the
struct at that version in the classic (never flexible) encodings. The coordinator treats them as
opaque bytes; this module decodes them into typed objects for display and builds them for tests.

Parsing follows Kafka's ConsumerProtocol: a version above 3 is read with the v3 layout, trailing
bytes are ignored, and (as protocol.md recommends) a blob that ends cleanly before a newer
version's fields gets those fields' defaults. Anything else malformed raises DecodeError.

Written with `construct` (interpreted, not compiled: the compiled parser does not check lengths)
for readability; this is not a hot path. No construct Container leaves this module.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

import construct as c

from .errors import DecodeError, EncodeError

MAX_VERSION = 3


class _KafkaString(c.Construct):
    """int16 length + UTF-8; length -1 = null when nullable."""

    def __init__(self, nullable: bool) -> None:
        super().__init__()
        self.nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> str | None:
        n = c.Int16sb._parsereport(stream, context, path)
        if n == -1 and self.nullable:
            return None
        if n < 0:
            raise c.ExplicitError(f"invalid string length {n}", path=path)
        raw = c.stream_read(stream, n, path)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise c.ExplicitError(f"invalid UTF-8: {e.reason}", path=path) from None

    def _build(self, obj: str | None, stream: Any, context: Any, path: str) -> str | None:
        if obj is None:
            if not self.nullable:
                raise c.ExplicitError("null string where not nullable", path=path)
            c.Int16sb._build(-1, stream, context, path)
            return obj
        raw = obj.encode("utf-8")
        c.Int16sb._build(len(raw), stream, context, path)
        c.stream_write(stream, raw, len(raw), path)
        return obj


class _NullableBytes(c.Construct):
    """int32 length + bytes; length -1 = null."""

    def _parse(self, stream: Any, context: Any, path: str) -> bytes | None:
        n = c.Int32sb._parsereport(stream, context, path)
        if n == -1:
            return None
        if n < 0:
            raise c.ExplicitError(f"invalid bytes length {n}", path=path)
        return c.stream_read(stream, n, path)

    def _build(self, obj: bytes | None, stream: Any, context: Any, path: str) -> bytes | None:
        if obj is None:
            c.Int32sb._build(-1, stream, context, path)
        else:
            c.Int32sb._build(len(obj), stream, context, path)
            c.stream_write(stream, bytes(obj), len(obj), path)
        return obj


class _Count(c.Adapter):
    """int32 array count; negative is malformed (these arrays are never nullable)."""

    def _decode(self, obj: int, context: Any, path: str) -> int:
        if obj < 0:
            raise c.ExplicitError(f"invalid array count {obj}", path=path)
        return obj

    def _encode(self, obj: int, context: Any, path: str) -> int:
        return obj


def _array(element: c.Construct) -> c.Construct:
    return c.PrefixedArray(_Count(c.Int32sb), element)


STRING = _KafkaString(nullable=False)
NULLABLE_STRING = _KafkaString(nullable=True)
NULLABLE_BYTES = _NullableBytes()

TOPIC_PARTITION = c.Struct(
    "topic" / STRING,
    "partitions" / _array(c.Int32sb),
)

# Subscription: one construct per version step; each later version only appends fields.
SUBSCRIPTION_LAYERS = (
    c.Struct("topics" / _array(STRING), "user_data" / NULLABLE_BYTES),  # v0
    c.Struct("owned_partitions" / _array(TOPIC_PARTITION)),  # v1
    c.Struct("generation_id" / c.Int32sb),  # v2
    c.Struct("rack_id" / NULLABLE_STRING),  # v3
)
# Assignment v1-v3 have the v0 layout (the version only tracks the Subscription's).
ASSIGNMENT_LAYERS = (
    c.Struct("assigned_partitions" / _array(TOPIC_PARTITION), "user_data" / NULLABLE_BYTES),
)


@dataclass(slots=True)
class TopicPartition:
    topic: str = ""
    partitions: list[int] = field(default_factory=list)


@dataclass(slots=True)
class ConsumerProtocolSubscription:
    version: int = 0
    topics: list[str] = field(default_factory=list)
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)  # v1+
    generation_id: int = -1  # v2+
    rack_id: str | None = None  # v3+


@dataclass(slots=True)
class ConsumerProtocolAssignment:
    version: int = 0
    assigned_partitions: list[TopicPartition] = field(default_factory=list)
    user_data: bytes | None = None

    def partitions(self) -> list[tuple[str, int]]:
        return [(tp.topic, p) for tp in self.assigned_partitions for p in tp.partitions]


def _parse_layers(data: bytes, layers: tuple[c.Construct, ...], what: str) -> tuple[int, dict[str, Any]]:
    stream = io.BytesIO(bytes(data))
    values: dict[str, Any] = {}
    try:
        version = c.Int16sb.parse_stream(stream)
        if version < 0:
            raise DecodeError(f"invalid {what} version {version}")
        for i, layer in enumerate(layers[: min(version, MAX_VERSION) + 1]):
            if i > 0 and stream.tell() == len(data):
                break  # a clean end before a newer version's fields: keep their defaults
            parsed = layer.parse_stream(stream)
            values.update((k, v) for k, v in parsed.items() if not k.startswith("_"))
    except c.ConstructError as e:
        raise DecodeError(f"malformed {what}: {e}") from None
    return version, values


def _topic_partitions(items: Any) -> list[TopicPartition]:
    return [TopicPartition(str(tp.topic), list(tp.partitions)) for tp in items]


def decode_subscription(data: bytes) -> ConsumerProtocolSubscription:
    version, v = _parse_layers(data, SUBSCRIPTION_LAYERS, "subscription")
    sub = ConsumerProtocolSubscription(version=version, topics=list(v["topics"]), user_data=v["user_data"])
    if "owned_partitions" in v:
        sub.owned_partitions = _topic_partitions(v["owned_partitions"])
    if "generation_id" in v:
        sub.generation_id = v["generation_id"]
    if "rack_id" in v:
        sub.rack_id = v["rack_id"]
    return sub


def decode_assignment(data: bytes) -> ConsumerProtocolAssignment:
    """Decode an Assignment. Empty bytes (a member the leader gave nothing) decode to an empty
    v0 assignment, as clients do."""
    if len(data) == 0:
        return ConsumerProtocolAssignment()
    version, v = _parse_layers(data, ASSIGNMENT_LAYERS, "assignment")
    return ConsumerProtocolAssignment(version, _topic_partitions(v["assigned_partitions"]), v["user_data"])


def _build(version: int, layers: tuple[c.Construct, ...], values: dict[str, Any], what: str) -> bytes:
    if version < 0 or version > 0x7FFF:
        raise EncodeError(f"invalid {what} version {version}")
    out = io.BytesIO()
    try:
        c.Int16sb.build_stream(version, out)
        for layer in layers[: min(version, MAX_VERSION) + 1]:
            layer.build_stream(values, out)
    except (c.ConstructError, AttributeError, TypeError) as e:
        raise EncodeError(f"cannot encode {what} v{version}: {e}") from None
    return out.getvalue()


def encode_subscription(sub: ConsumerProtocolSubscription) -> bytes:
    values = {
        "topics": sub.topics,
        "user_data": sub.user_data,
        "owned_partitions": [{"topic": tp.topic, "partitions": tp.partitions} for tp in sub.owned_partitions],
        "generation_id": sub.generation_id,
        "rack_id": sub.rack_id,
    }
    return _build(sub.version, SUBSCRIPTION_LAYERS, values, "subscription")


def encode_assignment(assignment: ConsumerProtocolAssignment) -> bytes:
    values = {
        "assigned_partitions": [
            {"topic": tp.topic, "partitions": tp.partitions} for tp in assignment.assigned_partitions
        ],
        "user_data": assignment.user_data,
    }
    return _build(assignment.version, ASSIGNMENT_LAYERS, values, "assignment")
