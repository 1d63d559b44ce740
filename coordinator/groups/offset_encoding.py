"""The commit path's record encoding, alone in a module so that `make native` can compile it
(scripts/build_native.py): OffsetCommitRecords -> Kafka's exact (key, value) bytes, OffsetCommitKey
type 1 and OffsetCommitValue v3 (records.py says which versions are written when).

records.py runs the compiled copy when it was built from this source (storage.batch.native.
preferred) and hands `encode_records` its general `encode_record` for every other record (value v1
or v4, other types), so the bytes are always encode_record's. It defines no class (a compiled
copy's classes would not be the ones the rest of the coordinator checks against).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from coordinator.groups import record_types
from coordinator.groups.record_types import OffsetCommitRecord
from protocol import primitives as p

# What this module calls whose shapes a compiled copy relies on: a change makes it stale.
COMPILED_WITH = (record_types, p)

OFFSET_COMMIT_KEY_TYPE = 1
OFFSET_COMMIT_VALUE_VERSION = 3

_OFFSET_KEY_PREFIXES: dict[tuple[str, str], bytes] = {}  # (group, topic) -> key bytes before the partition
_VALUE_V3: dict[int, Callable[..., bytes]] = {}  # metadata length -> pack of a whole OffsetCommitValue v3
_I32_PACK = struct.Struct(">i").pack


def offset_key_prefix(group_id: str, topic: str) -> bytes:
    """The OffsetCommitKey bytes before the partition. A commit writes one key per partition of
    the same group and topic: their common prefix is encoded once (the cache is dropped whole
    when it grows large)."""
    prefix = _OFFSET_KEY_PREFIXES.get((group_id, topic))
    if prefix is None:
        prefix = p.write_int16(OFFSET_COMMIT_KEY_TYPE) + p.write_string(group_id) + p.write_string(topic)
        if len(_OFFSET_KEY_PREFIXES) >= 4096:
            _OFFSET_KEY_PREFIXES.clear()
        _OFFSET_KEY_PREFIXES[(group_id, topic)] = prefix
    return prefix


def offset_key(group_id: str, topic: str, partition: int) -> bytes:
    return offset_key_prefix(group_id, topic) + _I32_PACK(partition)


def encode_records(
    records: Sequence[Any], general: Callable[[Any], tuple[bytes, bytes | None]]
) -> list[tuple[bytes, bytes | None]]:
    """`general` of each record (an op's batch, PartitionWriter's encode_all): the same bytes,
    but a commit's run of OffsetCommitRecords looks its key prefix up once per (group, topic),
    encodes a metadata string once while it repeats, packs each value in one struct call and
    unpacks each record's fields at once (it is a tuple)."""
    pairs: list[tuple[bytes, bytes | None]] = []
    append = pairs.append
    group = topic = text = ""
    prefix = meta = b""
    n = 0
    pack: Callable[..., bytes] | None = None
    first = True
    for obj in records:
        if type(obj) is not OffsetCommitRecord:
            append(general(obj))
            continue
        record: OffsetCommitRecord = obj
        group_id, topic_name, partition, offset, epoch, metadata, commit_ts, expire, topic_id = record
        if expire is not None or topic_id is not None:
            append(general(obj))  # value v1 or v4
            continue
        if first or topic_name != topic or group_id != group:
            group, topic = group_id, topic_name
            prefix = offset_key_prefix(group, topic)
        if first or metadata != text:
            first = False
            text = metadata
            meta = text.encode()
            n = len(meta)
            pack = _VALUE_V3.get(n)
            if pack is None and n <= 0x7FFF:
                pack = struct.Struct(f">hqih{n}sq").pack
                if len(_VALUE_V3) < 1024:
                    _VALUE_V3[n] = pack
        if pack is None:  # too long for an int16 length: the general path raises as it always did
            append(general(obj))
            continue
        append((prefix + _I32_PACK(partition), pack(OFFSET_COMMIT_VALUE_VERSION, offset, epoch, n, meta, commit_ts)))
    return pairs
