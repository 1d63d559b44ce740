"""ClassicMember: one member of a classic group, as plain data (Kafka ClassicGroupMember).

Hard state (written in records): ids, client id/host, timeouts, protocols, assignment.
Soft state (memory only): the parked JoinGroup/SyncGroup replies and `is_new`.
Invariant: `protocols` keeps the member's preference order; names are unique.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coordinator.runtime.operation import ParkedReply

Protocols = list[tuple[str, bytes]]


@dataclass
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    awaiting_join: ParkedReply | None = field(default=None, repr=False)
    awaiting_sync: ParkedReply | None = field(default=None, repr=False)
    # A member that joined during this rebalance and has not yet received a JoinGroup answer.
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    @property
    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol_name:
                return metadata
        return b""

    def matches(self, protocols: Protocols) -> bool:
        """Same protocols, same order, same metadata (Kafka ClassicGroupMember.matches)."""
        return list(protocols) == list(self.protocols)

    def vote(self, candidates: Iterable[str]) -> str:
        """The member's most preferred protocol among the candidates."""
        allowed = set(candidates)
        for name in self.protocol_names:
            if name in allowed:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(allowed)}")

    def has_satisfied_heartbeat(self) -> bool:
        # Kafka ClassicGroupMember.hasSatisfiedHeartbeat: new members can expire while parked;
        # other members waiting on the rebalance count as alive.
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync
