"""The tables `kgc share-groups` prints, laid out as Kafka's ShareGroupCommand prints them.

Column widths, headers, "-" for a missing value and the leading blank line before each row are
Kafka's (listGroups with --state, printOffsets, printMembers, printStates); the offsets table
adds Kafka 4.2's LAG column (KIP-1226). Each function returns the text; nothing here talks to a
broker.
"""

from __future__ import annotations

from typing import Any

from coordinator.tools.share_admin import ShareGroupInfo, ShareMember, ShareOffset

MISSING = "-"  # ShareGroupCommand.MISSING_COLUMN_VALUE


def _v(value: Any) -> str:
    return MISSING if value is None else str(value)


def list_with_state(groups: list[tuple[str, str]]) -> str:
    width = max([15] + [len(g) for g, _ in groups])
    return "".join(f"{g:<{width}} {s}\n" for g, s in [("GROUP", "STATE"), *groups])


def offsets(group: str, rows: list[ShareOffset], verbose: bool) -> str:
    gw = max(15, len(group))
    tw = max([15] + [len(r.topic) for r in rows])
    if verbose:
        head = f"\n{'GROUP':<{gw}} {'TOPIC':<{tw}} {'PARTITION':<10} {'LEADER-EPOCH':<13} {'START-OFFSET':<13} LAG"
        lines = [
            f"\n{group:<{gw}} {r.topic:<{tw}} {r.partition:<10} {_v(r.leader_epoch):<13} {_v(r.start_offset):<13} "
            f"{_v(r.lag)}"
            for r in rows
        ]
    else:
        head = f"\n{'GROUP':<{gw}} {'TOPIC':<{tw}} {'PARTITION':<10} {'START-OFFSET':<13} LAG"
        lines = [
            f"\n{group:<{gw}} {r.topic:<{tw}} {r.partition:<10} {_v(r.start_offset):<13} {_v(r.lag)}" for r in rows
        ]
    return head + "".join(lines) + "\n"


def _assignment(member: ShareMember) -> str:
    """Kafka getAssignmentString: topic:p,p;topic:p, topics sorted, partitions ascending."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in member.partitions:
        by_topic.setdefault(topic, []).append(partition)
    return ";".join(f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in sorted(by_topic.items()))


def members(info: ShareGroupInfo, verbose: bool) -> str:
    rows = sorted(info.members, key=lambda m: m.member_id)
    gw = max(15, len(info.group_id))
    cw = max([15] + [len(m.member_id) for m in rows])
    hw = max([15] + [len(m.host) for m in rows])
    iw = max([15] + [len(m.client_id) for m in rows])

    def line(group: str, member: str, host: str, client: str, count: Any, epoch: Any, assignment: str) -> str:
        middle = f"{count!s:<12} {epoch!s:<13} " if verbose else f"{count!s:<12} "
        return f"\n{group:<{gw}} {member:<{cw}} {host:<{hw}} {client:<{iw}} {middle}{assignment}"

    out = [line("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT")]
    out += [
        line(info.group_id, m.member_id, m.host, m.client_id, len(m.partitions), m.member_epoch, _assignment(m))
        for m in rows
    ]
    return "".join(out) + "\n"


def state(info: ShareGroupInfo, coordinator: str, verbose: bool) -> str:
    gw, cw = max(15, len(info.group_id)), max(25, len(coordinator))
    if verbose:
        fmt = f"\n{{:<{gw}}} {{:<{cw}}} {{:<15}} {{:<12}} {{:<17}} {{}}"
        return (
            fmt.format("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS")
            + fmt.format(
                info.group_id, coordinator, info.state, info.group_epoch, info.assignment_epoch, len(info.members)
            )
            + "\n"
        )
    fmt = f"\n{{:<{gw}}} {{:<{cw}}} {{:<15}} {{}}"
    return (
        fmt.format("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS")
        + fmt.format(info.group_id, coordinator, info.state, len(info.members))
        + "\n"
    )
