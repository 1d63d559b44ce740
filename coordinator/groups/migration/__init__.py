"""Online migration between the classic and the consumer protocol (KIP-848), Kafka 4.2:
convert.py (group conversions and the embedded ConsumerProtocol of classic members), bridge.py
(the KIP-848 core's ClassicBridge: upgrade, downgrade, empty groups), classic_members.py
(JoinGroup/SyncGroup/Heartbeat/LeaveGroup of classic members inside a consumer group).
This package imports nothing itself; import its modules directly.
"""
