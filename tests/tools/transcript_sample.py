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


def more_groups(t0: int = 1_700_000_000_000) -> list[dict[str, Any]]:
    """A consumer-protocol group `orders-v2` (KIP-848: its members heartbeat, the server assigns)
    and a share group `audit` (KIP-932), with an event of a kind the page has no shape for, and
    the classic group `shop` waiting for its initial rebalance delay on a manual clock."""
    seq: list[dict[str, Any]] = []

    def beat(t: int, conn: int, cid: int, client: str, api: str, group: str, member: str, epoch: int) -> None:
        common = {"conn": conn, "client": client, "api": api, "version": 0, "correlation_id": cid, "groups": [group]}
        seq.append(
            {
                "ts": t,
                "type": "request",
                "host": "127.0.0.1",
                **common,
                "body": {"group_id": group, "member_id": member, "member_epoch": epoch},
            }
        )
        seq.append(
            {
                "ts": t + 1,
                "type": "response",
                **common,
                "elapsed_ms": 0.3,
                "errors": [],
                "body": {"error_code": 0, "member_id": member, "member_epoch": epoch + 1},
            }
        )

    def transition(t: int, group: str, old: str, new: str, epoch: int, reason: str) -> None:
        seq.append(
            {
                "ts": t,
                "type": "transition",
                "group": group,
                "from": old,
                "to": new,
                "generation": epoch,
                "reason": reason,
            }
        )

    carol, dave, erin = (
        "carol-5e1f0c2a-0000-1111-2222-333344445555",
        "dave-9a8b7c6d-0000-1111-2222-333344445555",
        "erin-11aa22bb-0000-1111-2222-333344445555",
    )
    beat(t0 + 100, 21, 1, "carol", "ConsumerGroupHeartbeat", "orders-v2", carol, 0)
    transition(
        t0 + 101, "orders-v2", "Empty", "Assigning", 1, f"ConsumerGroupHeartbeat from client 'carol' member '{carol}'"
    )
    transition(t0 + 101, "orders-v2", "Assigning", "Reconciling", 1, "target assignment of epoch 1 computed")
    beat(t0 + 300, 22, 1, "dave", "ConsumerGroupHeartbeat", "orders-v2", dave, 0)
    transition(
        t0 + 600, "orders-v2", "Reconciling", "Stable", 2, f"ConsumerGroupHeartbeat from client 'dave' member '{dave}'"
    )
    beat(t0 + 200, 31, 1, "erin", "ShareGroupHeartbeat", "audit", erin, 0)
    transition(t0 + 201, "audit", "Empty", "Stable", 1, f"ShareGroupHeartbeat from client 'erin' member '{erin}'")
    seq.append(
        {
            "ts": t0 + 700,
            "type": "share_partition",
            "group": "audit",
            "topic": "orders",
            "partition": 0,
            "start_offset": 42,
        }
    )
    seq.append(
        {
            "ts": t0 + 21,
            "type": "waiting",
            "group": "shop",
            "waits": [{"timer": "initial rebalance delay", "member": None, "deadline_ms": t0 + 121, "advance_ms": 100}],
        }
    )
    return seq


def three_groups() -> list[dict[str, Any]]:
    """`shop` (classic), `orders-v2` (consumer) and `audit` (share), in the order they happened."""
    classic = [e for e in events() if "other" not in e.get("groups", ()) and e.get("group") != "other"]
    return sorted(classic + more_groups(), key=lambda e: e["ts"])
