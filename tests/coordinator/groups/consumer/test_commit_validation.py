"""Who may commit a consumer group's offsets, and at which epoch (KIP-1251, Kafka 4.3): Kafka's own
cases as data (kip1251_cases.json) run against ConsumerGroup state built by replaying records,
the replay of assignment epochs (UtilsTest), their bytes, and the whole-request refusal of the
OffsetCommit and TxnOffsetCommit operations. OffsetFetch keeps the exact epoch check."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.codec import decode_consumer_record, encode_consumer_record
from coordinator.groups.consumer.commit_validation import validate_offset_commit, validate_offset_fetch
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.member import epochs_from_topic_partitions
from coordinator.groups.consumer.record_json import kafka_uuid, to_json_text
from coordinator.groups.offset_requests import CommitPartition
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams, commit_transactional_offsets
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness
from tests.coordinator.groups.modern.support import ConsumerTestContext
from tests.coordinator.groups.offset_helpers import commit

DATA = json.loads((Path(__file__).parent / "kip1251_cases.json").read_text())
IDS = {name: uuid.UUID(int=n) for name, n in DATA["topic_ids"].items()}
GROUP = "group-id"


def _held(spec: dict[str, dict[str, int]]) -> tuple[r.TopicPartitions, ...]:
    out = []
    for name, epochs in spec.items():
        partitions = tuple(sorted(int(p) for p in epochs))
        out.append(r.TopicPartitions(IDS[name], partitions, tuple(epochs[str(p)] for p in partitions)))
    return tuple(out)


def _group(members: list[dict[str, Any]]) -> Harness:
    """The group as its records leave it (ConsumerGroupBuilder): members, then the group epoch."""
    h = Harness()
    for name in IDS:
        h.topics.add(name, 3, IDS[name])
    for m in members:
        classic = r.ClassicMemberMetadata(45_000, (r.ClassicProtocol("range", b""),)) if m.get("classic") else None
        h.apply(
            r.ConsumerGroupMemberMetadataRecord(
                GROUP, m["id"], None, None, "c", "/h", ("foo",), "", 5000, None, classic
            )
        )
        h.apply(
            r.ConsumerGroupCurrentMemberAssignmentRecord(
                GROUP, m["id"], m["epoch"], m["epoch"] - 1, 0, _held(m.get("assigned", {})), _held(m.get("pending", {}))
            )
        )
    h.apply(r.ConsumerGroupMetadataRecord(GROUP, max([m["epoch"] for m in members], default=1)))
    return h


@pytest.mark.parametrize("case", DATA["validate_cases"], ids=[c["kafka_test"] for c in DATA["validate_cases"]])
def test_kafka_case(case: dict[str, Any]) -> None:
    group = _group(case["members"]).group(GROUP)
    c = case["commit"]
    got: tuple[str, str] | None = None
    try:
        check = validate_offset_commit(
            group, c["member_id"], None, c["epoch"], c.get("transactional", False), c.get("version", 9)
        )
        for name, partition in c["partitions"] if check is not None else ():
            refusal = check.refusal(IDS[name], name, partition)
            if refusal is not None:
                raise refusal
    except ConsumerGroupError as exc:
        got = (ErrorCode(exc.code).name, exc.message)
    expected = case["expected"]
    assert got == (None if expected is None else (expected["error"], expected["message"]))


@pytest.mark.parametrize("case", DATA["replay_cases"], ids=[c["kafka_test"] for c in DATA["replay_cases"]])
def test_kafka_replay_case(case: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    epochs = case["assignment_epochs"]
    tp = r.TopicPartitions(IDS["foo"], tuple(case["partitions"]), None if epochs is None else tuple(epochs))
    expected = {int(p): e for p, e in case["expected"].items()}
    with caplog.at_level(logging.ERROR):
        assert epochs_from_topic_partitions([tp], case["member_epoch"], "test-group") == {IDS["foo"]: expected}
    if "logged" in case:
        assert [rec.getMessage() for rec in caplog.records] == [
            f"[GroupId test-group] {case['logged']} for topic {IDS['foo']}"
        ]
    # The same through a replayed record: the member reads each partition's epoch from it.
    h = Harness()
    h.apply(r.ConsumerGroupMemberMetadataRecord(GROUP, "m", None, None, "c", "/h", ("foo",), "", 5000, None))
    h.apply(r.ConsumerGroupCurrentMemberAssignmentRecord(GROUP, "m", case["member_epoch"], -1, 0, (tp,), ()))
    member = h.group(GROUP).members["m"]
    assert {p: member.assignment_epoch(IDS["foo"], p) for p in case["partitions"]} == expected


def test_assignment_epochs_bytes() -> None:
    """ConsumerGroupCurrentMemberAssignmentValue v0 with AssignmentEpochs as tagged field 0 of
    each TopicPartitions (Kafka 4.3's JSON); a record written before 4.3 has none."""
    foo = IDS["foo"]
    record = r.ConsumerGroupCurrentMemberAssignmentRecord(
        "g", "m", 11, 10, 0, (r.TopicPartitions(foo, (0, 1), (10, 11)),), (r.TopicPartitions(foo, (2,), (9,)),)
    )
    key, value = encode_consumer_record(record)
    assert key == b"\x00\x08\x00\x01g\x00\x01m"
    assert value is not None
    expected = (
        "0000"  # version 0
        "0000000b"
        "0000000a"
        "00"  # member epoch 11, previous 10, state Stable
        "02" + foo.bytes.hex() + "03"
        "00000000"
        "00000001"  # one topic: partitions [0, 1]
         + "01"
        "00"
        "09"
        "03"
        "0000000a"
        "0000000b"  # its tags: one, tag 0, 9 bytes: [10, 11]
         + "02" + foo.bytes.hex() + "02"
        "00000002"
        "01"
        "00"
        "05"
        "02"
        "00000009"  # pending: [2] at [9]
         + "00"  # the value's own tagged fields: none
    )
    assert value.hex() == expected
    assert decode_consumer_record(8, key, value) == record
    # kafka-dump-log's JSON writes the tagged field only when set.
    assert to_json_text(record)[1] == (
        '{"version":"0","data":{"memberEpoch":11,"previousMemberEpoch":10,"state":0,'
        f'"assignedPartitions":[{{"topicId":"{kafka_uuid(foo)}","partitions":[0,1],"assignmentEpochs":[10,11]}}],'
        f'"partitionsPendingRevocation":[{{"topicId":"{kafka_uuid(foo)}","partitions":[2],"assignmentEpochs":[9]}}]}}}}'
    )
    old = bytes.fromhex("00000000000b0000000a0002" + foo.bytes.hex() + "0200000000000100")
    decoded = decode_consumer_record(8, key, old)
    assert decoded.assigned_partitions == (r.TopicPartitions(foo, (0,)),)  # no epochs: None


def _lagging_member() -> tuple[ConsumerTestContext, uuid.UUID]:
    """m1 held foo-0 and foo-1 since epoch 1; m2 joined, m1 gave foo-1 up and moved to epoch 2."""
    c = ConsumerTestContext(start_ms=1_000)
    foo = c.registry.add("foo", 2)
    c.join_consumer("m1", ["foo"], group_id="cg")
    c.join_consumer("m2", ["foo"], group_id="cg")
    revoking = c.cg_heartbeat("m1", 1, group_id="cg", owned=[(foo, [0, 1])])
    kept = [(tp.topic_id, list(tp.partitions)) for tp in revoking.assignment or ()]
    assert c.cg_heartbeat("m1", 1, group_id="cg", owned=kept).member_epoch == 2
    assert c.shard.consumer_group("cg").members["m1"].assignment_epochs == {foo: {0: 1}}
    return c, foo


def test_one_refused_partition_refuses_the_whole_commit() -> None:
    """OffsetMetadataManager.commitOffset: the validator throws from the commit loop, so every
    partition answers the error and nothing is written."""
    c, _ = _lagging_member()
    c.take_records()
    result = c.send(commit("cg", "foo", {0: 5, 1: 6}, generation=1, member="m1"))
    assert result.topics == [("foo", [(0, ErrorCode.STALE_MEMBER_EPOCH), (1, ErrorCode.STALE_MEMBER_EPOCH)])]
    assert c.take_records() == []
    assert c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1")).error == ErrorCode.NONE
    # A partition whose metadata is too large is answered on its own and not checked (Kafka's loop).
    result = c.send(commit("cg", "foo", {0: 7, 1: 8}, generation=1, member="m1", metadata="x" * 5000))
    assert result.topics == [
        ("foo", [(0, ErrorCode.OFFSET_METADATA_TOO_LARGE), (1, ErrorCode.OFFSET_METADATA_TOO_LARGE)])
    ]


def test_txn_offset_commit_refusal_is_illegal_generation() -> None:
    """OffsetMetadataManager.commitTransactionalOffset maps STALE_MEMBER_EPOCH to ILLEGAL_GENERATION."""
    c, _ = _lagging_member()

    def txn(partition: int) -> Any:
        params = TxnOffsetCommitParams("tx", "cg", 7, 0, [("foo", [CommitPartition(partition, 5)])], 1, "m1", None, 4)
        return c.send(lambda ctx: commit_transactional_offsets(ctx, params))

    assert txn(0).topics == [("foo", [(0, ErrorCode.NONE)])]
    assert txn(1).topics == [("foo", [(1, ErrorCode.ILLEGAL_GENERATION)])]


def test_offset_fetch_keeps_the_exact_epoch() -> None:
    """KIP-1251 relaxes commits only: ConsumerGroup.validateOffsetFetch still wants the epoch."""
    h = _group([{"id": "member-id", "epoch": 10, "assigned": {"foo": {"0": 9}}}])
    group = h.group(GROUP)
    validate_offset_fetch(group, None, -1)  # the admin client
    validate_offset_fetch(group, "member-id", 10)
    for epoch in (9, 11):
        with pytest.raises(ConsumerGroupError) as info:
            validate_offset_fetch(group, "member-id", epoch)
        assert (info.value.code, info.value.message) == (
            ErrorCode.STALE_MEMBER_EPOCH,
            f"The received member epoch {epoch} does not match the expected member epoch 10.",
        )
    with pytest.raises(ConsumerGroupError) as info:
        validate_offset_fetch(group, "zz", 10)
    assert info.value.code == ErrorCode.UNKNOWN_MEMBER_ID
