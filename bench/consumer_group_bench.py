"""KIP-848 (the consumer rebalance protocol) next to the classic protocol, in the same run, against
real `kgc serve` processes.

    .venv/bin/python bench/consumer_group_bench.py [--trials 3] [--seconds 5] [--skip-clients]

1. Subscribe -> stable: N = 1, 4, 16 confluent-kafka consumers (librdkafka 2.16) on a 32-partition
   topic, classic (eager range, heartbeat.interval.ms 300, group.initial.rebalance.delay.ms 0 and
   500) and consumer protocol (group.protocol=consumer, group.consumer.heartbeat.interval.ms 300).
   Stable: every partition owned by exactly one member by the members' own callbacks.
2. Leave -> stable: 4 members stable, one closes (LeaveGroup / a heartbeat with epoch -1); time
   until the other 3 own all 32 partitions.
3. Heartbeat cost: 1,000 members in 100 groups of 10 over 1,000 loopback connections (raw
   protocol): classic Heartbeat v3 and ConsumerGroupHeartbeat v1 at steady state (the member's
   epoch only, as librdkafka sends it between changes), back-to-back; server CPU per request
   (user+system of the server process / requests) and latency p50/p99. The load generator shares
   the 2 cores with the server.
Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from group_bench import (  # noqa: E402
    PARTITIONS,
    RawMember,
    create_topic,
    describe,
    form_group,
    percentile,
    start_server,
    stop_server,
    wait_for,
)
from servers import cpu_seconds  # noqa: E402

from interop.clients.consumer_protocol import ConsumerProtocolMember  # noqa: E402
from interop.clients.groups import ConfluentMember, Ownership, close_all  # noqa: E402
from protocol.api import ApiKey  # noqa: E402
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest  # noqa: E402
from tests.integration.raw_client import RawClient  # noqa: E402

HEARTBEAT_MS = 300
TIMEOUT_S = 60.0
SERVER = {"group.consumer.heartbeat.interval.ms": HEARTBEAT_MS, "group.consumer.min.heartbeat.interval.ms": 100}


# -- 1 and 2: real consumers ------------------------------------------------------------------------
def covered(ownership: Ownership, members: list[ConfluentMember], topic: str) -> bool:
    snap = ownership.snapshot()
    owned = sorted(tp for m in members for tp in snap.get(m.name, ()))
    return owned == [(topic, p) for p in range(PARTITIONS)] and all(snap.get(m.name) for m in members)


def make_members(
    protocol: str, bootstrap: str, group: str, topic: str, ownership: Ownership, n: int, prefix: str = "m"
) -> list[ConfluentMember]:
    if protocol == "consumer":
        return [
            ConsumerProtocolMember(f"{prefix}{i}", bootstrap, group, [topic], ownership, poll_timeout=0.01)
            for i in range(n)
        ]
    config = {"heartbeat.interval.ms": HEARTBEAT_MS, "session.timeout.ms": 6000}
    return [
        ConfluentMember(f"{prefix}{i}", bootstrap, group, [topic], ownership, config, poll_timeout=0.01)
        for i in range(n)
    ]


def formation(protocol: str, bootstrap: str, n: int, trial: int, tag: str) -> float:
    topic = group = f"form-{tag}-{n}-{trial}"
    create_topic(bootstrap, topic, PARTITIONS)
    ownership = Ownership()
    members = make_members(protocol, bootstrap, group, topic, ownership, n)
    start = time.monotonic()
    try:
        for m in members:
            m.start()
        wait_for(lambda: covered(ownership, members, topic), TIMEOUT_S, f"{n} members stable")
        return time.monotonic() - start
    finally:
        close_all(members)


def leave_to_stable(protocol: str, bootstrap: str, trial: int, tag: str) -> float:
    topic = group = f"leave-{tag}-{trial}"
    create_topic(bootstrap, topic, PARTITIONS)
    ownership = Ownership()
    members = make_members(protocol, bootstrap, group, topic, ownership, 4)
    try:
        for m in members:
            m.start()
        wait_for(lambda: covered(ownership, members, topic), TIMEOUT_S, "4 members stable")
        time.sleep(1.0)  # a bench, not a test: let any follow-up rebalance finish before timing
        start = time.monotonic()
        members[0].close()
        wait_for(lambda: covered(ownership, members[1:], topic), TIMEOUT_S, "3 members stable after a leave")
        return time.monotonic() - start
    finally:
        close_all(members)


def client_benches(trials: int) -> None:
    runs = (
        ("classic", {"group.initial.rebalance.delay.ms": 0}, "classic, initial delay 0"),
        ("classic", {"group.initial.rebalance.delay.ms": 500}, "classic, initial delay 500 ms"),
        ("consumer", {}, "consumer protocol (KIP-848)"),
    )
    for protocol, settings, label in runs:
        with tempfile.TemporaryDirectory(prefix="kgc-kip848-bench-") as data:
            proc, port = start_server(data, {**SERVER, **settings})
            bootstrap = f"127.0.0.1:{port}"
            tag = f"{protocol}-{settings.get('group.initial.rebalance.delay.ms', 'x')}"
            try:
                print(f"\n{label}: subscribe -> stable, {PARTITIONS} partitions")
                for n in (1, 4, 16):
                    times = [formation(protocol, bootstrap, n, t, tag) for t in range(trials)]
                    print(f"   N={n:3d}: {describe(times)}")
                times = [leave_to_stable(protocol, bootstrap, t, tag) for t in range(trials)]
                print(f"   leave -> the other 3 own everything: {describe(times)}")
            finally:
                stop_server(proc)


# -- 3: heartbeats over the raw protocol --------------------------------------------------------------
async def form_consumer_group(port: int, group: str, size: int, out: list[RawMember]) -> None:
    """`size` members join a consumer group (member epoch 0), then each heartbeats until it is
    reconciled; their steady-state heartbeat frames are prepared."""
    members = [RawMember(await RawClient.connect("127.0.0.1", port), group) for _ in range(size)]
    epochs: dict[int, int] = {}
    for i, m in enumerate(members):
        m.member_id = f"{group}-m{i}"
        joined = await m.client.request(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            1,
            ConsumerGroupHeartbeatRequest(
                group_id=group,
                member_id=m.member_id,
                member_epoch=0,
                rebalance_timeout_ms=30_000,
                subscribed_topic_names=["bench"],
                topic_partitions=[],
            ),
        )
        assert joined.error_code == 0, joined
        epochs[i] = joined.member_epoch
    for _ in range(5):  # everyone catches up with the last epoch
        for i, m in enumerate(members):
            beat = await m.client.request(
                ApiKey.CONSUMER_GROUP_HEARTBEAT,
                1,
                ConsumerGroupHeartbeatRequest(
                    group_id=group, member_id=m.member_id, member_epoch=epochs[i], topic_partitions=[]
                ),
            )
            assert beat.error_code == 0, beat
            epochs[i] = beat.member_epoch
    for i, m in enumerate(members):
        _, m.frame = m.client.encode(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            1,
            ConsumerGroupHeartbeatRequest(group_id=group, member_id=m.member_id, member_epoch=epochs[i]),
            correlation_id=7,
        )
    out.extend(members)


async def beat(member: RawMember, until: float, error_at: int, latencies: list[float], errors: list[int]) -> None:
    stream = member.client.stream
    buffer = bytearray()
    while time.perf_counter() < until:
        sent = time.perf_counter()
        await stream.send_all(member.frame)
        while True:
            if len(buffer) >= 4:
                size = struct.unpack_from(">i", buffer)[0]
                if len(buffer) >= 4 + size:
                    break
            buffer += await stream.receive_some(65536)
        latencies.append(time.perf_counter() - sent)
        error = struct.unpack_from(">h", buffer, error_at)[0]
        if error:
            errors.append(error)
        del buffer[: 4 + size]


async def heartbeat_load(port: int, pid: int, groups: int, size: int, seconds: float) -> None:
    # size | correlation id | (v1 response header: tagged fields) | throttle_time_ms | error_code
    kinds = (
        ("classic Heartbeat v3", form_group, 4 + 4 + 4),
        ("ConsumerGroupHeartbeat v1", form_consumer_group, 4 + 4 + 1 + 4),
    )
    for label, form, error_at in kinds:
        members: list[RawMember] = []
        async with trio.open_nursery() as nursery:
            for g in range(groups):
                nursery.start_soon(form, port, f"hb-{label[:7]}-{g}", size, members)
        latencies: list[float] = []
        errors: list[int] = []
        cpu0, began = cpu_seconds(pid), time.perf_counter()
        async with trio.open_nursery() as nursery:
            for m in members:
                nursery.start_soon(beat, m, began + seconds, error_at, latencies, errors)
        wall = time.perf_counter() - began
        cpu = cpu_seconds(pid) - cpu0
        print(
            f"   {label:26s}: {len(latencies) / wall:7.0f} req/s   p50 {percentile(latencies, 0.5) * 1000:6.2f} ms"
            f"   p99 {percentile(latencies, 0.99) * 1000:6.2f} ms   server CPU per request "
            f"{cpu / max(1, len(latencies)) * 1e6:5.0f} us   errors {len(errors)}"
        )
        for m in members:
            await m.client.aclose()


def heartbeat_bench(seconds: float, groups: int, size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kgc-kip848-bench-") as data:
        proc, port = start_server(data, {**SERVER, "group.initial.rebalance.delay.ms": 3000})
        try:
            create_topic(f"127.0.0.1:{port}", "bench", 32)
            print(f"\nheartbeats: {groups * size} members in {groups} groups, back-to-back, {seconds:g} s each")
            trio.run(heartbeat_load, port, proc.pid, groups, size, seconds)
        finally:
            stop_server(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--skip-clients", action="store_true")
    parser.add_argument("--skip-heartbeats", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    if not args.skip_clients:
        client_benches(args.trials)
    if not args.skip_heartbeats:
        heartbeat_bench(args.seconds, args.groups, args.members)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
