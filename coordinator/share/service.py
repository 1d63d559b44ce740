"""ShareFetch and ShareAcknowledge as one broker serves them (Kafka's KafkaApis
handleShareFetchRequest / handleShareAcknowledgeRequest over its SharePartitionManager).

Both check the member id and the share session first (a failure is the request's top-level
error), validate each partition's acknowledgement batches the way KafkaApis does (INVALID_REQUEST
for the partition: empty or descending ranges, overlapping batches, a type count that does not
match the range, a type out of range, RENEW without IsRenewAck), then acknowledge. ShareFetch
then reads the session's partitions, unless the session ends (epoch -1: the member's records are
released) or the request only renews locks (KIP-1222). Which partitions an answer lists: every
partition of a new session; afterwards only those with records, errors, acknowledgement results or
new to the session (Kafka's ShareSessionContext). Topic ids that name no topic are UNKNOWN_TOPIC_ID
and topics the principal may not READ are TOPIC_AUTHORIZATION_FAILED, partition by partition.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from coordinator.observe.reasons import explain
from coordinator.share.acquire import Acquired
from coordinator.share.fetch import PartitionResult, ShareFetchParams, share_fetch
from coordinator.share.manager import SharePartitionManager
from coordinator.share.partition import RENEW, AckBatch
from coordinator.share.persister import SharePartitionKey
from coordinator.share.sessions import FINAL_EPOCH, ContextKind, SessionError, TopicIdPartition
from protocol.errors import ErrorCode

MAX_MEMBER_ID_LENGTH = 36


@dataclass(frozen=True)
class AckPartition:
    topic_id: uuid.UUID
    partition: int
    batches: tuple[AckBatch, ...]


@dataclass
class PartitionAnswer:
    topic_id: uuid.UUID
    partition: int
    error: int = ErrorCode.NONE
    message: str | None = None
    ack_error: int = ErrorCode.NONE
    ack_message: str | None = None
    records: bytes = b""
    acquired: list[Acquired] = field(default_factory=list)
    acknowledged: bool = False  # the request acknowledged records here: answered even when all went well


@dataclass
class ShareAnswer:
    error: int = ErrorCode.NONE
    message: str | None = None
    lock_timeout_ms: int = 0
    partitions: list[PartitionAnswer] = field(default_factory=list)


@dataclass(frozen=True)
class ShareRequest:
    group_id: str | None
    member_id: str | None
    epoch: int
    acks: Sequence[AckPartition] = ()
    is_renew: bool = False
    supports_renew: bool = False  # v2+
    connection_id: int = 0
    # ShareFetch only:
    fetch: ShareFetchParams | None = None
    wanted: Sequence[TopicIdPartition] = ()
    forgotten: Sequence[TopicIdPartition] = ()


class ShareService:
    """The share side of one broker; `topic_authorized(name)` is the handler's TOPIC READ check."""

    def __init__(self, manager: SharePartitionManager) -> None:
        self.manager = manager
        self._rotation = 0

    async def share_fetch(self, r: ShareRequest, topic_authorized: Callable[[str], bool]) -> ShareAnswer:
        invalid = _invalid(r)
        if invalid is not None:
            return invalid
        assert r.group_id is not None and r.member_id is not None and r.fetch is not None
        key = (r.group_id, r.member_id)
        try:
            ctx = self.manager.sessions.new_context(key, r.epoch, r.wanted, r.forgotten, bool(r.acks), r.connection_id)
        except SessionError as exc:
            explain(exc.code, exc.message)
            return ShareAnswer(exc.code, exc.message)
        answers: dict[TopicIdPartition, PartitionAnswer] = {}
        await self._acknowledge(r, answers, topic_authorized)
        if ctx.kind is ContextKind.FINAL:
            await self._end_session(r.group_id, r.member_id)
        elif not r.is_renew:
            keys = self._readable(r.group_id, ctx.partitions, answers, topic_authorized)
            self._rotation += 1
            fetched = await share_fetch(self.manager, keys, r.fetch, self._rotation)
            for k, result in fetched.items():
                _merge(answers, k.topic_id, k.partition, result)
        session = ctx.session
        shown = []
        for tp, answer in answers.items():
            news = session is not None and session.partitions.get(tp, False)
            if ctx.kind is ContextKind.FULL or news or _has_news(answer):
                shown.append(answer)
            if session is not None and tp in session.partitions:
                session.partitions[tp] = False
        if ctx.kind is ContextKind.FULL:
            shown += [PartitionAnswer(t, p) for t, p in ctx.partitions if (t, p) not in answers]
        lock_ms = self.manager.group_settings(r.group_id).record_lock_duration_ms
        return ShareAnswer(lock_timeout_ms=lock_ms, partitions=shown)

    async def share_acknowledge(self, r: ShareRequest, topic_authorized: Callable[[str], bool]) -> ShareAnswer:
        invalid = _invalid(r)
        if invalid is not None:
            return invalid
        assert r.group_id is not None and r.member_id is not None
        try:
            self.manager.sessions.acknowledge_update((r.group_id, r.member_id), r.epoch)
        except SessionError as exc:
            explain(exc.code, exc.message)
            return ShareAnswer(exc.code, exc.message)
        answers: dict[TopicIdPartition, PartitionAnswer] = {}
        await self._acknowledge(r, answers, topic_authorized)
        if r.epoch == FINAL_EPOCH:
            await self._end_session(r.group_id, r.member_id)
        lock_ms = self.manager.group_settings(r.group_id).record_lock_duration_ms
        return ShareAnswer(lock_timeout_ms=lock_ms, partitions=list(answers.values()))

    async def _acknowledge(
        self, r: ShareRequest, answers: dict[TopicIdPartition, PartitionAnswer], topic_authorized: Callable[[str], bool]
    ) -> None:
        assert r.group_id is not None and r.member_id is not None
        for ack in r.acks:
            answer = answers.setdefault((ack.topic_id, ack.partition), PartitionAnswer(ack.topic_id, ack.partition))
            answer.acknowledged = True
            topic = self.manager.logs.topic_name(ack.topic_id)
            code: int
            message: str | None
            if topic is None:
                code, message = ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {ack.topic_id}"
            elif not topic_authorized(topic):
                code, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"not authorized to read topic {topic}"
            elif (bad := _invalid_batches(ack.batches, r.supports_renew, r.is_renew)) is not None:
                code, message = ErrorCode.INVALID_REQUEST, bad
            else:
                key = SharePartitionKey(r.group_id, ack.topic_id, ack.partition)
                code, message = await self.manager.acknowledge(r.group_id, r.member_id, key, ack.batches)
            if code != ErrorCode.NONE:
                explain(code, f"acknowledgement of {ack.topic_id}-{ack.partition}: {message}")
            answer.ack_error, answer.ack_message = code, message

    def _readable(
        self,
        group_id: str,
        partitions: Sequence[TopicIdPartition],
        answers: dict[TopicIdPartition, PartitionAnswer],
        topic_authorized: Callable[[str], bool],
    ) -> list[SharePartitionKey]:
        keys = []
        for topic_id, partition in partitions:
            topic = self.manager.logs.topic_name(topic_id)
            if topic is None:
                code, message = ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {topic_id}"
            elif not topic_authorized(topic):
                code, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"not authorized to read topic {topic}"
            else:
                keys.append(SharePartitionKey(group_id, topic_id, partition))
                continue
            answer = answers.setdefault((topic_id, partition), PartitionAnswer(topic_id, partition))
            answer.error, answer.message = code, message
        return keys

    async def _end_session(self, group_id: str, member_id: str) -> None:
        """Kafka releaseSession: the session goes and the member's records are released."""
        session = self.manager.sessions.remove((group_id, member_id))
        if session is not None:
            keys = [SharePartitionKey(group_id, t, p) for t, p in session.partitions]
            await self.manager.release(group_id, member_id, keys)


def _invalid(r: ShareRequest) -> ShareAnswer | None:
    if not r.group_id:
        return _refused(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    if not r.member_id or len(r.member_id) > MAX_MEMBER_ID_LENGTH:
        return _refused(ErrorCode.INVALID_REQUEST, "MemberId must be a non-empty id of at most 36 characters.")
    f = r.fetch
    if r.is_renew and f is not None and (f.max_bytes or f.min_bytes or f.max_records or f.max_wait_ms):
        # KIP-1222: a renewal fetches nothing
        return _refused(ErrorCode.INVALID_REQUEST, "A renew acknowledgement request must not ask for records.")
    return None


def _refused(code: int, message: str) -> ShareAnswer:
    explain(code, message)
    return ShareAnswer(code, message)


def _invalid_batches(batches: Sequence[AckBatch], supports_renew: bool, is_renew: bool) -> str | None:
    """KafkaApis.validateAcknowledgementBatches: why the partition's batches are refused."""
    top = RENEW if supports_renew else RENEW - 1
    previous_last = -1
    for b in batches:
        if b.first_offset > b.last_offset:
            return f"batch {b.first_offset}-{b.last_offset} ends before it starts"
        if b.first_offset <= previous_last:
            return f"batch {b.first_offset}-{b.last_offset} overlaps or precedes the previous batch"
        if not b.types:
            return f"batch {b.first_offset}-{b.last_offset} has no acknowledge type"
        if len(b.types) > 1 and len(b.types) != b.last_offset - b.first_offset + 1:
            return f"batch {b.first_offset}-{b.last_offset} has {len(b.types)} acknowledge types"
        if any(t < 0 or t > top for t in b.types):
            return f"batch {b.first_offset}-{b.last_offset} has an unknown acknowledge type"
        if RENEW in b.types and not is_renew:
            return "a Renew acknowledgement needs IsRenewAck"
        previous_last = b.last_offset
    return None


def _merge(
    answers: dict[TopicIdPartition, PartitionAnswer], topic_id: uuid.UUID, partition: int, r: PartitionResult
) -> None:
    answer = answers.setdefault((topic_id, partition), PartitionAnswer(topic_id, partition))
    answer.error, answer.message, answer.records, answer.acquired = r.error, r.message, r.records, r.acquired


def _has_news(a: PartitionAnswer) -> bool:
    return bool(a.error or a.ack_error or a.acquired or a.records or a.acknowledged)
