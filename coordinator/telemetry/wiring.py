"""The telemetry parts the composition root builds: one subscription set and one store for the
process, one ClientMetricsManager per broker (Kafka has one per broker). Settings that do not
hold (telemetry.max.bytes below 1, a default subscription ClientMetricsConfigs would refuse) are
ConfigError: `kgc serve` prints one line and exits 2."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from coordinator.config import Config, ConfigError
from coordinator.runtime.clock import Clock
from coordinator.telemetry.manager import ClientMetricsManager
from coordinator.telemetry.store import TelemetryStore
from coordinator.telemetry.subscriptions import SubscriptionError, Subscriptions, default_subscription


@dataclass(frozen=True, slots=True)
class TelemetryParts:
    subscriptions: Subscriptions
    store: TelemetryStore
    managers: dict[int, ClientMetricsManager]  # node id -> its manager


def telemetry_parts(
    config: Config,
    clock: Clock,
    node_ids: Iterable[int],
    stored: Mapping[str, Mapping[str, str]],
    persist: Callable[[dict[str, dict[str, str]]], None] | None,
) -> TelemetryParts:
    max_bytes = config.telemetry_max_bytes
    if max_bytes < 1:
        raise ConfigError(f"telemetry.max.bytes must be at least 1, got {max_bytes}")
    try:
        default = default_subscription(config.client_metrics_default_metrics, config.client_metrics_default_interval_ms)
        subscriptions = Subscriptions(stored, persist, default)
    except SubscriptionError as exc:
        raise ConfigError(f"client metrics subscription: {exc}") from None
    store = TelemetryStore()
    managers = {n: ClientMetricsManager(subscriptions, store, clock, max_bytes, n) for n in node_ids}
    return TelemetryParts(subscriptions, store, managers)
