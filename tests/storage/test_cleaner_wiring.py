"""The cleaner wired into the server: DataPath's LogManager (compacted user topics, one pass per
log.cleaner.backoff.ms) and PartitionWriter.clean_once (__consumer_offsets-<n>). No sockets, no
sleeps: a pass is awaited directly."""

from __future__ import annotations

from storage.batch import Record
from tests.coordinator.broker.conftest import make_data
from tests.storage.test_cleaner_helpers import check_compacted, records


def fill(log, rounds=5, keys=10):
    for r in range(rounds):
        for k in range(keys):
            log.append_records([Record(key=b"k%d" % k, value=b"v%d-%d" % (k, r))])
    log.roll()


async def test_data_path_cleans_compacted_topics_only(tmp_path):
    data = make_data(tmp_path)
    data.create_topic("c", 1, {"cleanup.policy": "compact", "segment.bytes": "1024"})
    data.create_topic("d", 1, {"segment.bytes": "1024"})
    part, other = data.partition("c", 0), data.partition("d", 0)
    fill(part.log)
    fill(other.log)
    pre, other_pre = records(part.log), records(other.log)
    assert await data.logs.clean_pass() == [("c", 0)]  # only the compacted, dirty one
    post = records(part.log)
    check_compacted(pre, post, part.log.active_segment.base_offset)
    assert len(post) == 10 and records(other.log) == other_pre
    assert await data.logs.clean_pass() == []  # clean now: below the dirty ratio
    data.close()


async def test_the_log_manager_cleans_consumer_offsets(tmp_path):
    from coordinator.groups.placement import OFFSETS_TOPIC
    from coordinator.groups.records import encode_record
    from coordinator.runtime.clock import FakeClock
    from coordinator.runtime.partition_writer import PartitionWriter
    from storage.log import LogConfig
    from storage.log_manager import LogManager

    clock = FakeClock(1_000_000)
    logs = LogManager(tmp_path, clock)
    cleaned_events: list = []

    class Observer:
        def records(self, *args): ...
        def durable_wait(self, seconds): ...
        def cleaned(self, partition, stats):
            cleaned_events.append(partition)

    writer = PartitionWriter(
        OFFSETS_TOPIC,
        logs,
        3,
        LogConfig(segment_bytes=1024, cleanup_policy="compact"),
        clock,
        encode_record,
        Observer(),
    )
    log = writer.reopen(1)
    fill(log)
    pre = records(log)
    assert await logs.clean_pass() == [(OFFSETS_TOPIC, 1)]  # the data dir's manager cleans it too
    assert cleaned_events == [1]  # ... and tells the writer's observer (the metrics)
    check_compacted(pre, records(log), log.active_segment.base_offset)
    assert await logs.clean_pass() == []  # below the dirty ratio now
    writer.close()
