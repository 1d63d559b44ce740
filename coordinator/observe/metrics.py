"""Prometheus metrics (`--metrics-port P`, setting `metrics.port`; off by default).

Served by prometheus_client's own HTTP thread from a registry of this server only, so the trio
loop never blocks on a scrape and two servers in one process do not mix. Counted on the request
path: requests, errors and latency per API; state transitions and rebalances; records written
and the wait from append to durable (group commit, fsync included). Read at scrape time from
the live state: groups per state, members, committed offsets, __consumer_offsets size and
segments per partition, and the cleaner's progress: rounds and bytes in/out per partition as
rounds finish, and its checkpoint (the first dirty offset) read from cleaner-offset-checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily

from coordinator.observe.transcript import error_codes, error_name
from storage.cleaner_policy import read_cleaner_checkpoint

_LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    float("inf"),
)
_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")


class Metrics:
    """The counters and histograms, updated on the request path; `serve_metrics` exports them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("kgc_requests", "Requests served, by API", ["api"], registry=r)
        self.errors = Counter(
            "kgc_request_errors", "Error codes answered, by API and error", ["api", "error"], registry=r
        )
        self.latency = Histogram(
            "kgc_request_duration_seconds",
            "Request handling time, by API",
            ["api"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.transitions = Counter("kgc_group_transitions", "Group state transitions", ["from", "to"], registry=r)
        self.rebalances = Counter(
            "kgc_rebalances", "Rebalances started (transitions to PreparingRebalance)", registry=r
        )
        self.records_written = Counter(
            "kgc_offsets_records_written", "Records appended to __consumer_offsets", registry=r
        )
        self.durable = Histogram(
            "kgc_offsets_durable_wait_seconds",
            "From append to durable (group commit and fsync) per operation",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.cleaner_rounds = Counter(
            "kgc_offsets_cleaner_rounds", "Cleaning rounds finished", ["partition"], registry=r
        )
        self.cleaner_bytes = Counter(
            "kgc_offsets_cleaner_bytes",
            "Bytes the cleaner read (in) and kept (out)",
            ["partition", "direction"],
            registry=r,
        )

    # -- request path (called in the trio thread) ---------------------------------------------
    def request(self, api: str, seconds: float, response: Any) -> None:
        self.requests.labels(api).inc()
        self.latency.labels(api).observe(seconds)
        if response is not None:
            for code in error_codes(response):
                self.errors.labels(api, error_name(code)).inc()

    def transition(self, old: str, new: str) -> None:
        self.transitions.labels(old, new).inc()
        if new == "PreparingRebalance":
            self.rebalances.inc()

    def records(self, count: int) -> None:
        self.records_written.inc(count)

    def cleaned(self, partition: int, stats: Any) -> None:
        self.cleaner_rounds.labels(str(partition)).inc()
        self.cleaner_bytes.labels(str(partition), "in").inc(stats.bytes_in)
        self.cleaner_bytes.labels(str(partition), "out").inc(stats.bytes_out)

    def durable_wait(self, seconds: float) -> None:
        self.durable.observe(seconds)


class MetricsServer:
    """prometheus_client's HTTP server for one registry, plus the live-state gauges."""

    def __init__(self, metrics: Metrics, runtime: Any, host: str, port: int) -> None:
        metrics.registry.register(_LiveState(runtime))
        self._server, self._thread = start_http_server(port, addr=host, registry=metrics.registry)
        self.port: int = self._server.server_address[1]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _LiveState:
    """Gauges computed at scrape time (in the HTTP thread) from snapshots of live state."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime  # the groups' CoordinatorRuntime

    def collect(self) -> Iterator[GaugeMetricFamily]:
        shards = list(self.runtime.shards())  # C-level copies: safe against the trio thread
        groups = [g for shard in shards for g in list(shard.groups.values())]
        per_state = GaugeMetricFamily("kgc_groups", "Classic groups by state", labels=["state"])
        counts = {s: 0 for s in _STATES}
        for g in groups:
            counts[str(g.state)] = counts.get(str(g.state), 0) + 1
        for state, n in counts.items():
            per_state.add_metric([state], n)
        yield per_state
        yield GaugeMetricFamily(
            "kgc_group_members", "Members of all classic groups", value=sum(len(g.members) for g in groups)
        )
        yield GaugeMetricFamily(
            "kgc_committed_offsets",
            "Committed offsets held in memory",
            value=sum(len(shard.offsets) for shard in shards),
        )
        size = GaugeMetricFamily("kgc_offsets_log_size_bytes", "__consumer_offsets bytes on disk", labels=["partition"])
        segments = GaugeMetricFamily("kgc_offsets_log_segments", "__consumer_offsets segments", labels=["partition"])
        cleaned = GaugeMetricFamily(
            "kgc_offsets_cleaner_checkpoint_offset",
            "First dirty offset the cleaner recorded (cleaner-offset-checkpoint)",
            labels=["partition"],
        )
        writer = self.runtime.writer
        for n in writer.existing_partitions():
            log = writer.log(n)
            if log is not None:  # open: its batches' bytes (the active file also holds its preallocated tail)
                total, count = log.size_bytes, len(log.segments)
            else:
                total, count = 0, 0
                try:
                    for entry in os.scandir(writer.partition_dir(n)):
                        if entry.name.endswith(".log"):
                            total += entry.stat().st_size
                            count += 1
                except FileNotFoundError:  # a file swapped away while we looked
                    continue
            size.add_metric([str(n)], total)
            segments.add_metric([str(n)], count)
            checkpoint = read_cleaner_checkpoint(str(writer.partition_dir(n)))
            if checkpoint is not None:
                cleaned.add_metric([str(n)], checkpoint)
        yield size
        yield segments
        yield cleaned
