"""Converting a group between the classic and the consumer protocol (KIP-848 online migration).

`consumer_records_from_classic` is Kafka ConsumerGroup.fromClassicGroup + createConsumerGroupRecords:
every member keeps its id, subscription (from its metadata for the selected protocol) and last
assignment (its target too), at the generation as member epoch, Stable, with its classic session
timeout and protocols. `classic_from_consumer` is ClassicGroup.fromConsumerGroup: a Stable classic
group at the group epoch whose members carry their consumer-group target assignment in the
ConsumerProtocol version of their own metadata. The ConsumerProtocol (de)serialisation of classic
members inside a consumer group (`member_subscription`, `assignment_bytes`) lives here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import (
    Assignment,
    ConsumerGroupMember,
    MemberState,
    normalize,
    to_topic_partitions,
)
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupMetadataRecord,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
)
from coordinator.groups.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from coordinator.groups.member import ClassicMember
from coordinator.groups.state import GroupState
from protocol.consumer_protocol import (
    MAX_VERSION,
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from protocol.errors import DecodeError


class ConversionError(ValueError):
    """A classic member's embedded consumer protocol does not parse (Kafka SchemaException)."""


def topic_partition_map(partitions: Iterable[TopicPartition], topics: TopicsView) -> dict[Any, frozenset[int]]:
    """Kafka toTopicPartitionMap: names to ids; topics that no longer exist are dropped."""
    out: dict[Any, set[int]] = {}
    for tp in partitions:
        topic = topics.by_name(tp.topic)
        if topic is not None:
            out.setdefault(topic.topic_id, set()).update(tp.partitions)
    return normalize(out)


def member_subscription(metadata: bytes) -> ConsumerProtocolSubscription:
    try:
        return decode_subscription(metadata)
    except DecodeError as exc:
        raise ConversionError(str(exc)) from None


def classic_protocols(protocols: Iterable[tuple[str, bytes]]) -> tuple[ClassicProtocol, ...]:
    return tuple(ClassicProtocol(name, metadata) for name, metadata in protocols)


def assignment_bytes(assignment: Assignment, metadata: bytes, topics: TopicsView) -> bytes:
    """Kafka prepareAssignment / ConsumerProtocol.serializeAssignment: the member's partitions in
    the ConsumerProtocol version of its own metadata (capped at the highest known). Topics are
    sorted by name (Kafka iterates a HashMap)."""
    try:
        version = (
            min(max(int.from_bytes(metadata[:2], "big", signed=True), 0), MAX_VERSION) if len(metadata) >= 2 else 0
        )
    except ValueError:
        version = 0
    named = []
    for topic_id, parts in assignment.items():
        topic = topics.by_id(topic_id)
        if topic is not None:
            named.append(TopicPartition(topic.name, sorted(parts)))
    named.sort(key=lambda tp: tp.topic)
    return encode_assignment(ConsumerProtocolAssignment(version=version, assigned_partitions=named))


# -- classic -> consumer ------------------------------------------------------------------------


def consumer_members_from_classic(group: ClassicGroup, topics: TopicsView) -> list[ConsumerGroupMember]:
    """The members of Kafka ConsumerGroup.fromClassicGroup, in the classic group's order."""
    generation = group.generation_id
    members = []
    for m in group.members.values():
        try:
            assigned = topic_partition_map(decode_assignment(m.assignment).assigned_partitions, topics)
        except DecodeError as exc:
            raise ConversionError(str(exc)) from None
        subscription = member_subscription(m.metadata(group.protocol_name))
        members.append(
            ConsumerGroupMember(
                member_id=m.member_id,
                member_epoch=generation,
                previous_member_epoch=generation,
                state=MemberState.STABLE,
                instance_id=m.group_instance_id,
                rack_id=subscription.rack_id,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=frozenset(subscription.topics),
                assigned_partitions=assigned,
                classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, classic_protocols(m.protocols)),
                # KIP-1251: the classic assignment was received at the group's generation.
                assignment_epochs={t: dict.fromkeys(ps, generation) for t, ps in assigned.items()},
            )
        )
    return members


def consumer_records_from_classic(group: ClassicGroup, topics: TopicsView) -> list[Any]:
    """Kafka createConsumerGroupRecords for the converted group: members' metadata, the group epoch
    (with the KIP-1101 hash of their topics), their targets, the target epoch, their assignments."""
    gid, epoch = group.group_id, group.generation_id
    members = consumer_members_from_classic(group, topics)
    records: list[Any] = [m.metadata_record(gid) for m in members]
    names = {name for m in members for name in m.subscribed_topic_names}
    records.append(ConsumerGroupMetadataRecord(gid, epoch, metadata_hash(names, topics)))
    records += [
        ConsumerGroupTargetAssignmentMemberRecord(gid, m.member_id, to_topic_partitions(m.assigned_partitions))
        for m in members
    ]
    records.append(ConsumerGroupTargetAssignmentMetadataRecord(gid, epoch))
    records += [m.assignment_record(gid) for m in members]
    return records


# -- consumer -> classic ------------------------------------------------------------------------


def classic_member(member: ConsumerGroupMember, member_id: str | None = None) -> ClassicMember:
    classic = member.classic_member_metadata
    assert classic is not None, "only classic-protocol members move to a classic group"
    return ClassicMember(
        member_id=member_id or member.member_id,
        group_instance_id=member.instance_id,
        client_id=member.client_id,
        client_host=member.client_host,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        session_timeout_ms=classic.session_timeout_ms,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocols=[(p.name, p.metadata) for p in classic.supported_protocols],
    )


def classic_from_consumer(
    group: ConsumerGroup, leaving: Iterable[str], joining: ConsumerGroupMember | None, topics: TopicsView, now_ms: int
) -> ClassicGroup:
    """Kafka ClassicGroup.fromConsumerGroup. `leaving` members are left out; a `joining` static
    member replaces the member holding its instance id and takes over its target assignment."""
    gone = set(leaving)
    replaced = group.static_member_id(joining.instance_id) if joining is not None else None
    classic = ClassicGroup(group.group_id, now_ms, GroupState.STABLE)
    classic.generation_id = group.group_epoch
    classic.protocol_type = CONSUMER_PROTOCOL_TYPE
    targets: dict[str, Assignment] = {}
    for member_id, member in group.members.items():
        if member_id in gone or member_id == replaced:
            continue
        classic.add(classic_member(member))
        targets[member_id] = group.target_assignment.get(member_id, {})
    if joining is not None:
        classic.add(classic_member(joining))
        targets[joining.member_id] = group.target_assignment.get(replaced or joining.member_id, {})
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for each in classic.members.values():
        each.assignment = assignment_bytes(targets[each.member_id], each.metadata(classic.protocol_name), topics)
    return classic
