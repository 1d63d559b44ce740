"""What `kgc share-groups` asks a cluster (Kafka's Admin listGroups/describeShareGroups/
listShareGroupOffsets as kafka-share-groups.sh uses them): share groups from every broker
(ListGroups v5+ with the "share" type filter), a group's description from its coordinator
(ShareGroupDescribe v1), and the start offset and lag (v1, KIP-1226) of each of its initialized
share-partitions (DescribeShareGroupOffsets with every topic). Over the same AdminClient as
`kgc groups`; no share API is spoken to a broker that does not advertise it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.tools.kafka_client import AdminClient, Broker
from coordinator.tools.kafka_connection import KafkaError
from protocol.api import ApiKey
from protocol.codec import message_module


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    partitions: list[tuple[str, int]]


@dataclass(frozen=True)
class ShareGroupInfo:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    members: list[ShareMember]


@dataclass(frozen=True)
class ShareOffset:
    topic: str
    partition: int
    start_offset: int | None  # None: unknown (Kafka prints "-")
    leader_epoch: int | None
    lag: int | None


def list_share_groups(admin: AdminClient, states: list[str]) -> list[tuple[str, str]]:
    """(group, state) of every share group; ListGroups v5+ filters by type."""
    mod = message_module(ApiKey.LIST_GROUPS)
    out: list[tuple[str, str]] = []
    for broker in admin.brokers():
        conn = admin.connection(broker.host, broker.port)
        version, resp = conn.request(
            ApiKey.LIST_GROUPS, lambda v: mod.ListGroupsRequest(states_filter=states, types_filter=["share"])
        )
        if resp.error_code:
            raise KafkaError(resp.error_code, "ListGroups")
        if version < 5:
            raise KafkaError(35, "ListGroups: the broker cannot list share groups (v5+ needed)")
        out.extend((g.group_id, g.group_state) for g in resp.groups)
    return sorted(out)


def describe_share_group(admin: AdminClient, group: str) -> tuple[Broker, ShareGroupInfo]:
    node, conn = admin.coordinator(group)
    mod = message_module(ApiKey.SHARE_GROUP_DESCRIBE)
    _, resp = conn.request(ApiKey.SHARE_GROUP_DESCRIBE, lambda v: mod.ShareGroupDescribeRequest(group_ids=[group]))
    g = resp.groups[0]
    if g.error_code == 69:  # GROUP_ID_NOT_FOUND: shown as Dead, as Kafka's tool does
        return node, ShareGroupInfo(group, "Dead", 0, 0, [])
    if g.error_code:
        raise KafkaError(g.error_code, f"ShareGroupDescribe '{group}'")
    members = [
        ShareMember(
            m.member_id,
            m.client_id,
            m.client_host,
            m.member_epoch,
            [(tp.topic_name, p) for tp in m.assignment.topic_partitions for p in tp.partitions],
        )
        for m in g.members
    ]
    return node, ShareGroupInfo(group, g.group_state, g.group_epoch, g.assignment_epoch, members)


def share_group_offsets(admin: AdminClient, group: str) -> list[ShareOffset]:
    _, conn = admin.coordinator(group)
    mod = message_module(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS)

    def build(v: int) -> Any:
        request_group = mod.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)
        return mod.DescribeShareGroupOffsetsRequest(groups=[request_group])

    version, resp = conn.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, build)
    g = resp.groups[0]
    if g.error_code:
        raise KafkaError(g.error_code, f"DescribeShareGroupOffsets '{group}'")
    rows = []
    for t in g.topics:
        for p in t.partitions:
            known = not p.error_code and p.start_offset >= 0
            rows.append(
                ShareOffset(
                    t.topic_name,
                    p.partition_index,
                    p.start_offset if known else None,
                    p.leader_epoch if known else None,
                    p.lag if version >= 1 and p.lag >= 0 else None,
                )
            )
    return sorted(rows, key=lambda r: (r.topic, r.partition))
