"""DescribeConfigs (key 32), v1-v4.

v1: config sources and synonyms (include_synonyms), is_default gone. v2: as v1 (throttle first).
v3: config types and documentation (include_documentation). v4: flexible. Per resource
(ConfigHelper.handleDescribeConfigsRequest): DESCRIBE_CONFIGS on the topic, the group or (brokers)
the cluster, else TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED; the rest is
coordinator/admin/configs.py. Sensitive values are never sent (null), as Kafka's.
"""

from __future__ import annotations

from coordinator.admin.config_model import ConfigError, Entry
from coordinator.handlers.config_common import authorize
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation
from protocol.errors import ErrorCode
from protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)


def _entry(entry: Entry) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        config_source=int(entry.source),
        is_sensitive=entry.sensitive,
        synonyms=[DescribeConfigsSynonym(name=s.name, value=s.value, source=int(s.source)) for s in entry.synonyms],
        config_type=int(entry.type),
        documentation=entry.doc or None,
    )


async def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    service = ctx.broker.configs
    assert service is not None, "the composition root builds the config service"
    docs = ctx.api_version >= 3 and request.include_documentation
    results = []
    for resource in request.resources:
        rtype, name = resource.resource_type, resource.resource_name
        result = DescribeConfigsResult(resource_type=rtype, resource_name=name, error_message=None)
        error = authorize(ctx, AclOperation.DESCRIBE_CONFIGS, rtype, name)
        if error:
            result.error_code = error
        else:
            try:
                entries = service.describe(
                    rtype, name, resource.configuration_keys, request.include_synonyms, docs, ctx.broker.node_id
                )
                result.configs = [_entry(e) for e in entries]
            except ConfigError as exc:
                result.error_code, result.error_message = exc.code, exc.message
                explain(exc.code, f"DescribeConfigs {name!r} (type {rtype}): {exc.message or ErrorCode(exc.code).name}")
        results.append(result)
    return DescribeConfigsResponse(results=results)
