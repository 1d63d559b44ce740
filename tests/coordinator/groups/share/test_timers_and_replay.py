"""Share-group session timeouts on the fake clock (Kafka testSessionTimeoutExpirationForShareMember,
testOnLoadedSessionTimeoutExpirationForShareMember, testOnLoadedWithShareGroup) and replay: the
groups a reload builds equal the live ones after every step of random share-group histories,
and records that contradict the group fail as Kafka's replay does."""

from __future__ import annotations

import random

import pytest

from coordinator.groups.consumer.group import IllegalStateError
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.lifecycle import GroupShards
from coordinator.groups.share import ops
from coordinator.groups.share import records as r
from coordinator.groups.share.context import share_timer_key
from coordinator.groups.share.membership import session_timeout_key
from coordinator.groups.share.replay import replay_share_record
from coordinator.runtime.operation import OpContext
from protocol.errors import ErrorCode
from tests.coordinator.groups.share.support import ShareTestContext

KEY = share_timer_key(session_timeout_key("g", "m1"))


def test_a_member_that_stops_heartbeating_is_fenced_when_its_session_expires():
    c = ShareTestContext()
    c.registry.add("foo", 2)
    joined = c.sjoin("m1", ["foo"])
    c.sjoin("m2", ["foo"])
    assert c.timers.deadline(KEY) == 10_000
    c.sleep(6_000)
    c.sg("m1", c.sgroup().members["m1"].member_epoch)
    assert c.timers.deadline(KEY) == 16_000  # every heartbeat pushes it back
    c.take_records()
    epoch = c.sgroup().group_epoch
    c.sleep(4_000)  # m2's session (joined at 0) expires; m1's does not
    assert c.take_records() == [
        r.ShareGroupCurrentMemberAssignmentTombstone("g", "m2"),
        r.ShareGroupTargetAssignmentMemberTombstone("g", "m2"),
        r.ShareGroupMemberMetadataTombstone("g", "m2"),
        r.ShareGroupMetadataRecord("g", epoch + 1, metadata_hash(["foo"], c.shard.topics)),
    ]
    assert list(c.sgroup().members) == ["m1"] and joined.error_code == 0
    gone, _ = c.sg("m2", 3)
    assert gone.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_leaving_cancels_the_session_timer_and_group_configs_set_its_length():
    c = ShareTestContext()
    c.registry.add("foo", 1)
    c.configs.update("g", {"share.session.timeout.ms": "50000"})
    c.sjoin("m1", ["foo"])
    assert c.timers.deadline(KEY) == 50_000
    c.sg("m1", -1)
    assert c.timers.deadline(KEY) is None
    assert c.sleep(60_000) == 0  # nothing left to fire


def test_after_a_load_every_member_gets_a_session_timeout_from_the_load_time():
    c = ShareTestContext()
    c.registry.add("foo", 1)
    c.sjoin("m1", ["foo"])
    c.sjoin("m2", ["foo"])
    c.clock.advance(5_000)
    shard = c.fresh_shard()
    shard.group_configs = c.configs
    GroupShards(c.shard.config).on_loaded(OpContext(shard, 5_000))
    for member in ("m1", "m2"):
        assert shard.timers.deadline(share_timer_key(session_timeout_key("g", member))) == 15_000


def _random_history(seed: int) -> ShareTestContext:
    """Joins, heartbeats, subscription changes, leaves, session expiries, topic growth and
    deletion, initializations and failed ones, in a random order."""
    rng = random.Random(seed)
    c = ShareTestContext()
    for name in ("a", "b", "c"):
        c.registry.add(name, rng.randint(1, 4))
    pending = []
    for _ in range(60):
        members = c.shard.share_group("g").members if c.shard.share_group("g") else {}
        action = rng.random()
        member_id = f"m{rng.randint(1, 5)}"
        topics = rng.sample(["a", "b", "c"], rng.randint(1, 3))
        if member_id not in members or action < 0.15:
            result, init = c.sg(member_id, 0 if member_id not in members else -1, topics=topics)
        else:
            epoch = members[member_id].member_epoch
            result, init = c.sg(member_id, epoch, topics=topics if action < 0.4 else None)
        if init is not None:
            pending.append(init)
        if pending and rng.random() < 0.6:
            done = pending.pop(0)
            if rng.random() < 0.8:
                c.initialized(done)
            else:  # the share coordinator failed
                change = ops.StateChange("g", done.partitions())
                c.send(lambda ctx, change=change: ops.mark_uninitialized(ctx, change))
        if rng.random() < 0.05 and "c" in c.registry.topics:
            c.registry.grow("c", c.registry.topics["c"].partitions + 1)
        if rng.random() < 0.03 and "b" in c.registry.topics:
            c.registry.delete("b")
        c.sleep(rng.choice([0, 100, 3_000, 11_000]))
        assert c.fresh_shard().groups == c.shard.groups, seed
    return c


def test_reloaded_groups_equal_the_live_ones_through_random_histories():
    seen: set[type] = set()
    for seed in range(25):
        seen |= {type(record) for _, record in _random_history(seed).journal}
    assert seen >= set(r.SHARE_RECORD_TYPES) - {
        r.ShareGroupStatePartitionMetadataTombstone,
        r.ShareGroupMetadataTombstone,
        r.ShareGroupTargetAssignmentMetadataTombstone,
    }


def test_records_that_contradict_the_group_fail_replay_and_tombstones_for_nothing_are_ignored():
    groups: dict = {}
    replay_share_record(groups, r.ShareGroupMemberMetadataTombstone("g", "m1"), 0)  # no group: ignored
    assert groups == {}
    replay_share_record(groups, r.ShareGroupMemberMetadataRecord("g", "m1", None, "c", "h", ("t",)), 0)
    with pytest.raises(IllegalStateError, match="invalid leave group epoch"):
        replay_share_record(groups, r.ShareGroupMemberMetadataTombstone("g", "m1"), 0)
    with pytest.raises(IllegalStateError, match="still has 1 members"):
        replay_share_record(groups, r.ShareGroupMetadataTombstone("g"), 0)
    replay_share_record(groups, r.ShareGroupTargetAssignmentMemberRecord("g", "m1", ()), 0)
    with pytest.raises(IllegalStateError, match="assignment still has 1 members"):
        replay_share_record(groups, r.ShareGroupTargetAssignmentMetadataTombstone("g"), 0)
    groups["c"] = object()  # a group of another type under the id
    with pytest.raises(IllegalStateError, match="Group c is not a share group."):
        replay_share_record(groups, r.ShareGroupMetadataRecord("c", 1), 0)
