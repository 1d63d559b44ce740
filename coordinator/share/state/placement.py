"""Which __share_group_state partition owns a share-partition's state, and the FindCoordinator
key that names it (Kafka ShareCoordinatorService.partitionFor and SharePartitionKey).

The coordinator key is "groupId:topicId:partition" with the topic id in Kafka's Uuid.toString
(URL-safe base64, no padding); its partition is `Utils.abs(key.hashCode()) % partitions` with
Java's String.hashCode, as groups are placed (groups/placement.py). `parse_coordinator_key`
accepts exactly what Kafka's SharePartitionKey.validate accepts (FindCoordinator key type 2).
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid

from coordinator.groups.placement import java_string_hash, kafka_abs
from coordinator.share.persister import SharePartitionKey

SHARE_STATE_TOPIC = "__share_group_state"
DEFAULT_NUM_PARTITIONS = 50  # share.coordinator.state.topic.num.partitions
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")  # Java's URL decoder refuses anything else


def topic_id_text(topic_id: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode("ascii")


def coordinator_key(key: SharePartitionKey) -> str:
    """SharePartitionKey.asCoordinatorKey: "groupId:topicId:partition"."""
    return f"{key.group_id}:{topic_id_text(key.topic_id)}:{key.partition}"


def partition_for(key: SharePartitionKey | str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    """ShareCoordinatorService.partitionFor (a coordinator key string is hashed as it is)."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    text = key if isinstance(key, str) else coordinator_key(key)
    return kafka_abs(java_string_hash(text)) % num_partitions


class InvalidShareKey(ValueError):
    """A FindCoordinator share key Kafka's SharePartitionKey.validate refuses (INVALID_REQUEST)."""


def parse_coordinator_key(text: str) -> SharePartitionKey:
    """SharePartitionKey.getInstance(String): validate, then (trimmed group, topic id, partition)."""
    if not text:
        raise InvalidShareKey("Share partition key cannot be empty")
    tokens = text.split(":")
    while tokens and tokens[-1] == "":  # Java's String.split drops trailing empty strings
        tokens.pop()
    if len(tokens) != 3:
        raise InvalidShareKey(f"Invalid key format: expected - groupId:topicId:partition, found -  {text}")
    group, topic, partition = tokens
    if not group.strip():
        raise InvalidShareKey("GroupId must be alphanumeric string")
    return SharePartitionKey(group.strip(), _topic_id(topic), _java_int(partition))


def _topic_id(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString: at most 24 characters of URL-safe base64 decoding to 16 bytes."""
    if len(text) > 24 or not _URL_BASE64.fullmatch(text):
        raise InvalidShareKey(f"Invalid topic ID: {text}")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidShareKey(f"Invalid topic ID: {text}") from None
    if len(raw) != 16:
        raise InvalidShareKey(f"Invalid topic ID: {text}")
    return uuid.UUID(bytes=raw)


def _java_int(text: str) -> int:
    """Integer.parseInt: an optional sign and ASCII digits, within int32."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise InvalidShareKey(f"Invalid partition: {text}")
    value = int(text)
    if not _INT_MIN <= value <= _INT_MAX:
        raise InvalidShareKey(f"Invalid partition: {text}")
    return value
