"""RequestLog: cursors across wrap-around and clear, missed counts, filters, paging, and JSON
rendered only when read."""

from __future__ import annotations

from typing import Any

import pytest

import coordinator.control.tracking as tracking
from coordinator.control.errors import ControlError
from coordinator.control.tracking import RequestLog
from protocol.api import ApiKey
from protocol.codec import encode_response
from protocol.errors import ErrorCode
from protocol.messages import heartbeat, join_group, offset_commit


def hb(group: str) -> Any:
    return heartbeat.HeartbeatRequest(group_id=group, generation_id=1, member_id="m")


def record(log: RequestLog, n: int, api: int = ApiKey.HEARTBEAT, group: str = "g", code: int = 0) -> None:
    for _ in range(n):
        log.record(int(api), 4, 1, 9, "client-a", 100, 105, hb(group), heartbeat.HeartbeatResponse(error_code=code))


def cursors(page: Any) -> list[int]:
    return [entry["cursor"] for entry in page.requests]


def test_an_entry_says_everything_about_the_request() -> None:
    log = RequestLog(10)
    log.record(
        int(ApiKey.HEARTBEAT),
        4,
        2,
        7,
        "app",
        1_000,
        1_003,
        hb("orders"),
        heartbeat.HeartbeatResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS),
        5,
    )
    [entry] = log.page().requests
    assert entry == {
        "cursor": 0,
        "api": "Heartbeat",
        "api_key": 12,
        "version": 4,
        "broker": 2,
        "connection": 7,
        "client_id": "app",
        "group": "orders",
        "errors": [{"code": 27, "name": "REBALANCE_IN_PROGRESS", "message": None}],
        "received_ms": 1_000,
        "answered_ms": 1_003,
        "fault": 5,
        "request": {"group_id": "orders", "generation_id": 1, "member_id": "m", "group_instance_id": None},
        "response": {"throttle_time_ms": 0, "error_code": 27},
    }


def test_cursors_continue_across_wrap_around_and_a_late_reader_learns_what_it_missed() -> None:
    log = RequestLog(4)
    record(log, 3)
    first = log.page()
    assert (cursors(first), first.next, first.missed) == ([0, 1, 2], 3, 0)
    record(log, 7)  # cursors 3..9; the ring holds 6..9
    late = log.page(since=first.next)
    assert (cursors(late), late.next, late.missed) == ([6, 7, 8, 9], 10, 3)
    assert log.page(since=late.next).requests == [] and log.page(since=late.next).next == 10


def test_paging_with_limit_and_filters() -> None:
    log = RequestLog(100)
    record(log, 2, group="a")
    record(log, 2, group="b")
    log.record(int(ApiKey.JOIN_GROUP), 5, 0, 1, "c", 1, 2, join_group.JoinGroupRequest(group_id="a"), None)
    record(log, 1, group="a")
    page = log.page(limit=2)
    assert (cursors(page), page.next) == ([0, 1], 2)
    assert cursors(log.page(since=page.next, limit=2)) == [2, 3]
    assert cursors(log.page(group="a")) == [0, 1, 4, 5]
    assert cursors(log.page(api="JoinGroup")) == [4]
    assert cursors(log.page(api=12, group="b")) == [2, 3]
    dropped = log.page(api="JoinGroup").requests[0]
    assert dropped["response"] is None and dropped["errors"] == []
    # A filtered page that reaches its limit resumes right after the last entry returned.
    first_a = log.page(group="a", limit=3)
    assert (cursors(first_a), first_a.next) == ([0, 1, 4], 5)
    assert cursors(log.page(since=first_a.next, group="a")) == [5]


def test_clear_forgets_but_cursors_go_on() -> None:
    log = RequestLog(8)
    record(log, 3)
    log.clear()
    page = log.page()
    assert (page.requests, page.next, page.missed) == ([], 3, 3)
    record(log, 1)
    assert cursors(log.page(since=3)) == [3]


def test_bad_cursors_and_filters_are_refused() -> None:
    log = RequestLog(8)
    record(log, 2)
    for kwargs, reason in [
        ({"since": 3}, "cursor 3 is outside 0..2"),
        ({"since": -1}, "outside"),
        ({"limit": 0}, "limit must be at least 1"),
        ({"api": "Nope"}, "unknown API 'Nope'"),
    ]:
        with pytest.raises(ControlError, match=reason) as refused:
            log.page(**kwargs)
        assert refused.value.status == 400
    with pytest.raises(ValueError):
        RequestLog(-1)


def test_capacity_zero_turns_tracking_off() -> None:
    log = RequestLog(0)
    assert not log.enabled
    record(log, 3)
    page = log.page()
    assert (page.next, page.requests) == (0, [])


def test_json_is_rendered_only_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = tracking.to_json

    def counting(value: Any, field: str = "") -> Any:
        calls.append(value)
        return real(value, field)

    monkeypatch.setattr(tracking, "to_json", counting)
    log = RequestLog(1000)
    record(log, 500)
    assert calls == []
    log.page(limit=2)
    assert len(calls) == 4  # request and response of two entries


def test_a_pre_encoded_response_body_is_decoded_for_reading() -> None:
    log = RequestLog(4)
    response = offset_commit.OffsetCommitResponse(
        topics=[
            offset_commit.OffsetCommitResponseTopic(
                name="t", partitions=[offset_commit.OffsetCommitResponsePartition(0, ErrorCode.NOT_COORDINATOR)]
            )
        ]
    )
    body = encode_response(ApiKey.OFFSET_COMMIT, 8, response)
    log.record(int(ApiKey.OFFSET_COMMIT), 8, 0, 1, "c", 1, 2, offset_commit.OffsetCommitRequest(group_id="g"), body)
    [entry] = log.page().requests
    assert entry["errors"] == [{"code": 16, "name": "NOT_COORDINATOR", "message": None}]
    assert entry["response"]["topics"][0]["partitions"][0]["error_code"] == 16
