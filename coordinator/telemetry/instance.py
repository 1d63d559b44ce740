"""One client instance as a broker's ClientMetricsManager knows it (Kafka's ClientMetricsInstance).

It is built from the subscriptions that match the client at one subscription `version`: the
union of their metric prefixes ("*" alone when any asks for all), the lowest interval (5 minutes
when none matches), and the subscription id derived from both. The request timestamps decide
throttling exactly as Kafka's maybeUpdateGetRequestTimestamp / maybeUpdatePushRequestTimestamp
do, with None for "never" (Kafka's 0, which a manual clock starting at 0 would confuse).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coordinator.telemetry.subscriptions import ALL_METRICS, INTERVAL_MS_DEFAULT, Subscription
from protocol.errors import ErrorCode
from storage.crc import crc32c


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_uuid_hash(instance_id: uuid.UUID) -> int:
    """org.apache.kafka.common.Uuid.hashCode."""
    most, least = instance_id.int >> 64, instance_id.int & ((1 << 64) - 1)
    h = most ^ least
    return _int32((h >> 32) ^ h)


def subscription_id(metrics: Iterable[str], interval_ms: int, instance_id: uuid.UUID) -> int:
    """ClientMetricsManager.computeSubscriptionId: CRC32C of the metric set's text and the
    interval, XOR the instance id's hash. Kafka prints a Java HashSet (its iteration order);
    kgc prints the set sorted, so ids of sets of two or more prefixes differ from Kafka's values
    (they are opaque to clients: only equality matters)."""
    text = "[" + ", ".join(sorted(metrics)) + "]" + str(interval_ms)
    return _int32(crc32c(text.encode("utf-8")) ^ java_uuid_hash(instance_id))


@dataclass(slots=True)
class ClientInstance:
    instance_id: uuid.UUID
    attributes: Mapping[str, str | None]  # ClientMetricsInstanceMetadata: what `match` selects on
    subscription_id: int
    version: int  # of the subscriptions it was computed from
    metrics: tuple[str, ...]
    interval_ms: int
    subscriptions: tuple[str, ...]  # the names that matched
    last_get_ms: int | None = None
    last_push_ms: int | None = None
    terminating: bool = False
    last_error: int = ErrorCode.NONE
    expires_ms: int = 0  # Kafka's expiration timer task, checked when the instance is next used

    def maybe_update_get(self, now_ms: int) -> bool:
        """A GetTelemetrySubscriptions is accepted once a push interval has passed since the last
        Get or Push (never seen: accepted)."""
        last = max((t for t in (self.last_get_ms, self.last_push_ms) if t is not None), default=None)
        if last is None or now_ms - last >= self.interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def maybe_update_push(self, now_ms: int) -> bool:
        """A push right after a Get is accepted (the client jitters its interval between 0.5x and
        1.5x); otherwise once a push interval has passed since the last push."""
        accept = self.last_get_ms is not None and (self.last_push_ms is None or self.last_get_ms > self.last_push_ms)
        if not accept:
            accept = self.last_push_ms is None or now_ms - self.last_push_ms >= self.interval_ms
        if accept:
            self.last_push_ms = now_ms
        return accept


def new_instance(
    instance_id: uuid.UUID, attributes: Mapping[str, str | None], subscriptions: Iterable[Subscription], version: int
) -> ClientInstance:
    """ClientMetricsManager.createClientInstance."""
    interval, metrics, names, everything = INTERVAL_MS_DEFAULT, set[str](), [], False
    for sub in subscriptions:
        if sub.matches(attributes):
            everything = everything or ALL_METRICS in sub.metrics
            metrics |= sub.metrics
            interval = min(interval, sub.interval_ms)
            names.append(sub.name)
    if everything:
        metrics = {ALL_METRICS}
    sid = subscription_id(metrics, interval, instance_id)
    return ClientInstance(instance_id, dict(attributes), sid, version, tuple(sorted(metrics)), interval, tuple(names))
