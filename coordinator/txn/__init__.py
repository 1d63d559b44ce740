"""The transaction coordinator (Kafka's TransactionCoordinator, TransactionStateManager and
TransactionMarkerChannelManager): state.py (the state machine), records.py (__transaction_state
bytes), shard.py (one partition's ids, changed only by replay), ops.py, markers.py, lifecycle.py
(the runtime), service.py (what handlers call), placement.py, record_json.py.
"""
