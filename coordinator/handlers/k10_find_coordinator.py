"""FindCoordinator (key 10), v0-v6.

v0: group key only. v1+: key type (0 group, 1 transaction) and error message. v3+: flexible.
v4+: batched `CoordinatorKeys`, one result each (KIP-699). v6: key type 2 (share groups).
This node coordinates every group; transactions and share groups are not served, so those keys
get COORDINATOR_NOT_AVAILABLE with a message saying so.
"""
from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

GROUP_KEY_TYPE = 0
_KEY_TYPE_NAMES = {1: "transaction", 2: "share group"}


def _lookup(ctx: RequestContext, key: str, key_type: int) -> tuple[int, str | None]:
    if key_type == GROUP_KEY_TYPE:
        if not key and ctx.api_version < 4:
            return ErrorCode.INVALID_REQUEST, "group id must not be empty"
        return ErrorCode.NONE, None
    if key_type in _KEY_TYPE_NAMES:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{_KEY_TYPE_NAMES[key_type]} coordinators are not served"
    return ErrorCode.INVALID_REQUEST, f"unknown key type {key_type}"


async def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    broker = ctx.broker
    if ctx.api_version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            error, message = _lookup(ctx, key, request.key_type)
            found = error == ErrorCode.NONE
            coordinators.append(Coordinator(
                key=key,
                node_id=broker.node_id if found else -1,
                host=broker.advertised_host if found else "",
                port=broker.advertised_port if found else -1,
                error_code=error,
                error_message=message,
            ))
        return FindCoordinatorResponse(coordinators=coordinators)
    error, message = _lookup(ctx, request.key, request.key_type)
    found = error == ErrorCode.NONE
    return FindCoordinatorResponse(
        error_code=error,
        error_message=message,
        node_id=broker.node_id if found else -1,
        host=broker.advertised_host if found else "",
        port=broker.advertised_port if found else -1,
    )
