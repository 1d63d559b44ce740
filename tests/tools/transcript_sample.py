"""A small hand-written transcript (the shapes coordinator/observe/transcript.py writes): group
`shop`, alice forms generation 1, bob's join parks alice's rebalance, alice's heartbeat gets
REBALANCE_IN_PROGRESS, both rejoin (generation 2), bob leaves; plus bob's Fetch (no group), a
record, a closed connection, and a group `other` that must stay out of `shop`'s views.
`events(bob_client=...)` lets a test give bob a hostile client id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALICE = "alice-0109dcd9-1111-2222-3333-444455556666"
BOB = "bob-7ba641b3-aaaa-bbbb-cccc-ddddeeeeffff"
SUB = {"subscription": {"topics": ["orders"], "user_data": None, "owned_partitions": []}}
REBALANCING = "group 'shop' is PreparingRebalance: generation 1 is ending, rejoin"


def _join(member: str) -> dict[str, Any]:
    return {
        "group_id": "shop",
        "session_timeout_ms": 6000,
        "rebalance_timeout_ms": 30000,
        "member_id": member,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUB}],
    }


def _joined(member: str, generation: int, leader: str, members: list[str]) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "generation_id": generation,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "leader": leader,
        "skip_assignment": False,
        "member_id": member,
        "members": [{"member_id": m, "group_instance_id": None, "metadata": SUB} for m in members],
    }


def events(bob_client: str = "bob") -> list[dict[str, Any]]:
    seq: list[dict[str, Any]] = []
    cid = iter(range(1, 1000))

    def exchange(
        t: int,
        conn: int,
        client: str,
        api: str,
        body: dict[str, Any],
        answer: dict[str, Any] | None,
        t_answer: int | None = None,
        errors: list[dict[str, Any]] | None = None,
        groups: tuple[str, ...] = ("shop",),
        partitions: list[Any] | None = None,
        answer_partitions: list[Any] | None = None,
    ) -> None:
        c = next(cid)
        seq.append(
            {
                "ts": t,
                "type": "request",
                "conn": conn,
                "client": client,
                "host": "127.0.0.1",
                "api": api,
                "version": 5,
                "correlation_id": c,
                "groups": list(groups),
                "body": body,
                **({} if partitions is None else {"partitions": partitions}),
            }
        )
        seq.append(
            {
                "ts": t if t_answer is None else t_answer,
                "type": "response",
                "conn": conn,
                "client": client,
                "api": api,
                "version": 5,
                "correlation_id": c,
                "groups": list(groups),
                "elapsed_ms": 0.2,
                "errors": errors or [],
                "body": answer,
                **({} if answer_partitions is None else {"partitions": answer_partitions}),
            }
        )

    def transition(t: int, old: str, new: str, generation: int, reason: str, group: str = "shop") -> None:
        seq.append(
            {
                "ts": t,
                "type": "transition",
                "group": group,
                "from": old,
                "to": new,
                "generation": generation,
                "reason": reason,
            }
        )

    t0 = 1_700_000_000_000
    exchange(
        t0,
        1,
        "alice",
        "FindCoordinator",
        {"key": "shop", "key_type": 0},
        {"error_code": 0, "node_id": 0, "host": "127.0.0.1", "port": 9092},
    )
    exchange(
        t0 + 10,
        2,
        "alice",
        "JoinGroup",
        _join(""),
        {**_joined(ALICE, -1, "", []), "error_code": 79},
        errors=[
            {
                "code": 79,
                "error": "MEMBER_ID_REQUIRED",
                "reason": f"JoinGroup v5 without a member id: rejoin with member id '{ALICE}' (KIP-394)",
            }
        ],
    )
    exchange(t0 + 20, 2, "alice", "JoinGroup", _join(ALICE), _joined(ALICE, 1, ALICE, [ALICE]))
    transition(t0 + 20, "Empty", "PreparingRebalance", 0, f"JoinGroup from client 'alice' member '{ALICE}'")
    transition(
        t0 + 20, "PreparingRebalance", "CompletingRebalance", 1, f"JoinGroup from client 'alice' member '{ALICE}'"
    )
    exchange(
        t0 + 30,
        2,
        "alice",
        "SyncGroup",
        {"group_id": "shop", "generation_id": 1, "member_id": ALICE, "assignments": []},
        {
            "error_code": 0,
            "assignment": {
                "assignment": {"assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": None}
            },
        },
    )
    transition(t0 + 30, "CompletingRebalance", "Stable", 1, f"SyncGroup from client 'alice' member '{ALICE}'")
    seq.append(
        {
            "ts": t0 + 31,
            "type": "record",
            "topic": "__consumer_offsets",
            "partition": 12,
            "offset": 1,
            "group": "shop",
            "key": {"version": 2, "data": {"group": "shop"}},
            "value": {
                "version": 3,
                "data": {
                    "protocolType": "consumer",
                    "generation": 1,
                    "protocol": "range",
                    "leader": ALICE,
                    "currentStateTimestamp": t0,
                    "members": [],
                },
            },
        }
    )
    # bob joins: the group rebalances; his join is parked until alice rejoins
    exchange(t0 + 1000, 3, bob_client, "JoinGroup", _join(BOB), _joined(BOB, 2, ALICE, []), t_answer=t0 + 1401)
    transition(t0 + 1000, "Stable", "PreparingRebalance", 1, f"JoinGroup from client '{bob_client}' member '{BOB}'")
    exchange(
        t0 + 1200,
        2,
        "alice",
        "Heartbeat",
        {"group_id": "shop", "generation_id": 1, "member_id": ALICE},
        {"error_code": 27},
        errors=[{"code": 27, "error": "REBALANCE_IN_PROGRESS", "reason": REBALANCING}],
    )
    exchange(t0 + 1400, 2, "alice", "JoinGroup", _join(ALICE), _joined(ALICE, 2, ALICE, [ALICE, BOB]))
    transition(
        t0 + 1400, "PreparingRebalance", "CompletingRebalance", 2, f"JoinGroup from client 'alice' member '{ALICE}'"
    )
    exchange(
        t0 + 1500,
        4,
        bob_client,
        "Fetch",
        {"topics": []},
        {"responses": []},
        groups=(),
        partitions=[{"topic": "orders", "partition": 1, "offset": 0}],
        answer_partitions=[
            {"topic": "orders", "partition": 1, "records": 0, "bytes": 0, "high_watermark": 0, "error": None}
        ],
    )
    exchange(t0 + 1600, 9, "admin", "DescribeGroups", {"groups": ["other"]}, {"groups": []}, groups=("other",))
    transition(t0 + 1700, "Stable", "Dead", 0, "DeleteGroups from client 'admin'", group="other")
    exchange(
        t0 + 2000,
        3,
        bob_client,
        "LeaveGroup",
        {"group_id": "shop", "member_id": BOB, "members": []},
        {"error_code": 0, "members": []},
    )
    transition(
        t0 + 2000,
        "CompletingRebalance",
        "PreparingRebalance",
        2,
        f"LeaveGroup from client '{bob_client}' member '{BOB}'",
    )
    seq.append({"ts": t0 + 2100, "type": "disconnect", "conn": 3, "host": "127.0.0.1", "reason": "client closed"})
    return sorted(seq, key=lambda e: e["ts"])  # written as they happen: a parked answer comes later


def write(path: Path, seq: list[dict[str, Any]] | None = None) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in (seq if seq is not None else events())), encoding="utf-8")
    return path
