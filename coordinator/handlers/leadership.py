"""Is this broker the partition's leader, and does the client agree on the leader epoch?

KafkaApis/ReplicaManager for a data-path request to one partition: a broker that does not lead
it answers NOT_LEADER_OR_FOLLOWER (the client refreshes metadata and goes to the leader; KIP-951
responses also name the current leader); a leader checks the client's current leader epoch when
one is given (KIP-320): older -> FENCED_LEADER_EPOCH, newer -> UNKNOWN_LEADER_EPOCH.
"""

from __future__ import annotations

from coordinator.cluster.cluster import Leadership
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode

NO_EPOCH = -1


def leader_error(ctx: RequestContext, topic: str, partition: int, current_leader_epoch: int = NO_EPOCH) -> int:
    """ErrorCode.NONE if this broker may serve the partition now (also for a partition that does
    not exist: the caller answers that one itself)."""
    lead = ctx.broker.cluster.leadership(topic, partition)
    if lead is None:
        return ErrorCode.NONE
    if lead.leader != ctx.broker.node_id:
        explain(
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            f"broker {ctx.broker.node_id} does not lead {topic}-{partition}; "
            + (f"broker {lead.leader} does (epoch {lead.epoch})" if lead.leader >= 0 else "no broker does"),
        )
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if not ctx.broker.data.may_serve(topic, partition):  # cluster.processes: another process still holds it
        explain(
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            f"broker {ctx.broker.node_id} leads {topic}-{partition} from epoch {lead.epoch} but is still "
            "taking it over from another broker process",
        )
        return ErrorCode.NOT_LEADER_OR_FOLLOWER  # Kafka: a leader not yet online there
    if current_leader_epoch != NO_EPOCH and current_leader_epoch != lead.epoch:
        code = ErrorCode.FENCED_LEADER_EPOCH if current_leader_epoch < lead.epoch else ErrorCode.UNKNOWN_LEADER_EPOCH
        explain(
            code, f"{topic}-{partition}: the client's leader epoch is {current_leader_epoch}, the leader's {lead.epoch}"
        )
        return code
    return ErrorCode.NONE


def current_leader(ctx: RequestContext, topic: str, partition: int) -> Leadership | None:
    return ctx.broker.cluster.leadership(topic, partition)
