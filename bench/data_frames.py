"""The data path's frames for bench/dispatch_instructions.py: Produce (acks=-1, one batch of 1 or 100
small records, plain and transactional) and Fetch (read_committed, 3 small batches).

Topic "data" (2 partitions): partition 0 takes the plain produces; partition 1 holds 3 one-record
batches that every fetch reads from offset 0 (v16, by topic id, as librdkafka fetches). Topic
"txn" (1 partition) takes the transactional produces: one transaction stays open (InitProducerId,
AddPartitionsToTxn v3 once) and each frame carries the next base sequence, so each one is a new
append, never a duplicate. A fixed frame serves the others (the log gives each append its offsets).
"""

from __future__ import annotations

from dispatch_bench import call, payload

from protocol.api import ApiKey
from protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from storage.batch import Record, encode_batch

TOPICS = {"data": 2, "txn": 1}
PRODUCE_VERSION, FETCH_VERSION = 10, 16
TXN_ID = "dispatch-bench-txn"


def produce_request(
    topic: str, index: int, records: int, transactional_id: str | None = None, **batch: int | bool
) -> ProduceRequest:
    """acks=-1, one batch of `records` records of 100 bytes each (no key)."""
    stamped = [Record(timestamp=1_700_000_000_000, key=None, value=b"v" * 100) for _ in range(records)]
    partition = PartitionProduceData(index=index, records=encode_batch(0, stamped, **batch))  # type: ignore[arg-type]
    return ProduceRequest(
        transactional_id=transactional_id,
        acks=-1,
        timeout_ms=30000,
        topic_data=[TopicProduceData(name=topic, partition_data=[partition])],
    )


def produce_frame(topic: str, records: int, transactional_id: str | None = None, **batch: int | bool) -> bytes:
    return payload(ApiKey.PRODUCE, PRODUCE_VERSION, produce_request(topic, 0, records, transactional_id, **batch))


async def data_frames(broker, conn, count: int) -> dict[str, list[bytes]]:
    """Each request type's frames: `count` of them (the same one, but for the transactional
    produce, whose sequence numbers run on); the fetch's partition is filled first."""
    for _ in range(3):
        await call(broker, conn, ApiKey.PRODUCE, PRODUCE_VERSION, produce_request("data", 1, 1))
    topic_id = broker.topics.get("data").topic_id
    fetch = payload(
        ApiKey.FETCH,
        FETCH_VERSION,
        FetchRequest(
            max_wait_ms=500,
            min_bytes=1,
            max_bytes=52428800,
            isolation_level=1,
            session_id=0,
            session_epoch=-1,
            topics=[
                FetchTopic(
                    topic_id=topic_id,
                    partitions=[FetchPartition(partition=1, fetch_offset=0, partition_max_bytes=1048576)],
                )
            ],
        ),
    )
    init = await call(
        broker,
        conn,
        ApiKey.INIT_PRODUCER_ID,
        4,
        InitProducerIdRequest(transactional_id=TXN_ID, transaction_timeout_ms=600000),
    )
    pid, epoch = init.producer_id, init.producer_epoch
    added = await call(
        broker,
        conn,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TXN_ID,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[AddPartitionsToTxnTopic(name="txn", partitions=[0])],
        ),
    )
    errors = [r.partition_error_code for t in added.results_by_topic_v3_and_below for r in t.results_by_partition]
    if init.error_code or any(errors):
        raise RuntimeError(f"transactional setup failed: InitProducerId {init.error_code}, AddPartitionsToTxn {errors}")
    txn = dict(producer_id=pid, producer_epoch=epoch, transactional=True)
    return {
        "Produce 1r": [produce_frame("data", 1)] * count,
        "Produce 100r": [produce_frame("data", 100)] * count,
        "Produce txn 1r": [produce_frame("txn", 1, TXN_ID, base_sequence=seq, **txn) for seq in range(count)],
        "Fetch rc 3b": [fetch] * count,
    }
