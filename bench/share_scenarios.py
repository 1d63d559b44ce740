"""The share-group scenarios of bench/share_bench.py, each run against one server and reported as
a Row (pass/fail and what was observed), never raised: a scenario that times out is a failed row.

Every wait has a deadline. "main" is a server with Kafka's lock duration (30 s) and delivery limit
(5); "short" has a 2 s record lock and a delivery limit of 2. Both start share groups at the
earliest offset and heartbeat every 500 ms. Pass means: what Kafka does (KIP-932, SharePartition).
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import AcknowledgeType, Consumer, KafkaException, ShareConsumer

from interop.clients.background import BackgroundClient
from interop.clients.process import REPO
from interop.clients.share import Delivery, ShareReader, delivered, produce_values, stop_all
from tests.support.waiting import wait_until

DEADLINE = 20.0
SESSION_S = 6.0  # group.share.session.timeout.ms / the mock's session_timeout on every server here
TOPICS = {"a-implicit": 4, "a-explicit": 4, "bc": 1, "d": 1, "e-stop": 1, "e-kill": 1, "f": 4, "g": 1, "speed": 4}
QUIET = {"log_level": 3}  # the share consumer's "Preview" warning, once per consumer, is noise here


@dataclass
class Row:
    key: str
    passed: bool
    observed: str


def _accept(message: Any) -> int:
    return AcknowledgeType.ACCEPT


def reader(name: str, bootstrap: str, group: str, topic: str, decide: Any = None) -> ShareReader:
    return ShareReader(name, bootstrap, group, [topic], decide=decide, config=QUIET).start()


def offsets_seen(readers: list[ShareReader]) -> Counter[tuple[int, int]]:
    return Counter((d.partition, d.offset) for d in delivered(readers))


def all_seen(readers: list[ShareReader], count: int) -> bool:
    """`count` distinct records seen (the cheap total first: the distinct set only once it is reached)."""
    return sum(len(r.deliveries) for r in readers) >= count and len(offsets_seen(readers)) >= count


def wait(predicate: Callable[[], Any], what: str, timeout: float = DEADLINE) -> None:
    """Until `predicate` holds; AssertionError naming `what` at the deadline."""
    wait_until(predicate, timeout, interval=0.02, message=what)


def errors_of(readers: list[ShareReader]) -> str:
    errors = [e for r in readers for e in r.errors]
    return f", client errors {len(errors)} ({errors[0][:60]})" if errors else ""


# -- (a) three consumers, every record once ----------------------------------------------------------
def once(bootstrap: str, mode: str, count: int) -> Row:
    topic = f"a-{mode}"
    produce_values(bootstrap, topic, [str(i) for i in range(count)], TOPICS[topic])
    decide = _accept if mode == "explicit" else None
    began = time.monotonic()
    readers = [reader(f"c{i}", bootstrap, f"sg-{topic}", topic, decide) for i in range(3)]
    try:
        wait(lambda: all_seen(readers, count), f"{count} records")
        took = time.monotonic() - began
    finally:
        stop_all(readers)
    copies = offsets_seen(readers)
    dup = sum(n - 1 for n in copies.values())
    missing = count - len(copies)
    again = sum(1 for d in delivered(readers) if d.delivery_count > 1)
    split = "/".join(str(len(r.deliveries)) for r in readers)
    observed = f"{len(copies)}/{count} seen, {dup} dup, {missing} missing, {again} with count>1, split {split}"
    return Row(f"a-{mode}", dup == 0 and missing == 0, f"{observed}, {took:.1f} s{errors_of(readers)}")


# -- (b) RELEASE comes again with count 2, (c) REJECT never again ---------------------------------------
def release_reject(bootstrap: str) -> list[Row]:
    produce_values(bootstrap, "bc", [str(i) for i in range(30)], 1)
    verdicts = {0: AcknowledgeType.RELEASE, 1: AcknowledgeType.REJECT, 2: AcknowledgeType.ACCEPT}

    def decide(message: Any) -> int:  # the first delivery by offset % 3; any redelivery is accepted
        first = message.delivery_count() == 1 and message.value() != b"marker"
        return verdicts[message.offset() % 3] if first else AcknowledgeType.ACCEPT

    r = reader("c0", bootstrap, "sg-bc", "bc", decide)
    marker = False
    try:
        released = range(0, 30, 3)
        wait(lambda: all(offsets_seen([r])[(0, o)] >= 2 for o in released), "10 released records again")
        # Written after everything else: once it arrives, a rejected record due again came first.
        produce_values(bootstrap, "bc", ["marker"], 1)
        wait(lambda: any(d.value == b"marker" for d in r.deliveries), "the marker")
        marker = True
    finally:
        stop_all([r])
    counts: dict[int, list[int]] = {}
    for d in r.deliveries:
        counts.setdefault(d.offset, []).append(d.delivery_count)
    again = {o: counts.get(o) for o in range(0, 30, 3)}
    rejected = {o: counts.get(o) for o in range(1, 30, 3)}
    b_ok = all(c == [1, 2] for c in again.values())
    c_ok = marker and all(c == [1] for c in rejected.values())
    return [
        Row("b", b_ok, f"released offsets' delivery counts: {_runs(again)}{errors_of([r])}"),
        Row(
            "c",
            c_ok,
            f"rejected offsets' delivery counts: {_runs(rejected)}, marker {'seen' if marker else 'not seen'}",
        ),
    ]


def _runs(counts: dict[int, list[int] | None]) -> str:
    """{0: [1, 2], 3: [1, 2], ...} -> "10 x [1, 2]" (the distinct histories and how many had each)."""
    histories = Counter(str(c) for c in counts.values())
    return ", ".join(f"{n} x {h}" for h, n in histories.most_common())


# -- (d) the delivery limit ---------------------------------------------------------------------------
def delivery_limit(bootstrap: str) -> Row:
    produce_values(bootstrap, "d", ["poison", "good"], 1)

    def decide(message: Any) -> int:
        return AcknowledgeType.RELEASE if message.value() == b"poison" else AcknowledgeType.ACCEPT

    r = reader("c0", bootstrap, "sg-d", "d", decide)
    try:
        poison = lambda: [d.delivery_count for d in r.deliveries if d.value == b"poison"]  # noqa: E731
        wait(lambda: len(poison()) >= 2 and any(d.value == b"good" for d in r.deliveries), "poison twice, good once")
        produce_values(bootstrap, "d", ["marker"], 1)
        wait(lambda: any(d.value == b"marker" for d in r.deliveries), "the marker after the poison")
    finally:
        stop_all([r])
    seen = poison()
    return Row("d", seen == [1, 2], f"poison delivered with counts {seen} (limit 2), then archived{errors_of([r])}")


# -- (e) a stuck consumer, a killed consumer ------------------------------------------------------------
def _holder(bootstrap: str, topic: str, count: int) -> BackgroundClient:
    argv = [sys.executable, "-m", "interop.clients.share", bootstrap, f"sg-{topic}", topic, str(count)]
    client = BackgroundClient(argv, cwd=REPO, name="share-holder", deadline=DEADLINE * 3).start()
    try:
        client.wait_for(lambda c: any("holding" in e for e in c.events()), DEADLINE, "the holder's 10 records")
    except BaseException:
        client.kill()
        raise
    return client


def _taken_over(bootstrap: str, topic: str, since: float) -> tuple[list[Delivery], float]:
    """A second consumer of the group reads until it has offsets 0..9: (its deliveries, seconds
    from `since` until then)."""
    r = reader("c1", bootstrap, f"sg-{topic}", topic, _accept)
    try:
        wait(lambda: {d.offset for d in r.deliveries} >= set(range(10)), "the held records at another consumer")
        return r.deliveries, time.monotonic() - since
    finally:
        stop_all([r])


def stuck(bootstrap: str, lock_s: float) -> Row:
    produce_values(bootstrap, "e-stop", [f"r{i}" for i in range(10)], 1)
    holder = _holder(bootstrap, "e-stop", 10)
    try:
        os.kill(holder.pid, signal.SIGSTOP)  # its connections stay open, nothing is acknowledged
        got, took = _taken_over(bootstrap, "e-stop", time.monotonic())
    finally:
        holder.kill()
    counts = sorted({d.delivery_count for d in got})
    # Released by the lock: not before it, and before the holder's member session (6 s) would explain it.
    ok = lock_s * 0.9 <= took < lock_s + 2 and counts == [2]
    return Row(
        "e-stop", ok, f"10 held records at another consumer after {took:.1f} s (lock {lock_s:g} s), counts {counts}"
    )


def killed(bootstrap: str) -> Row:
    produce_values(bootstrap, "e-kill", [f"r{i}" for i in range(10)], 1)
    holder = _holder(bootstrap, "e-kill", 10)
    holder.kill()  # SIGKILL: the connections close, no goodbye
    got, took = _taken_over(bootstrap, "e-kill", time.monotonic())
    counts = sorted({d.delivery_count for d in got})
    # Kafka releases them at once (ShareSessionCache's disconnect listener) and gives the delivery back
    # (SharePartition.releaseAcquiredRecords: DeliveryCountOps.DECREASE), so they come with count 1.
    ok = took < SESSION_S - 1 and counts == [1]
    return Row(
        "e-kill", ok, f"10 records of the killed holder came again after {took:.1f} s (lock 30 s), counts {counts}"
    )


# -- (f) a share group next to a consumer group -------------------------------------------------------
def beside_consumer_group(bootstrap: str, count: int) -> Row:
    produce_values(bootstrap, "f", [str(i) for i in range(count)], TOPICS["f"])
    readers = [reader(f"s{i}", bootstrap, "sg-f", "f") for i in range(2)]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cg-f", "auto.offset.reset": "earliest", **QUIET})
    consumer.subscribe(["f"])
    got: set[bytes] = set()
    try:

        def consumed() -> bool:
            got.update(m.value() for m in consumer.consume(500, 0.1) if m.error() is None)
            return len(got) >= count

        wait(consumed, "the consumer group")
        wait(lambda: len(offsets_seen(readers)) >= count, "the share group")
    finally:
        consumer.close()
        stop_all(readers)
    shared = offsets_seen(readers)
    dup = sum(n - 1 for n in shared.values())
    ok = len(got) == count and len(shared) == count and dup == 0
    return Row("f", ok, f"share group {len(shared)}/{count} ({dup} dup), consumer group {len(got)}/{count}")


# -- (g) an unrelated connection closing ------------------------------------------------------------
def unrelated_close(bootstrap: str) -> Row:
    """A consumer holds 10 acquired records; a bare TCP connection to the broker opens and closes;
    then the consumer accepts the 10. Kafka ties a share session to its own connection only."""
    produce_values(bootstrap, "g", [f"r{i}" for i in range(10)], 1)
    conf = {"bootstrap.servers": bootstrap, "group.id": "sg-g", "share.acknowledgement.mode": "explicit", **QUIET}
    consumer = ShareConsumer(conf)
    consumer.subscribe(["g"])
    held: list[Any] = []
    try:

        def ten() -> bool:
            held.extend(m for m in consumer.poll(0.2) or [] if m.error() is None)
            return len(held) >= 10

        wait(ten, "10 acquired records")
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        socket.create_connection((host, int(port)), timeout=5).close()
        time.sleep(0.5)  # a bench, not a test: time for the server to see the close
        for message in held:
            consumer.acknowledge(message, AcknowledgeType.ACCEPT)
        try:  # per partition: None or a KafkaException; the whole commit failing raises one
            failures = [e for e in consumer.commit_sync(DEADLINE).values() if e is not None]
        except KafkaException as exc:
            failures = [exc]
        errors = sorted({e.args[0].name() for e in failures})
    finally:
        consumer.close()
    outcome = f"failed: {', '.join(errors)}" if errors else "accepted"
    return Row("g", not errors, f"10 held records, a bare TCP connect+close, then their acks: {outcome}")


SCENARIOS = {
    "a-implicit": "(a) 3 share consumers, 4 partitions, every record exactly once, implicit acks",
    "a-explicit": "(a) the same, explicit ACCEPT",
    "b": "(b) RELEASE -> delivered again with delivery count 2",
    "c": "(c) REJECT -> never delivered again (a marker produced after it arrives)",
    "d": "(d) released every time -> archived at the delivery limit (2)",
    "e-stop": "(e) holder SIGSTOPped -> another consumer gets its records when the 2 s lock expires",
    "e-kill": "(e) holder SIGKILLed -> another consumer gets them at once (disconnect), delivery count 1",
    "f": "(f) a share group and a consumer group on one topic each see everything",
    "g": "(g) an unrelated connection closing leaves a consumer's acquired records and session alone",
}


def _row(key: str, run: Callable[[], Row | list[Row]]) -> list[Row]:
    try:
        result = run()
    except Exception as exc:  # noqa: BLE001 - a failed scenario is a row, the bench goes on
        return [Row(key, False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:110]}")]
    return result if isinstance(result, list) else [result]


def run_all(main: str, short: str, lock_s: float, count: int) -> dict[str, Row]:
    rows = [
        *_row("a-implicit", lambda: once(main, "implicit", count)),
        *_row("a-explicit", lambda: once(main, "explicit", count)),
        *_row("b", lambda: release_reject(main)),
        *_row("d", lambda: delivery_limit(short)),
        *_row("e-stop", lambda: stuck(short, lock_s)),
        *_row("e-kill", lambda: killed(main)),
        *_row("f", lambda: beside_consumer_group(main, min(count, 2000))),
        *_row("g", lambda: unrelated_close(main)),
    ]
    by_key = {row.key: row for row in rows}
    if "c" not in by_key:  # (b) and (c) run together: a failure before either was judged fails both
        by_key["c"] = Row("c", False, by_key["b"].observed)
    return by_key
