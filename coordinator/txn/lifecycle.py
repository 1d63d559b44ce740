"""How the runtime creates, loads and unloads transaction shards, and the __transaction_state
runtime itself (Kafka's TransactionStateManager.loadTransactionsForTxnTopicPartition /
removeTransactionsForTxnTopicPartition and its scheduled tasks).

After a load the shard's timers start (timed-out transactions aborted every
transaction.abort.timed.out.transaction.cleanup.interval.ms, idle ids expired every
transaction.remove.expired.transaction.cleanup.interval.ms) and every transaction found in
PrepareCommit/PrepareAbort gets its markers sent again (the previous coordinator may have died
before writing them). `__transaction_state` is compacted with segment.bytes =
transaction.state.log.segment.bytes (TransactionStateManager.transactionTopicConfigs).
"""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

from coordinator.observe.reasons import because
from coordinator.runtime.clock import TimerClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
from coordinator.runtime.partition_writer import PartitionWriter, WriterObserver, internal_topic_log_config
from coordinator.runtime.timers import ShardTimers
from coordinator.txn.end_txn import MarkerJob
from coordinator.txn.markers import MarkerChannel
from coordinator.txn.ops import abort_timed_out, expire_transactional_ids
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from coordinator.txn.records import decode_record, encode_record, log_value_version
from coordinator.txn.shard import LeaderEpochs, ProducerIds, TxnContext, TxnSettings, TxnShard
from coordinator.txn.state import TransactionState
from storage.log import LogConfig
from storage.log_manager import LogManager

TXN_TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_URL, "kgc:" + TRANSACTION_STATE_TOPIC)


class TxnShards:
    topic = TRANSACTION_STATE_TOPIC

    def __init__(
        self,
        settings: TxnSettings,
        producer_ids: ProducerIds,
        markers: MarkerChannel,
        leaders: LeaderEpochs | None = None,
    ) -> None:
        self.settings = settings
        self.producer_ids = producer_ids
        self.markers = markers
        self.leaders = leaders
        self._value_version = log_value_version(settings.transaction_version)

    def new_shard(self, partition: int, timers: ShardTimers) -> TxnShard:
        return TxnShard(partition, self.settings, timers, self.producer_ids, self.markers, self.leaders)

    def encode(self, record: Any) -> tuple[bytes, bytes | None]:
        return encode_record(record, self._value_version)

    def decode(self, key: bytes, value: bytes | None) -> Any:
        return decode_record(key, value)

    def on_loaded(self, ctx: TxnContext) -> None:
        shard = ctx.shard
        shard.live = True
        _schedule_abort(shard, ctx.now_ms)
        _schedule_expire(shard, ctx.now_ms)
        for meta in shard.transactions.values():
            if meta.state.is_prepare:
                ctx.defer(
                    MarkerJob(
                        shard,
                        meta.transactional_id,
                        meta.producer_id,
                        meta.producer_epoch,
                        meta.state is TransactionState.PREPARE_COMMIT,
                        shard.coordinator_epoch(),
                        tuple(meta.sorted_partitions()),
                        meta.client_version,
                    )
                )

    def on_unloaded(self, shard: TxnShard) -> None:
        shard.live = False  # its marker jobs see the shard is gone and stop


def _schedule_abort(shard: TxnShard, now_ms: int) -> None:
    shard.timers.schedule(("txn-abort",), now_ms + shard.settings.abort_interval_ms, _abort_tick)


def _abort_tick(ctx: TxnContext) -> None:
    because("transaction.timeout.ms expired (the coordinator's periodic check)")
    abort_timed_out(ctx)
    _schedule_abort(ctx.shard, ctx.now_ms)


def _schedule_expire(shard: TxnShard, now_ms: int) -> None:
    shard.timers.schedule(("txn-expire",), now_ms + shard.settings.expire_interval_ms, _expire_tick)


def _expire_tick(ctx: TxnContext) -> None:
    because("transactional.id.expiration.ms passed (the coordinator's periodic check)")
    expire_transactional_ids(ctx)
    _schedule_expire(ctx.shard, ctx.now_ms)


def txn_log_config(config: Any) -> LogConfig:
    return internal_topic_log_config(config, config.transaction_state_log_segment_bytes)


def txn_runtime(
    config: Any,
    clock: TimerClock,
    logs: LogManager,
    producer_ids: ProducerIds,
    markers: MarkerChannel,
    leaders: LeaderEpochs | None = None,
    observer: WriterObserver | None = None,
) -> CoordinatorRuntime[TxnShard]:
    """__transaction_state in the data dir's LogManager, with its writer and its shards' runtime."""
    settings = TxnSettings.from_config(config)
    writer = PartitionWriter(
        TRANSACTION_STATE_TOPIC,
        logs,
        config.transaction_state_log_num_partitions,
        txn_log_config(config),
        clock,
        partial(encode_record, value_version=log_value_version(settings.transaction_version)),
        observer,
    )
    kind = TxnShards(settings, producer_ids, markers, leaders)
    return CoordinatorRuntime(kind, writer, clock, load_delay_ms=config.coordinator_load_delay_ms)
