"""A small blocking Kafka admin client on our protocol codec, for the command-line tools.

It speaks to any Kafka broker, not only ours: every connection starts with ApiVersions v0 (which
every broker answers) and each request then goes out at the highest version both sides know,
capped where this client only builds the older request layout (kafka_connection.py). Group requests go to the
group's coordinator (FindCoordinator), ListOffsets to each partition's leader (Metadata).
Errors raise `KafkaError` with the error's Kafka name. A group is described as Kafka's admin client
does: ConsumerGroupDescribe (KIP-848) first, DescribeGroups when the group is not a consumer group
(GROUP_ID_NOT_FOUND) or the broker lacks the API; both become one `GroupInfo`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coordinator.tools.kafka_connection import Connection, KafkaError
from protocol.api import ApiKey
from protocol.codec import message_module
from protocol.consumer_protocol import decode_assignment
from protocol.errors import DecodeError, ErrorCode

LATEST = -1  # ListOffsets timestamps (ListOffsetsRequest.LATEST_TIMESTAMP / EARLIEST_TIMESTAMP)
EARLIEST = -2


@dataclass(frozen=True)
class Broker:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class MemberInfo:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: list[tuple[str, int]]
    # KIP-848 consumer groups only (None for classic groups):
    target: list[tuple[str, int]] | None = None
    member_epoch: int | None = None
    upgraded: bool | None = None  # ConsumerGroupDescribe v1: True for a consumer-protocol member


@dataclass(frozen=True)
class GroupInfo:
    group_id: str
    state: str
    protocol_type: str
    assignment_strategy: str  # the classic protocol name, or a consumer group's server assignor
    members: list[MemberInfo]
    consumer: bool = False  # a KIP-848 consumer group (described by ConsumerGroupDescribe)
    group_epoch: int | None = None
    target_epoch: int | None = None


class AdminClient:
    """Connections by address, the cluster's brokers, and group coordinators."""

    def __init__(self, bootstrap: str, client_id: str = "kgc-groups", timeout: float = 30.0) -> None:
        self.client_id, self.timeout = client_id, timeout
        self._conns: dict[tuple[str, int], Connection] = {}
        host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
        self.bootstrap = (host or "localhost", int(port))

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        for conn in self._conns.values():
            conn.close()

    def connection(self, host: str, port: int) -> Connection:
        conn = self._conns.get((host, port))
        if conn is None:
            conn = self._conns[(host, port)] = Connection(host, port, self.client_id, self.timeout)
        return conn

    @property
    def any(self) -> Connection:
        return self.connection(*self.bootstrap)

    def metadata(self, topics: list[str] | None) -> Any:
        mod = message_module(ApiKey.METADATA)

        def build(v: int) -> Any:
            names = None if topics is None else [mod.MetadataRequestTopic(name=t) for t in topics]
            return mod.MetadataRequest(topics=names, allow_auto_topic_creation=False)

        return self.any.request(ApiKey.METADATA, build)[1]

    def brokers(self) -> list[Broker]:
        return [Broker(b.node_id, b.host, b.port) for b in self.metadata([]).brokers]

    def coordinator(self, group: str) -> tuple[Broker, Connection]:
        mod = message_module(ApiKey.FIND_COORDINATOR)

        def build(v: int) -> Any:
            if v >= 4:
                return mod.FindCoordinatorRequest(key_type=0, coordinator_keys=[group])
            return mod.FindCoordinatorRequest(key=group, key_type=0)

        version, resp = self.any.request(ApiKey.FIND_COORDINATOR, build)
        if version >= 4:
            c = resp.coordinators[0]
            error, node = c.error_code, Broker(c.node_id, c.host, c.port)
        else:
            error, node = resp.error_code, Broker(resp.node_id, resp.host, resp.port)
        if error:
            raise KafkaError(error, f"FindCoordinator for group '{group}'")
        return node, self.connection(node.host, node.port)

    def partitions(self, topics: list[str] | None) -> dict[str, dict[int, int]]:
        """topic -> partition -> leader node id (every topic when `topics` is None)."""
        meta = self.metadata(topics)
        out: dict[str, dict[int, int]] = {}
        for t in meta.topics:
            if t.error_code:
                raise KafkaError(t.error_code, f"topic '{t.name}'")
            if not t.is_internal:
                out[t.name] = {p.partition_index: p.leader_id for p in t.partitions}
        return out

    def list_offsets(self, partitions: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int]:
        """(topic, partition) -> offset for LATEST, EARLIEST or a timestamp (-1 when none)."""
        mod = message_module(ApiKey.LIST_OFFSETS)
        leaders = self.partitions(sorted({t for t, _ in partitions}))
        nodes = {b.node_id: b for b in self.brokers()}
        by_leader: dict[int, dict[str, list[int]]] = {}
        for topic, p in partitions:
            by_leader.setdefault(leaders[topic][p], {}).setdefault(topic, []).append(p)
        result: dict[tuple[str, int], int] = {}
        for leader, topics in by_leader.items():
            conn = self.connection(nodes[leader].host, nodes[leader].port)
            request = mod.ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    mod.ListOffsetsTopic(
                        name=t,
                        partitions=[mod.ListOffsetsPartition(partition_index=p, timestamp=timestamp) for p in ps],
                    )
                    for t, ps in topics.items()
                ],
            )
            _, resp = conn.request(ApiKey.LIST_OFFSETS, _fixed(request))
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code:
                        raise KafkaError(p.error_code, f"ListOffsets {t.name}-{p.partition_index}")
                    result[(t.name, p.partition_index)] = p.offset
        return result

    # -- groups -----------------------------------------------------------------------------
    def list_groups(self, states: list[str]) -> list[Any]:
        mod = message_module(ApiKey.LIST_GROUPS)
        groups: list[Any] = []
        for broker in self.brokers():
            conn = self.connection(broker.host, broker.port)
            version, resp = conn.request(
                ApiKey.LIST_GROUPS, lambda v: mod.ListGroupsRequest(states_filter=states if v >= 4 else [])
            )
            if resp.error_code:
                raise KafkaError(resp.error_code, "ListGroups")
            wanted = {s.lower() for s in states}
            groups.extend(g for g in resp.groups if version >= 4 or not wanted or g.group_state.lower() in wanted)
        return groups

    def describe_group(self, group: str) -> tuple[Broker, GroupInfo]:
        node, conn = self.coordinator(group)
        if ApiKey.CONSUMER_GROUP_DESCRIBE in conn.versions:
            info = self._describe_consumer_group(conn, group)
            if info is not None:
                return node, info
        mod = message_module(ApiKey.DESCRIBE_GROUPS)
        _, resp = conn.request(ApiKey.DESCRIBE_GROUPS, lambda v: mod.DescribeGroupsRequest(groups=[group]))
        described = resp.groups[0]
        if described.error_code:
            raise KafkaError(described.error_code, f"DescribeGroups '{group}'")
        return node, GroupInfo(
            group,
            described.group_state,
            described.protocol_type,
            described.protocol_data,
            [
                MemberInfo(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    _classic_assignment(m.member_assignment) if described.protocol_type == "consumer" else [],
                )
                for m in described.members
            ],
        )

    def _describe_consumer_group(self, conn: Connection, group: str) -> GroupInfo | None:
        """ConsumerGroupDescribe; None when the group is not a consumer group (or does not exist)."""
        mod = message_module(ApiKey.CONSUMER_GROUP_DESCRIBE)
        version, resp = conn.request(
            ApiKey.CONSUMER_GROUP_DESCRIBE, lambda v: mod.ConsumerGroupDescribeRequest(group_ids=[group])
        )
        described = resp.groups[0]
        if described.error_code == ErrorCode.GROUP_ID_NOT_FOUND:
            return None
        if described.error_code:
            raise KafkaError(described.error_code, f"ConsumerGroupDescribe '{group}'")

        def partitions(assignment: Any) -> list[tuple[str, int]]:
            return sorted((tp.topic_name, p) for tp in assignment.topic_partitions for p in tp.partitions)

        return GroupInfo(
            group,
            described.group_state,
            "consumer",
            described.assignor_name,
            [
                MemberInfo(
                    m.member_id,
                    m.instance_id,
                    m.client_id,
                    m.client_host,
                    partitions(m.assignment),
                    partitions(m.target_assignment),
                    m.member_epoch,
                    m.member_type == 1 if version >= 1 else None,
                )
                for m in described.members
            ],
            consumer=True,
            group_epoch=described.group_epoch,
            target_epoch=described.assignment_epoch,
        )

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """Every committed offset of the group (OffsetFetch for all partitions)."""
        _, conn = self.coordinator(group)
        mod = message_module(ApiKey.OFFSET_FETCH)

        def build(v: int) -> Any:
            if v >= 8:
                return mod.OffsetFetchRequest(groups=[mod.OffsetFetchRequestGroup(group_id=group, topics=None)])
            return mod.OffsetFetchRequest(group_id=group, topics=None)

        version, resp = conn.request(ApiKey.OFFSET_FETCH, build)
        if version >= 8:
            entry = resp.groups[0]
            error, topics = entry.error_code, entry.topics
        else:
            error, topics = resp.error_code, resp.topics
        if error:
            raise KafkaError(error, f"OffsetFetch '{group}'")
        return {
            (t.name, p.partition_index): p.committed_offset
            for t in topics
            for p in t.partitions
            if p.committed_offset >= 0 and not p.error_code
        }

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Admin commit (generation -1, no member), as AdminClient.alterConsumerGroupOffsets.
        Returns the error code per partition."""
        _, conn = self.coordinator(group)
        mod = message_module(ApiKey.OFFSET_COMMIT)
        topics: dict[str, list[Any]] = {}
        for (t, p), offset in sorted(offsets.items()):
            topics.setdefault(t, []).append(
                mod.OffsetCommitRequestPartition(partition_index=p, committed_offset=offset, committed_metadata="")
            )
        _, resp = conn.request(
            ApiKey.OFFSET_COMMIT,
            lambda v: mod.OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[mod.OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()],
            ),
        )
        return {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}

    def delete_groups(self, groups: list[str]) -> dict[str, int]:
        mod = message_module(ApiKey.DELETE_GROUPS)
        result = {}
        for group in groups:
            _, conn = self.coordinator(group)
            request = mod.DeleteGroupsRequest(groups_names=[group])
            _, resp = conn.request(ApiKey.DELETE_GROUPS, _fixed(request))
            result.update({r.group_id: r.error_code for r in resp.results})
        return result

    def delete_offsets(self, group: str, partitions: list[tuple[str, int]]) -> tuple[int, dict[tuple[str, int], int]]:
        _, conn = self.coordinator(group)
        mod = message_module(ApiKey.OFFSET_DELETE)
        topics: dict[str, list[int]] = {}
        for t, p in sorted(partitions):
            topics.setdefault(t, []).append(p)
        _, resp = conn.request(
            ApiKey.OFFSET_DELETE,
            lambda v: mod.OffsetDeleteRequest(
                group_id=group,
                topics=[
                    mod.OffsetDeleteRequestTopic(
                        name=t, partitions=[mod.OffsetDeleteRequestPartition(partition_index=p) for p in ps]
                    )
                    for t, ps in topics.items()
                ],
            ),
        )
        return resp.error_code, {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}


def _fixed(body: Any) -> Callable[[int], Any]:
    """A request body that does not depend on the version chosen."""
    return lambda version: body


def _classic_assignment(blob: bytes) -> list[tuple[str, int]]:
    """A classic member's ConsumerProtocol assignment as (topic, partition) pairs ([] if it does
    not parse)."""
    if not blob:
        return []
    try:
        return decode_assignment(blob).partitions()
    except DecodeError:
        return []
