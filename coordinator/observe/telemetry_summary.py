"""Transcript summary of a PushTelemetry request (KIP-714): the codec, the payload's size, and
what it holds once decoded (how many metrics, the first few names), or why it does not decode.
The payload is decoded as the handler decodes it (coordinator/telemetry/payload.py, within the
broker's telemetry.max.bytes), only while a transcript is written."""

from __future__ import annotations

from typing import Any

NAMES_SHOWN = 5
_DEFAULT_LIMIT = 1 << 20


def push_summary(ctx: Any, request: Any) -> dict[str, Any]:
    from coordinator.telemetry.payload import COMPRESSION_NAMES, InvalidPayload, PayloadTooLarge, decode

    manager = getattr(getattr(ctx, "broker", None), "telemetry", None)
    limit = manager.max_bytes if manager is not None else _DEFAULT_LIMIT
    codec = request.compression_type
    summary: dict[str, Any] = {
        "compression": COMPRESSION_NAMES.get(codec, str(codec)),
        "bytes": len(request.metrics),
        "terminating": request.terminating,
    }
    if not request.metrics:
        return {**summary, "metrics": 0, "names": []}
    try:
        decoded = decode(codec, request.metrics, limit)
    except (InvalidPayload, PayloadTooLarge) as exc:
        return {**summary, "undecodable": str(exc)}
    names = list(dict.fromkeys(p.name for p in decoded.points))
    return {**summary, "decoded_bytes": decoded.size, "metrics": len(names), "names": names[:NAMES_SHOWN]}
