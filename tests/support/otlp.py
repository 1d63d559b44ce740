"""OTLP MetricsData payloads for telemetry tests, built with the OpenTelemetry protobuf classes
(what librdkafka and the Java client encode): gauges, delta sums and a histogram."""

from __future__ import annotations

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2 as pb

PREFIX = "org.apache.kafka.producer."


def payload(*metrics: pb.Metric, resource: dict[str, str] | None = None) -> bytes:
    data = pb.MetricsData()
    rm = data.resource_metrics.add()
    for key, value in (resource or {}).items():
        rm.resource.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    rm.scope_metrics.add().metrics.extend(metrics)
    return data.SerializeToString()


def gauge(name: str, value: float, time_ms: int = 1000, **attributes: int) -> pb.Metric:
    point = pb.NumberDataPoint(as_double=value, time_unix_nano=time_ms * 1_000_000)
    for key, v in attributes.items():
        point.attributes.append(KeyValue(key=key.replace("_", "."), value=AnyValue(int_value=v)))
    return pb.Metric(name=name, gauge=pb.Gauge(data_points=[point]))


def delta_sum(name: str, value: int, time_ms: int = 1000) -> pb.Metric:
    point = pb.NumberDataPoint(as_int=value, time_unix_nano=time_ms * 1_000_000)
    return pb.Metric(
        name=name,
        sum=pb.Sum(data_points=[point], aggregation_temporality=pb.AGGREGATION_TEMPORALITY_DELTA, is_monotonic=True),
    )


def histogram(name: str, count: int, total: float) -> pb.Metric:
    point = pb.HistogramDataPoint(count=count, sum=total, time_unix_nano=10**9)
    return pb.Metric(
        name=name,
        histogram=pb.Histogram(data_points=[point], aggregation_temporality=pb.AGGREGATION_TEMPORALITY_CUMULATIVE),
    )


def sample() -> bytes:
    """Two producer metrics, as a librdkafka producer's first push looks."""
    return payload(
        gauge(PREFIX + "node.request.latency.avg", 2.5, node_id=0), delta_sum(PREFIX + "connection.creation.total", 1)
    )
