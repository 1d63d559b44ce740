"""The topic registry persists topics as Kafka does: partition dirs with partition.metadata."""

from __future__ import annotations

import pytest

from coordinator.broker.topics import InvalidTopicError, TopicRegistry, decode_topic_id, encode_topic_id


def test_create_then_reload(tmp_path):
    registry = TopicRegistry(tmp_path)
    created = registry.create("orders", 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orders-0", "orders-1", "orders-2"]
    text = (tmp_path / "orders-1" / "partition.metadata").read_text()
    assert text == f"version: 0\ntopic_id: {created.topic_id_text}\n"
    reloaded = TopicRegistry(tmp_path)
    reloaded.load()
    assert reloaded.get("orders") == created


def test_interrupted_creation_is_completed_on_load(tmp_path):
    registry = TopicRegistry(tmp_path)
    created = registry.create("t", 2)
    (tmp_path / "t-1" / "partition.metadata").unlink()
    reloaded = TopicRegistry(tmp_path)
    reloaded.load()
    assert reloaded.get("t").topic_id == created.topic_id
    assert (tmp_path / "t-1" / "partition.metadata").exists()


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "x" * 250, "spaces here"])
def test_invalid_names(tmp_path, name):
    with pytest.raises(InvalidTopicError):
        TopicRegistry(tmp_path).create(name, 1)


def test_ensure_does_not_change_an_existing_topic(tmp_path):
    registry = TopicRegistry(tmp_path)
    first = registry.ensure("t", 4)
    assert registry.ensure("t", 1) == first


def test_topic_id_text_round_trips():
    raw = bytes(range(16))
    assert decode_topic_id(encode_topic_id(raw)) == raw
    assert "=" not in encode_topic_id(raw)


def test_the_coordinator_topics_dirs_are_not_user_topics(tmp_path):
    for name in ("__consumer_offsets-3", "__transaction_state-16"):
        (tmp_path / name).mkdir()
    registry = TopicRegistry(tmp_path)
    registry.load()
    assert registry.all() == []  # their runtimes own them: no partition dirs 0..15 appear
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__consumer_offsets-3", "__transaction_state-16"]
