"""Answers for requests the authorizer refused as a whole, and Kafka's topic filtering.

`refused(ctx, request, code)` is Kafka's `<Api>Request.getErrorResponse(code)`: the same
builder the control plane's fault rules use (coordinator/control/error_responses.py), loaded on
the first refusal only. `split_authorized` is Kafka's AuthHelper.partitionSeqByAuthorized: the
names the principal may act on, and the ones it may not, each name asked once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType


def refused(ctx: RequestContext, request: Any, code: int, why: str) -> Any:
    from coordinator.control.error_responses import error_response

    explain(code, why)
    return error_response(ctx.header.api_key, ctx.api_version, request, code)


def split_authorized(
    ctx: RequestContext, operation: AclOperation, resource_type: ResourceType, names: Iterable[str]
) -> tuple[set[str], set[str]]:
    allowed: set[str] = set()
    denied: set[str] = set()
    for name in names:
        if name in allowed or name in denied:
            continue
        (allowed if ctx.authorize(operation, resource_type, name) else denied).add(name)
    return allowed, denied
