"""What clients measured, as they last pushed it: kgc's built-in telemetry receiver.

Kafka hands pushed metrics to a plugin (ClientTelemetryExporter); kgc keeps them in memory so the
control plane can show them. Per client instance: who it is (client id, software, address, the
broker it pushes to), its subscription, its pushes and last error, and the latest value of each
series (metric name + data-point attributes). Bounded: at most MAX_SERIES series per client
(new series past it are counted, not kept) and MAX_CLIENTS clients, least recently heard dropped
first. A delta sum also keeps its running total since kgc first heard of the series. One store
serves every broker of the process; it outlives connections and client instances' expiry.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # payload.py (the protobuf decoder) loads with the first PushTelemetry
    from coordinator.telemetry.payload import Decoded, Point

MAX_CLIENTS = 1000
MAX_SERIES = 2000


@dataclass(slots=True)
class Series:
    point: Point
    total: float | int | None = None  # delta sums: the sum of every delta heard
    updated_ms: int = 0


@dataclass(slots=True)
class ClientTelemetry:
    instance_id: uuid.UUID
    client_id: str = ""
    software: str | None = None  # "name/version" from ApiVersions, when the client sent it
    address: str = ""
    broker: int = -1
    subscriptions: tuple[str, ...] = ()
    requested_metrics: tuple[str, ...] = ()
    interval_ms: int = 0
    subscription_id: int = 0
    first_seen_ms: int = 0
    last_seen_ms: int = 0
    last_push_ms: int | None = None
    pushes: int = 0
    rejected_pushes: int = 0
    last_error: str | None = None
    terminating: bool = False
    resource: dict[str, Any] = field(default_factory=dict)
    series: dict[tuple[str, tuple[tuple[str, str], ...]], Series] = field(default_factory=dict)
    dropped_series: int = 0


def series_key(point: Point) -> tuple[str, tuple[tuple[str, str], ...]]:
    return point.name, tuple(sorted((k, repr(v)) for k, v in point.attributes.items()))


class TelemetryStore:
    def __init__(self, max_clients: int = MAX_CLIENTS, max_series: int = MAX_SERIES) -> None:
        self._clients: OrderedDict[uuid.UUID, ClientTelemetry] = OrderedDict()
        self._max_clients, self._max_series = max_clients, max_series

    def client(self, instance_id: uuid.UUID, now_ms: int) -> ClientTelemetry:
        """The client's entry (created on first sight), now the most recently heard."""
        entry = self._clients.get(instance_id)
        if entry is None:
            entry = self._clients[instance_id] = ClientTelemetry(instance_id, first_seen_ms=now_ms)
            while len(self._clients) > self._max_clients:
                self._clients.popitem(last=False)
        else:
            self._clients.move_to_end(instance_id)
        entry.last_seen_ms = now_ms
        return entry

    def pushed(self, entry: ClientTelemetry, decoded: Decoded, now_ms: int) -> None:
        entry.pushes += 1
        entry.last_push_ms = now_ms
        entry.last_error = None
        if decoded.resource:
            entry.resource = decoded.resource
        for point in decoded.points:
            key = series_key(point)
            series = entry.series.get(key)
            if series is None:
                if len(entry.series) >= self._max_series:
                    entry.dropped_series += 1
                    continue
                series = entry.series[key] = Series(point)
            delta_sum = point.kind == "sum" and point.temporality == "delta" and isinstance(point.value, (int, float))
            if delta_sum:
                series.total = (series.total or 0) + point.value  # type: ignore[operator]
            series.point, series.updated_ms = point, now_ms

    def rejected(self, entry: ClientTelemetry, error: str) -> None:
        entry.rejected_pushes += 1
        entry.last_error = error

    def clients(self) -> list[ClientTelemetry]:
        """Most recently heard first."""
        return list(reversed(self._clients.values()))

    def get(self, instance_id: uuid.UUID) -> ClientTelemetry | None:
        return self._clients.get(instance_id)

    def clear(self) -> int:
        count = len(self._clients)
        self._clients.clear()
        return count
