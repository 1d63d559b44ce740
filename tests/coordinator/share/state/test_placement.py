"""Share-state placement (ShareCoordinatorService.partitionFor) and FindCoordinator share keys
(SharePartitionKey.validate / getInstance)."""

from __future__ import annotations

import base64
import uuid

import pytest

from coordinator.share.persister import SharePartitionKey
from coordinator.share.state.placement import InvalidShareKey, coordinator_key, parse_coordinator_key, partition_for

TOPIC = uuid.UUID(bytes=base64.urlsafe_b64decode("Uj5wn_FqTXirEASvVZRY1w=="))


def java_hash_by_hand(text: str) -> int:
    """s[0]*31^(n-1) + ... + s[n-1] over UTF-16 units, as a signed int32 (no shared code)."""
    units = [int.from_bytes(text.encode("utf-16-be")[i : i + 2], "big") for i in range(0, 2 * len(text), 2)]
    h = sum(u * pow(31, len(units) - 1 - i, 1 << 32) for i, u in enumerate(units)) % (1 << 32)
    return h - (1 << 32) if h >= 1 << 31 else h


def test_partition_for_hashes_the_coordinator_key() -> None:
    key = SharePartitionKey("gs1", TOPIC, 3)
    assert coordinator_key(key) == "gs1:Uj5wn_FqTXirEASvVZRY1w:3"
    h = java_hash_by_hand("gs1:Uj5wn_FqTXirEASvVZRY1w:3")
    assert partition_for(key, 50) == abs(h) % 50
    assert partition_for("gs1:Uj5wn_FqTXirEASvVZRY1w:3", 7) == abs(h) % 7
    assert {partition_for(SharePartitionKey(f"g{i}", TOPIC, 0), 50) for i in range(500)} == set(range(50))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gs1:Uj5wn_FqTXirEASvVZRY1w:3", SharePartitionKey("gs1", TOPIC, 3)),
        (" gs1 :Uj5wn_FqTXirEASvVZRY1w:+3", SharePartitionKey("gs1", TOPIC, 3)),  # trimmed group, signed int
        ("gs1:Uj5wn_FqTXirEASvVZRY1w:3::", SharePartitionKey("gs1", TOPIC, 3)),  # Java's split drops trailing ""
        ("gs1:Uj5wn_FqTXirEASvVZRY1w:-1", SharePartitionKey("gs1", TOPIC, -1)),
    ],
)
def test_valid_share_keys(text: str, expected: SharePartitionKey) -> None:
    assert parse_coordinator_key(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "share-1",
        "a:b",
        "a:b:c:d",
        " :Uj5wn_FqTXirEASvVZRY1w:0",
        "g:not base64!:0",
        "g:AAAA:0",  # 3 bytes, not 16
        "g:Uj5wn_FqTXirEASvVZRY1w==AA:0",  # too long
        "g:Uj5wn+FqTXirEASvVZRY1w:0",  # not the URL-safe alphabet
        "g:Uj5wn_FqTXirEASvVZRY1w:x",
        "g:Uj5wn_FqTXirEASvVZRY1w:2147483648",
        "g:Uj5wn_FqTXirEASvVZRY1w:٣",  # a digit, but not ASCII
    ],
)
def test_invalid_share_keys(text: str) -> None:
    with pytest.raises(InvalidShareKey):
        parse_coordinator_key(text)
