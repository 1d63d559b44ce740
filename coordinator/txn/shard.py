"""TxnShard: every transactional id of one __transaction_state partition (the part of Kafka's
TransactionStateManager cache that one partition holds).

Changed only through `replay`, live (OpContext.apply) and at load: a TransactionRecord replaces
the id's metadata, a tombstone removes it. The transcript hears each state change with its cause.
Timers (transaction timeouts, id expiration) go through the shard's `ShardTimers`; `markers` is
the channel that writes a decided transaction's markers (markers.py), `settings` the coordinator
settings, `leaders` tells the coordinator epoch (the partition's leader epoch) written in markers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from coordinator.cluster.features import TRANSACTION_VERSION
from coordinator.observe.reasons import transaction_changed
from coordinator.runtime.operation import OpContext
from coordinator.runtime.timers import ShardTimers, Timers
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from coordinator.txn.records import TransactionRecord, TransactionTombstone, UnknownTxnRecord
from coordinator.txn.state import TransactionMetadata


@dataclass(frozen=True)
class TxnSettings:
    """Kafka's TransactionStateManagerConfig (the broker settings of the same names)."""

    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms
    id_expiration_ms: int = 604_800_000  # transactional.id.expiration.ms
    abort_interval_ms: int = 10_000  # transaction.abort.timed.out.transaction.cleanup.interval.ms
    expire_interval_ms: int = 3_600_000  # transaction.remove.expired.transaction.cleanup.interval.ms
    # The finalized transaction.version (TransactionStateManager.transactionVersionLevel): the
    # __transaction_state value version, and the rules of the coordinator's own aborts.
    transaction_version: int = TRANSACTION_VERSION

    @classmethod
    def from_config(cls, config: Any) -> TxnSettings:
        return cls(
            config.transaction_max_timeout_ms,
            config.transactional_id_expiration_ms,
            config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
            config.transaction_remove_expired_transaction_cleanup_interval_ms,
        )


class ProducerIds(Protocol):
    def next_id(self) -> int: ...


class LeaderEpochs(Protocol):
    """The cluster (cluster/cluster.py): the coordinator epoch is the partition's leader epoch."""

    def leadership(self, topic_name: str, partition: int) -> Any: ...


class TxnShard:
    def __init__(
        self,
        partition: int = 0,
        settings: TxnSettings | None = None,
        timers: ShardTimers | None = None,
        producer_ids: ProducerIds | None = None,
        markers: Any = None,
        leaders: LeaderEpochs | None = None,
    ) -> None:
        self.partition = partition
        self.settings = settings or TxnSettings()
        self.timers = timers if timers is not None else ShardTimers(Timers(), partition)
        self.producer_ids = producer_ids
        self.markers = markers
        self._leaders = leaders
        self.transactions: dict[str, TransactionMetadata] = {}
        # The marker jobs running now, by transactional id (markers.py): not state, bookkeeping.
        self.in_flight: dict[str, Any] = {}
        self.live = False  # set once loaded: a load's replay tells the transcript nothing

    def coordinator_epoch(self) -> int:
        """The epoch written in markers: the leader epoch of this __transaction_state partition."""
        lead = None if self._leaders is None else self._leaders.leadership(TRANSACTION_STATE_TOPIC, self.partition)
        return 0 if lead is None else int(lead.epoch)

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record (live and at load): the id's metadata becomes the record's."""
        if isinstance(record, TransactionRecord):
            old = self.transactions.get(record.transactional_id)
            self.transactions[record.transactional_id] = record.to_metadata()
            if self.live and (
                old is None or old.state is not record.state or old.producer_epoch != record.producer_epoch
            ):
                transaction_changed(
                    record.transactional_id,
                    old.state if old else "-",
                    record.state,
                    record.producer_id,
                    record.producer_epoch,
                )
            return True
        if isinstance(record, TransactionTombstone):
            old = self.transactions.pop(record.transactional_id, None)
            if old is not None and self.live:
                transaction_changed(record.transactional_id, old.state, "Dead", old.producer_id, old.producer_epoch)
            return True
        if isinstance(record, UnknownTxnRecord):
            return False
        raise TypeError(f"cannot replay {type(record).__name__}")

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.transactions.get(transactional_id)


TxnContext = OpContext[TxnShard]
