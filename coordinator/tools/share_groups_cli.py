"""`kgc share-groups`: kafka-share-groups.sh over the Kafka protocol, against ours or any Kafka 4.1+.

Actions and layouts follow Kafka's ShareGroupCommand: --list [--state [S,...]], --describe --group
G [--offsets (the default) | --members | --state] [--verbose], --delete. --offsets shows each
initialized share-partition's start offset and, from Kafka 4.2 (KIP-1226), its lag; --members each
member's partitions (and with --verbose its member epoch); --state the coordinator, state and
member count (--verbose: the group and assignment epochs). Messages Kafka prints for an unknown or
empty group are printed too. `--output json` (ours) prints the same rows as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, TextIO

from coordinator.tools import share_groups_render as render
from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.kafka_connection import KafkaError, error_name
from coordinator.tools.share_admin import ShareGroupInfo, describe_share_group, list_share_groups, share_group_offsets


def add_parser(commands: Any) -> None:
    p = commands.add_parser("share-groups", help="list, describe and delete share groups (kafka-share-groups.sh)")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    actions = p.add_mutually_exclusive_group(required=True)
    for flag in ("--list", "--describe", "--delete"):
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
    p.add_argument("--output", choices=("table", "json"), default="table")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        with AdminClient(args.bootstrap_server, client_id="kgc-share-groups", timeout=args.timeout) as admin:
            return _Command(admin, args, out, err).run()
    except KafkaError as exc:
        print(f"kgc share-groups: the broker refused the command: {exc}", file=err)
        return 2
    except (ConnectionError, OSError) as exc:
        print(
            f"kgc share-groups: cannot reach {args.bootstrap_server}: {exc} (is a broker listening there? "
            "--bootstrap-server HOST:PORT)",
            file=err,
        )
        return 2
    except ValueError as exc:
        print(f"kgc share-groups: {exc}", file=err)
        return 2


class _Command:
    def __init__(self, admin: AdminClient, args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        self.admin, self.args, self.out, self.err = admin, args, out, err
        self.json = args.output == "json"

    def run(self) -> int:
        a = self.args
        if a.list:
            return self.list_groups()
        groups = [g for g, _ in list_share_groups(self.admin, [])] if a.all_groups else a.group
        if not groups:
            raise ValueError("--group (or --all-groups) is required")
        if a.delete:
            return self.delete(groups)
        return max(self.describe(g) for g in groups)

    def list_groups(self) -> int:
        states = [s.strip() for s in (self.args.state or "").split(",") if s.strip()]
        groups = list_share_groups(self.admin, states)
        if self.json:
            self._json([{"group": g, "state": s} for g, s in groups])
        elif self.args.state is None:
            for g, _ in groups:
                print(g, file=self.out)
        else:
            self.out.write(render.list_with_state(groups))
        return 0

    def describe(self, group: str) -> int:
        node, info = describe_share_group(self.admin, group)
        a = self.args
        if a.state is not None:
            if self.json:
                return self._json(dataclasses.asdict(info) | {"coordinator": dataclasses.asdict(node)})
            self._empty_or_dead(info, 1)
            coordinator = f"{node.host}:{node.port}  ({node.node_id})"
            self.out.write(render.state(info, coordinator, a.verbose))
            return 0
        if a.members:
            if self.json:
                return self._json([dataclasses.asdict(m) for m in info.members])
            if self._empty_or_dead(info, len(info.members)):
                self.out.write(render.members(info, a.verbose))
            return 0
        if info.state == "Dead":
            self._empty_or_dead(info, 0)
            return 0
        rows = share_group_offsets(self.admin, group)
        if self.json:
            return self._json([dataclasses.asdict(r) | {"group": group} for r in rows])
        self._empty_or_dead(info, len(rows))
        self.out.write(render.offsets(group, rows, a.verbose))
        return 0

    def _empty_or_dead(self, info: ShareGroupInfo, rows: int) -> bool:
        """Kafka maybePrintEmptyGroupState: whether the group's details are worth printing."""
        if info.state == "Dead":
            print(f"\nError: Share group '{info.group_id}' does not exist.", file=self.out)
        elif info.state == "Empty":
            print(f"\nShare group '{info.group_id}' has no active members.", file=self.err)
        return info.state != "Dead" and rows > 0

    def delete(self, groups: list[str]) -> int:
        results = self.admin.delete_groups(groups)
        failed = {g: code for g, code in results.items() if code}
        if self.json:
            return self._json({g: error_name(code) if code else "NONE" for g, code in results.items()})
        ok = [g for g in groups if g in results and not results[g]]
        if not failed:
            print(
                "Deletion of requested share groups (" + ", ".join(f"'{g}'" for g in ok) + ") was successful.",
                file=self.out,
            )
            return 0
        print("Deletion of some share groups failed:", file=self.out)
        for g, code in failed.items():
            print(f"* Group '{g}' could not be deleted due to: {error_name(code)}", file=self.out)
        if ok:
            print("\nThese share groups were deleted successfully: " + ", ".join(f"'{g}'" for g in ok), file=self.out)
        return 1

    def _json(self, value: Any) -> int:
        print(json.dumps(value, indent=2, sort_keys=True), file=self.out)
        return 0
