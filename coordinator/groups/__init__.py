"""Kafka's group coordinator: classic groups (Join/Sync/Heartbeat/Leave, Describe/List/Delete,
static membership, timeouts) and committed offsets (commit/fetch/delete, retention).

`service.GroupService` is what handlers call (one typed method per operation). Underneath, each
__consumer_offsets partition has a `shard.GroupShard` that operations (join.py, sync.py,
heartbeat.py, leave.py, describe.py, offsets.py, retention.py) change through records and
`replay.py`; records.py is their byte format; lifecycle.py loads and unloads shards.
"""
