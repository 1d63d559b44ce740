"""ApiVersions (key 18), v0-v4.

v0: error code and the key ranges. v1+: throttle time. v3+: flexible; client software name and
version must match Kafka's pattern or the answer is INVALID_REQUEST (librdkafka then retries v0).
v3+ also lists the broker's features (KIP-584: coordinator/cluster/features.py), supported and
finalized, in tagged fields; v0-v3 leave out features whose minimum is 0 (KAFKA-17011).
v4: same body (KAFKA-17011). Requests above v4 never reach here: the dispatcher answers them
with a v0 body (KIP-511). The response header is always v0.
The ranges come from the one table in protocol/api.py, narrowed where the control plane limits
an API (broker.versions); every client opens every connection with this request, so each
(version, error) body is encoded once per table and reused. Before the server is up, `kgc serve`
answers ApiVersions with the same bytes from the same tables (net/early_answers.py).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from coordinator.cluster.features import FINALIZED_FEATURES_EPOCH, advertised
from coordinator.control.versions import VersionLimits
from coordinator.handlers.request_context import RequestContext
from coordinator.net.early_answers import CLIENT_SOFTWARE
from protocol.api import ApiKey
from protocol.codec import encode_response
from protocol.errors import ErrorCode
from protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)

# Per table (servers of one process serve different tables at generation 0: share groups on or
# off): (generation, version, error, share) -> body.
_ENCODED: WeakKeyDictionary[VersionLimits, dict[tuple[int, int, int, bool], bytes]] = WeakKeyDictionary()


def encoded_api_versions(versions: VersionLimits, version: int, error: int, share_enabled: bool = True) -> bytes:
    key = (versions.generation, version, error, share_enabled)
    cache = _ENCODED.get(versions)
    if cache is None:
        cache = _ENCODED[versions] = {}
    body = cache.get(key)
    if body is None:
        if len(cache) > 64:  # old generations of a limited table
            cache.clear()
        entries = [
            ApiVersion(api_key=api, min_version=low, max_version=high)
            for api, (low, high) in sorted(versions.table.items())
        ]
        response = ApiVersionsResponse(error_code=error, api_keys=entries)
        if version >= 3:
            _add_features(response, version, share_enabled)
        body = cache[key] = encode_response(ApiKey.API_VERSIONS, version, response)
    return body


def _add_features(response: ApiVersionsResponse, version: int, share_enabled: bool) -> None:
    """Kafka's ApiVersionsResponse.createApiVersionsResponse: supported and finalized features."""
    features = advertised(share_enabled)
    response.supported_features = [
        SupportedFeatureKey(name=f.name, min_version=f.min_version, max_version=f.max_version)
        for f in features
        if version >= 4 or f.min_version > 0
    ]
    response.finalized_features_epoch = FINALIZED_FEATURES_EPOCH
    response.finalized_features = [
        FinalizedFeatureKey(name=f.name, max_version_level=f.finalized, min_version_level=f.finalized)
        for f in features
        if f.finalized > 0
    ]


async def handle(ctx: RequestContext, request: ApiVersionsRequest) -> bytes:
    error = ErrorCode.NONE
    if ctx.api_version >= 3 and not (
        CLIENT_SOFTWARE.fullmatch(request.client_software_name or "")
        and CLIENT_SOFTWARE.fullmatch(request.client_software_version or "")
    ):
        error = ErrorCode.INVALID_REQUEST
    elif ctx.api_version >= 3 and ctx.broker.telemetry is not None:  # what `match` selectors see
        ctx.broker.telemetry.client_software(
            ctx.connection_id, request.client_software_name, request.client_software_version
        )
    # share.version follows what is served: no share side (no share coordinator, --processes) is 0.
    share_enabled = ctx.broker.share is not None and ctx.broker.groups.share.settings.enabled
    return encoded_api_versions(ctx.broker.versions, ctx.api_version, error, share_enabled)
