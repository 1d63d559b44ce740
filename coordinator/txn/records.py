"""__transaction_state records: objects <-> Kafka's exact TransactionLogKey/Value bytes.

key = int16 version (0) ++ TransactionalId string. value = int16 version ++ TransactionLogValue:
v0: ProducerId int64, ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
TransactionPartitions nullable [Topic string, PartitionIds []int32] (null when Empty),
TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64. v1 is the flexible
form with tagged PreviousProducerId (0), NextProducerId (1), ClientTransactionVersion (2), each
written only when not its default (-1, -1, 0). The version written follows the finalized
transaction.version (TransactionVersion.transactionLogValueVersion: v1 from level 1), as
`encode_record(record, value_version)` is told. A null value is a tombstone (the id expired).
Kafka's TransactionLog.keyToBytes / valueToBytes / read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from coordinator.txn.state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata, TransactionState
from protocol import primitives as p
from protocol.errors import DecodeError

KEY_VERSION = 0


def log_value_version(transaction_version: int) -> int:
    """TransactionVersion.transactionLogValueVersion: the flexible v1 from level 1 on."""
    return 1 if transaction_version >= 1 else 0


@dataclass(frozen=True)
class TransactionRecord:
    """A transactional id's whole metadata after one transition (TxnTransitMetadata)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: tuple[tuple[str, int], ...]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_PRODUCER_EPOCH  # in memory only: never encoded
    client_version: int = 0  # ClientTransactionVersion (v1 only)

    def to_metadata(self) -> TransactionMetadata:
        return TransactionMetadata(
            self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            self.timeout_ms,
            self.state,
            set(self.partitions),
            self.start_ms,
            self.last_update_ms,
            self.previous_producer_id,
            self.next_producer_id,
            self.last_producer_epoch,
            self.client_version,
        )


@dataclass(frozen=True)
class TransactionTombstone:
    """The id expired: its key with a null value."""

    transactional_id: str


@dataclass(frozen=True)
class UnknownTxnRecord:
    """A key version this coordinator does not know (Kafka's UnknownKey: skipped at load)."""

    key_version: int


class TxnRecordDecodeError(ValueError):
    """Bytes that claim a known version but do not parse."""


def encode_key(transactional_id: str) -> bytes:
    return p.write_int16(KEY_VERSION) + p.write_string(transactional_id)


def _grouped(partitions: tuple[tuple[str, int], ...]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append(partition)
    return list(by_topic.items())


def encode_value(r: TransactionRecord, version: int = 0) -> bytes:
    if r.state is TransactionState.EMPTY and r.partitions:
        raise ValueError(f"an Empty transaction has no partitions: {r}")
    if version not in (0, 1):
        raise ValueError(f"TransactionLogValue has versions 0 and 1, not {version}")
    flexible = version == 1
    string = p.write_compact_string if flexible else p.write_string
    parts: list[bytes] = [
        p.write_int16(version),
        p.write_int64(r.producer_id),
        p.write_int16(r.producer_epoch),
        p.write_int32(r.timeout_ms),
        p.write_int8(r.state.id),
    ]
    if r.state is TransactionState.EMPTY:
        # null: TransactionLog.valueToBytes writes none when Empty
        parts.append(b"\x00" if flexible else p.write_int32(-1))
    else:
        groups = _grouped(r.partitions)
        parts.append(p.write_uvarint(len(groups) + 1) if flexible else p.write_int32(len(groups)))
        for topic, ids in groups:
            count = p.write_uvarint(len(ids) + 1) if flexible else p.write_int32(len(ids))
            parts.append(string(topic) + count + b"".join(p.write_int32(i) for i in ids))
            if flexible:
                parts.append(b"\x00")  # the entry's (empty) tagged fields
    parts.append(p.write_int64(r.last_update_ms) + p.write_int64(r.start_ms))
    if flexible:
        tags: dict[int, bytes] = {}
        if r.previous_producer_id != NO_PRODUCER_ID:
            tags[0] = p.write_int64(r.previous_producer_id)
        if r.next_producer_id != NO_PRODUCER_ID:
            tags[1] = p.write_int64(r.next_producer_id)
        if r.client_version != 0:
            tags[2] = p.write_int16(r.client_version)
        parts.append(p.write_tagged_fields(tags))
    return b"".join(parts)


def encode_record(obj: Any, value_version: int = 0) -> tuple[bytes, bytes | None]:
    if isinstance(obj, TransactionRecord):
        return encode_key(obj.transactional_id), encode_value(obj, value_version)
    if isinstance(obj, TransactionTombstone):
        return encode_key(obj.transactional_id), None
    raise TypeError(f"not a __transaction_state record: {type(obj).__name__}")


def decode_record(key: bytes, value: bytes | None) -> TransactionRecord | TransactionTombstone | UnknownTxnRecord:
    try:
        version, pos = p.read_int16(key, 0)
        if version != KEY_VERSION:
            return UnknownTxnRecord(version)
        transactional_id, pos = p.read_string(key, pos)
        if pos != len(key):
            raise TxnRecordDecodeError(f"{len(key) - pos} trailing bytes after TransactionLogKey")
        if value is None:
            return TransactionTombstone(transactional_id)
        return _decode_value(transactional_id, value)
    except (DecodeError, struct.error, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, TxnRecordDecodeError):
            raise
        raise TxnRecordDecodeError(str(exc)) from None


def _decode_value(transactional_id: str, value: bytes) -> TransactionRecord:
    version, pos = p.read_int16(value, 0)
    if version not in (0, 1):
        raise TxnRecordDecodeError(f"Unknown version {version} from the transaction log message value")
    flexible = version >= 1
    pid, pos = p.read_int64(value, pos)
    epoch, pos = p.read_int16(value, pos)
    timeout, pos = p.read_int32(value, pos)
    status, pos = p.read_int8(value, pos)
    state = TransactionState.from_id(status)
    if flexible:
        count, pos = p.read_uvarint(value, pos)
        count -= 1
    else:
        count, pos = p.read_int32(value, pos)
    partitions: list[tuple[str, int]] = []
    for _ in range(max(count, 0)):
        topic, pos = (p.read_compact_string if flexible else p.read_string)(value, pos)
        if flexible:
            n, pos = p.read_uvarint(value, pos)
            n -= 1
        else:
            n, pos = p.read_int32(value, pos)
        for _ in range(max(n, 0)):
            partition, pos = p.read_int32(value, pos)
            partitions.append((topic, partition))
        if flexible:
            pos = p.skip_tagged_fields(value, pos)
    last_update, pos = p.read_int64(value, pos)
    start, pos = p.read_int64(value, pos)
    previous, nxt, client_version = NO_PRODUCER_ID, NO_PRODUCER_ID, 0
    if flexible:
        tags, pos = p.read_tagged_fields(value, pos)
        if 0 in tags:
            previous = p.read_int64(tags[0], 0)[0]
        if 1 in tags:
            nxt = p.read_int64(tags[1], 0)[0]
        if 2 in tags:
            client_version = p.read_int16(tags[2], 0)[0]
    if pos != len(value):
        raise TxnRecordDecodeError(f"{len(value) - pos} trailing bytes after TransactionLogValue v{version}")
    if state is TransactionState.EMPTY:
        partitions = []  # readTxnRecordValue ignores them for Empty
    return TransactionRecord(
        transactional_id,
        pid,
        epoch,
        timeout,
        state,
        tuple(sorted(set(partitions))),
        last_update,
        start,
        previous,
        nxt,
        client_version=client_version,
    )
