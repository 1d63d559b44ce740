"""The pieces the Kafka cases rely on: Kafka's Uuid order and hash, Java's HashSet order, Java
String order, and how bad current assignments and a wrong subscription type are handled."""

from __future__ import annotations

import uuid

from coordinator.groups.assignors import ASSIGNORS, DEFAULT_ASSIGNOR
from coordinator.groups.assignors.ordering import java_hash_set_order, java_string_key, java_uuid_hash, sorted_topic_ids
from coordinator.groups.assignors.spec import SubscriptionType
from tests.coordinator.groups.assignors.support import Topics, check_valid, kafka_uuid, member, spec

T1 = kafka_uuid("T1-A4s3VTwiI5CTbEp6POw")
T2 = kafka_uuid("T2-B4s3VTwiI5YHbPp6YUe")
T3 = kafka_uuid("T3-CU8fVTLCz5YMkLoDQsa")


def test_registry_matches_kafkas_default_assignors() -> None:
    assert DEFAULT_ASSIGNOR == "uniform"
    assert list(ASSIGNORS) == ["uniform", "range"]
    assert all(a.name == n for n, a in ASSIGNORS.items())


def test_uuid_hash_is_kafkas() -> None:
    # Kafka Uuid.hashCode() of these ids, as an unsigned int: (msb ^ lsb) folded to 32 bits.
    assert java_uuid_hash(T1) == 418407434
    assert java_uuid_hash(uuid.UUID(int=1)) == 1  # Uuid.ONE_UUID = new Uuid(0, 1)


def test_java_hash_set_order_of_kafka_test_topics() -> None:
    # spread(hash) & 15: T2 -> 1, T3 -> 9, T1 -> 10; Kafka's expected results depend on this.
    assert java_hash_set_order([T1, T2, T3]) == [T2, T3, T1]
    # 12 ids need a 32-slot table (12 / 0.75 + 1 = 17): bucket order changes with the size.
    ids = [uuid.UUID(int=i << 64 | i) for i in range(12)]
    assert java_hash_set_order(ids) == sorted(ids, key=lambda u: (u.int >> 64) ^ (u.int & (2**64 - 1)))


def test_uuid_order_compares_signed_longs() -> None:
    negative = uuid.UUID(int=0x8000_0000_0000_0000 << 64)  # msb = Long.MIN_VALUE
    assert sorted_topic_ids([T1, negative]) == [negative, T1]
    assert sorted_topic_ids([T3, T1, T2]) == [T1, T2, T3]


def test_java_string_order_is_by_utf16_code_units() -> None:
    # By code point U+FF5E < U+1F600; Java compares UTF-16 units, and 0xD83D (U+1F600's high
    # surrogate) < 0xFF5E.
    assert sorted(["\uff5e", "\U0001f600"]) == ["\uff5e", "\U0001f600"]
    assert sorted(["\uff5e", "\U0001f600"], key=java_string_key) == ["\U0001f600", "\uff5e"]


def test_invalid_current_assignments_are_dropped_not_propagated() -> None:
    topics = Topics({T1: 4})
    group = spec(
        {"A": member([T1]), "B": member([T1])},
        {"A": {T1: frozenset({0, 1, 9})}, "B": {T1: frozenset({1, 2, -1})}},  # 9, -1 gone; 1 twice
    )
    for assignor in ASSIGNORS.values():
        result = assignor.assign(group, topics)
        check_valid(group, topics, result)
    # The uniform assignor keeps what was valid: A its 0 and 1 (first holder), B its 2.
    uniform = ASSIGNORS["uniform"].assign(group, topics)
    assert uniform["A"][T1] >= {0, 1} and 2 in uniform["B"][T1]


def test_group_wrongly_declared_homogeneous_is_assigned_by_subscription() -> None:
    topics = Topics({T1: 3, T2: 3})
    group = spec({"A": member([T1]), "B": member([T2])}, {}, SubscriptionType.HOMOGENEOUS)
    for assignor in ASSIGNORS.values():
        check_valid(group, topics, assignor.assign(group, topics))


def test_empty_group() -> None:
    for assignor in ASSIGNORS.values():
        assert assignor.assign(spec({}), Topics({})) == {}


def test_unchanged_members_get_their_own_map_back() -> None:
    # Kafka's assignors return the very map they were given when nothing changed (no copy).
    topics = Topics({T1: 4})
    a, b = {T1: frozenset({0, 1})}, {T1: frozenset({2, 3})}
    group = spec({"A": member([T1]), "B": member([T1]), "C": member([T1])}, {"A": a, "B": b})
    for kind in SubscriptionType:
        result = ASSIGNORS["uniform"].assign(spec(group.members, group.assignments, kind), topics)
        changed = [m for m in ("A", "B") if result[m] is not group.assignments[m]]
        assert len(changed) == 1, kind  # one of them gives a partition to C


def test_empty_partition_sets_in_current_assignments_do_not_reach_the_answer() -> None:
    # Both members already hold their share, so A's map would come back untouched.
    topics = Topics({T1: 2, T2: 2})
    both = [T1, T2]
    group = spec(
        {"A": member(both), "B": member(both)},
        {"A": {T1: frozenset({0, 1}), T2: frozenset()}, "B": {T2: frozenset({0, 1})}},
    )
    for assignor in ASSIGNORS.values():
        check_valid(group, topics, assignor.assign(group, topics))
