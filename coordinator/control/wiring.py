"""The control plane's request-path parts, as the composition root builds them: fault rules,
the request log and the hook the dispatcher calls (control/hook.py). On when control.enable or
control.port is set; off, nothing of it exists and dispatch pays nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.broker.topics import TopicRegistry
from coordinator.control.faults import FaultRules
from coordinator.control.hook import ControlHook
from coordinator.control.tracking import RequestLog
from coordinator.control.transitions import TransitionLog
from coordinator.groups.service import GroupService
from coordinator.observe.reasons import observe
from coordinator.runtime.clock import Clock


@dataclass(frozen=True, slots=True)
class ControlParts:
    rules: FaultRules
    log: RequestLog
    transitions: TransitionLog
    hook: ControlHook


def control_parts(
    config: Any, wall: Clock, services: dict[int, GroupService], topics: TopicRegistry, tap: Any | None
) -> ControlParts:
    any_service = next(iter(services.values()))

    def group_state(group_id: str) -> str | None:
        shard = any_service.shard_for(group_id)
        group = None if shard is None else shard.groups.get(group_id)
        return None if group is None else str(group.state)

    def topic_name(topic_id: Any) -> str | None:
        topic = topics.by_id(topic_id)
        return None if topic is None else topic.name

    rules = FaultRules(wall, node_ids=lambda: services)
    log = RequestLog(config.control_requests_max)
    transitions = TransitionLog(wall)
    observe(transitions)  # every state change of the server's groups (requests and timers alike)
    return ControlParts(rules, log, transitions, ControlHook(rules, log, wall, group_state, topic_name, tap))
