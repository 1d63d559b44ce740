"""Which __transaction_state partition owns a transactional id: Kafka's
TransactionStateManager.partitionFor, `Utils.abs(transactionalId.hashCode) %
transaction.state.log.num.partitions` (the same Java String.hashCode as group placement).
"""

from __future__ import annotations

from functools import lru_cache

from coordinator.groups.placement import java_string_hash, kafka_abs

TRANSACTION_STATE_TOPIC = "__transaction_state"
DEFAULT_NUM_PARTITIONS = 50  # transaction.state.log.num.partitions


@lru_cache(maxsize=1 << 16)  # every transaction request asks; the hash walks the id in Python
def partition_for(transactional_id: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return kafka_abs(java_string_hash(transactional_id)) % num_partitions
