"""Transactions on the manual clock with real clients: what time does to producers and markers.

- producer.id.expiration.ms and transactional.id.expiration.ms: a confluent-kafka idempotent
  producer and a transactional one write; kafka-python's admin lists them (DescribeProducers,
  DescribeTransactions); the clock moves past the expirations and they are gone, and the
  idempotent producer goes on writing (no state: its next sequence is taken, as Kafka takes it).
- markers leave a compacted partition: a confluent-kafka transactional producer commits,
  aborts and commits again on a compacted topic whose every batch is a segment; the cleaner
  (its own backoff, real time) first drops the superseded and aborted records, then gives the
  markers left without data their delete horizon, and once the clock passed delete.retention.ms
  drops them; read_committed readers (confluent-kafka, kafka-python) see the same right values
  at every step. The data dir is read for the markers, as `kgc dump` reads it.
Waits are on conditions under deadlines; the manual clock only moves when the test moves it.
"""

from __future__ import annotations

import pytest

from interop.clients.transactions import read_values
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
HOUR = 3_600_000


def _admin(bootstrap: str):
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kgc-interop-expiry")


@pytest.mark.kafka_settings(
    {
        "clock.mode": "manual",
        "producer.id.expiration.ms": HOUR,
        "producer.id.expiration.check.interval.ms": 60_000,
        "transactional.id.expiration.ms": 2 * HOUR,
        "transaction.remove.expired.transaction.cleanup.interval.ms": 600_000,
    }
)
def test_producer_and_transactional_ids_expire_on_the_manual_clock(kafka_coordinator):
    from confluent_kafka import Producer
    from kafka import TopicPartition
    from kafka.errors import TransactionalIdNotFoundError

    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic("idle", 1)
    clock = kafka_coordinator.control.clock
    plain = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    for i in range(3):
        plain.produce("idle", value=b"before-%d" % i, timestamp=clock.now_ms)  # one batch each
        plain.flush(DEADLINE)
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "idle-txn"})
    txn.init_transactions(DEADLINE)
    txn.begin_transaction()
    txn.produce("idle", value=b"in-a-transaction", timestamp=clock.now_ms)
    txn.commit_transaction(DEADLINE)
    admin = _admin(bootstrap)
    try:
        tp = TopicPartition("idle", 0)
        producers = admin.describe_producers([tp])[tp].active_producers
        assert sorted(p.last_sequence for p in producers) == [0, 2]  # the transaction's and the 3 batches'
        assert admin.describe_transactions(["idle-txn"])["idle-txn"].state == "CompleteCommit"
        clock.advance(HOUR + 60_000)  # past producer.id.expiration.ms, at a check
        assert admin.describe_producers([tp])[tp].active_producers == []
        assert admin.describe_transactions(["idle-txn"])["idle-txn"].state == "CompleteCommit"  # 1 h idle
        plain.produce("idle", value=b"after", timestamp=clock.now_ms)  # sequence 3, no state: taken
        plain.flush(DEADLINE)
        [back] = admin.describe_producers([tp])[tp].active_producers
        assert back.last_sequence == 3
        clock.advance(HOUR + 600_000)  # past transactional.id.expiration.ms, at a cleanup
        with pytest.raises(TransactionalIdNotFoundError):
            admin.describe_transactions(["idle-txn"])
    finally:
        admin.close()
    values = read_values("confluent-kafka", bootstrap, "idle", 1, "read_committed", 5)
    assert values == ["before-0", "before-1", "before-2", "in-a-transaction", "after"]


def _batches(kafka_coordinator, topic: str) -> list[tuple[int, str, int | None]]:
    """(base offset, what, delete horizon) of every batch of the partition's files: what is
    'commit'/'abort' for a marker, 'empty' for a header-only batch, else the record values."""
    from storage.batch import decode_header, frame_bounds, iter_records, read_marker

    found = []
    for path in sorted((kafka_coordinator.data_dir / f"{topic}-0").glob("*.log")):
        data = path.read_bytes()
        for pos, _, size in frame_bounds(data):
            raw = data[pos : pos + size]
            h = decode_header(raw)
            if not h.records_count:
                what = "empty"
            elif h.is_control:
                marker = read_marker(raw)
                what = "commit" if marker and marker.commit else "abort"
            else:
                what = ",".join(r.value.decode() for r in iter_records(raw))
            found.append((h.base_offset, what, h.delete_horizon_ms))
    return found


def _settled(kafka_coordinator, topic: str, check) -> list[tuple[int, str, int | None]]:
    """The partition's batches once `check(batches)` holds (the cleaner swaps files meanwhile)."""
    seen: list = []

    def ready() -> bool:
        try:
            seen[:] = _batches(kafka_coordinator, topic)
        except (OSError, ValueError):
            return False  # a file swapped under the read: look again
        return check(seen)

    wait_until(ready, DEADLINE, message=f"the cleaner to reach the expected state of {topic}")
    return list(seen)


@pytest.mark.kafka_settings({"clock.mode": "manual", "log.cleaner.backoff.ms": 50})
def test_markers_leave_a_compacted_partition_after_delete_retention(kafka_coordinator):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = kafka_coordinator.bootstrap
    configs = {
        "cleanup.policy": "compact",
        "segment.bytes": "100",  # every batch its own segment: all but the last are cleanable
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": str(HOUR),
    }
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("ledger", 1, 1, config=configs)])["ledger"].result(DEADLINE)
    clock = kafka_coordinator.control.clock
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "ledger-writer", "linger.ms": 0})
    producer.init_transactions(DEADLINE)

    def transaction(commit: bool, *pairs: tuple[str, str]) -> None:
        producer.begin_transaction()
        for key, value in pairs:
            producer.produce("ledger", key=key.encode(), value=value.encode(), timestamp=clock.now_ms)
            producer.flush(DEADLINE)  # one batch per record
        producer.commit_transaction(DEADLINE) if commit else producer.abort_transaction(DEADLINE)

    def committed_reads(*expected: str) -> None:
        for client in ("confluent-kafka", "kafka-python"):
            values = read_values(client, bootstrap, "ledger", 1, "read_committed", len(expected))
            assert values == list(expected), client

    transaction(True, ("k1", "a1"), ("k2", "a2"))  # 0, 1; COMMIT 2
    transaction(False, ("k1", "x1"))  # 3; ABORT 4
    transaction(True, ("k1", "c1"), ("k2", "c2"))  # 5, 6; COMMIT 7
    # Round 1: a1, a2 superseded, x1 aborted: gone; their markers stay (this round read them).
    first = _settled(kafka_coordinator, "ledger", lambda b: not {"a1", "a2", "x1"} & {w for _, w, _ in b})
    assert [(o, w) for o, w, _ in first if w in ("commit", "abort")] == [(2, "commit"), (4, "abort"), (7, "commit")]
    committed_reads("c1", "c2")
    # Round 2 (new dirty data): markers left without data get their delete horizon.
    transaction(True, ("k3", "d3"))  # 8; COMMIT 9
    now = clock.now_ms
    second = _settled(kafka_coordinator, "ledger", lambda b: all(h for o, _, h in b if o in (2, 4)))
    assert {o: h for o, _, h in second if o in (2, 4)} == {2: now + HOUR, 4: now + HOUR}
    assert [o for o, _, h in second if h is None and o == 7] == [7]  # c1, c2 are still there
    committed_reads("c1", "c2", "d3")
    # Past delete.retention.ms, round 3 drops them.
    clock.advance(HOUR)
    transaction(True, ("k4", "e4"))  # 10; COMMIT 11
    third = _settled(kafka_coordinator, "ledger", lambda b: not {2, 4} & {o for o, w, _ in b if w != "empty"})
    assert [(o, w) for o, w, _ in third if w in ("commit", "abort")][:2] == [(7, "commit"), (9, "commit")]
    committed_reads("c1", "c2", "d3", "e4")
    everything = read_values("confluent-kafka", bootstrap, "ledger", 1, "read_uncommitted", 4)
    assert everything == ["c1", "c2", "d3", "e4"]  # the aborted record is gone from the log too
