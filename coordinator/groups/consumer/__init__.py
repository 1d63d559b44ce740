"""KIP-848 consumer groups (the "consumer" rebalance protocol), runtime-independent.

Follows Kafka 4.2 (trunk of early 2026): KIP-1101 metadata hash instead of subscription metadata,
coordinator-resolved regex subscriptions (RE2), KAFKA-19974 (no epoch bump when leaving
UNREVOKED_PARTITIONS), KAFKA-19233 (epoch 0 always rejoins), KAFKA-19449, KAFKA-19431; not yet
KIP-1251 (assignment epochs) nor KIP-1282 (group creation time).

Modules (import them directly; this package imports nothing):
    context.py      ConsumerOpContext (what an operation needs), TopicsView, Timers, ClassicBridge
    settings.py     ConsumerGroupSettings (Kafka's names and defaults)
    records.py      the records (key types 3-8, 16) and tombstones; codec.py bytes; record_json.py dump JSON
    member.py       ConsumerGroupMember, MemberState;  group.py ConsumerGroup (state, epochs, indexes)
    replay.py       replay_consumer_record(groups, record): the only mutator
    heartbeat.py    consumer_group_heartbeat(ctx, ConsumerHeartbeatParams) -> ConsumerHeartbeatResult
    membership.py   admission, static members, leave/fence, session and rebalance timeouts, on_loaded
    rebalance.py    epoch bumps, target assignment (target_assignment.py), reconciliation (current_assignment.py)
    regex.py        RE2 compile/match;  regex_refresh.py resolution op, on_topics_changed
    metadata_hash.py  KIP-1101 topic/group hashes;  describe.py ConsumerGroupDescribe, ListGroups, offset checks
"""
