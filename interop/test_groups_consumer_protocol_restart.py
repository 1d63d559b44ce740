"""KIP-848 offsets across kill -9: a consumer-protocol member (confluent-kafka, librdkafka 2.16,
`group.protocol=consumer`) commits, the `kgc serve` process is SIGKILLed and restarted on the same
data dir, and every client (consumer protocol and classic) reads the same committed offsets back.
Deadlines only bound a hang; nothing asserts on time.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any

import pytest

from interop.clients.consumer_protocol import FAST_SETTINGS as FAST
from tests.support.serve_process import start_serve
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.interop]

DEADLINE = 30.0


def _server(data_dir: str, log: Any) -> tuple[subprocess.Popen[str], str]:
    settings = [arg for name, value in FAST.items() for arg in ("--set", f"{name}={value}")]
    return start_serve(data_dir, "--create-topic", "kept:4", *settings, stderr=log)


def test_offsets_committed_under_the_consumer_protocol_survive_kill_9_and_every_client_reads_them(tmp_path):
    from confluent_kafka import Consumer

    data_dir = str(tmp_path / "data")
    wanted = {0: 11, 1: 22, 2: 33, 3: 44}
    with open(tmp_path / "server.log", "a") as log:
        proc, bootstrap = _server(data_dir, log)
        committer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "kip848-kept",
                "group.protocol": "consumer",
                "enable.auto.commit": False,
            }
        )
        try:
            committer.subscribe(["kept"])
            # OffsetCommit v9 carrying the member's epoch, once it is a member with partitions.
            wait_until(lambda: _commit(committer, wanted), DEADLINE, message="a commit with the member epoch")
        finally:
            proc.send_signal(signal.SIGKILL)  # no clean shutdown: the log is the only truth
            proc.wait(30)
            committer.close()
        proc, bootstrap = _server(data_dir, log)
        try:
            assert _read_back(bootstrap, "kip848-kept", wanted) == {}
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def _commit(consumer: Any, offsets: dict[int, int]) -> bool:
    from confluent_kafka import KafkaException, TopicPartition

    consumer.poll(0.05)
    owned = {tp.partition for tp in consumer.assignment()}
    if not owned:
        return False
    try:
        consumer.commit(offsets=[TopicPartition("kept", p, o) for p, o in offsets.items()], asynchronous=False)
    except KafkaException:
        return False
    return True


def _read_back(bootstrap: str, group: str, wanted: dict[int, int]) -> dict[str, Any]:
    """What each client reads as committed; returns the clients that read something else."""
    import asyncio

    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition as AioTP
    from confluent_kafka import Consumer, TopicPartition
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KpTP

    wrong: dict[str, Any] = {}
    for protocol in ("consumer", "classic"):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol})
        got = {tp.partition: tp.offset for tp in c.committed([TopicPartition("kept", p) for p in wanted], timeout=10)}
        c.close()
        if got != wanted:
            wrong[f"confluent-{protocol}"] = got
    kp = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    got = {p: kp.committed(KpTP("kept", p)) for p in wanted}
    kp.close()
    if got != wanted:
        wrong["kafka-python"] = got

    async def aio() -> dict[int, int]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            return {p: await consumer.committed(AioTP("kept", p)) for p in wanted}
        finally:
            await consumer.stop()

    got = asyncio.run(aio())
    if got != wanted:
        wrong["aiokafka"] = got
    return wrong
