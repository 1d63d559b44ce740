"""Kafka's group coordinator: classic groups (Join/Sync/Heartbeat/Leave, Describe/List/Delete,
static membership, timeouts), KIP-848 consumer groups and committed offsets (commit/fetch/delete,
retention).

`service.GroupService` is what handlers call (one typed method per operation). Underneath, each
__consumer_offsets partition has a `shard.GroupShard` that operations (join.py, sync.py,
heartbeat.py, leave.py, describe.py, offsets.py, retention.py; consumer_ops.py for KIP-848) change
through records and its one `replay`; records.py is their byte format; lifecycle.py loads and
unloads shards. consumer/ is the KIP-848 core (run through consumer_context.py), migration/ the
classic <-> consumer conversions and classic members inside consumer groups, topics_image.py the
topics as consumer groups see them.
"""
