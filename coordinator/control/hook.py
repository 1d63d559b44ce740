"""The control plane in the request path: fault rules act and every request is tracked.

The dispatcher hands each decoded request here when the control plane is on (otherwise it never
gets here: no rule, no log, no cost). With no rule installed a request costs one `rules.active`
check and one append to the request log. A matching rule decides, in this order: close without
applying; answer with an error (a well-formed error response for the API and version) instead
of applying; apply; hold the answer for delay_ms (real time, even with a manual clock: delays
exist to exercise client timeouts); close instead of answering; drop the answer; set
throttle_time_ms. Record bytes are never held by the log: a Produce request is tracked by its
per-partition summary and a Fetch response without its records.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import trio

from coordinator.control.error_responses import error_response, with_throttle
from coordinator.control.faults import Decision, FaultRules, GroupStateOf, RequestInfo
from coordinator.control.request_fields import TopicResolver
from coordinator.control.tracking import RequestLog
from coordinator.handlers.request_context import CloseConnection, Handler, RequestContext
from coordinator.observe import reasons
from coordinator.observe.transcript import data_request
from coordinator.runtime.clock import Clock
from protocol.api import ApiKey


class ControlHook:
    def __init__(
        self,
        rules: FaultRules,
        log: RequestLog,
        wall: Clock,
        group_state: GroupStateOf,
        resolve_topic: TopicResolver,
        tap: Any | None,
    ) -> None:
        self.rules = rules
        self.log = log
        self._wall = wall
        self._group_state = group_state
        self._resolve_topic = resolve_topic
        self._tap = tap  # the transcript/metrics tap, which wraps the handler when it is on

    async def handle(self, handler: Handler, ctx: RequestContext, request: Any) -> Any:
        header = ctx.header
        key, version = header.api_key, header.api_version
        received = self._wall.time_ms() if self.log.enabled else 0
        decision: Decision | None = None
        if self.rules.active and self.rules.wants(key):
            decision = self.rules.match(
                RequestInfo(
                    key,
                    version,
                    ctx.broker.node_id,
                    ctx.client_id,
                    ctx.connection_id,
                    request,
                    self._group_state,
                    self._resolve_topic,
                )
            )
        if decision is None:  # the common path, kept flat: no rule applies
            if self._tap is None:
                reasons.because_request(key, header.client_id, request)  # (named only if asked)
                response = await handler(ctx, request)
            else:
                response = await self._tap.handle(handler, ctx, request)
            if self.log.enabled:
                self._record(ctx, received, request, response, None)
            return response
        if decision.close_before:
            self._record(ctx, received, request, None, decision.rule_id)
            raise CloseConnection(f"fault rule {decision.rule_id}: close without applying")
        if decision.error_code is not None:
            response = error_response(key, version, request, decision.error_code, f"fault rule {decision.rule_id}")
        else:
            response = await self._run(handler, ctx, request)
        if decision.delay_ms:
            await trio.sleep(decision.delay_ms / 1000)
        if decision.close_after:
            self._record(ctx, received, request, response, decision.rule_id)
            raise CloseConnection(f"fault rule {decision.rule_id}: applied, then closed")
        if decision.drop_response:
            self._record(ctx, received, request, response, decision.rule_id, answered=False)
            return None
        if decision.throttle_ms is not None and not isinstance(response, bytes):
            response = with_throttle(response, decision.throttle_ms)
        self._record(ctx, received, request, response, decision.rule_id)
        return response

    async def _run(self, handler: Handler, ctx: RequestContext, request: Any) -> Any:
        if self._tap is None:  # the tap names the cause itself; the live page's transitions need one
            reasons.because_request(ctx.header.api_key, ctx.client_id, request)
            return await handler(ctx, request)
        return await self._tap.handle(handler, ctx, request)

    def _record(
        self,
        ctx: RequestContext,
        received: int,
        request: Any,
        response: Any,
        rule_id: int | None,
        answered: bool = True,
    ) -> None:
        key = ctx.header.api_key
        if key == _PRODUCE:
            request = {"acks": request.acks, "partitions": data_request(ctx, key, request)}
        elif key == _FETCH and response is not None and not isinstance(response, bytes):
            response = _without_records(response)
        self.log.record(
            key,
            ctx.header.api_version,
            ctx.broker.node_id,
            ctx.connection_id,
            ctx.client_id,
            received,
            self._wall.time_ms() if answered else None,
            request,
            response,
            rule_id,
        )


_PRODUCE, _FETCH = int(ApiKey.PRODUCE), int(ApiKey.FETCH)  # plain ints: compared on every request


def _without_records(response: Any) -> Any:
    """A Fetch response as tracked: every partition's fields but its record bytes."""
    return dataclasses.replace(
        response,
        responses=[
            dataclasses.replace(topic, partitions=[dataclasses.replace(p, records=None) for p in topic.partitions])
            for topic in response.responses
        ],
    )
