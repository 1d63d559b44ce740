"""`kgc groups`: kafka-consumer-groups.sh over the Kafka protocol, against ours or any Kafka.

Actions and output layouts follow Kafka's ConsumerGroupCommand: --list [--state [S,...]],
--describe --group G [--offsets | --members [--verbose] | --state], --delete, --delete-offsets,
--reset-offsets (dry run unless --execute; refused unless the group is Empty or Dead). Messages
Kafka prints to stderr (rebalancing, no active members) go to stderr here too. `--output json`
(ours) prints the same rows as JSON. Collection lives here; tables are in groups_render.py.
KIP-848 consumer groups are described with ConsumerGroupDescribe, as Kafka 4.1's tool does:
--members --verbose adds each member's epoch, current and target assignment (and UPGRADED when
classic and consumer-protocol members share the group), --state --verbose the group epoch and
target assignment epoch; Assigning and Reconciling count as rebalancing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from typing import Any, TextIO

from coordinator.tools import groups_render as render
from coordinator.tools.kafka_client import EARLIEST, LATEST, AdminClient, MemberInfo
from coordinator.tools.kafka_connection import KafkaError, error_name

RESET_SCENARIOS = ("to_earliest", "to_latest", "to_offset", "shift_by", "to_datetime", "by_duration")
INACTIVE = ("Empty", "Dead")


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "groups", help="list, describe, delete and reset consumer groups (kafka-consumer-groups.sh)"
    )
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    actions = p.add_mutually_exclusive_group(required=True)
    for flag in ("--list", "--describe", "--delete", "--delete-offsets", "--reset-offsets"):
        actions.add_argument(flag, action="store_true")
    p.add_argument("--group", action="append", default=[])
    p.add_argument("--all-groups", action="store_true")
    p.add_argument(
        "--state",
        nargs="?",
        const="",
        default=None,
        help="--list: show (and filter by) state; --describe: the state view",
    )
    p.add_argument("--members", action="store_true")
    p.add_argument("--offsets", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,...]")
    p.add_argument("--all-topics", action="store_true")
    p.add_argument("--to-earliest", action="store_true")
    p.add_argument("--to-latest", action="store_true")
    p.add_argument("--to-offset", type=int)
    p.add_argument("--shift-by", type=int)
    p.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss")
    p.add_argument("--by-duration", metavar="PnDTnHnMnS")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--execute", action="store_true")
    p.add_argument("--output", choices=("table", "json"), default="table")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        with AdminClient(args.bootstrap_server, timeout=args.timeout) as admin:
            return _Command(admin, args, out, err).run()
    except KafkaError as exc:
        print(f"kgc groups: the broker refused the command: {exc}", file=err)
        return 2
    except (ConnectionError, OSError) as exc:
        # One line and exit 2 like every kgc command (Kafka's tool prints a blank line and
        # "Error: Executing consumer group command failed due to ..." on stdout, exit 1).
        print(
            f"kgc groups: cannot reach {args.bootstrap_server}: {exc} (is a broker listening there? "
            "--bootstrap-server HOST:PORT)",
            file=err,
        )
        return 2
    except ValueError as exc:  # bad arguments found late (topic specs, dates)
        print(f"kgc groups: {exc}", file=err)
        return 2


class _Command:
    def __init__(self, admin: AdminClient, args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        self.admin, self.args, self.out, self.err = admin, args, out, err
        self.json = args.output == "json"

    def run(self) -> int:
        a = self.args
        if a.list:
            return self.list_groups()
        groups = self.admin_groups() if a.all_groups else a.group
        if not groups:
            raise ValueError("--group (or --all-groups) is required")
        if a.describe:
            return max(self.describe(g) for g in groups)
        if a.delete:
            return self.delete(groups)
        if a.delete_offsets:
            return self.delete_offsets(groups[0])
        return max(self.reset(g) for g in groups)

    def admin_groups(self) -> list[str]:
        return sorted(g.group_id for g in self.admin.list_groups([]) if g.protocol_type in ("consumer", ""))

    # -- list -------------------------------------------------------------------------------
    def list_groups(self) -> int:
        states = [s.strip() for s in (self.args.state or "").split(",") if s.strip()]
        groups = sorted(
            (g for g in self.admin.list_groups(states) if g.protocol_type in ("consumer", "")), key=lambda g: g.group_id
        )
        if self.json:
            self._json([{"group": g.group_id, "state": g.group_state} for g in groups])
        elif self.args.state is None:
            for g in groups:
                print(g.group_id, file=self.out)
        else:
            self.out.write(render.list_with_state([(g.group_id, g.group_state) for g in groups]))
        return 0

    # -- describe ---------------------------------------------------------------------------
    def describe(self, group: str) -> int:
        node, desc = self.admin.describe_group(group)
        members = [_member(m, desc.target_epoch) for m in desc.members]
        a = self.args
        if a.members:
            rows = [{"group": group, **m} for m in members]
            table = (
                (lambda: render.consumer_members(rows, a.verbose))
                if desc.consumer
                else (lambda: render.members(rows, a.verbose))
            )
            return self._show(group, desc.state, rows, table)
        if a.state is not None and not a.offsets:
            row = {
                "group": group,
                "coordinator": f"{node.host}:{node.port}  ({node.node_id})",
                "assignment_strategy": desc.assignment_strategy,
                "state": desc.state,
                "members": len(members),
                "group_epoch": desc.group_epoch,
                "target_epoch": desc.target_epoch,
            }
            return self._show(group, desc.state, [row], lambda: render.state(row, a.verbose), always=True)
        rows = self.offset_rows(group, desc.state, members)
        return self._show(group, desc.state, rows, lambda: render.offsets(rows))

    def offset_rows(self, group: str, state: str, members: list[dict[str, Any]]) -> list[dict[str, Any]]:
        committed = {} if state == "Dead" else self.admin.committed(group)
        owners: list[tuple[dict[str, Any], list[tuple[str, int]]]] = []
        assigned: set[tuple[str, int]] = set()
        # ConsumerGroupCommand: members with partitions, most partitions first; then the
        # committed partitions nobody owns, with "-" for the consumer columns.
        for m in sorted((m for m in members if m["assignment"]), key=lambda m: -len(m["assignment"])):
            tps = sorted(m["assignment"], key=lambda tp: (tp[1], tp[0]))
            owners.append((m, tps))
            assigned.update(tps)
        orphans = sorted(tp for tp in committed if tp not in assigned)
        if orphans:
            owners.append(({"consumer_id": "-", "host": "-", "client_id": "-"}, orphans))
        every = [tp for _, tps in owners for tp in tps]
        ends = self.admin.list_offsets(every, LATEST) if every else {}
        rows = []
        for m, tps in owners:
            for topic, partition in tps:
                current, end = committed.get((topic, partition)), ends.get((topic, partition))
                lag = end - current if current is not None and end is not None else None
                rows.append(
                    {
                        "group": group,
                        "topic": topic,
                        "partition": partition,
                        "current_offset": current,
                        "log_end_offset": end,
                        "lag": lag,
                        "consumer_id": m["consumer_id"],
                        "host": m["host"],
                        "client_id": m["client_id"],
                    }
                )
        return rows

    def _show(self, group: str, state: str, rows: list[dict[str, Any]], table: Any, always: bool = False) -> int:
        if self.json:
            self._json({"group": group, "state": state, "rows": rows})
            return 0 if state != "Dead" else 1
        # ConsumerGroupCommand.shouldPrintMemberState
        if state == "Dead":
            print(f"\nError: Consumer group '{group}' does not exist.", file=self.out)
            return 1
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=self.err)
        elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=self.err)
        if rows or always:
            self.out.write(table())
        return 0

    # -- delete -----------------------------------------------------------------------------
    def delete(self, groups: list[str]) -> int:
        results = self.admin.delete_groups(groups)
        if self.json:
            self._json({g: error_name(code) for g, code in results.items()})
        else:
            self.out.write(render.deleted_groups(results))
        return 0 if not any(results.values()) else 1

    def delete_offsets(self, group: str) -> int:
        if not self.args.topic:
            raise ValueError("--delete-offsets needs --topic")
        partitions = self.topic_partitions(self.args.topic)
        top, per = self.admin.delete_offsets(group, partitions)
        if self.json:
            self._json(
                {
                    "error": error_name(top),
                    "partitions": [
                        {"topic": t, "partition": p, "error": error_name(e)} for (t, p), e in sorted(per.items())
                    ],
                }
            )
        else:
            self.out.write(render.deleted_offsets(group, self.args.topic, top, per))
        return 0 if not top and not any(per.values()) else 1

    # -- reset ------------------------------------------------------------------------------
    def reset(self, group: str) -> int:
        a = self.args
        chosen = [s for s in RESET_SCENARIOS if getattr(a, s) not in (None, False)]
        if len(chosen) != 1:
            raise ValueError(
                "--reset-offsets needs exactly one of --to-earliest, --to-latest, "
                "--to-offset, --shift-by, --to-datetime, --by-duration"
            )
        if not a.all_topics and not a.topic:
            raise ValueError("One of the reset scopes should be defined: --all-topics, --topic.")
        _, desc = self.admin.describe_group(group)
        if desc.state not in INACTIVE:
            print(
                f"\nError: Assignments can only be reset if the group '{group}' is inactive, but the "
                f"current state is {desc.state}.",
                file=self.out,
            )
            return 1
        committed = self.admin.committed(group)
        partitions = sorted(committed) if a.all_topics else self.topic_partitions(a.topic)
        offsets = self.plan(chosen[0], partitions, committed)
        if a.execute and not a.dry_run and offsets:
            errors = self.admin.commit(group, offsets)
            failed = {tp: e for tp, e in errors.items() if e}
            if failed:
                for (t, p), e in sorted(failed.items()):
                    print(f"\nError: {t}-{p}: {error_name(e)}", file=self.out)
                return 1
        if self.json:
            self._json(
                [{"group": group, "topic": t, "partition": p, "new_offset": o} for (t, p), o in sorted(offsets.items())]
            )
        else:
            self.out.write(render.reset_plan(group, offsets))
        return 0

    def plan(
        self, scenario: str, partitions: list[tuple[str, int]], committed: dict[tuple[str, int], int]
    ) -> dict[tuple[str, int], int]:
        """ConsumerGroupCommand.prepareOffsetsToReset."""
        a = self.args
        if not partitions:
            return {}
        if scenario == "to_earliest":
            return self.admin.list_offsets(partitions, EARLIEST)
        if scenario == "to_latest":
            return self.admin.list_offsets(partitions, LATEST)
        if scenario == "to_offset":
            return self.clamp({tp: a.to_offset for tp in partitions})
        if scenario == "shift_by":
            missing = [tp for tp in partitions if tp not in committed]
            if missing:
                t, p = missing[0]
                raise ValueError(
                    f"Cannot shift offset for partition {t}-{p} since there is no current committed offset"
                )
            return self.clamp({tp: committed[tp] + a.shift_by for tp in partitions})
        when = (
            parse_datetime(a.to_datetime)
            if scenario == "to_datetime"
            else int(time.time() * 1000) - parse_duration(a.by_duration)
        )
        found = self.admin.list_offsets(partitions, when)
        empty = [tp for tp, o in found.items() if o < 0]
        for t, p in empty:
            print(f"\nWarn: Partition {p} from topic {t} is empty. Falling back to latest known offset.", file=self.out)
        if empty:
            found.update(self.admin.list_offsets(empty, LATEST))
        return found

    def clamp(self, wanted: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """checkOffsetsRange: keep each new offset within [log start, log end]."""
        starts = self.admin.list_offsets(list(wanted), EARLIEST)
        ends = self.admin.list_offsets(list(wanted), LATEST)
        return {tp: min(max(o, starts[tp]), ends[tp]) for tp, o in wanted.items()}

    def topic_partitions(self, specs: list[str]) -> list[tuple[str, int]]:
        """`topic` (every partition, from Metadata) or `topic:0,1`."""
        out: list[tuple[str, int]] = []
        whole = [s for s in specs if ":" not in s]
        known = self.admin.partitions(whole) if whole else {}
        for spec in specs:
            topic, sep, parts = spec.partition(":")
            if sep:
                try:
                    out.extend((topic, int(p)) for p in parts.split(","))
                except ValueError:
                    raise ValueError(f"Invalid topic arg '{spec}', expected topic name and partitions") from None
            else:
                out.extend((topic, p) for p in sorted(known.get(topic, {})))
        return out

    def _json(self, value: Any) -> None:
        self.out.write(json.dumps(value, indent=2) + "\n")


def _member(m: MemberInfo, target_epoch: int | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "consumer_id": m.member_id,
        "group_instance_id": m.group_instance_id or "",
        "host": m.host,
        "client_id": m.client_id,
        "assignment": m.assignment,
    }
    if m.target is not None:  # a KIP-848 consumer group's member
        row.update(
            current_epoch=m.member_epoch,
            target_epoch=target_epoch,
            target_assignment=m.target,
            upgraded=m.upgraded,
            member_state=_member_state(m, target_epoch),
        )
    return row


def _member_state(m: MemberInfo, target_epoch: int | None) -> str:
    """The member's reconciliation as its assignments show it (ConsumerGroupDescribe carries no
    state): revoking while it still holds partitions outside its target, waiting while some of its
    target is still another's, stable once at the target epoch with its target."""
    current, target = set(m.assignment), set(m.target or [])
    if current - target:
        return "UNREVOKED_PARTITIONS"
    if target - current:
        return "UNRELEASED_PARTITIONS"
    return "STABLE" if m.member_epoch == target_epoch else "RECONCILING"


def parse_datetime(text: str) -> int:
    """Kafka Utils.getDateTime: ISO local date-time, optional zone; no zone means local time."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(value.timestamp() * 1000)


_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$", re.I)


def parse_duration(text: str) -> int:
    """java.time.Duration.parse for the PnDTnHnMnS form, in milliseconds."""
    m = _DURATION.match(text or "")
    if not m or text.upper() in ("P", "PT"):
        raise ValueError(f"invalid duration {text!r}; expected PnDTnHnMnS")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000)
