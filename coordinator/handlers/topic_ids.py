"""OffsetCommit and OffsetFetch v10's topic ids (KIP-848 follow-ups KAFKA-14690/14691): the
coordinator keeps offsets by topic name, so the handlers name each asked id by the broker's topic
of that id first and (OffsetFetch) name each answered topic by its id after (Kafka's KafkaApis
handleOffsetCommitRequest, fetchOffsetsForGroup and fetchAllOffsetsForGroup).

An id no topic has (the zero id included) answers UNKNOWN_TOPIC_ID for its partitions, after the
group's other topics and only when the group itself has no error; an all-topics answer leaves out
the topics that no longer exist (nothing to name them by). The ids asked are handed to the fetch,
which answers -1 for an offset committed under another id (a recreated topic, KAFKA-19154).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import OffsetCommitRequest
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)

FIRST_TOPIC_ID_VERSION = 10  # OffsetCommit and OffsetFetch name topics by id from v10


class _Topics(Protocol):
    def all(self) -> Iterable[Any]:
        """Every topic: objects with `name` and `topic_id`."""


def name_commit_topics(request: OffsetCommitRequest, topics: _Topics) -> None:
    """KafkaApis.handleOffsetCommitRequest (v10): each topic gets the name of the broker's topic
    with its id; an unknown id (the zero id too) is left nameless, which answers UNKNOWN_TOPIC_ID."""
    by_id = {t.topic_id: t.name for t in topics.all()}
    for t in request.topics:
        t.name = by_id.get(t.topic_id, "")


class FetchTopicIds:
    """Built from a v10 request (whose asked topics it names, in place, dropping unknown ids);
    `answer` puts the ids into the response."""

    def __init__(self, request: OffsetFetchRequest, topics: _Topics) -> None:
        existing = list(topics.all())
        self._by_name: dict[str, uuid.UUID] = {t.name: t.topic_id for t in existing}
        by_id = {t.topic_id: t.name for t in existing}
        self._asked: dict[str, dict[str, uuid.UUID]] = {}
        self._unknown: dict[str, list[OffsetFetchRequestTopics]] = {}
        for group in request.groups:
            if group.topics is None:
                continue
            known = []
            for t in group.topics:
                name = by_id.get(t.topic_id)
                if name is None:
                    explain(ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {t.topic_id}")
                    self._unknown.setdefault(group.group_id, []).append(t)
                    continue
                t.name = name
                self._asked.setdefault(group.group_id, {})[name] = t.topic_id
                known.append(t)
            group.topics = known

    def asked(self, group_id: str) -> Mapping[str, uuid.UUID]:
        """The id each topic of the group was asked by (name -> id)."""
        return self._asked.get(group_id, {})

    def answer(self, response: OffsetFetchResponse) -> None:
        for group in response.groups:
            if group.error_code:
                continue
            asked = self._asked.get(group.group_id, {})
            topics = []
            for t in group.topics:
                topic_id = asked.get(t.name) or self._by_name.get(t.name)
                if topic_id is not None:  # else: an all-topics answer for a deleted topic
                    t.topic_id = topic_id
                    topics.append(t)
            topics += [
                OffsetFetchResponseTopics(
                    topic_id=t.topic_id,
                    partitions=[
                        OffsetFetchResponsePartitions(p, -1, -1, "", ErrorCode.UNKNOWN_TOPIC_ID)
                        for p in t.partition_indexes
                    ],
                )
                for t in self._unknown.get(group.group_id, [])
            ]
            group.topics = topics
