"""The consumer embedded protocol (ProtocolType "consumer", protocol.md §4), for display.

JoinGroup `Protocols[].Metadata` / DescribeGroups `MemberMetadata` hold a
ConsumerProtocolSubscription; SyncGroup `Assignments[].Assignment` / DescribeGroups
`MemberAssignment` hold a ConsumerProtocolAssignment. Both are `int16 Version` followed by the
struct at that version in the classic (never flexible) encodings. The coordinator treats them as
opaque bytes; this module decodes them into typed objects for display and builds them for tests.

Parsing follows Kafka's ConsumerProtocol: a version above 3 is read with the v3 layout, trailing
bytes are ignored, and (as protocol.md recommends) a blob that ends cleanly before a newer
version's fields gets those fields' defaults. Anything else malformed raises DecodeError.

Built on protocol.sized/ints (the readers check every length); not a hot path.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import DecodeError, EncodeError
from .ints import I16, I32, Buf, read_int16, read_int32
from .sized import (
    read_array,
    read_nullable_bytes,
    read_nullable_string,
    read_string,
    write_array,
    write_nullable_bytes,
    write_nullable_string,
    write_string,
)

MAX_VERSION = 3


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


def _read_topic_partition(data: Buf, pos: int) -> tuple[TopicPartition, int]:
    topic, pos = read_string(data, pos)
    partitions, pos = read_array(data, pos, read_int32)
    return TopicPartition(topic, partitions), pos


def _write_topic_partition(tp: TopicPartition) -> bytes:
    return write_string(tp.topic) + write_array(tp.partitions, I32.pack)


def _read_version(data: Buf, what: str) -> tuple[int, int]:
    version, pos = read_int16(data, 0)
    if version < 0:
        raise DecodeError(f"invalid {what} version {version}")
    return version, pos


def decode_subscription(data: Buf) -> ConsumerProtocolSubscription:
    version, pos = _read_version(data, "subscription")
    layout = min(version, MAX_VERSION)
    sub = ConsumerProtocolSubscription(version=version)
    sub.topics, pos = read_array(data, pos, read_string)
    sub.user_data, pos = read_nullable_bytes(data, pos)
    # each later version only appends fields; a clean end before them keeps their defaults
    if layout >= 1 and pos < len(data):
        sub.owned_partitions, pos = read_array(data, pos, _read_topic_partition)
        if layout >= 2 and pos < len(data):
            sub.generation_id, pos = read_int32(data, pos)
            if layout >= 3 and pos < len(data):
                sub.rack_id, pos = read_nullable_string(data, pos)
    return sub  # trailing bytes are ignored, as Kafka's ConsumerProtocol does


def decode_assignment(data: Buf) -> ConsumerProtocolAssignment:
    """Decode an Assignment. Empty bytes (a member the leader gave nothing) decode to an empty
    v0 assignment, as clients do. Assignment v1-v3 have the v0 layout."""
    if len(data) == 0:
        return ConsumerProtocolAssignment()
    version, pos = _read_version(data, "assignment")
    partitions, pos = read_array(data, pos, _read_topic_partition)
    user_data, pos = read_nullable_bytes(data, pos)
    return ConsumerProtocolAssignment(version, partitions, user_data)


def _encode(version: int, parts: Callable[[], list[bytes]], what: str) -> bytes:
    if version < 0 or version > 0x7FFF:
        raise EncodeError(f"invalid {what} version {version}")
    try:
        return I16.pack(version) + b"".join(parts())
    except (struct.error, AttributeError, TypeError, ValueError) as e:
        raise EncodeError(f"cannot encode {what} v{version}: {e}") from None


def encode_subscription(sub: ConsumerProtocolSubscription) -> bytes:
    def parts() -> list[bytes]:
        layout = min(sub.version, MAX_VERSION)
        out = [write_array(sub.topics, write_string), write_nullable_bytes(sub.user_data)]
        if layout >= 1:
            out.append(write_array(sub.owned_partitions, _write_topic_partition))
        if layout >= 2:
            out.append(I32.pack(sub.generation_id))
        if layout >= 3:
            out.append(write_nullable_string(sub.rack_id))
        return out

    return _encode(sub.version, parts, "subscription")


def encode_assignment(assignment: ConsumerProtocolAssignment) -> bytes:
    def parts() -> list[bytes]:
        return [
            write_array(assignment.assigned_partitions, _write_topic_partition),
            write_nullable_bytes(assignment.user_data),
        ]

    return _encode(assignment.version, parts, "assignment")
