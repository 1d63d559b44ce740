"""`kgc dump --offsets-decoder` on a __consumer_offsets log written by our own writer (PartitionWriter),
field by field against Kafka's OffsetsMessageParser output format."""

from __future__ import annotations

import json
import struct

import pytest

from coordinator.__main__ import main
from coordinator.config import Config
from coordinator.groups.lifecycle import offsets_log_config
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.record_json import decode
from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, MemberSnapshot
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone, encode_record
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.partition_writer import PartitionWriter
from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from storage.log_manager import LogManager

SUB = encode_subscription(
    ConsumerProtocolSubscription(
        version=3, topics=["orders"], owned_partitions=[TopicPartition("orders", [0])], generation_id=4, rack_id="r1"
    )
)
ASSIGNMENT = encode_assignment(
    ConsumerProtocolAssignment(version=0, assigned_partitions=[TopicPartition("orders", [0, 1])], user_data=b"\x01")
)
MEMBER = MemberSnapshot("m-1", None, "client-1", "/10.0.0.1", 30000, 10000, SUB, ASSIGNMENT)
RECORDS = [
    GroupMetadataRecord("g1", "consumer", 5, "range", "m-1", 1234, (MEMBER,)),
    OffsetCommitRecord("g1", "orders", 0, 42, 7, "meta", 1000, None),
    OffsetCommitRecord("g1", "orders", 1, 43, -1, "", 1001, 99999),  # written as value v1
    OffsetTombstone("g1", "orders", 1),
    GroupTombstone("g1"),
]


@pytest.fixture
def data_dir(tmp_path):
    """The records above, appended by the durable writer as one op, then closed cleanly."""
    log_config = offsets_log_config(Config({"data.dir": str(tmp_path)}))
    writer = PartitionWriter(
        OFFSETS_TOPIC, LogManager(tmp_path, FakeClock(5_000)), 50, log_config, FakeClock(5_000), encode_record
    )
    writer.append(partition_for("g1"), RECORDS)
    writer.close()
    return tmp_path


def decoded_lines(data_dir, capsys) -> list[str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["dump", str(data_dir / f"__consumer_offsets-{partition_for('g1')}"), "--offsets-decoder"])
    assert exit_info.value.code == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("| offset:")]


def key_and_payload(line: str) -> tuple[dict, str]:
    key_text = line.split(" key: ", 1)[1].split(" payload: ", 1)[0]
    return json.loads(key_text), line.split(" payload: ", 1)[1]


def test_every_record_is_decoded_field_by_field(data_dir, capsys):
    lines = decoded_lines(data_dir, capsys)
    assert len(lines) == 5
    key, payload = key_and_payload(lines[0])
    assert key == {"type": "2", "data": {"group": "g1"}}
    assert payload.startswith('{"version":"3","data":{"protocolType":"consumer","generation":5,')  # compact
    group = json.loads(payload)["data"]
    assert (group["protocol"], group["leader"], group["currentStateTimestamp"]) == ("range", "m-1", 1234)
    assert group["members"] == [
        {
            "memberId": "m-1",
            "groupInstanceId": None,
            "clientId": "client-1",
            "clientHost": "/10.0.0.1",
            "rebalanceTimeout": 30000,
            "sessionTimeout": 10000,
            "subscription": {
                "topics": ["orders"],
                "userData": None,
                "ownedPartitions": [{"topic": "orders", "partitions": [0]}],
                "generationId": 4,
                "rackId": "r1",
            },
            "assignment": {"assignedPartitions": [{"topic": "orders", "partitions": [0, 1]}], "userData": "AQ=="},
        }
    ]

    key, payload = key_and_payload(lines[1])
    assert key == {"type": "1", "data": {"group": "g1", "topic": "orders", "partition": 0}}
    assert payload == ('{"version":"3","data":{"offset":42,"leaderEpoch":7,"metadata":"meta","commitTimestamp":1000}}')
    _, payload = key_and_payload(lines[2])
    assert payload == (
        '{"version":"1","data":{"offset":43,"metadata":"","commitTimestamp":1001,"expireTimestamp":99999}}'
    )
    key, payload = key_and_payload(lines[3])
    assert key["data"] == {"group": "g1", "topic": "orders", "partition": 1} and payload == "<DELETE>"
    key, payload = key_and_payload(lines[4])
    assert key == {"type": "2", "data": {"group": "g1"}} and payload == "<DELETE>"


def test_json_output_carries_the_decoded_texts(data_dir, capsys):
    with pytest.raises(SystemExit):
        main(["dump", str(data_dir), "--offsets-decoder", "--json"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    decoded = [r["decoded"] for r in records if r["type"] == "record"]
    assert decoded[3]["payload"] == "<DELETE>" and json.loads(decoded[1]["key"])["data"]["partition"] == 0


def test_what_kafka_reports_instead_of_a_record():
    assert decode(3, struct.pack(">h", 32767), b"") == ("Unknown record type 32767 at offset 3, skipping.", None)
    key, _ = encode_record(OffsetTombstone("g", "t", 0))
    text, payload = decode(4, key, b"\x00\x03\x00")
    assert text.startswith("Error at offset 4, skipping.") and payload is None
    with pytest.raises(ValueError, match="message had a missing key"):
        decode(5, None, b"")


def test_a_group_that_is_not_a_consumer_group_keeps_its_bytes_as_base64():
    record = GroupMetadataRecord(
        "c", "connect", 1, "default", "m", None, (MemberSnapshot("m", "i", "c", "h", 1, 2, b"sub", b""),)
    )
    key, value = encode_record(record)
    _, payload = decode(0, key, value)
    member = json.loads(payload)["data"]["members"][0]
    assert (member["subscription"], member["assignment"], member["groupInstanceId"]) == ("c3Vi", "", "i")
    assert json.loads(payload)["data"]["currentStateTimestamp"] == -1
