"""TopicsImage over the broker's TopicRegistry: it lists the topics only when the registry's change
count moved, and still sees every creation, growth, config change and deletion."""

from __future__ import annotations

from coordinator.broker.topics import TopicRegistry
from coordinator.groups.topics_image import TopicsImage


class CountingRegistry(TopicRegistry):
    listed = 0

    def all(self):  # type: ignore[no-untyped-def]
        self.listed += 1
        return super().all()


def test_refresh_lists_topics_only_after_a_change(tmp_path):
    registry = CountingRegistry(tmp_path)
    registry.load()
    registry.ensure("a", 2)
    image = TopicsImage(registry)
    listed, version = registry.listed, image.version
    for _ in range(5):
        image.refresh()
    assert registry.listed == listed and image.version == version  # steady: no listing at all

    registry.ensure("b", 1)
    image.refresh()
    assert image.by_name("b") is not None and image.version > version
    version = image.version
    registry.grow("a", 3)
    image.refresh()
    assert image.by_name("a").num_partitions == 3 and image.version > version
    version = image.version
    registry.set_configs("a", {"retention.ms": "1000"})
    image.refresh()
    assert image.version == version  # configs are not part of the image: no version bump
    registry.delete("b")
    image.refresh()
    assert image.by_name("b") is None and image.version > version
    assert image.changed_since(version) == frozenset({"b"})


def test_registry_finds_topics_by_id_across_changes(tmp_path):
    registry = TopicRegistry(tmp_path)
    registry.load()
    a = registry.ensure("a", 1)
    assert registry.by_id(a.topic_id) == a
    b = registry.ensure("b", 1)
    assert registry.by_id(b.topic_id) == b
    grown = registry.grow("a", 2)
    assert registry.by_id(a.topic_id) == grown
    registry.delete("a")
    assert registry.by_id(a.topic_id) is None and registry.by_id(b.topic_id) == b
