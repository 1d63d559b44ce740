"""Error answers of the transaction APIs, for error_responses.error_response: InitProducerId,
AddPartitionsToTxn (per partition below v4, the top-level code from v4), WriteTxnMarkers,
TxnOffsetCommit, DescribeProducers and DescribeTransactions. Each copies what Kafka's
`<Api>Request.getErrorResponse` builds; fields a version lacks are simply not encoded.
"""

from __future__ import annotations

from typing import Any

from protocol.messages import (
    add_partitions_to_txn,
    describe_producers,
    describe_transactions,
    init_producer_id,
    txn_offset_commit,
    write_txn_markers,
)

__all__ = [
    "init_producer_id_error",
    "add_partitions_to_txn_error",
    "write_txn_markers_error",
    "txn_offset_commit_error",
    "describe_producers_error",
    "describe_transactions_error",
]


def init_producer_id_error(version: int, req: Any, code: int, message: str | None) -> Any:
    return init_producer_id.InitProducerIdResponse(error_code=code, producer_id=-1, producer_epoch=-1)


def add_partitions_to_txn_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = add_partitions_to_txn  # v4+ (broker-to-broker batches): the top-level code
    if version >= 4:
        return m.AddPartitionsToTxnResponse(error_code=code)
    return m.AddPartitionsToTxnResponse(
        results_by_topic_v3_and_below=[
            m.AddPartitionsToTxnTopicResult(
                name=t.name,
                results_by_partition=[
                    m.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=code)
                    for p in t.partitions
                ],
            )
            for t in req.v3_and_below_topics
        ]
    )


def write_txn_markers_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = write_txn_markers
    return m.WriteTxnMarkersResponse(
        markers=[
            m.WritableTxnMarkerResult(
                producer_id=marker.producer_id,
                topics=[
                    m.WritableTxnMarkerTopicResult(
                        name=t.name,
                        partitions=[
                            m.WritableTxnMarkerPartitionResult(partition_index=p, error_code=code)
                            for p in t.partition_indexes
                        ],
                    )
                    for t in marker.topics
                ],
            )
            for marker in req.markers
        ]
    )


def txn_offset_commit_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = txn_offset_commit
    return m.TxnOffsetCommitResponse(
        topics=[
            m.TxnOffsetCommitResponseTopic(
                name=t.name,
                partitions=[
                    m.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def describe_producers_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_producers
    return m.DescribeProducersResponse(
        topics=[
            m.TopicResponse(
                name=t.name,
                partitions=[
                    m.PartitionResponse(partition_index=p, error_code=code, error_message=message)
                    for p in t.partition_indexes
                ],
            )
            for t in req.topics
        ]
    )


def describe_transactions_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_transactions
    return m.DescribeTransactionsResponse(
        transaction_states=[m.TransactionState(error_code=code, transactional_id=tid) for tid in req.transactional_ids]
    )
