"""Who may commit or fetch a consumer group's offsets (Kafka 4.3 ConsumerGroup.validateOffsetCommit,
createAssignmentEpochValidator and validateOffsetFetch).

KIP-1251 relaxes the commit check from "the member's epoch exactly" to "an epoch the member held
each committed partition at": assignment epoch <= received epoch <= member epoch. The member's
own epoch commits anything (no per-partition check); a newer one is refused; an older one is
checked per partition by `AssignmentEpochCheck`, and a single refused partition refuses the whole
commit (Kafka's validator throws from inside the commit loop). Refusals are STALE_MEMBER_EPOCH
for consumer-protocol members and ILLEGAL_GENERATION for classic members of the group; fetches
keep the exact epoch check. Pure reads: nothing here emits.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from coordinator.groups.consumer.errors import ConsumerGroupError, unknown_member
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import ConsumerGroupMember
from protocol.errors import ErrorCode

FIRST_CONSUMER_PROTOCOL_COMMIT_VERSION = 9  # OffsetCommit v9: the first a KIP-848 member may use


@dataclass(frozen=True, slots=True)
class AssignmentEpochCheck:
    """Kafka's CommitPartitionValidator from createAssignmentEpochValidator: a commit at an epoch
    older than the member's own passes for a partition the member holds (assigned or pending
    revocation) since that epoch or earlier."""

    member: ConsumerGroupMember
    received_epoch: int

    @property
    def code(self) -> ErrorCode:
        return ErrorCode.ILLEGAL_GENERATION if self.member.use_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH

    def refusal(self, topic_id: uuid.UUID | None, topic: str, partition: int) -> ConsumerGroupError | None:
        """None when the member may commit `topic`-`partition` at the received epoch.
        `topic_id` None: the topic is not in the metadata, so the member cannot hold it."""
        epoch = None if topic_id is None else self.member.assignment_epoch(topic_id, partition)
        if epoch is None:
            return ConsumerGroupError(
                self.code, f"Partition {topic}-{partition} is not assigned or pending revocation for member."
            )
        if self.received_epoch < epoch:
            return ConsumerGroupError(
                self.code,
                f"Received member epoch {self.received_epoch} is older than assignment epoch {epoch} "
                f"for partition {topic}-{partition}.",
            )
        return None


def validate_offset_commit(
    group: ConsumerGroup,
    member_id: str,
    instance_id: str | None,
    member_epoch: int,
    is_transactional: bool = False,
    api_version: int = FIRST_CONSUMER_PROTOCOL_COMMIT_VERSION,
) -> AssignmentEpochCheck | None:
    """Kafka ConsumerGroup.validateOffsetCommit: None lets every partition commit (Kafka's
    CommitPartitionValidator.NO_OP), a check is asked per partition; raises ConsumerGroupError
    when the commit is refused as a whole."""
    if member_epoch < 0 and not group.members:
        return None  # the admin client or a consumer without group management, on an empty group
    if is_transactional and member_epoch == -1 and member_id == "" and instance_id is None:
        return None  # TxnOffsetCommit without member fields
    member = group.members.get(member_id)
    if member is None:
        raise unknown_member(member_id, group.group_id)
    classic = member.use_classic_protocol
    if not is_transactional and not classic and api_version < FIRST_CONSUMER_PROTOCOL_COMMIT_VERSION:
        raise ConsumerGroupError(
            ErrorCode.UNSUPPORTED_VERSION,
            "OffsetCommit version 9 or above must be used by members using the consumer group protocol",
        )
    if member_epoch == member.member_epoch:
        return None
    if member_epoch > member.member_epoch:
        raise ConsumerGroupError(
            ErrorCode.ILLEGAL_GENERATION if classic else ErrorCode.STALE_MEMBER_EPOCH,
            f"Received member epoch {member_epoch} is newer than current member epoch {member.member_epoch}.",
        )
    return AssignmentEpochCheck(member, member_epoch)


def validate_offset_fetch(group: ConsumerGroup, member_id: str | None, member_epoch: int) -> None:
    """Kafka ConsumerGroup.validateOffsetFetch (the exact epoch; KIP-1251 changes commits only);
    raises ConsumerGroupError."""
    if member_id is None and member_epoch < 0:
        return
    member = group.members.get(member_id) if member_id is not None else None
    if member is None:
        raise unknown_member(str(member_id), group.group_id)
    if member_epoch == member.member_epoch:
        return
    if member.use_classic_protocol:
        raise ConsumerGroupError(
            ErrorCode.ILLEGAL_GENERATION,
            f"The received generation id {member_epoch} does not match the expected member epoch "
            f"{member.member_epoch}.",
        )
    raise ConsumerGroupError(
        ErrorCode.STALE_MEMBER_EPOCH,
        f"The received member epoch {member_epoch} does not match the expected member epoch {member.member_epoch}.",
    )
