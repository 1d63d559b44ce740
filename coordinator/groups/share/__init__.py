"""KIP-932 share groups: the group coordinator's half (membership, assignment, share-partition
state bookkeeping), on the same runtime, records/replay path and timers as classic and consumer
groups. Follows Kafka 4.2's GroupMetadataManager / ShareGroup / SimpleAssignor (docs/share-groups.md).

Modules (import them directly; this package imports nothing):
    records.py      the records (key types 10-15) and tombstones; codec.py bytes; record_json.py dump JSON
    member.py       ShareGroupMember and its reconciliation;  group.py ShareGroup (state, epochs, state partitions)
    replay.py       replay_share_record(groups, record, now_ms): the only mutator
    context.py      ShareContext over a runtime operation (settings per group, emit, timers)
    heartbeat.py    ShareGroupHeartbeat;  membership.py admission, fencing, session timeouts, on_loaded
    target_assignment.py  the simple assignor's target (coordinator/groups/assignors/simple.py)
    state_partitions.py   ShareGroupStatePartitionMetadata: initializing/initialized/deleting
    describe.py     ShareGroupDescribe, ListGroups/DescribeGroups entries, tombstones
    ops.py          the operations GroupService runs;  service.py the flows with the share coordinator
"""
