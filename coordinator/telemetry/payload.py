"""A PushTelemetry payload: decompressed as the client sent it, decoded as OTLP MetricsData.

Decompression is bounded: the decompressed bytes may not exceed telemetry.max.bytes (as Kafka's
PushTelemetryRequest.metricsData(maxDecompressedBytes) bounds them), so a compression bomb costs
at most that much memory and is refused with TELEMETRY_TOO_LARGE (`PayloadTooLarge`); bytes that
do not decompress or decode are INVALID_RECORD (`InvalidPayload`). Decoding uses the
OpenTelemetry protobuf package (opentelemetry-proto), imported on the first push only: start-up
does not pay for protobuf. Every data point becomes one `Point` (sum and gauge values as sent;
histograms and summaries by count and sum), at most MAX_POINTS per push (the rest is counted in
`skipped`: a 1 MiB payload of tiny points must not cost the server seconds).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from typing import Any

import cramjam

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_XERIAL_MAGIC = b"\x82SNAPPY\x00"  # SnappyOutputStream's framing (the Java client); raw otherwise
_BLOCK_LENGTH = struct.Struct(">i")
MAX_POINTS = 10_000


class InvalidPayload(ValueError):
    """The payload does not decompress or is not OTLP MetricsData (INVALID_RECORD)."""


class PayloadTooLarge(ValueError):
    """The payload decompresses past telemetry.max.bytes (TELEMETRY_TOO_LARGE)."""


@dataclass(frozen=True, slots=True)
class Point:
    """One data point of one metric, as the client reported it."""

    name: str
    kind: str  # gauge, sum, histogram, exponential_histogram, summary
    value: float | int | dict[str, float | int]
    attributes: dict[str, Any]
    time_ms: int
    temporality: str | None = None  # sums and histograms: "delta" or "cumulative"
    monotonic: bool | None = None  # sums only


@dataclass(frozen=True, slots=True)
class Decoded:
    resource: dict[str, Any]  # the resource attributes of the first ResourceMetrics
    points: list[Point]
    size: int  # decompressed bytes
    skipped: int = 0  # data points past MAX_POINTS, not turned into Points


def decompress(codec: int, data: bytes, limit: int) -> bytes:
    """The payload's bytes, at most `limit` of them (PayloadTooLarge past it)."""
    if codec == COMPRESSION_NONE:
        return bytes(data)
    try:
        if codec == COMPRESSION_SNAPPY:
            return _snappy(data, limit)
        module = {COMPRESSION_GZIP: cramjam.gzip, COMPRESSION_LZ4: cramjam.lz4, COMPRESSION_ZSTD: cramjam.zstd}[codec]
        out = bytearray(limit + 1)
        try:
            written = module.decompress_into(data, out)
        except cramjam.DecompressionError as exc:
            if "whole buffer" in str(exc):  # cramjam's words when the output outgrows the buffer
                raise PayloadTooLarge(f"decompresses past {limit} bytes") from None
            raise
        if written > limit:
            raise PayloadTooLarge(f"decompresses past {limit} bytes")
        return bytes(out[:written])
    except (cramjam.DecompressionError, struct.error, ValueError, KeyError) as exc:
        if isinstance(exc, PayloadTooLarge):
            raise
        raise InvalidPayload(f"cannot decompress {COMPRESSION_NAMES.get(codec, codec)} metrics: {exc}") from None


def _snappy(data: bytes, limit: int) -> bytes:
    """Raw snappy or xerial-framed blocks; each block's declared length is checked first."""
    blocks = []
    if data.startswith(_XERIAL_MAGIC):
        pos = 16
        while pos < len(data):
            (n,) = _BLOCK_LENGTH.unpack_from(data, pos)
            if n < 0 or pos + 4 + n > len(data):
                raise ValueError("truncated snappy block")
            blocks.append(data[pos + 4 : pos + 4 + n])
            pos += 4 + n
    else:
        blocks.append(data)
    out, total = bytearray(), 0
    for block in blocks:
        total += cramjam.snappy.decompress_raw_len(block)
        if total > limit:
            raise PayloadTooLarge(f"decompresses past {limit} bytes")
        out += bytes(cramjam.snappy.decompress_raw(block))
    return bytes(out)


@cache
def _metrics_pb2() -> Any:
    from opentelemetry.proto.metrics.v1 import metrics_pb2  # ~35 ms: only once a push arrives

    return metrics_pb2


def decode(codec: int, data: bytes, limit: int) -> Decoded:
    raw = decompress(codec, data, limit)
    pb2 = _metrics_pb2()
    message = pb2.MetricsData()
    try:
        message.ParseFromString(raw)
    except Exception as exc:  # protobuf's DecodeError (its class differs by backend)
        raise InvalidPayload(f"not OTLP MetricsData: {exc}") from None
    resource: dict[str, Any] = {}
    points: list[Point] = []
    skipped = 0
    for rm in message.resource_metrics:
        if not resource:
            resource = _attributes(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if len(points) >= MAX_POINTS:
                    skipped += _count(metric)
                else:
                    points.extend(_points(metric))
    return Decoded(resource, points, len(raw), skipped)


def _count(metric: Any) -> int:
    kind = metric.WhichOneof("data")
    return 0 if kind is None else len(getattr(metric, kind).data_points)


_TEMPORALITY = {1: "delta", 2: "cumulative"}


def _points(metric: Any) -> list[Point]:
    kind = metric.WhichOneof("data")
    if kind is None:
        return []
    data = getattr(metric, kind)
    temporality = _TEMPORALITY.get(getattr(data, "aggregation_temporality", 0))
    monotonic = data.is_monotonic if kind == "sum" else None
    out = []
    for dp in data.data_points:
        value: Any
        if kind in ("gauge", "sum"):
            value = dp.as_int if dp.WhichOneof("value") == "as_int" else dp.as_double
        else:
            value = {"count": dp.count, "sum": dp.sum}
        out.append(
            Point(
                metric.name,
                kind,
                value,
                _attributes(dp.attributes),
                dp.time_unix_nano // 1_000_000,
                temporality,
                monotonic,
            )
        )
    return out


def _attributes(key_values: Any) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in key_values}


def _any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind in ("string_value", "bool_value", "int_value", "double_value"):
        return getattr(value, kind)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return None
