"""Share groups (KIP-932) on the broker side: share partitions (acquisition, locks, deliveries,
acknowledgements), share sessions, and the share coordinator that keeps their state in
__share_group_state. The share group's membership lives in coordinator/groups/share/."""
