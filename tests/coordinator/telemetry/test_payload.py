"""PushTelemetry payloads: every codec Kafka accepts, decompressed as the client sent it and
bounded by telemetry.max.bytes, decoded as OTLP; and the store that keeps the latest values."""

from __future__ import annotations

import struct

import cramjam
import pytest

from coordinator.telemetry.payload import InvalidPayload, PayloadTooLarge, decode, decompress
from coordinator.telemetry.store import TelemetryStore
from storage.batch.compression import compress
from tests.support import otlp

PAYLOAD = otlp.sample()


def _xerial_raw(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


@pytest.mark.parametrize(
    ("codec", "packed"),
    [
        (0, PAYLOAD),
        (1, compress(1, PAYLOAD)),
        (2, compress(2, PAYLOAD)),  # xerial framing, as the Java client's SnappyOutputStream
        (2, _xerial_raw(PAYLOAD)),  # raw snappy, as librdkafka sends it
        (3, compress(3, PAYLOAD)),
        (4, compress(4, PAYLOAD)),
    ],
    ids=["none", "gzip", "snappy-xerial", "snappy-raw", "lz4", "zstd"],
)
def test_every_codec_decodes_to_the_same_points(codec, packed):
    decoded = decode(codec, packed, 1 << 20)
    assert decoded.size == len(PAYLOAD)
    assert [(p.name, p.kind, p.value, p.attributes, p.temporality) for p in decoded.points] == [
        (otlp.PREFIX + "node.request.latency.avg", "gauge", 2.5, {"node.id": 0}, None),
        (otlp.PREFIX + "connection.creation.total", "sum", 1, {}, "delta"),
    ]


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_decompression_stops_at_the_bound(codec):
    bomb = compress(codec, b"\0" * 200_000)
    with pytest.raises(PayloadTooLarge):
        decompress(codec, bomb, 100_000)
    assert len(decompress(codec, bomb, 200_000)) == 200_000  # exactly the bound is fine


def test_a_snappy_block_longer_than_the_data_is_invalid():
    framed = compress(2, PAYLOAD)
    broken = framed[:16] + struct.pack(">i", 10_000) + framed[20:]
    with pytest.raises(InvalidPayload):
        decompress(2, broken, 1 << 20)


def test_histograms_resource_attributes_and_empty_metrics():
    data = otlp.payload(otlp.histogram("h", 3, 7.5), otlp.gauge("g", 1.0), resource={"client.rack": "r1"})
    decoded = decode(0, data, 1 << 20)
    assert decoded.resource == {"client.rack": "r1"}
    assert [(p.name, p.value) for p in decoded.points] == [("h", {"count": 3, "sum": 7.5}), ("g", 1.0)]
    assert decode(0, b"", 10).points == []  # an empty MetricsData is valid protobuf


def test_the_store_keeps_the_latest_value_and_a_running_total_of_deltas():
    import uuid

    store = TelemetryStore()
    entry = store.client(uuid.UUID(int=7), 0)
    store.pushed(entry, decode(0, otlp.payload(otlp.delta_sum("c", 2), otlp.gauge("g", 1.0)), 1 << 20), 10)
    store.pushed(entry, decode(0, otlp.payload(otlp.delta_sum("c", 3), otlp.gauge("g", 4.0)), 1 << 20), 20)
    by_name = {s.point.name: s for s in entry.series.values()}
    assert (by_name["c"].point.value, by_name["c"].total) == (3, 5)
    assert (by_name["g"].point.value, by_name["g"].total, by_name["g"].updated_ms) == (4.0, None, 20)
    assert entry.pushes == 2 and entry.last_push_ms == 20


def test_the_store_is_bounded_per_client_and_in_clients():
    import uuid

    store = TelemetryStore(max_clients=2, max_series=1)
    entry = store.client(uuid.UUID(int=1), 0)
    store.pushed(entry, decode(0, otlp.payload(otlp.gauge("a", 1.0), otlp.gauge("b", 2.0)), 1 << 20), 1)
    assert [s.point.name for s in entry.series.values()] == ["a"] and entry.dropped_series == 1
    store.client(uuid.UUID(int=2), 2)
    store.client(uuid.UUID(int=1), 3)  # heard again: the most recent
    store.client(uuid.UUID(int=3), 4)
    assert [c.instance_id.int for c in store.clients()] == [3, 1]


def test_start_up_imports_neither_protobuf_nor_re2():
    """The server, the handlers and the telemetry modules load without protobuf or RE2: they are
    imported on the first push / the first match pattern (start-up time, bench/startup_bench.py)."""
    import subprocess
    import sys

    script = (
        "import sys, coordinator.server, coordinator.handlers.k71_get_telemetry_subscriptions, "
        "coordinator.handlers.k72_push_telemetry, coordinator.observe.transcript;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('google', 'opentelemetry', 're2')];"
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_payload_of_many_tiny_points_is_cut_at_max_points(monkeypatch):
    from coordinator.telemetry import payload as module

    monkeypatch.setattr(module, "MAX_POINTS", 3)
    many = otlp.payload(*(otlp.gauge(f"m{i}", 1.0) for i in range(5)), otlp.histogram("h", 1, 1.0))
    decoded = decode(0, many, 1 << 20)
    assert [p.name for p in decoded.points] == ["m0", "m1", "m2"] and decoded.skipped == 3
