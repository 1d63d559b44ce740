"""Client telemetry (KIP-714) on the control plane: what clients pushed, and the subscriptions.

Clients are listed most recently heard first; one client is found by its instance id or, for
convenience, by its client id (the most recently heard with it). A client's metrics are the
latest value of each series (name + data-point attributes), optionally only those whose name
starts with a prefix. Subscriptions are set as an AlterConfigs on the CLIENT_METRICS resource
would set them (the config service: validated, durable in dynamic-configs.json), so the control
plane and admin clients see and change the same ones; kgc's settings-made default is listed too.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from coordinator.admin.client_metrics_configs import ClientMetricsConfigs
from coordinator.admin.config_model import ConfigError, ResourceType
from coordinator.admin.configs import ConfigService
from coordinator.control.errors import bad_request, conflict, not_found
from coordinator.telemetry import subscriptions as subs
from coordinator.telemetry.store import ClientTelemetry, TelemetryStore
from coordinator.telemetry.subscriptions import Subscriptions


def client_summary(entry: ClientTelemetry) -> dict[str, Any]:
    return {
        "client_instance_id": str(entry.instance_id),
        "client_id": entry.client_id,
        "software": entry.software,
        "address": entry.address,
        "broker": entry.broker,
        "subscriptions": list(entry.subscriptions),
        "requested_metrics": list(entry.requested_metrics),
        "push_interval_ms": entry.interval_ms,
        "subscription_id": entry.subscription_id,
        "first_seen_ms": entry.first_seen_ms,
        "last_seen_ms": entry.last_seen_ms,
        "last_push_ms": entry.last_push_ms,
        "pushes": entry.pushes,
        "rejected_pushes": entry.rejected_pushes,
        "last_error": entry.last_error,
        "terminating": entry.terminating,
        "series": len(entry.series),
        "dropped_series": entry.dropped_series,
    }


def clients(store: TelemetryStore) -> list[dict[str, Any]]:
    return [client_summary(e) for e in store.clients()]


def client(store: TelemetryStore, key: str, prefix: str = "") -> dict[str, Any]:
    """One client with its metrics (by instance id, else by client id)."""
    entry = _find(store, key)
    metrics: list[dict[str, Any]] = [
        {
            "name": s.point.name,
            "kind": s.point.kind,
            "value": s.point.value,
            "total": s.total,
            "temporality": s.point.temporality,
            "attributes": s.point.attributes,
            "time_ms": s.point.time_ms,
            "updated_ms": s.updated_ms,
        }
        for s in entry.series.values()
        if s.point.name.startswith(prefix)
    ]
    metrics.sort(key=lambda m: (m["name"], sorted(m["attributes"].items(), key=str)))
    return {**client_summary(entry), "resource": entry.resource, "metrics": metrics}


def _find(store: TelemetryStore, key: str) -> ClientTelemetry:
    try:
        found = store.get(uuid.UUID(key))
    except ValueError:
        found = next((e for e in store.clients() if e.client_id == key), None)
    if found is None:
        raise not_found(f"no client {key!r} has asked for a telemetry subscription")
    return found


def subscriptions_view(subscriptions: Subscriptions) -> list[dict[str, Any]]:
    out = []
    for sub in subscriptions.all():
        out.append(
            {
                "name": sub.name,
                "metrics": sorted(sub.metrics),
                "interval_ms": sub.interval_ms,
                "match": subs.parse_list(sub.configs.get(subs.MATCH, "")),
                "source": "setting"
                if sub.name == subs.DEFAULT_NAME and sub.name not in subscriptions.names()
                else "config",
            }
        )
    return out


def set_subscription(configs: ConfigService, name: str, body: Mapping[str, Any], node_id: int) -> dict[str, Any]:
    """Replace the subscription's configs (AlterConfigs semantics): metrics (a list or text),
    interval_ms, match (a list of selector=regex or text)."""
    unknown = sorted(set(body) - {"metrics", "interval_ms", "match"})
    if unknown:
        raise bad_request(f"unknown field(s) {unknown}: a subscription has metrics, interval_ms and match")
    new: dict[str, str] = {}
    for field, config in (("metrics", subs.METRICS), ("interval_ms", subs.INTERVAL_MS), ("match", subs.MATCH)):
        value = body.get(field)
        if value is not None:
            new[config] = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
    if not new:
        raise bad_request("give metrics, interval_ms or match (DELETE removes a subscription)")
    _change(configs, name, new, node_id)
    return {"name": name, "configs": _store(configs).overrides(name)}


def delete_subscription(configs: ConfigService, name: str, node_id: int) -> None:
    if name not in _store(configs).names():
        raise not_found(f"no client-metrics subscription {name!r}")
    _change(configs, name, {}, node_id)


def _store(configs: ConfigService) -> ClientMetricsConfigs:
    if configs.client_metrics is None:
        raise conflict("this server keeps no client-metrics subscriptions")
    return configs.client_metrics


def _change(configs: ConfigService, name: str, new: dict[str, str], node_id: int) -> None:
    _store(configs)
    try:
        configs.replace(ResourceType.CLIENT_METRICS, name, new, False, node_id)
    except ConfigError as exc:
        raise bad_request(exc.message or str(exc)) from None
