"""GroupState: the classic group's states and the one table of legal transitions.

Copied from Kafka's ClassicGroupState. `VALID_PREVIOUS_STATES` is the only place transitions
are defined; `transition_to` checks it and every predicate (`can_rebalance`, ...) derives from
it. Each state's comment lists how it answers each request ("action") and where it may go.
"""

from __future__ import annotations

from enum import Enum


class IllegalStateTransition(RuntimeError):
    pass


class GroupState(Enum):
    # Empty: the group has no members, but may keep committed offsets until they expire.
    #   action: JoinGroup from a new member -> join (starts the first rebalance)
    #           SyncGroup, Heartbeat, LeaveGroup, OffsetCommit by member -> UNKNOWN_MEMBER_ID
    #           DeleteGroups -> allowed
    #   transition: a member joins -> PreparingRebalance; group deleted -> Dead
    EMPTY = "Empty"

    # PreparingRebalance: the group waits for every known member to (re)join.
    #   action: JoinGroup -> parked until the join phase completes
    #           Heartbeat -> REBALANCE_IN_PROGRESS (and the session timer is reset)
    #           SyncGroup -> REBALANCE_IN_PROGRESS; LeaveGroup -> member removed
    #   transition: all members joined or rebalance timeout -> CompletingRebalance,
    #               or Empty if nobody is left; group deleted -> Dead
    PREPARING_REBALANCE = "PreparingRebalance"

    # CompletingRebalance: a generation exists; the group waits for the leader's assignment.
    #   action: SyncGroup from followers -> parked until the leader syncs
    #           SyncGroup from the leader -> assignment stored, every parked member answered
    #           Heartbeat -> ok; JoinGroup with unchanged metadata -> current generation
    #           JoinGroup with changed metadata, LeaveGroup, member failure -> new rebalance
    #   transition: leader synced -> Stable; rebalance -> PreparingRebalance; deleted -> Dead
    COMPLETING_REBALANCE = "CompletingRebalance"

    # Stable: every member has (or can fetch) its assignment.
    #   action: Heartbeat, SyncGroup -> ok (SyncGroup returns the stored assignment)
    #           JoinGroup from the leader, or with changed metadata -> rebalance
    #           JoinGroup from a follower with unchanged metadata -> current generation
    #   transition: rebalance -> PreparingRebalance; deleted -> Dead
    STABLE = "Stable"

    # Dead: the group is gone (deleted); the entry is about to be removed.
    #   action: every request -> COORDINATOR_NOT_AVAILABLE (Describe: state Dead)
    #   transition: none (Dead -> Dead is allowed, as in Kafka)
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value

    def can_transition_to(self, target: GroupState) -> bool:
        return self in VALID_PREVIOUS_STATES[target]

    @property
    def can_rebalance(self) -> bool:
        """Whether a rebalance can start from here (Kafka ClassicGroup.canRebalance)."""
        return self.can_transition_to(GroupState.PREPARING_REBALANCE)

    @classmethod
    def parse(cls, name: str) -> GroupState | None:
        """Case-insensitive lookup by Kafka's state name (ListGroups filters)."""
        for state in cls:
            if state.value.lower() == name.lower():
                return state
        return None


VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(
        {
            GroupState.STABLE,
            GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE,
            GroupState.EMPTY,
            GroupState.DEAD,
        }
    ),
}


def check_transition(current: GroupState, target: GroupState) -> None:
    if not current.can_transition_to(target):
        raise IllegalStateTransition(f"group cannot go from {current} to {target}")
