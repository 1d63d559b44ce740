"""What the transaction handlers share: the transaction coordinator of this broker, and Kafka's
per-version error translations (KafkaApis: clients before the version that added PRODUCER_FENCED
get INVALID_PRODUCER_EPOCH, which they handle the same way).
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.txn.service import TxnService
from protocol.errors import ErrorCode


def txn_service(ctx: RequestContext) -> TxnService:
    service = ctx.broker.txn
    if service is None:  # (a broker built without a transaction coordinator: tests of other parts)
        raise RuntimeError("this broker has no transaction coordinator")
    return service


def fenced_for(error: int, version: int, first_version_with_fenced: int) -> int:
    """PRODUCER_FENCED as INVALID_PRODUCER_EPOCH below the version that knows it."""
    if error == ErrorCode.PRODUCER_FENCED and version < first_version_with_fenced:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error


def unknown_partitions(ctx: RequestContext, topic: str, partitions: list[int]) -> dict[int, ErrorCode]:
    """UNKNOWN_TOPIC_OR_PARTITION for each partition the cluster does not have."""
    known = ctx.broker.topics.get(topic)
    return {
        p: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for p in partitions if known is None or not 0 <= p < known.partitions
    }
