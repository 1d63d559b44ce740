"""The timeline's ShareFetch/ShareAcknowledge lines, from the transcript's share summaries."""

from __future__ import annotations

from coordinator.tools.transcript_render import data_request_text, data_response_text


def test_a_share_fetch_shows_acknowledgements_and_what_was_acquired():
    asked = [
        {"topic": "orders", "partition": 0, "acks": [[0, 9, "ACCEPT"], [10, 10, "RELEASE"]]},
        {"topic": "orders", "partition": 1, "acks": []},
    ]
    assert data_request_text("ShareFetch", asked) == "orders-0 acks 0-9 ACCEPT, 10 RELEASE, orders-1"
    answered = [
        {"topic": "orders", "partition": 0, "acquired": [[11, 20, 1], [10, 10, 2]], "records": 11, "ack_error": None},
        {"topic": "orders", "partition": 1, "acquired": [], "records": 0, "ack_error": None, "error": None},
        {
            "topic": "orders",
            "partition": 2,
            "acquired": [],
            "records": 0,
            "ack_error": "INVALID_RECORD_STATE",
            "error": "NOT_LEADER_OR_FOLLOWER",
        },
    ]
    assert data_response_text("ShareFetch", answered) == (
        "orders-0: acquired 11-20 delivery 1, 10 delivery 2 (11 records); orders-1: nothing acquired; "
        "orders-2: NOT_LEADER_OR_FOLLOWER; acknowledgement INVALID_RECORD_STATE"
    )
    assert data_request_text("ShareFetch", []) == "(session: no changes)"


def test_a_share_acknowledge_answer_names_errors_per_partition():
    answered = [
        {"topic": "t", "partition": 0, "error": None},
        {"topic": "t", "partition": 1, "error": "INVALID_RECORD_STATE"},
    ]
    assert data_response_text("ShareAcknowledge", answered) == "t-0: ok; t-1: INVALID_RECORD_STATE"
