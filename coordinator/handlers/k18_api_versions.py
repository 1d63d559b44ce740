"""ApiVersions (key 18), v0-v4.

v0: error code and the key ranges. v1+: throttle time. v3+: flexible; client software name and
version must match Kafka's pattern or the answer is INVALID_REQUEST (librdkafka then retries v0).
v4: same body (KAFKA-17011). Requests above v4 never reach here: the dispatcher answers them
with a v0 body (KIP-511). The response header is always v0.
"""
from __future__ import annotations

import re

from coordinator.context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse

# Kafka's ApiVersionsRequest.isValid pattern for ClientSoftwareName/Version.
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


async def handle(ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
    from coordinator.dispatch import api_version_entries

    entries = api_version_entries()
    if ctx.api_version >= 3 and not (
        _SOFTWARE.match(request.client_software_name or "")
        and _SOFTWARE.match(request.client_software_version or "")
    ):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=entries)
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=entries)
