"""Issue 27: large frames held in flight do not starve a healthy group (queued.max.request.bytes).

Eight raw connections each announce a 100 MiB request, send 90 MiB of it and hold it unfinished
for HOLD seconds: one holds the large-frame budget, seven wait for it (the bound at work: the
server's memory does not grow with them). Meanwhile three confluent-kafka consumers
(session.timeout 6 s, heartbeat 300 ms) consume what a producer sends and commit after each
batch. Their heartbeats, fetches and commits are small frames with a reserve of their own
(coordinator/net/request_memory.py), so the group sees no rebalance and no commit error. Before
the reserve, the heartbeats queued behind the large frames: rebalances, UNKNOWN_MEMBER_ID.

The scenario lasts HOLD seconds of real time on purpose (the one test that does); every wait in
it is on a condition under a deadline, and the tricklers stop by themselves.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from interop.clients.group_members import describe_group, group_owns_all, stop_all
from interop.clients.python_members import ConfluentKafkaMember
from protocol.api import ApiKey
from protocol.headers import RequestHeader, encode_request_header
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

MIB = 1 << 20
ANNOUNCED, SENT, CONNECTIONS = 100 * MIB, 90 * MIB, 8
HOLD = 20.0  # seconds the large frames are held while the group works
DEADLINE = 30.0  # a safety net, never a timing assertion
PARTITIONS = 3
GROUP = "fair-share"


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


class Trickler(threading.Thread):
    """One connection: announce ANNOUNCED bytes, send SENT of them as the server reads, hold."""

    def __init__(self, port: int, index: int, stop: threading.Event) -> None:
        super().__init__(name=f"trickler-{index}", daemon=True)
        self.port, self.index, self.stop = port, index, stop
        self.sent = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port)) as sock:
                header = encode_request_header(RequestHeader(ApiKey.API_VERSIONS, 0, self.index, "big"))
                sock.sendall(struct.pack(">i", ANNOUNCED) + header)
                sock.settimeout(0.1)  # so a send blocked by the server's backpressure sees `stop`
                chunk = bytes(MIB)
                while self.sent < SENT and not self.stop.is_set():
                    try:
                        self.sent += sock.send(chunk[: SENT - self.sent])
                    except TimeoutError:
                        continue
                self.stop.wait(HOLD + DEADLINE)  # hold the frame unfinished
        except BaseException as exc:  # reported by the test
            self.failure = exc


@pytest.mark.kafka_settings({"group.initial.rebalance.delay.ms": 300})
def test_a_healthy_group_keeps_working_while_eight_large_frames_hold_request_memory(kafka_coordinator, topic_name):
    from confluent_kafka import Producer

    server = kafka_coordinator._require()  # the embedded server's RequestMemory, read from this thread
    memory = server.request_memory
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    members = [
        ConfluentKafkaMember(f"fair-{i}", kafka_coordinator.bootstrap, GROUP, topic_name, commit=True).start()
        for i in range(3)
    ]
    producer = Producer({"bootstrap.servers": kafka_coordinator.bootstrap, "linger.ms": 0})
    stop = threading.Event()
    tricklers = [Trickler(kafka_coordinator.port, i, stop) for i in range(CONNECTIONS)]
    try:
        wait_until(lambda: group_owns_all(members, PARTITIONS), DEADLINE, message=lambda: describe_group(members))
        assigns = [m.assigns() for m in members]  # the group as formed: any later assignment is a rebalance
        rss_before = rss_mib()
        for t in tricklers:
            t.start()
        wait_until(
            lambda: memory.waiting == CONNECTIONS - 1 and max(t.sent for t in tricklers) == SENT,
            DEADLINE,
            message=lambda: (
                f"one frame held, seven waiting: {memory.waiting} waiting, sent {[t.sent >> 20 for t in tricklers]} MiB"
            ),
        )
        produced = 0
        ends = time.monotonic() + HOLD
        while time.monotonic() < ends:  # one message at a time, each consumed (and committed) in turn
            producer.produce(topic_name, key=b"k%d" % produced, value=b"v%d" % produced, partition=produced % 3)
            producer.flush(DEADLINE)
            produced += 1
            wait_until(
                lambda n=produced: sum(len(m.consumed()) for m in members) >= n,
                DEADLINE,
                interval=0.01,
                message=lambda n=produced: f"{n} messages consumed\n{describe_group(members)}",
            )
            assert memory.waiting == CONNECTIONS - 1, "the large frames kept waiting throughout"
        rss_held = rss_mib()
        assert [t.failure for t in tricklers] == [None] * CONNECTIONS
    finally:
        stop.set()
        for t in tricklers:
            if t.ident is not None:
                t.join(DEADLINE)
        failures = stop_all(members)
    assert failures == []
    assert produced > 10, describe_group(members)
    assert [m.assigns() for m in members] == assigns, "a rebalance happened\n" + describe_group(members)
    assert [m.errors() for m in members] == [[], [], []], describe_group(members)
    # the bound held: one 100 MiB frame buffered (90 MiB of it written), the other seven not read
    assert memory.peak <= ANNOUNCED + memory.small_reserve
    assert rss_held - rss_before < 2 * ANNOUNCED / MIB, f"RSS grew {rss_held - rss_before:.0f} MiB"
    wait_until(lambda: memory.used == 0, DEADLINE, message=f"request memory given back ({memory.used} held)")
