"""CreateTopics/DeleteTopics rules, config validation and persistence."""

from __future__ import annotations

from coordinator.broker.admin import create_topic, delete_topic
from coordinator.broker.topic_config import SOURCE_DEFAULT_CONFIG, SOURCE_DYNAMIC_TOPIC_CONFIG
from protocol.errors import ErrorCode
from tests.coordinator.broker.conftest import make_data


def create(data, name="t", partitions=3, rf=1, assignments=(), configs=None, validate_only=False):
    return create_topic(data, name, partitions, rf, list(assignments), configs or {}, validate_only, [0])


def test_each_validation_error(tmp_path):
    data = make_data(tmp_path, topics={"exists": 1})
    cases = [
        (dict(name="bad name"), ErrorCode.INVALID_TOPIC_EXCEPTION),
        (dict(name=""), ErrorCode.INVALID_TOPIC_EXCEPTION),
        (dict(name="x" * 250), ErrorCode.INVALID_TOPIC_EXCEPTION),
        (dict(name="exists"), ErrorCode.TOPIC_ALREADY_EXISTS),
        (dict(partitions=0), ErrorCode.INVALID_PARTITIONS),
        (dict(partitions=-5), ErrorCode.INVALID_PARTITIONS),
        (dict(rf=3), ErrorCode.INVALID_REPLICATION_FACTOR),
        (dict(rf=0), ErrorCode.INVALID_REPLICATION_FACTOR),
        (dict(configs={"no.such.config": "1"}), ErrorCode.INVALID_CONFIG),
        (dict(configs={"retention.ms": "soon"}), ErrorCode.INVALID_CONFIG),
        (dict(configs={"cleanup.policy": "shred"}), ErrorCode.INVALID_CONFIG),
        (dict(assignments=[(0, [0])]), ErrorCode.INVALID_REQUEST),  # counts must then be -1
        (dict(partitions=-1, rf=-1, assignments=[(0, [1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ]
    for kwargs, error in cases:
        assert create(data, **kwargs).error == error, kwargs
    assert [t.name for t in data.topics.all()] == ["exists"]


def test_max_partitions_caps_what_a_client_creates(tmp_path):
    data = make_data(tmp_path, topics={"exists": 3}, max_partitions=10)
    refused = create(data, name="big", partitions=8)
    assert refused.error == ErrorCode.POLICY_VIOLATION and "max.partitions=10" in refused.message
    assert data.topics.get("big") is None
    assert create(data, name="fits", partitions=7).error == ErrorCode.NONE


def test_defaults_and_validate_only(tmp_path):
    data = make_data(tmp_path, num_partitions=4)
    checked = create(data, partitions=-1, rf=-1, validate_only=True)
    assert (checked.error, checked.num_partitions, checked.replication_factor) == (ErrorCode.NONE, 4, 1)
    assert checked.topic is None and data.topics.get("t") is None
    made = create(data, partitions=-1, rf=-1)
    assert made.topic.partitions == 4 and data.partition("t", 3) is not None
    by_assignment = create(data, name="u", partitions=-1, rf=-1, assignments=[(1, [0]), (0, [0])])
    assert by_assignment.num_partitions == 2


def test_configs_are_reported_persisted_and_used(tmp_path):
    data = make_data(tmp_path)
    made = create(data, configs={"cleanup.policy": "compact", "segment.bytes": "2048", "retention.ms": None})
    assert made.configs["cleanup.policy"] == ("compact", SOURCE_DYNAMIC_TOPIC_CONFIG)
    assert made.configs["retention.ms"] == (604800000, SOURCE_DEFAULT_CONFIG)
    assert (tmp_path / "t-2" / "topic.properties").read_text() == "cleanup.policy=compact\nsegment.bytes=2048\n"
    data.close()
    again = make_data(tmp_path)
    log = again.partition("t", 1).log
    assert (log.config.cleanup_policy, log.config.segment_bytes) == ("compact", 2048)


def test_delete_removes_logs_and_dirs_and_the_name_can_be_reused(tmp_path):
    data = make_data(tmp_path, topics={"t": 2})
    old = data.topics.get("t")
    assert delete_topic(data, old) == (ErrorCode.NONE, None)
    assert data.partition("t", 0) is None
    assert not any(p.name.startswith("t-") for p in tmp_path.iterdir())
    made = create(data, partitions=1)
    assert made.topic.topic_id != old.topic_id and data.partition("t", 0).log_end_offset == 0


async def test_topics_created_elsewhere_are_opened_on_first_use(tmp_path):
    from tests.coordinator.broker.conftest import batch

    data = make_data(tmp_path)
    data.topics.create("auto", 2)  # what Metadata auto-creation does
    part = data.partition("auto", 1)
    assert (await part.append(batch(b"x"), 1 << 20)).base_offset == 0
    assert data.partition("auto", 2) is None and data.partition("auto", -1) is None
    data.close()
    assert data.partition("auto", 0) is None  # closed: nothing is opened any more
    assert (tmp_path / "auto-1" / ".kafka_cleanshutdown").exists()
