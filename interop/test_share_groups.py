"""Share groups (KIP-932) with confluent-kafka's ShareConsumer (librdkafka 2.16).

What each test checks is what the consumers saw (partition, offset, delivery count) and what the
broker's share-partitions hold afterwards (the control plane's share_partitions view: start offset
and in-flight ranges). Share settings are shortened (FAST_SHARE_SETTINGS) and every share group
starts at the earliest offset (`share.auto.offset.reset`, set through the control plane the way
rd_kafka_mock_sharegroup_set_auto_offset_reset sets it). Deadlines only bound a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import AcknowledgeType, Consumer, ConsumerGroupType
from confluent_kafka.admin import AdminClient

from interop.clients.background import BackgroundClient
from interop.clients.process import REPO
from interop.clients.share import FAST_SHARE_SETTINGS, ShareReader, delivered, produce_values, stop_all, wait_delivered
from tests.support.serve_process import start_serve
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.interop, pytest.mark.kafka_settings(FAST_SHARE_SETTINGS)]

DEADLINE = 30.0


def _accept(message: Any) -> int:
    return AcknowledgeType.ACCEPT


def _share_group(coordinator: Any, topic: str, partitions: int) -> None:
    coordinator.create_topic(topic, partitions)
    coordinator.control.share_settings(share_auto_offset_reset="earliest")


def _all_acknowledged(coordinator: Any, group: str, ends: dict[int, int]) -> bool:
    """Every share-partition's start offset is past its last record, nothing in flight."""
    view = {p["partition"]: p for p in coordinator.control.share_partitions(group)}
    return all(p in view and view[p]["start_offset"] == end and not view[p]["in_flight"] for p, end in ends.items())


@pytest.mark.parametrize("mode", ["implicit", "explicit"])
def test_three_consumers_share_10000_records_each_delivered_once(
    kafka_coordinator: Any, topic_name: str, mode: str
) -> None:
    _share_group(kafka_coordinator, topic_name, 4)
    count = 10_000
    produce_values(kafka_coordinator.bootstrap, topic_name, [str(i) for i in range(count)], 4)
    decide = _accept if mode == "explicit" else None
    readers = [
        ShareReader(f"c{i}", kafka_coordinator.bootstrap, "sg", [topic_name], decide=decide).start() for i in range(3)
    ]
    try:
        wait_delivered(readers, count, DEADLINE, "every record")
    finally:
        stop_all(readers)  # commits the last poll's acknowledgements, then leaves
    seen = delivered(readers)
    copies = Counter((d.partition, d.offset) for d in seen)
    assert len(seen) == count and len(copies) == count, f"duplicates: {[k for k, n in copies.items() if n > 1][:10]}"
    assert {d.value for d in seen} == {str(i).encode() for i in range(count)}
    assert all(d.delivery_count == 1 for d in seen)
    assert not any(reader.errors for reader in readers), [reader.errors for reader in readers]
    wait_until(
        lambda: _all_acknowledged(kafka_coordinator, "sg", {p: count // 4 for p in range(4)}),
        DEADLINE,
        message=lambda: f"all acknowledged: {kafka_coordinator.control.share_partitions('sg')}",
    )


def test_released_records_come_again_rejected_never(kafka_coordinator: Any, topic_name: str) -> None:
    _share_group(kafka_coordinator, topic_name, 1)
    produce_values(kafka_coordinator.bootstrap, topic_name, [str(i) for i in range(30)], 1)
    verdicts = {0: AcknowledgeType.RELEASE, 1: AcknowledgeType.REJECT, 2: AcknowledgeType.ACCEPT}

    def decide(message: Any) -> int:  # first delivery by offset % 3; a redelivery is accepted
        first = message.delivery_count() == 1 and message.value() != b"marker"
        return verdicts[message.offset() % 3] if first else AcknowledgeType.ACCEPT

    reader = ShareReader("c0", kafka_coordinator.bootstrap, "sg", [topic_name], decide=decide).start()
    try:
        wait_delivered([reader], 40, DEADLINE, "30 first deliveries and 10 released ones again")
        # A record written now comes after everything before it: once it arrives, a rejected
        # record that were to come again would have come first.
        produce_values(kafka_coordinator.bootstrap, topic_name, ["marker"], 1)
        wait_until(lambda: any(d.value == b"marker" for d in reader.deliveries), DEADLINE, message="the marker")
    finally:
        stop_all([reader])
    by_offset: dict[int, list[int]] = {}
    for d in reader.deliveries:
        by_offset.setdefault(d.offset, []).append(d.delivery_count)
    assert {o: c for o, c in by_offset.items() if o % 3 == 0 and o < 30} == {o: [1, 2] for o in range(0, 30, 3)}
    assert all(by_offset[o] == [1] for o in range(30) if o % 3 != 0), by_offset
    assert by_offset[30] == [1]
    wait_until(lambda: _all_acknowledged(kafka_coordinator, "sg", {0: 31}), DEADLINE, message="all acknowledged")


@pytest.mark.kafka_settings({"group.share.delivery.count.limit": 2})
def test_a_record_released_past_the_delivery_limit_is_archived(kafka_coordinator: Any, topic_name: str) -> None:
    _share_group(kafka_coordinator, topic_name, 1)
    produce_values(kafka_coordinator.bootstrap, topic_name, ["poison", "good"], 1)

    def decide(message: Any) -> int:
        return AcknowledgeType.RELEASE if message.value() == b"poison" else AcknowledgeType.ACCEPT

    reader = ShareReader("c0", kafka_coordinator.bootstrap, "sg", [topic_name], decide=decide).start()
    try:
        wait_delivered([reader], 3, DEADLINE, "poison twice, good once")
        produce_values(kafka_coordinator.bootstrap, topic_name, ["marker"], 1)
        wait_until(lambda: any(d.value == b"marker" for d in reader.deliveries), DEADLINE, message="the marker")
    finally:
        stop_all([reader])
    poison = [d.delivery_count for d in reader.deliveries if d.value == b"poison"]
    assert poison == [1, 2], reader.deliveries  # delivered at most delivery.count.limit times
    wait_until(lambda: _all_acknowledged(kafka_coordinator, "sg", {0: 3}), DEADLINE, message="archived and past")


def _holder(coordinator: Any, topic: str, count: int) -> BackgroundClient:
    argv = [sys.executable, "-m", "interop.clients.share", coordinator.bootstrap, "sg", topic, str(count)]
    return BackgroundClient(argv, cwd=REPO, name="share-holder", deadline=DEADLINE * 2)


def _holding(holder: BackgroundClient) -> list[int]:
    holder.wait_for(lambda c: any("holding" in e for e in c.events()), DEADLINE, "the holder to acquire its records")
    return [e["offset"] for e in holder.events() if "offset" in e]


@pytest.mark.kafka_settings({"clock.mode": "manual"})
def test_records_held_by_a_stuck_consumer_go_to_another_after_the_lock(kafka_coordinator: Any, topic_name: str) -> None:
    _share_group(kafka_coordinator, topic_name, 1)
    produce_values(kafka_coordinator.bootstrap, topic_name, [f"r{i}" for i in range(10)], 1)
    lock_ms = kafka_coordinator.control.share_settings()["group.share.record.lock.duration.ms"]
    with _holder(kafka_coordinator, topic_name, 10) as holder:
        held = _holding(holder)
        assert held == list(range(10))
        os.kill(holder.pid, signal.SIGSTOP)  # stuck: its connection open, nothing acknowledged
        reader = ShareReader("c1", kafka_coordinator.bootstrap, "sg", [topic_name], decide=_accept).start()
        try:
            produce_values(kafka_coordinator.bootstrap, topic_name, ["marker"], 1)
            wait_delivered([reader], 1, DEADLINE, "the marker")  # fetching, but the held records stay held
            assert [d.value for d in reader.deliveries] == [b"marker"]
            kafka_coordinator.control.clock.advance(lock_ms)
            wait_delivered([reader], 11, DEADLINE, "the held records after their lock expired")
        finally:
            stop_all([reader])
    again = [d for d in reader.deliveries if d.value != b"marker"]
    assert sorted(d.offset for d in again) == list(range(10))
    assert all(d.delivery_count == 2 for d in again)


def test_records_of_a_killed_consumer_are_released_when_its_connection_closes(
    kafka_coordinator: Any, topic_name: str
) -> None:
    """Kafka releases a share session's acquired records when its connection goes (the
    ShareSessionCache's disconnect listener): no lock needs to expire."""
    _share_group(kafka_coordinator, topic_name, 1)
    produce_values(kafka_coordinator.bootstrap, topic_name, [f"r{i}" for i in range(10)], 1)
    with _holder(kafka_coordinator, topic_name, 10) as holder:
        assert _holding(holder) == list(range(10))
        holder.kill()  # SIGKILL
    reader = ShareReader("c1", kafka_coordinator.bootstrap, "sg", [topic_name], decide=_accept).start()
    try:
        wait_delivered([reader], 10, DEADLINE, "the killed consumer's records")
    finally:
        stop_all([reader])
    assert sorted(d.offset for d in reader.deliveries) == list(range(10))
    # Released on disconnect, the first delivery does not count (Kafka's releaseAcquiredRecords).
    assert {d.delivery_count for d in reader.deliveries} == {1}


def test_a_share_group_and_a_consumer_group_each_see_everything(kafka_coordinator: Any, topic_name: str) -> None:
    _share_group(kafka_coordinator, topic_name, 4)
    values = [str(i) for i in range(2000)]
    produce_values(kafka_coordinator.bootstrap, topic_name, values, 4)
    readers = [ShareReader(f"s{i}", kafka_coordinator.bootstrap, "sg", [topic_name]).start() for i in range(2)]
    consumer = Consumer(
        {"bootstrap.servers": kafka_coordinator.bootstrap, "group.id": "cg", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic_name])
    got: list[bytes] = []
    try:

        def consumed() -> bool:
            for message in consumer.consume(500, 0.2):
                assert message.error() is None, message.error()
                got.append(message.value())
            return len(got) >= len(values)

        wait_until(consumed, DEADLINE, interval=0, message=lambda: f"the consumer group: {len(got)}")
        wait_delivered(readers, len(values), DEADLINE, "the share group")
    finally:
        consumer.close()
        stop_all(readers)
    assert sorted(got) == sorted(v.encode() for v in values)
    assert sorted(d.value for d in delivered(readers)) == sorted(v.encode() for v in values)
    # ListGroups with KIP-1043's types filter, as the AdminClient sends it: the classic group is
    # listed under CLASSIC, the share group under no consumer type (confluent-kafka has no SHARE).
    admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})

    def listed(*types: ConsumerGroupType) -> dict[str, Any]:
        found = admin.list_consumer_groups(types=set(types), request_timeout=DEADLINE).result()
        assert not found.errors, found.errors
        return {g.group_id: g.type for g in found.valid}

    assert listed(ConsumerGroupType.CLASSIC) == {"cg": ConsumerGroupType.CLASSIC}
    assert listed(ConsumerGroupType.CONSUMER) == {}


@pytest.mark.kafka_settings(
    {"group.share.min.record.lock.duration.ms": 1000, "group.share.record.lock.duration.ms": 2000}
)
def test_in_real_time_a_stuck_consumers_records_go_to_another_when_the_lock_expires(
    kafka_coordinator: Any, topic_name: str
) -> None:
    _share_group(kafka_coordinator, topic_name, 1)
    produce_values(kafka_coordinator.bootstrap, topic_name, [f"r{i}" for i in range(10)], 1)
    with _holder(kafka_coordinator, topic_name, 10) as holder:
        assert _holding(holder) == list(range(10))
        os.kill(holder.pid, signal.SIGSTOP)
        reader = ShareReader("c1", kafka_coordinator.bootstrap, "sg", [topic_name], decide=_accept).start()
        try:
            wait_delivered([reader], 10, DEADLINE, "the held records once their 2 s locks expired")
        finally:
            stop_all([reader])
    assert sorted(d.offset for d in reader.deliveries) == list(range(10))
    assert {d.delivery_count for d in reader.deliveries} == {2}


def _serve(data_dir: str, topic: str, log: Any) -> tuple[subprocess.Popen[str], str]:
    settings = [arg for name, value in FAST_SHARE_SETTINGS.items() for arg in ("--set", f"{name}={value}")]
    return start_serve(data_dir, "--create-topic", f"{topic}:1", *settings, stderr=log)


def test_after_kill_9_of_the_server_no_accepted_record_comes_back_and_none_is_lost(
    tmp_path: Any, topic_name: str
) -> None:
    """Accepted records are durable in __share_group_state before ShareAcknowledge answers;
    acquisition is not persisted (as in Kafka), so what was only acquired comes again."""
    data_dir = str(tmp_path / "data")
    with open(tmp_path / "server.log", "a") as log:
        proc, bootstrap = _serve(data_dir, topic_name, log)
        try:
            _earliest_by_group_config(bootstrap, "sg")
            produce_values(bootstrap, topic_name, [f"r{i}" for i in range(100)], 1)
            argv = [sys.executable, "-m", "interop.clients.share", bootstrap, "sg", topic_name, "100", "60"]
            with BackgroundClient(argv, cwd=REPO, name="share-holder", deadline=DEADLINE * 2) as holder:
                _holding(holder)
                accepted = next(e for e in holder.events() if "accepted" in e)
                assert accepted == {"accepted": 60, "errors": []}, holder.describe()
                proc.send_signal(signal.SIGKILL)  # with 40 records acquired and unacknowledged
                proc.wait(30)
        finally:
            proc.kill()
            proc.wait(30)
        proc, bootstrap = _serve(data_dir, topic_name, log)
        reader = ShareReader("after", bootstrap, "sg", [topic_name], decide=_accept).start()
        try:
            wait_delivered([reader], 40, DEADLINE, "the 40 records never acknowledged")
            produce_values(bootstrap, topic_name, ["marker"], 1)
            wait_until(lambda: any(d.value == b"marker" for d in reader.deliveries), DEADLINE, message="the marker")
        finally:
            stop_all([reader])
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    assert sorted(d.offset for d in reader.deliveries) == list(range(60, 101))


def _earliest_by_group_config(bootstrap: str, group: str) -> None:
    """share.auto.offset.reset=earliest as a user sets it: IncrementalAlterConfigs on the GROUP."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(DEADLINE)
