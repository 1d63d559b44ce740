"""Exactly-once through kill -9: a confluent-kafka pipeline, the server SIGKILLed at random moments.

Each cycle starts `kgc serve` on the same data dir, produces a few new input messages, and starts
a pipeline process (this file run as a script): a read_committed consumer in group "eos-crash"
(static membership, so a restarted pipeline takes its old member's place at once) and a
transactional producer; per batch it produces "T-<value>" to the output topic, adds its offsets
with send_offsets_to_transaction and commits, except that every third transaction produces
"X-<value>", is flushed and aborted, and the batch is read again. After a random number of commits
(and a random few ms more) the server and the pipeline are both SIGKILLed, and the crashed data
dir must pass `kgc check` (storage.dump.check). After the last cycle a pipeline drains every
input, the server stops cleanly, and a fresh server is read: under read_committed the output holds
every input's "T-" value exactly once and no "X-" value, under read_uncommitted the aborted "X-"
values are there too, and the group's committed offsets are the input's end offsets.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time

CYCLES = 20
PER_CYCLE = 6  # new input messages per cycle
PARTITIONS = 2
GROUP, TXN_ID, INSTANCE = "eos-crash", "eos-crash-tx", "eos-crash-member"


# -- the pipeline (child process) ---------------------------------------------------------------------


def pipeline(bootstrap: str, drain: bool) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "group.instance.id": INSTANCE,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 10_000,
        }
    )
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID, "transaction.timeout.ms": 10_000})
    producer.init_transactions(30)
    consumer.subscribe(["in"])
    print("ready", flush=True)
    txns = 0
    while True:
        batch = [m for m in consumer.consume(5, 0.2) if not m.error()]
        if not batch:
            if drain and _drained(consumer):
                print("drained", flush=True)
                return
            continue
        txns += 1
        start = {(m.partition()): m.offset() for m in reversed(batch)}  # each partition's first offset
        producer.begin_transaction()
        abort = txns % 3 == 0
        for m in batch:
            producer.produce("out", value=(b"X-" if abort else b"T-") + m.value(), partition=m.partition())
        if abort:
            producer.flush(30)
            producer.abort_transaction(30)
            for partition, offset in start.items():  # read the batch again
                consumer.seek(TopicPartition("in", partition, offset))
            continue
        producer.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30
        )
        producer.commit_transaction(30)
        print("committed", flush=True)


def _drained(consumer) -> bool:
    """Every input partition's committed offset is its end (a partition with nothing left to
    read has no position yet: its committed offset says where it stands)."""
    from confluent_kafka import TopicPartition

    partitions = [TopicPartition("in", p) for p in range(PARTITIONS)]
    for tp in consumer.committed(partitions, 10):
        _, high = consumer.get_watermark_offsets(TopicPartition("in", tp.partition), timeout=5)
        if tp.offset < high:
            return False
    return True


# -- the parent ---------------------------------------------------------------------------------------


class Lines:
    """A child's stdout lines, read by a thread; the test waits on them, never polls."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.strip())
                self._changed.notify_all()
        with self._changed:
            self.lines.append("<eof>")
            self._changed.notify_all()

    def wait_for(self, predicate, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: predicate(self.lines) or "<eof>" in self.lines, timeout
            ) and predicate(self.lines)


def start_server(data_dir: str, log) -> tuple[subprocess.Popen[str], str]:
    from tests.support.serve_process import start_serve  # here: this file is the child script too

    return start_serve(
        data_dir,
        "--create-topic",
        f"in:{PARTITIONS}",
        "--create-topic",
        f"out:{PARTITIONS}",
        "--set",
        "log.flush.mode=group_commit",
        stderr=log,
    )


def start_pipeline(bootstrap: str, log, drain: bool = False) -> Lines:
    from tests.support.serve_process import REPO

    args = [sys.executable, __file__, bootstrap] + (["--drain"] if drain else [])
    return Lines(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, cwd=REPO))


def produce_inputs(bootstrap: str, values: list[str]) -> None:
    """Append the values round-robin over the input partitions (raw Produce, acks=all: cheap)."""
    import trio

    from protocol.api import ApiKey
    from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
    from storage.batch import Record, encode_batch
    from tests.integration.raw_client import RawClient

    host, port = bootstrap.rsplit(":", 1)

    async def run() -> None:
        client = await RawClient.connect(host, int(port))
        data = [
            PartitionProduceData(
                p,
                encode_batch(
                    0, [Record(None, 1, None, v.encode()) for i, v in enumerate(values) if i % PARTITIONS == p]
                ),
            )
            for p in range(PARTITIONS)
        ]
        r = await client.request(
            ApiKey.PRODUCE,
            9,
            ProduceRequest(acks=-1, timeout_ms=10_000, topic_data=[TopicProduceData("in", partition_data=data)]),
        )
        await client.aclose()
        assert [p.error_code for p in r.responses[0].partition_responses] == [0] * PARTITIONS

    trio.run(run)


def read_out(bootstrap: str, isolation: str) -> list[str]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{isolation}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition("out", p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    values, at_end, deadline = [], set(), time.monotonic() + 30
    while len(at_end) < PARTITIONS:
        assert time.monotonic() < deadline, "reading the output did not reach its end"
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(msg.partition())
            continue
        at_end.discard(msg.partition())
        values.append(msg.value().decode())
    consumer.close()
    return values


def committed_offsets(bootstrap: str) -> list[int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in consumer.committed([TopicPartition("in", p) for p in range(PARTITIONS)], 30)]
    finally:
        consumer.close()


def test_exactly_once_through_sigkill(tmp_path):
    from storage.dump import check

    data_dir, rng = str(tmp_path / "data"), random.Random(4711)
    inputs: list[str] = []
    started: list[subprocess.Popen[str]] = []  # every process this test started: none outlives it
    try:
        with open(tmp_path / "server.log", "a") as log:
            for cycle in range(CYCLES):
                server, bootstrap = start_server(data_dir, log)
                started.append(server)
                values = [f"in-{cycle}-{i}" for i in range(PER_CYCLE)]
                produce_inputs(bootstrap, values)
                inputs += values
                child = start_pipeline(bootstrap, log)
                started.append(child.proc)
                # The kill lands at a random point: as the pipeline starts, once it is ready, or
                # after 1-3 commits (each commit line comes right after a commit, the next in flight).
                moment = rng.randint(-1, 3)
                if moment >= 0:
                    child.wait_for(
                        lambda lines, n=moment: "ready" in lines and lines.count("committed") >= n, timeout=20
                    )
                server.send_signal(signal.SIGKILL)
                child.proc.send_signal(signal.SIGKILL)
                server.wait(10)
                child.proc.wait(10)
                problems = check(data_dir)  # what `kgc check DATA_DIR` runs
                assert problems == [], f"cycle {cycle}: {problems[:3]}"
            server, bootstrap = start_server(data_dir, log)
            started.append(server)
            drainer = start_pipeline(bootstrap, log, drain=True)
            started.append(drainer.proc)
            assert drainer.wait_for(lambda lines: "drained" in lines, timeout=60), drainer.lines[-5:]
            drainer.proc.wait(10)
            server.send_signal(signal.SIGTERM)
            server.wait(30)
            assert check(data_dir) == []
            server, bootstrap = start_server(data_dir, log)
            started.append(server)
            committed = read_out(bootstrap, "read_committed")
            everything = read_out(bootstrap, "read_uncommitted")
            offsets = committed_offsets(bootstrap)
            server.send_signal(signal.SIGTERM)
            server.wait(30)
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    assert sorted(committed) == sorted(f"T-{v}" for v in inputs)  # every input exactly once
    aborted = [v for v in everything if v.startswith("X-")]
    assert aborted and not [v for v in committed if v.startswith("X-")]
    assert set(committed) <= set(everything)
    per_partition = [sum(1 for i in range(PER_CYCLE) if i % PARTITIONS == p) * CYCLES for p in range(PARTITIONS)]
    assert offsets == per_partition  # the group committed exactly what the output holds


if __name__ == "__main__":
    pipeline(sys.argv[1], drain="--drain" in sys.argv)
