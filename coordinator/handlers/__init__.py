"""One thin module per API key; this table maps each served key to its handler.

A handler is `async def handle(ctx: RequestContext, request) -> response | None`. It validates,
calls the part of the broker that owns the behaviour, and builds the response object; the
dispatcher does headers, versions and bytes.
"""
from __future__ import annotations

from coordinator.handlers import k03_metadata, k10_find_coordinator, k18_api_versions
from protocol.api import ApiKey

HANDLERS = {
    ApiKey.METADATA: k03_metadata.handle,
    ApiKey.FIND_COORDINATOR: k10_find_coordinator.handle,
    ApiKey.API_VERSIONS: k18_api_versions.handle,
}
