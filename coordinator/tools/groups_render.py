"""The tables `kgc groups` prints, laid out as Kafka's ConsumerGroupCommand prints them.

Column widths, headers, the "-" for a missing value and the leading blank line of each table are
Kafka's (printOffsets, printMembers, printStates, printOffsetsToReset, listGroups with --state,
deleteGroups, deleteOffsets). Each function returns the text; nothing here talks to a broker.
"""

from __future__ import annotations

from typing import Any

MISSING = "-"  # ConsumerGroupCommand.MISSING_COLUMN_VALUE


def _v(value: Any) -> str:
    return MISSING if value is None else str(value)


def list_with_state(groups: list[tuple[str, str]]) -> str:
    width = max([15] + [len(g) for g, _ in groups]) + 10
    lines = [f"{'GROUP':<{width}} {'STATE':<20}"]
    lines += [f"{g:<{width}} {s:<20}" for g, s in groups]
    return "\n".join(lines) + "\n"


def offsets(rows: list[dict[str, Any]]) -> str:
    gw = max([15] + [len(r["group"]) for r in rows])
    tw = max([15] + [len(_v(r["topic"])) for r in rows])
    cw = max([15] + [len(_v(r["consumer_id"])) for r in rows])
    hw = max([15] + [len(_v(r["host"])) for r in rows])

    def line(*c: Any) -> str:
        return f"{c[0]:<{gw}} {c[1]:<{tw}} {c[2]:<10} {c[3]:<15} {c[4]:<15} {c[5]:<15} {c[6]:<{cw}} {c[7]:<{hw}} {c[8]}"

    out = [
        "",
        line(
            "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"
        ),
    ]
    out += [
        line(
            r["group"],
            _v(r["topic"]),
            _v(r["partition"]),
            _v(r["current_offset"]),
            _v(r["log_end_offset"]),
            _v(r["lag"]),
            _v(r["consumer_id"]),
            _v(r["host"]),
            _v(r["client_id"]),
        )
        for r in rows
    ]
    return "\n".join(out) + "\n"


def assignment_text(partitions: list[tuple[str, int]]) -> str:
    """`topic(0,1), other(2)` as printMembers --verbose shows a member's assignment."""
    if not partitions:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    return ", ".join(sorted(f"{t}({','.join(str(p) for p in sorted(ps))})" for t, ps in by_topic.items()))


def members(rows: list[dict[str, Any]], verbose: bool) -> str:
    gw = max([15] + [len(r["group"]) for r in rows])
    cw = max([15] + [len(r["consumer_id"]) for r in rows])
    iw = max([17] + [len(r["group_instance_id"]) for r in rows])
    hw = max([15] + [len(r["host"]) for r in rows])
    lw = max([15] + [len(r["client_id"]) for r in rows])
    with_instance = any(r["group_instance_id"] for r in rows)

    def line(group: str, cid: str, iid: str, host: str, client: str, n: Any, tail: str) -> str:
        mid = f"{iid:<{iw}} " if with_instance else ""
        return f"{group:<{gw}} {cid:<{cw}} {mid}{host:<{hw}} {client:<{lw}} {str(n):<15} {tail}".rstrip()

    out = [
        "",
        line(
            "GROUP",
            "CONSUMER-ID",
            "GROUP-INSTANCE-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "ASSIGNMENT" if verbose else "",
        ),
    ]
    out += [
        line(
            r["group"],
            r["consumer_id"],
            r["group_instance_id"],
            r["host"],
            r["client_id"],
            len(r["assignment"]),
            assignment_text(r["assignment"]) if verbose else "",
        )
        for r in rows
    ]
    return "\n".join(out) + "\n"


def state(row: dict[str, Any], verbose: bool = False) -> str:
    width = max(25, len(row["coordinator"]))
    # Kafka sizes the first column by the coordinator text (printStates); so do we.
    if verbose:  # Kafka 4.1: the group epoch and the target assignment epoch (consumer groups)
        fmt = f"{{:<{width}}} {{:<25}} {{:<20}} {{:<20}} {{:<15}} {{:<25}} {{}}"
        return (
            "\n".join(
                [
                    "",
                    fmt.format(
                        "GROUP",
                        "COORDINATOR (ID)",
                        "ASSIGNMENT-STRATEGY",
                        "STATE",
                        "GROUP-EPOCH",
                        "TARGET-ASSIGNMENT-EPOCH",
                        "#MEMBERS",
                    ),
                    fmt.format(
                        row["group"],
                        row["coordinator"],
                        row["assignment_strategy"] or MISSING,
                        row["state"],
                        _v(row.get("group_epoch")),
                        _v(row.get("target_epoch")),
                        row["members"],
                    ),
                ]
            )
            + "\n"
        )
    fmt = f"{{:<{width}}} {{:<25}} {{:<20}} {{:<15}} {{}}"
    return (
        "\n".join(
            [
                "",
                fmt.format("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
                fmt.format(row["group"], row["coordinator"], row["assignment_strategy"], row["state"], row["members"]),
            ]
        )
        + "\n"
    )


def _kip848_assignment(partitions: list[tuple[str, int]]) -> str:
    """Kafka 4.1 getAssignmentString: `topic:0,1;other:2`, topics sorted."""
    if not partitions:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    return ";".join(sorted(f"{t}:{','.join(str(p) for p in sorted(ps))}" for t, ps in by_topic.items()))


def consumer_members(rows: list[dict[str, Any]], verbose: bool) -> str:
    """Kafka 4.1 printMembers for a KIP-848 consumer group: with --verbose, each member's epoch,
    current and target assignment, and UPGRADED when classic and consumer-protocol members mix."""
    gw = max([15] + [len(r["group"]) for r in rows])
    cw = max([15] + [len(r["consumer_id"]) for r in rows])
    iw = max([17] + [len(r["group_instance_id"]) for r in rows])
    hw = max([15] + [len(r["host"]) for r in rows])
    lw = max([15] + [len(r["client_id"]) for r in rows])
    aw = max([20] + [len(_kip848_assignment(r["assignment"])) for r in rows])
    tw = max([20] + [len(_kip848_assignment(r["target_assignment"])) for r in rows])
    with_instance = any(r["group_instance_id"] for r in rows)
    mixed = any(r["upgraded"] is True for r in rows) and any(r["upgraded"] is False for r in rows)

    def head(group: str, cid: str, iid: str, host: str, client: str, n: Any) -> str:
        mid = f"{iid:<{iw}} " if with_instance else ""
        return f"{group:<{gw}} {cid:<{cw}} {mid}{host:<{hw}} {client:<{lw}} {str(n):<15} "

    def tail(epoch: Any, current: str, target_epoch: Any, target: str, upgraded: Any) -> str:
        if not verbose:
            return ""
        text = f"{str(epoch):<15} {current:<{aw}} {str(target_epoch):<15} {target:<{tw}}"
        return text + (f" {upgraded}" if mixed else "")

    header = head("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    out = [
        "",
        (
            header + tail("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT", "UPGRADED")
        ).rstrip(),
    ]
    for r in rows:
        upgraded = MISSING if r["upgraded"] is None else str(r["upgraded"]).lower()
        out.append(
            (
                head(
                    r["group"],
                    r["consumer_id"],
                    r["group_instance_id"],
                    r["host"],
                    r["client_id"],
                    len(r["assignment"]),
                )
                + tail(
                    _v(r["current_epoch"]),
                    _kip848_assignment(r["assignment"]),
                    _v(r["target_epoch"]),
                    _kip848_assignment(r["target_assignment"]),
                    upgraded,
                )
            ).rstrip()
        )
    return "\n".join(out) + "\n"


def reset_plan(group: str, offsets: dict[tuple[str, int], int]) -> str:
    if not offsets:
        return ""
    fmt = "{:<30} {:<30} {:<10} {:<15}"
    out = ["", fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    out += [fmt.format(group, t, p, o) for (t, p), o in sorted(offsets.items())]
    return "\n".join(out) + "\n"


def deleted_groups(results: dict[str, int]) -> str:
    from coordinator.tools.kafka_connection import error_name

    ok = [g for g, e in results.items() if not e]
    failed = {g: e for g, e in results.items() if e}
    if not failed:
        return "Deletion of requested consumer groups (" + ", ".join(f"'{g}'" for g in ok) + ") was successful.\n"
    lines = ["", "Error: Deletion of some consumer groups failed:"]
    lines += [f"* Group '{g}' could not be deleted due to: {error_name(e)}" for g, e in failed.items()]
    if ok:
        lines.append("These consumer groups were deleted successfully: " + ", ".join(f"'{g}'" for g in ok))
    return "\n".join(lines) + "\n"


def deleted_offsets(group: str, topics: list[str], top: int, per: dict[tuple[str, int], int]) -> str:
    from coordinator.tools.kafka_connection import error_name

    messages = {
        0: f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}",
        24: f"\nError: '{group}' is not valid.",
        69: f"\nError: '{group}' does not exist.",
        68: f"\nError: Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
    }
    head = messages.get(top)
    if head is None:
        head = (
            "\nError: Encounter some partition level error, see the follow-up details:"
            if top in (3, 86)
            else f"\nError: Encounter some unknown error: {error_name(top)}"
        )
    fmt = "{:<30} {:<15} {:<15}"
    out = [head, "", fmt.format("TOPIC", "PARTITION", "STATUS")]
    out += [
        fmt.format(t, p, "Successful" if not e else f"Error: :{error_name(e)}") for (t, p), e in sorted(per.items())
    ]
    return "\n".join(out) + "\n"
