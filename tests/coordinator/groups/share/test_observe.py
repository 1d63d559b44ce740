"""Share groups as observers see them: every record that changes a share group's state or epoch is
a transition carrying its reason (the epoch bump's explanation, or the timer that fired), and the
control plane's group view (type "share", members with epochs, subscriptions and assignments)."""

from __future__ import annotations

from typing import Any

from coordinator.control.plane import group_view
from coordinator.control.plane_api import MemberView, TopicPartitions
from coordinator.observe.reasons import OBSERVERS
from tests.coordinator.groups.share.support import ShareTestContext


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def transition(self, group_id: str, old: str, new: str, generation: int, reason: str | None) -> None:
        self.seen.append((group_id, old, new, generation, reason))


def test_transitions_with_their_reasons():
    c = ShareTestContext()
    c.registry.add("foo", 1)
    recorder = Recorder()
    token = OBSERVERS.set((recorder,))
    try:
        c.sjoin("m1", ["foo"])
        c.sleep(10_000)  # the session expires
    finally:
        OBSERVERS.reset(token)
    steps = [(old, new, epoch) for _, old, new, epoch, _ in recorder.seen]
    # One transition per change: a member's records and the epoch bump are heard together.
    assert steps == [("Dead", "Stable", 1), ("Stable", "Stable", 2), ("Stable", "Empty", 3)]
    reasons = [reason for *_, reason in recorder.seen]
    assert reasons[0] == "share group g epoch bumped to 1: member m1 joined or changed its subscription"
    assert reasons[1] == "share group g epoch bumped to 2: share-partitions were initialized"
    assert reasons[2] == "share group g epoch bumped to 3: m1 left: its session expired"


def test_the_control_planes_view_of_a_share_group():
    c = ShareTestContext()
    foo = c.registry.add("foo", 2)
    c.sjoin("m1", ["foo"])
    view = group_view(c.sgroup(), 0, lambda topic_id: "foo" if topic_id == foo else None)
    assert (view.type, view.state, view.generation, view.protocol_type, view.protocol) == (
        "share",
        "Stable",
        2,
        "share",
        "simple",
    )
    assert view.members == [
        MemberView("m1", None, "client", "/127.0.0.1", -1, -1, ["foo"], [TopicPartitions("foo", [0, 1])], 2)
    ]
