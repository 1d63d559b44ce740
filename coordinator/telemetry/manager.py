"""One broker's ClientMetricsManager (KIP-714): GetTelemetrySubscriptions and PushTelemetry.

Kafka 4.x's ClientMetricsManager, its checks in its order. A Get with the zero instance id gets
a new id; any other id is looked up, or created (a client may come to another broker), and
recomputed when the subscriptions changed since. A push is refused, in turn: zero or reserved id
-> INVALID_REQUEST (no instance made); after a terminating push -> INVALID_REQUEST; sooner than
the interval (a push right after a Get is allowed; a terminating one always) ->
THROTTLING_QUOTA_EXCEEDED; a stale subscription id -> UNKNOWN_SUBSCRIPTION_ID; an unknown codec ->
UNSUPPORTED_COMPRESSION_TYPE; more bytes than telemetry.max.bytes -> TELEMETRY_TOO_LARGE; then
the payload is decoded (payload.py: INVALID_RECORD, or TELEMETRY_TOO_LARGE past the bound once
decompressed) and kept (store.py). Instances live in an LRU of CACHE_MAX_SIZE, expire
max(60 s, 3 x interval) after their last request (checked when next used: no timer task), and go
when the connection that made them closes (Kafka's ConnectionDisconnectListener).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coordinator.runtime.clock import Clock
from coordinator.telemetry import subscriptions as subs
from coordinator.telemetry.store import ClientTelemetry, TelemetryStore
from coordinator.telemetry.subscriptions import Subscriptions
from protocol.errors import ErrorCode

if TYPE_CHECKING:  # instance.py and payload.py load with the first Get or Push (start-up time)
    from coordinator.telemetry.instance import ClientInstance

# ClientMetricsManager.SUPPORTED_COMPRESSION_TYPES, in the broker's order of preference (the
# client takes the first it supports).
ACCEPTED_COMPRESSION = (4, 3, 1, 2)  # zstd, lz4, gzip, snappy
CACHE_MAX_SIZE = 16384  # 16k active client connections per broker
CACHE_EXPIRY_MS = 60_000
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Uuid.RESERVED: the zero id and the metadata topic's
RESERVED_IDS = frozenset({uuid.UUID(int=0), METADATA_TOPIC_ID})


@dataclass(frozen=True, slots=True)
class Caller:
    """What ClientMetricsInstanceMetadata takes from the request context."""

    client_id: str
    address: str
    connection_id: int
    software: tuple[str, str] | None = None  # (name, version) from the connection's ApiVersions


@dataclass(slots=True)
class SubscriptionAnswer:
    """A GetTelemetrySubscriptions answer (the handler turns it into the response)."""

    error: int
    instance: ClientInstance | None = None


@dataclass(slots=True)
class PushAnswer:
    error: int
    message: str | None = None  # why it was refused (the transcript's reason)


class ClientMetricsManager:
    def __init__(
        self,
        subscriptions: Subscriptions,
        store: TelemetryStore,
        clock: Clock,
        max_bytes: int,
        node_id: int = 0,
        new_id: Callable[[], uuid.UUID] = uuid.uuid4,
        cache_max_size: int = CACHE_MAX_SIZE,
    ) -> None:
        self.subscriptions, self.store, self._clock = subscriptions, store, clock
        self.max_bytes, self.node_id = max_bytes, node_id
        self._new_id, self._cache_max = new_id, cache_max_size
        self._instances: OrderedDict[uuid.UUID, ClientInstance] = OrderedDict()
        self._by_connection: dict[int, uuid.UUID] = {}
        self._software: dict[int, tuple[str, str]] = {}  # connection id -> its ApiVersions' software

    # -- the two APIs ------------------------------------------------------------------------------
    def get_subscriptions(self, instance_id: uuid.UUID, caller: Caller) -> SubscriptionAnswer:
        """processGetTelemetrySubscriptionRequest."""
        now = self._clock.time_ms()
        if instance_id.int == 0:
            instance_id = self._generate_id()
        instance = self._instance(instance_id, caller, now)
        seen = self._seen(instance, caller, now)
        # Kafka exempts a too-soon Get that follows a stale-subscription or codec refusal (the
        # client must learn the new subscription at once); its first text wrote `||` there, which
        # made the exemption dead, and was corrected to `&&`, as here.
        throttled = not instance.maybe_update_get(now)
        if throttled and instance.last_error not in (
            ErrorCode.UNKNOWN_SUBSCRIPTION_ID,
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        ):
            seen.last_error = ErrorCode.THROTTLING_QUOTA_EXCEEDED.name
            return SubscriptionAnswer(ErrorCode.THROTTLING_QUOTA_EXCEEDED)
        instance.last_error = ErrorCode.NONE
        return SubscriptionAnswer(ErrorCode.NONE, instance)

    def push(
        self,
        instance_id: uuid.UUID,
        subscription_id: int,
        terminating: bool,
        codec: int,
        metrics: bytes,
        caller: Caller,
    ) -> PushAnswer:
        """processPushTelemetryRequest."""
        if instance_id in RESERVED_IDS:
            return PushAnswer(
                ErrorCode.INVALID_REQUEST,
                f"Invalid request from the client [{instance_id}], invalid client instance id",
            )
        now = self._clock.time_ms()
        instance = self._instance(instance_id, caller, now)
        seen = self._seen(instance, caller, now)
        try:
            refused = self._validate_push(instance, subscription_id, terminating, codec, metrics, now)
        finally:
            instance.terminating = terminating
            seen.terminating = terminating
        if refused is None and metrics:
            from coordinator.telemetry.payload import InvalidPayload, PayloadTooLarge, decode

            try:
                decoded = decode(codec, metrics, self.max_bytes)
            except PayloadTooLarge as exc:
                refused = PushAnswer(ErrorCode.TELEMETRY_TOO_LARGE, f"Telemetry from [{instance_id}]: {exc}")
            except InvalidPayload as exc:
                refused = PushAnswer(ErrorCode.INVALID_RECORD, f"Telemetry from [{instance_id}]: {exc}")
            else:
                self.store.pushed(seen, decoded, now)
        if refused is not None:
            instance.last_error = refused.error
            self.store.rejected(seen, ErrorCode(refused.error).name)
            return refused
        instance.last_error = ErrorCode.NONE
        return PushAnswer(ErrorCode.NONE)

    def _validate_push(
        self, instance: ClientInstance, subscription_id: int, terminating: bool, codec: int, metrics: bytes, now: int
    ) -> PushAnswer | None:
        """validatePushRequest: the first check that fails, or None."""
        iid = instance.instance_id
        if instance.terminating:
            return PushAnswer(
                ErrorCode.INVALID_REQUEST,
                f"Client [{iid}] sent the previous request with state terminating to TRUE, can not accept any "
                "requests after that",
            )
        if not instance.maybe_update_push(now) and not terminating:
            return PushAnswer(
                ErrorCode.THROTTLING_QUOTA_EXCEEDED,
                f"Request from the client [{iid}] arrived before the next push interval time",
            )
        if subscription_id != instance.subscription_id:
            return PushAnswer(
                ErrorCode.UNKNOWN_SUBSCRIPTION_ID, f"Unknown client subscription id for the client [{iid}]"
            )
        if not 0 <= codec <= 4:  # CompressionType.forId
            return PushAnswer(
                ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                f"Unknown compression type [{codec}] is received in telemetry request from [{iid}]",
            )
        if len(metrics) > self.max_bytes:
            return PushAnswer(
                ErrorCode.TELEMETRY_TOO_LARGE,
                f"Telemetry request from [{iid}] is larger than the maximum allowed size [{self.max_bytes}]",
            )
        return None

    # -- instances ---------------------------------------------------------------------------------
    def _generate_id(self) -> uuid.UUID:
        instance_id = self._new_id()
        while instance_id in self._instances or instance_id in RESERVED_IDS:
            instance_id = self._new_id()
        return instance_id

    def _instance(self, instance_id: uuid.UUID, caller: Caller, now: int) -> ClientInstance:
        """clientInstance(): cached, or made (new, expired, evicted, or its subscriptions changed)."""
        self._expire(now)
        instance = self._instances.get(instance_id)
        if instance is not None and instance.expires_ms <= now:  # expired behind a longer-lived one
            del self._instances[instance_id]
            instance = None
        version = self.subscriptions.version
        if instance is None or instance.version < version:
            from coordinator.telemetry.instance import new_instance

            attributes = instance.attributes if instance is not None else self._attributes(instance_id, caller)
            instance = new_instance(instance_id, attributes, self.subscriptions.all(), version)
            self._instances[instance_id] = instance
            self._by_connection[caller.connection_id] = instance_id
            while len(self._instances) > self._cache_max:  # Kafka's LRUCache
                self._instances.popitem(last=False)
        self._instances.move_to_end(instance_id)
        instance.expires_ms = now + max(CACHE_EXPIRY_MS, instance.interval_ms * 3)
        return instance

    def _expire(self, now: int) -> None:
        """The expiration timer tasks that would have fired by now (oldest-used first)."""
        while self._instances:
            oldest = next(iter(self._instances.values()))
            if oldest.expires_ms > now:
                break
            del self._instances[oldest.instance_id]

    def _attributes(self, instance_id: uuid.UUID, caller: Caller) -> dict[str, str | None]:
        software = caller.software or self._software.get(caller.connection_id)
        return {
            subs.CLIENT_INSTANCE_ID: str(instance_id),
            subs.CLIENT_ID: caller.client_id,
            subs.CLIENT_SOFTWARE_NAME: software[0] if software else None,
            subs.CLIENT_SOFTWARE_VERSION: software[1] if software else None,
            subs.CLIENT_SOURCE_ADDRESS: caller.address,
            subs.CLIENT_SOURCE_PORT: None,  # kgc's connections do not keep the peer's port
        }

    def _seen(self, instance: ClientInstance, caller: Caller, now: int) -> ClientTelemetry:
        """The store's entry of the client, brought up to date with who it is and its subscription."""
        entry = self.store.client(instance.instance_id, now)
        entry.client_id, entry.address, entry.broker = caller.client_id, caller.address, self.node_id
        name = instance.attributes.get(subs.CLIENT_SOFTWARE_NAME)
        entry.software = f"{name}/{instance.attributes.get(subs.CLIENT_SOFTWARE_VERSION)}" if name else None
        entry.subscriptions, entry.requested_metrics = instance.subscriptions, instance.metrics
        entry.interval_ms, entry.subscription_id = instance.interval_ms, instance.subscription_id
        return entry

    def instance(self, instance_id: uuid.UUID) -> ClientInstance | None:
        return self._instances.get(instance_id)

    # -- connections -------------------------------------------------------------------------------
    def client_software(self, connection_id: int, name: str, version: str) -> None:
        """What the connection's ApiVersions said it is (Kafka's ClientInformation)."""
        if name:
            self._software[connection_id] = (name, version)

    def connection_closed(self, connection_id: int) -> None:
        """ClientConnectionDisconnectListener: the instance the connection made goes with it."""
        self._software.pop(connection_id, None)
        instance_id = self._by_connection.pop(connection_id, None)
        if instance_id is not None:
            self._instances.pop(instance_id, None)
