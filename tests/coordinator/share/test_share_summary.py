"""Transcript summaries of ShareFetch / ShareAcknowledge: acknowledgements by name, acquired
ranges with delivery counts, errors by name, topics by name."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from coordinator.observe.transcript import data_request, data_response
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages import share_acknowledge as sa
from protocol.messages import share_fetch as sf
from tests.coordinator.broker.conftest import batch

TID = uuid.UUID(int=5)
CTX = SimpleNamespace(broker=SimpleNamespace(topics=SimpleNamespace(by_id=lambda tid: SimpleNamespace(name="orders"))))


def test_a_share_fetch_is_summarised_per_partition():
    request = sf.ShareFetchRequest(
        topics=[
            sf.FetchTopic(
                topic_id=TID,
                partitions=[
                    sf.FetchPartition(
                        partition_index=0,
                        acknowledgement_batches=[
                            sf.AcknowledgementBatch(0, 4, [1]),
                            sf.AcknowledgementBatch(5, 6, [2, 3]),
                        ],
                    )
                ],
            )
        ]
    )
    assert data_request(CTX, ApiKey.SHARE_FETCH, request) == [
        {"topic": "orders", "partition": 0, "acks": [[0, 4, "ACCEPT"], [5, 6, "MIXED"]]}
    ]
    response = sf.ShareFetchResponse(
        responses=[
            sf.ShareFetchableTopicResponse(
                topic_id=TID,
                partitions=[
                    sf.PartitionData(
                        partition_index=0,
                        acknowledge_error_code=ErrorCode.INVALID_RECORD_STATE,
                        records=batch(b"a", b"b"),
                        acquired_records=[sf.AcquiredRecords(7, 8, 2)],
                    )
                ],
            )
        ]
    )
    assert data_response(CTX, ApiKey.SHARE_FETCH, request, response) == [
        {
            "topic": "orders",
            "partition": 0,
            "acquired": [[7, 8, 2]],
            "records": 2,
            "ack_error": "INVALID_RECORD_STATE",
            "error": None,
        }
    ]


def test_a_share_acknowledge_answer_is_summarised_with_its_errors():
    response = sa.ShareAcknowledgeResponse(
        responses=[
            sa.ShareAcknowledgeTopicResponse(
                topic_id=TID, partitions=[sa.PartitionData(partition_index=3, error_code=ErrorCode.INVALID_REQUEST)]
            )
        ]
    )
    assert data_response(CTX, ApiKey.SHARE_ACKNOWLEDGE, None, response) == [
        {"topic": "orders", "partition": 3, "error": "INVALID_REQUEST"}
    ]
