"""The share coordinator (Kafka's share-coordinator module, 4.2): `__share_group_state`, the
persisted state of every share-partition. placement.py (which partition, FindCoordinator keys),
records.py (ShareSnapshot/ShareUpdate bytes), combiner.py (PersisterStateBatchCombiner),
shard.py (one partition's states, changed only by replay), ops.py (initialize/read/write/delete/
summary and the periodic snapshots), lifecycle.py (the runtime, pruning), service.py (the
in-process SharePersister), record_json.py (`kgc dump --share-group-state-decoder`).
"""
