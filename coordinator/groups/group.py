"""ClassicGroup: one classic group's data and the bookkeeping Kafka's ClassicGroup owns.

Invariants: `members` keeps join order (the first joiner leads); `static_members` maps each
group.instance.id to the current member id; `pending_join_members` are KIP-394 ids handed out
with MEMBER_ID_REQUIRED and not yet used; `pending_sync_members` are members of the current
generation that have not sent SyncGroup. State changes only through `transition_to`.
Nothing here schedules timers or answers requests: rebalance.py does that.
"""

from __future__ import annotations

from collections import Counter

from coordinator.groups.member import ClassicMember, Protocols
from coordinator.groups.record_types import GroupMetadataRecord, MemberSnapshot
from coordinator.groups.state import GroupState, check_transition
from coordinator.observe.reasons import OBSERVERS, explain, transitioned
from protocol.consumer_protocol import decode_subscription
from protocol.errors import DecodeError, ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"  # Kafka ConsumerProtocol.PROTOCOL_TYPE


class ClassicGroup:
    def __init__(self, group_id: str, now_ms: int, state: GroupState = GroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state: GroupState | None = None
        self.state_timestamp_ms: int | None = now_ms
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join_members: dict[str, None] = {}  # ordered set
        self.pending_sync_members: dict[str, None] = {}
        # Set when a new member arrives during the initial (delayed) rebalance, so the delay
        # is extended once more (Kafka ClassicGroup.newMemberAdded).
        self.new_member_added = False
        self._supported_protocols: Counter[str] = Counter()
        # Kafka ClassicGroup.subscribedTopics: the consumer-protocol topics of the generation,
        # computed when a generation starts (or the group is loaded); None = unknown.
        self.subscribed_topics: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"ClassicGroup({self.group_id!r}, {self.state}, gen={self.generation_id})"

    # -- state ------------------------------------------------------------------------------

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        check_transition(self.state, target)
        self.previous_state = self.state
        self.state = target
        self.state_timestamp_ms = now_ms
        if OBSERVERS.get():  # the transcript/metrics hook: one ContextVar read when nobody watches
            transitioned(self.group_id, self.previous_state, target, self.generation_id)

    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    def is_simple(self) -> bool:
        """Kafka ClassicGroup.isSimpleGroup: made by an offset commit, never joined (no records of
        its own), so a consumer-group record may replace it."""
        return (
            self.protocol_type is None
            and not self.members
            and not self.pending_join_members
            and self.state is GroupState.EMPTY
        )

    # -- membership -------------------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add(self, member: ClassicMember) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._supported_protocols.update(member.protocol_names)
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.pending_join_members.pop(member.member_id, None)

    def remove(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._supported_protocols.subtract(member.protocol_names)
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.pop(member_id, None)
        self.pending_sync_members.pop(member_id, None)
        return member

    def update_protocols(self, member: ClassicMember, protocols: Protocols, rebalance_ms: int, session_ms: int) -> None:
        self._supported_protocols.subtract(member.protocol_names)
        member.protocols = list(protocols)
        self._supported_protocols.update(member.protocol_names)
        member.rebalance_timeout_ms = rebalance_ms
        member.session_timeout_ms = session_ms

    def replace_static_member_id(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        """Move the static member to a new member id, keeping its place and assignment."""
        old = self.members[old_id]
        new = ClassicMember(
            member_id=new_id,
            group_instance_id=instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=list(old.protocols),
            assignment=old.assignment,
        )
        # Rebuild the dict so the new id keeps the old one's position (join order).
        self.members = {(new_id if k == old_id else k): (new if k == old_id else m) for k, m in self.members.items()}
        if self.is_leader(old_id):
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        if self.pending_sync_members.pop(old_id, _MISSING) is not _MISSING:
            self.pending_sync_members[new_id] = None
        return new

    def validate_generation_member(self, member_id: str, instance_id: str | None, generation_id: int) -> int | None:
        """The checks Heartbeat and SyncGroup share, in Kafka's order: Dead, member (incl. static
        fencing), generation. ErrorCode code (with its reason explained) or None."""
        if self.is_in(GroupState.DEAD):
            explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {self.group_id!r} is Dead (being deleted)")
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self.validate_existing_member(member_id, instance_id)
        if error is not None:
            return error
        if generation_id != self.generation_id:
            explain(
                ErrorCode.ILLEGAL_GENERATION,
                f"request generation {generation_id}, group generation {self.generation_id}",
            )
            return ErrorCode.ILLEGAL_GENERATION
        return None

    def validate_existing_member(self, member_id: str, instance_id: str | None) -> int | None:
        """Kafka GroupMetadataManager.validateExistingMember: error code or None."""
        if instance_id is None:
            if member_id in self.members:
                return None
            explain(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"member {member_id!r} is not in group {self.group_id!r} "
                f"(state {self.state}, generation {self.generation_id})",
            )
            return ErrorCode.UNKNOWN_MEMBER_ID
        current = self.static_members.get(instance_id)
        if current is None:
            explain(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"no static member with group.instance.id {instance_id!r} in group {self.group_id!r}",
            )
            return ErrorCode.UNKNOWN_MEMBER_ID
        if current != member_id:
            explain(
                ErrorCode.FENCED_INSTANCE_ID,
                f"group.instance.id {instance_id!r} now belongs to member {current!r}, not {member_id!r}",
            )
            return ErrorCode.FENCED_INSTANCE_ID
        return None

    # -- rebalance bookkeeping --------------------------------------------------------------

    @property
    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.is_awaiting_join)

    def has_all_members_joined(self) -> bool:
        return self.num_awaiting_join == len(self.members) and not self.pending_join_members

    def not_yet_rejoined_members(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members' (Kafka)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick the first member that did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    # -- protocols --------------------------------------------------------------------------

    def supports_protocols(self, protocol_type: str, names: list[str]) -> bool:
        """Kafka ClassicGroup.supportsProtocols."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        return protocol_type == self.protocol_type and any(
            self._supported_protocols[n] == len(self.members) for n in names
        )

    def candidate_protocols(self) -> list[str]:
        """Protocols every member supports, in the leader's order of preference."""
        n = len(self.members)
        order = self.members[self.leader_id].protocol_names if self.leader_id else []
        return [p for p in order if self._supported_protocols[p] == n]

    def select_protocol(self) -> str:
        """Each member votes for its favourite candidate; most votes wins (Kafka
        ClassicGroup.selectProtocol). Ties go to the leader's preference (Kafka leaves them
        to HashMap order; we want determinism)."""
        candidates = self.candidate_protocols()
        if not candidates:
            raise ValueError(f"no protocol supported by all members of {self.group_id}")
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return max(candidates, key=lambda p: (votes[p], -candidates.index(p)))

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, now_ms)
        self.subscribed_topics = self.compute_subscribed_topics()
        self.pending_sync_members.clear()

    @property
    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """Kafka ClassicGroup.computeSubscribedTopics: the union of the members' subscribed
        topics for protocol type "consumer"; None if another type, no protocol yet, or a
        subscription does not parse."""
        if not self.uses_consumer_protocol:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                topics.update(decode_subscription(member.metadata(self.protocol_name)).topics)
        except DecodeError:
            return None
        return frozenset(topics)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Kafka ClassicGroup.isSubscribedToTopic: unknown subscriptions count as subscribed
        for consumer groups only."""
        if self.subscribed_topics is None:
            return self.uses_consumer_protocol
        return topic in self.subscribed_topics

    def leader_view(self) -> list[tuple[str, str | None, bytes]]:
        """What the leader's JoinGroup answer lists: (member id, instance id, metadata)."""
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name)) for m in self.members.values()]

    # -- records ----------------------------------------------------------------------------

    def snapshot(self) -> GroupMetadataRecord:
        return GroupMetadataRecord(
            group_id=self.group_id,
            protocol_type=self.protocol_type or "",
            generation_id=self.generation_id,
            protocol_name=self.protocol_name,
            leader=self.leader_id,
            current_state_timestamp_ms=self.state_timestamp_ms,
            members=tuple(
                MemberSnapshot(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout_ms=m.rebalance_timeout_ms,
                    session_timeout_ms=m.session_timeout_ms,
                    subscription=m.metadata(self.protocol_name),
                    assignment=m.assignment,
                )
                for m in self.members.values()
            ),
        )


_MISSING = object()
