"""Transcript summaries of ShareFetch and ShareAcknowledge, one per topic-partition (topic by
name): what the member acknowledged (ranges with their types), and what it was given (the
acquired ranges with their delivery counts, the records returned) or refused (the error and the
acknowledgement error by name). A learner reads a share group's deliveries from these lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ACK_NAMES = {0: "GAP", 1: "ACCEPT", 2: "RELEASE", 3: "REJECT", 4: "RENEW"}

TopicName = Callable[[Any], str]  # topic id -> name (the registry, through the request context)


def _acks(batches: Any) -> list[list[Any]]:
    out = []
    for b in batches:
        kinds = {ACK_NAMES.get(t, str(t)) for t in b.acknowledge_types}
        out.append([b.first_offset, b.last_offset, kinds.pop() if len(kinds) == 1 else "MIXED"])
    return out


def share_request(topic: TopicName, request: Any) -> list[dict[str, Any]]:
    return [
        {"topic": topic(t.topic_id), "partition": p.partition_index, "acks": _acks(p.acknowledgement_batches)}
        for t in request.topics
        for p in t.partitions
    ]


def share_response(
    topic: TopicName, response: Any, error_name: Callable[[int], str], count: Callable[[Any], tuple[int, int]]
) -> list[dict[str, Any]]:
    out = []
    for t in response.responses:
        for p in t.partitions:
            summary: dict[str, Any] = {"topic": topic(t.topic_id), "partition": p.partition_index}
            acquired = getattr(p, "acquired_records", None)
            if acquired is not None:  # ShareFetch
                summary["acquired"] = [[a.first_offset, a.last_offset, a.delivery_count] for a in acquired]
                summary["records"] = count(p.records)[0]
                ack_error = p.acknowledge_error_code
                summary["ack_error"] = error_name(ack_error) if ack_error else None
            summary["error"] = error_name(p.error_code) if p.error_code else None
            out.append(summary)
    return out
