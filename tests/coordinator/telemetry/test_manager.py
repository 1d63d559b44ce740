"""ClientMetricsManager's rules, case by case from Kafka's ClientMetricsManagerTest (server module,
4.x), on a fake clock. Kafka's tests push "test-data" to a broker without a decoding plugin; kgc
decodes what it keeps, so its pushes carry a real OTLP payload (tests/support/otlp.py) and an
undecodable one is INVALID_RECORD (Kafka's answer when its exporter plugin throws)."""

from __future__ import annotations

import gzip
import uuid

import pytest
from crc32c import crc32c

from coordinator.runtime.clock import FakeClock
from coordinator.telemetry.instance import java_uuid_hash, subscription_id
from coordinator.telemetry.manager import ACCEPTED_COMPRESSION, Caller, ClientMetricsManager
from coordinator.telemetry.store import TelemetryStore
from coordinator.telemetry.subscriptions import INTERVAL_MS_DEFAULT, SubscriptionError, Subscriptions, validate
from protocol.errors import ErrorCode as E
from tests.support import otlp

# ClientMetricsTestUtils
DEFAULT_METRICS = "org.apache.kafka.client.producer.partition.queue.,org.apache.kafka.client.producer.partition.latency"
DEFAULT_INTERVAL = 30_000
DEFAULT_PROPERTIES = {
    "metrics": DEFAULT_METRICS,
    "interval.ms": str(DEFAULT_INTERVAL),
    "match": "client_software_name=apache-kafka-java,client_software_version=3.5.*",
}
JAVA = Caller("producer-1", "127.0.0.1", 7, ("apache-kafka-java", "3.5.2"))
ZERO = uuid.UUID(int=0)
PAYLOAD = otlp.sample()


def _manager(subscriptions=None, max_bytes=4096, clock=None, **kw):
    subscriptions = subscriptions if subscriptions is not None else Subscriptions()
    return ClientMetricsManager(subscriptions, TelemetryStore(), clock or FakeClock(1_000_000), max_bytes, **kw)


def _update(subscriptions, name, configs):
    subscriptions.replace(name, validate(name, configs))


def _get(manager, instance_id=ZERO, caller=JAVA):
    return manager.get_subscriptions(instance_id, caller)


def _push(manager, got, *, sid=None, terminating=False, codec=0, metrics=PAYLOAD, caller=JAVA):
    instance = got.instance
    return manager.push(
        instance.instance_id, instance.subscription_id if sid is None else sid, terminating, codec, metrics, caller
    ).error


# -- subscriptions (updateSubscription) ------------------------------------------------------------
def test_update_subscription_bumps_the_version_and_parses_every_config():
    subs = Subscriptions()
    _update(subs, "sub-1", DEFAULT_PROPERTIES)
    assert subs.version == 1 and subs.names() == ["sub-1"]
    (sub,) = subs.all()
    assert sub.metrics == frozenset(DEFAULT_METRICS.split(",")) and sub.interval_ms == DEFAULT_INTERVAL
    assert [s for s, _ in sub.match] == ["client_software_name", "client_software_version"]


def test_empty_configs_add_nothing_and_removing_every_config_removes_the_subscription():
    subs = Subscriptions()
    subs.replace("sub-1", {})
    assert (subs.names(), subs.version) == ([], 0)  # testUpdateSubscriptionWithEmptyProperties
    _update(subs, "sub-1", {"interval.ms": "100"})
    subs.replace("sub-1", {})
    assert (subs.names(), subs.version) == ([], 2)  # testUpdateSubscriptionWithPropertiesDeletion


def test_unknown_config_is_invalid_request():
    with pytest.raises(SubscriptionError) as refused:
        validate("sub-1", {"random": "random"})
    assert refused.value.code == E.INVALID_REQUEST


# -- GetTelemetrySubscriptions ----------------------------------------------------------------------
def test_get_assigns_an_instance_id_and_answers_the_matching_subscription():
    subs = Subscriptions()
    _update(subs, "sub-1", DEFAULT_PROPERTIES)
    manager = _manager(subs, max_bytes=100)
    got = _get(manager)
    instance = got.instance
    assert got.error == E.NONE and instance.instance_id != ZERO
    assert set(instance.metrics) == set(DEFAULT_METRICS.split(","))
    assert ACCEPTED_COMPRESSION == (4, 3, 1, 2)  # zstd, lz4, gzip, snappy: Kafka's order
    assert instance.interval_ms == DEFAULT_INTERVAL and manager.max_bytes == 100
    assert instance.subscription_id == subscription_id(instance.metrics, DEFAULT_INTERVAL, instance.instance_id)
    assert manager.instance(instance.instance_id).last_error == E.NONE


def test_get_without_a_subscription_asks_for_nothing_every_five_minutes():
    got = _get(_manager())
    assert got.error == E.NONE and got.instance.metrics == () and got.instance.interval_ms == INTERVAL_MS_DEFAULT


def test_a_client_the_match_does_not_select_is_not_subscribed():
    subs = Subscriptions()
    _update(subs, "sub-1", DEFAULT_PROPERTIES)
    librdkafka = Caller("p", "127.0.0.1", 8, ("confluent-kafka-python", "2.16.1"))
    assert _get(_manager(subs), caller=librdkafka).instance.metrics == ()
    no_software = Caller("p", "127.0.0.1", 9)  # no ApiVersions v3: the selector's attribute is unknown
    assert _get(_manager(subs), caller=no_software).instance.metrics == ()


def test_software_from_the_connections_api_versions_is_matched():
    subs = Subscriptions()
    _update(subs, "java", {"metrics": "*", "match": "client_software_name=apache-kafka-java, client_id=prod.*"})
    manager = _manager(subs)
    manager.client_software(11, "apache-kafka-java", "4.2.0")
    assert _get(manager, caller=Caller("producer-1", "127.0.0.1", 11)).instance.metrics == ("*",)
    assert _get(manager, caller=Caller("consumer-1", "127.0.0.1", 11)).instance.metrics == ()


def test_get_after_the_push_interval_is_accepted():
    clock = FakeClock(1_000_000)
    manager = _manager(clock=clock)
    first = _get(manager)
    clock.advance(INTERVAL_MS_DEFAULT)
    assert _get(manager, first.instance.instance_id).error == E.NONE


def test_any_subscription_asking_for_everything_makes_the_set_just_star():
    subs = Subscriptions()
    _update(subs, "sub-1", DEFAULT_PROPERTIES)
    _update(subs, "sub-2", {"metrics": "*"})
    instance = _get(_manager(subs)).instance
    assert instance.metrics == ("*",) and instance.interval_ms == DEFAULT_INTERVAL  # the lowest interval


def test_get_again_within_the_interval_is_throttled():
    manager = _manager()
    first = _get(manager)
    again = _get(manager, first.instance.instance_id)
    assert again.error == E.THROTTLING_QUOTA_EXCEEDED and again.instance is None


def test_get_right_after_a_push_on_a_new_broker_is_throttled():
    first = _get(_manager())
    other = _manager()  # a broker that never saw the instance accepts its push (same subscription id)
    assert _push(other, first) == E.NONE
    assert _get(other, first.instance.instance_id).error == E.THROTTLING_QUOTA_EXCEEDED


def test_changed_subscriptions_are_answered_at_once_with_a_new_subscription_id():
    subs = Subscriptions()
    _update(subs, "sub-1", DEFAULT_PROPERTIES)
    manager = _manager(subs)
    first = _get(manager)
    old_id = first.instance.subscription_id
    _update(subs, "sub-2", {"metrics": "*"})
    again = _get(manager, first.instance.instance_id)
    assert again.error == E.NONE and again.instance.subscription_id != old_id


def test_get_after_a_stale_subscription_refusal_is_not_throttled():
    manager = _manager()
    first = _get(manager)
    assert _push(manager, first, sid=1234) == E.UNKNOWN_SUBSCRIPTION_ID
    assert _get(manager, first.instance.instance_id).error == E.NONE


# -- PushTelemetry ----------------------------------------------------------------------------------
def test_push_is_decoded_and_kept():
    subs = Subscriptions()
    _update(subs, "sub-1", {"metrics": "*"})
    manager = _manager(subs)
    got = _get(manager)
    assert _push(manager, got) == E.NONE
    instance = manager.instance(got.instance.instance_id)
    assert not instance.terminating and instance.last_error == E.NONE
    entry = manager.store.get(got.instance.instance_id)
    assert entry.pushes == 1 and entry.client_id == "producer-1" and entry.subscriptions == ("sub-1",)
    assert {s.point.name for s in entry.series.values()} == {
        otlp.PREFIX + "node.request.latency.avg",
        otlp.PREFIX + "connection.creation.total",
    }


def test_push_on_a_new_broker_is_accepted():
    first = _get(_manager())
    assert _push(_manager(), first) == E.NONE


def test_push_after_the_push_interval_is_accepted_and_sooner_is_throttled():
    clock = FakeClock(1_000_000)
    manager = _manager(clock=clock)
    got = _get(manager)
    assert _push(manager, got) == E.NONE  # right after the Get: accepted
    assert _push(manager, got) == E.THROTTLING_QUOTA_EXCEEDED
    assert manager.instance(got.instance.instance_id).last_error == E.THROTTLING_QUOTA_EXCEEDED
    clock.advance(INTERVAL_MS_DEFAULT)
    assert _push(manager, got) == E.NONE


@pytest.mark.parametrize("instance_id", [ZERO, uuid.UUID(int=1)], ids=["zero", "metadata-topic-id"])
def test_a_reserved_instance_id_is_invalid_request_and_makes_no_instance(instance_id):
    manager = _manager()
    assert manager.push(instance_id, 0, False, 0, PAYLOAD, JAVA).error == E.INVALID_REQUEST
    assert manager.instance(instance_id) is None and manager.store.clients() == []


def test_a_terminating_push_is_accepted_even_too_soon_and_nothing_after_it():
    manager = _manager()
    got = _get(manager)
    assert _push(manager, got) == E.NONE
    assert _push(manager, got, terminating=True) == E.NONE  # within the interval: still accepted
    instance = manager.instance(got.instance.instance_id)
    assert instance.terminating and instance.last_error == E.NONE
    assert _push(manager, got, terminating=True) == E.INVALID_REQUEST
    assert instance.last_error == E.INVALID_REQUEST


def test_a_stale_subscription_id_is_unknown_subscription_id():
    manager = _manager()
    got = _get(manager)
    assert _push(manager, got, sid=1234) == E.UNKNOWN_SUBSCRIPTION_ID
    instance = manager.instance(got.instance.instance_id)
    assert not instance.terminating and instance.last_error == E.UNKNOWN_SUBSCRIPTION_ID
    assert manager.store.get(got.instance.instance_id).rejected_pushes == 1


def test_an_unknown_codec_is_unsupported_compression_type():
    manager = _manager()
    got = _get(manager)
    assert _push(manager, got, codec=100) == E.UNSUPPORTED_COMPRESSION_TYPE
    assert manager.instance(got.instance.instance_id).last_error == E.UNSUPPORTED_COMPRESSION_TYPE


def test_an_empty_payload_is_accepted_and_keeps_nothing():
    manager = _manager()
    got = _get(manager)
    assert _push(manager, got, metrics=b"") == E.NONE
    assert manager.store.get(got.instance.instance_id).pushes == 0


def test_more_bytes_than_telemetry_max_bytes_is_too_large():
    manager = _manager(max_bytes=1)
    got = _get(manager)
    assert _push(manager, got, metrics=b"ab") == E.TELEMETRY_TOO_LARGE
    assert manager.instance(got.instance.instance_id).last_error == E.TELEMETRY_TOO_LARGE


def test_a_payload_that_decompresses_past_the_bound_is_too_large():
    manager = _manager(max_bytes=4096)
    got = _get(manager)
    bomb = gzip.compress(b"\0" * 1_000_000)  # 1 KB that would be 1 MB
    assert len(bomb) < 4096
    assert _push(manager, got, codec=1, metrics=bomb) == E.TELEMETRY_TOO_LARGE


@pytest.mark.parametrize(
    ("codec", "metrics"),
    [(0, b"\xff\xff\xff\xff"), (0, PAYLOAD[:-3]), (1, b"not gzip"), (4, b"\x28\xb5\x2f\xfd garbage")],
    ids=["not-protobuf", "truncated", "bad-gzip", "bad-zstd"],
)
def test_an_undecodable_payload_is_invalid_record(codec, metrics):
    manager = _manager()
    got = _get(manager)
    assert _push(manager, got, codec=codec, metrics=metrics) == E.INVALID_RECORD
    assert manager.instance(got.instance.instance_id).last_error == E.INVALID_RECORD
    assert manager.store.get(got.instance.instance_id).last_error == "INVALID_RECORD"


def test_the_checks_run_in_kafkas_order():
    """Stale subscription id and a bad codec and too many bytes at once: the id is named first."""
    manager = _manager(max_bytes=1)
    got = _get(manager)
    assert _push(manager, got, sid=1234, codec=100, metrics=b"ab") == E.UNKNOWN_SUBSCRIPTION_ID


# -- the instance cache ---------------------------------------------------------------------------
def test_an_instance_expires_after_max_of_a_minute_and_three_intervals():
    clock = FakeClock(1_000_000)
    manager = _manager(clock=clock)
    got = _get(manager)
    instance_id = got.instance.instance_id
    clock.advance(3 * INTERVAL_MS_DEFAULT - 1)
    manager.get_subscriptions(uuid.uuid4(), JAVA)  # any request sweeps what expired
    assert manager.instance(instance_id) is not None
    clock.advance(1)
    manager.get_subscriptions(uuid.uuid4(), JAVA)
    assert manager.instance(instance_id) is None


def test_an_expired_instance_is_made_anew_even_behind_a_longer_lived_one():
    clock = FakeClock(1_000_000)
    subs = Subscriptions()
    manager = _manager(subs, clock=clock)
    _update(subs, "fast", {"interval.ms": "100", "match": "client_id=fast"})
    slow = _get(manager, caller=Caller("slow", "127.0.0.1", 1))  # 5 min interval: lives 15 min, first in the LRU
    fast = _get(manager, caller=Caller("fast", "127.0.0.1", 2))  # 100 ms interval: lives max(60 s, 300 ms)
    fast_caller = Caller("fast", "127.0.0.1", 2)
    assert fast.instance.interval_ms == 100 and _push(manager, fast, terminating=True, caller=fast_caller) == E.NONE
    clock.advance(60_000)
    assert manager.instance(fast.instance.instance_id) is not None  # still cached behind "slow"...
    again = manager.push(fast.instance.instance_id, fast.instance.subscription_id, False, 0, PAYLOAD, fast_caller)
    assert again.error == E.NONE  # ...but expired: made anew, no longer terminating
    assert manager.instance(fast.instance.instance_id).last_push_ms == clock.time_ms()
    assert manager.instance(slow.instance.instance_id) is not None


def test_the_least_recently_used_instance_is_evicted_past_the_cache_size():
    manager = _manager(cache_max_size=2)
    first, second = _get(manager), _get(manager)
    _get(manager)
    assert manager.instance(first.instance.instance_id) is None
    assert manager.instance(second.instance.instance_id) is not None


def test_the_connection_closing_removes_the_instance_it_made():
    manager = _manager()
    got = _get(manager, caller=Caller("c", "127.0.0.1", 42))
    manager.connection_closed(99)  # unknown connection: nothing
    assert manager.instance(got.instance.instance_id) is not None
    manager.connection_closed(42)
    assert manager.instance(got.instance.instance_id) is None
    assert manager.store.get(got.instance.instance_id) is not None  # what it pushed stays visible


def test_new_instance_ids_skip_ids_in_use_and_reserved_ones():
    ids = iter([uuid.UUID(int=1), uuid.UUID(int=5), uuid.UUID(int=5), uuid.UUID(int=6)])
    manager = _manager(new_id=lambda: next(ids))
    assert _get(manager).instance.instance_id == uuid.UUID(int=5)
    assert _get(manager).instance.instance_id == uuid.UUID(int=6)


def test_subscription_id_is_kafkas_crc32c_xor_uuid_hash():
    """Uuid.hashCode = (int)(h >> 32) ^ (int)h with h = most ^ least; the id = (int)crc32c ^ it."""
    assert java_uuid_hash(uuid.UUID(int=(1 << 64) | 2)) == 3
    assert java_uuid_hash(uuid.UUID(int=0xFFFFFFFF00000000 << 64)) == -1
    assert java_uuid_hash(uuid.UUID(int=(0x0000000100000000 << 64) | 0x0000000100000000)) == 0
    instance_id = uuid.UUID(int=(1 << 64) | 2)
    crc = crc32c(b"[*]300000")  # Java's Set.toString() + the interval
    signed = crc - (1 << 32) if crc >= 1 << 31 else crc
    assert subscription_id(["*"], 300_000, instance_id) == signed ^ 3
    assert subscription_id([], 300_000, instance_id) != subscription_id(["*"], 300_000, instance_id)
