"""Codec speed: µs per decode and per encode of realistic request and response bodies.

    python bench/protocol_bench.py [--loops N] [--repeat N] [--no-kafka-python]

Prints a table; never passes or fails on time. Where kafka-python is installed its generated
codec is timed on the same bytes for scale (it is only a test oracle here).
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
import timeit
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from protocol.messages import fetch, heartbeat, join_group, offset_commit, sync_group

TOPIC = "com.example.orders.events.v1"
MEMBER = "rdkafka-5c3e2a10-8f4b-4d1e-9a7c-2b6f0e9d1c34"
MEMBERS = [MEMBER, "rdkafka-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "rdkafka-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4"]
SUBSCRIPTION = encode_subscription(ConsumerProtocolSubscription(3, [TOPIC], b"", [], -1, None))  # librdkafka: v3


def assignment(parts: list[int]) -> bytes:
    return encode_assignment(ConsumerProtocolAssignment(0, [TopicPartition(TOPIC, parts)], None))


def record_batch(n_bytes: int) -> bytes:
    # opaque to the codec; shaped like one RecordBatch v2 header + payload
    body = bytes(n_bytes - 61)
    return struct.pack(">qiib", 0, n_bytes - 12, -1, 2) + bytes(49 - 4 - 1) + body


def cases() -> list[tuple[str, int, int, bool, Any]]:
    jg_req = join_group.JoinGroupRequest(
        group_id="orders-consumer-group",
        session_timeout_ms=45000,
        rebalance_timeout_ms=300000,
        member_id=MEMBER,
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[
            join_group.JoinGroupRequestProtocol(name, SUBSCRIPTION)
            for name in ("range", "roundrobin", "cooperative-sticky")
        ],
        reason="rebalance failed due to MemberIdRequiredException",
    )
    jg_resp = join_group.JoinGroupResponse(
        generation_id=12,
        protocol_type="consumer",
        protocol_name="range",
        leader=MEMBER,
        member_id=MEMBER,
        members=[join_group.JoinGroupResponseMember(m, None, SUBSCRIPTION) for m in MEMBERS],
    )
    sg_req = sync_group.SyncGroupRequest(
        group_id="orders-consumer-group",
        generation_id=12,
        member_id=MEMBER,
        assignments=[sync_group.SyncGroupRequestAssignment(m, assignment([i, i + 3])) for i, m in enumerate(MEMBERS)],
    )
    sg_resp = sync_group.SyncGroupResponse(assignment=assignment([0, 3]))
    hb_req = heartbeat.HeartbeatRequest(group_id="orders-consumer-group", generation_id=12, member_id=MEMBER)
    hb_resp = heartbeat.HeartbeatResponse()
    oc_req = offset_commit.OffsetCommitRequest(
        group_id="orders-consumer-group",
        generation_id_or_member_epoch=12,
        member_id=MEMBER,
        topics=[
            offset_commit.OffsetCommitRequestTopic(
                TOPIC,
                partitions=[offset_commit.OffsetCommitRequestPartition(p, 1000 + p, -1, -1, "") for p in range(3)],
            )
        ],
    )
    oc_resp = offset_commit.OffsetCommitResponse(
        topics=[
            offset_commit.OffsetCommitResponseTopic(
                TOPIC, partitions=[offset_commit.OffsetCommitResponsePartition(p, 0) for p in range(3)]
            )
        ]
    )
    # issue 16's 32-partition commit (one topic), as a consumer with 32 partitions sends it
    oc32_req = offset_commit.OffsetCommitRequest(
        group_id="orders-consumer-group",
        generation_id_or_member_epoch=12,
        member_id=MEMBER,
        topics=[
            offset_commit.OffsetCommitRequestTopic(
                TOPIC,
                partitions=[offset_commit.OffsetCommitRequestPartition(p, 1000 + p, 7, -1, "") for p in range(32)],
            )
        ],
    )
    oc32_resp = offset_commit.OffsetCommitResponse(
        topics=[
            offset_commit.OffsetCommitResponseTopic(
                TOPIC, partitions=[offset_commit.OffsetCommitResponsePartition(p, 0) for p in range(32)]
            )
        ]
    )
    f_req = fetch.FetchRequest(
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=52428800,
        isolation_level=1,
        session_id=0,
        session_epoch=-1,
        topics=[
            fetch.FetchTopic(
                TOPIC, partitions=[fetch.FetchPartition(p, -1, 1000 + p, -1, -1, 1048576) for p in range(3)]
            )
        ],
        rack_id="",
    )
    f_resp = fetch.FetchResponse(
        responses=[
            fetch.FetchableTopicResponse(
                TOPIC,
                partitions=[
                    fetch.PartitionData(
                        partition_index=p,
                        high_watermark=2000,
                        last_stable_offset=2000,
                        log_start_offset=0,
                        aborted_transactions=None,
                        records=record_batch(1024) if p == 0 else b"",
                    )
                    for p in range(3)
                ],
            )
        ]
    )
    return [
        ("JoinGroup", 11, 5, False, jg_req),
        ("JoinGroup", 11, 5, True, jg_resp),
        ("JoinGroup", 11, 9, False, jg_req),
        ("JoinGroup", 11, 9, True, jg_resp),
        ("SyncGroup", 14, 3, False, sg_req),
        ("SyncGroup", 14, 3, True, sg_resp),
        ("SyncGroup", 14, 5, False, sg_req),
        ("SyncGroup", 14, 5, True, sg_resp),
        ("Heartbeat", 12, 3, False, hb_req),
        ("Heartbeat", 12, 3, True, hb_resp),
        ("Heartbeat", 12, 4, False, hb_req),
        ("Heartbeat", 12, 4, True, hb_resp),
        ("OffsetCommit", 8, 8, False, oc_req),
        ("OffsetCommit", 8, 8, True, oc_resp),
        ("OffsetCommit", 8, 2, False, oc32_req),
        ("OffsetCommit", 8, 2, True, oc32_resp),
        ("OffsetCommit", 8, 9, False, oc32_req),
        ("OffsetCommit", 8, 9, True, oc32_resp),
        ("Fetch", 1, 12, False, f_req),
        ("Fetch", 1, 12, True, f_resp),
    ]


def per_call_us(fn: Any, loops: int, repeat: int) -> float:
    # process CPU time, so other processes on a busy machine inflate the figures less; the best
    # of `repeat` runs, so a burst of contention does not become the figure
    return min(timeit.repeat(fn, number=loops, repeat=repeat, timer=time.process_time)) / loops * 1e6


def kafka_python_timer(key: int, version: int, resp: bool, data: bytes) -> tuple[Any, Any] | None:
    try:
        import importlib
        import pkgutil

        import kafka.protocol as kp
        from kafka.protocol.api_message import ApiMessage
    except ImportError:
        return None
    for info in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
        if ".old" in info.name or "generate" in info.name:
            continue
        mod = importlib.import_module(info.name)
        for v in vars(mod).values():
            if (
                isinstance(v, type)
                and issubclass(v, ApiMessage)
                and getattr(v, "_json", None)
                and key == v.API_KEY
                and v.type == ("response" if resp else "request")
            ):
                obj = v.decode(data, version=version)
                obj._header = None  # decoded objects lack it; encode() reads it
                return partial(v.decode, data, version=version), partial(obj.encode, version=version)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loops", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-kafka-python", action="store_true")
    args = ap.parse_args()
    print(f"Python {sys.version.split()[0]}; best of {args.repeat} x {args.loops} loops; µs of CPU per call")
    header = f"{'message':<30}{'bytes':>7}{'decode':>9}{'encode':>9}"
    if not args.no_kafka_python:
        header += f"{'kp decode':>11}{'kp encode':>11}"
    print(header)
    print("-" * len(header))
    for name, key, version, resp, obj in cases():
        enc = encode_response if resp else encode_request
        dec = decode_response if resp else decode_request
        data = enc(key, version, obj)
        assert dec(key, version, data) is not None
        d = per_call_us(partial(dec, key, version, data), args.loops, args.repeat)
        e = per_call_us(partial(enc, key, version, obj), args.loops, args.repeat)
        label = f"{name}{'Response' if resp else 'Request'} v{version}"
        line = f"{label:<30}{len(data):>7}{d:>9.2f}{e:>9.2f}"
        if not args.no_kafka_python:
            kp = kafka_python_timer(key, version, resp, data)
            if kp is not None:
                kd = per_call_us(kp[0], args.loops // 4, args.repeat)
                ke = per_call_us(kp[1], args.loops // 4, args.repeat)
                line += f"{kd:>11.2f}{ke:>11.2f}"
        print(line)


if __name__ == "__main__":
    main()
