"""`kgc delete-records`: kafka-delete-records.sh over the Kafka protocol.

--offset-json-file FILE holds Kafka's JSON, {"partitions": [{"topic": "t", "partition": 0,
"offset": 5}], "version": 1} (offset -1: the high watermark); or, ours, --topic T --partition P
--offset O for one partition. Each partition's request goes to its leader. Output follows
DeleteRecordsCommand ("partition: t-0\tlow_watermark: 5", or "error: NAME"); bad input and any
refused partition: one line on stderr (per partition) and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from coordinator.cli_parser import COMMAND_FAILED
from coordinator.tools import admin_ops
from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.kafka_connection import KafkaError


def add_parser(commands: Any) -> None:
    p = commands.add_parser("delete-records", help="move partitions' log start offsets (kafka-delete-records.sh)")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    p.add_argument("--offset-json-file", type=Path, metavar="FILE")
    p.add_argument("--topic")
    p.add_argument("--partition", type=int)
    p.add_argument("--offset", type=int, help="delete every record below it (-1: the high watermark)")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")


def read_offsets(args: argparse.Namespace) -> dict[tuple[str, int], int]:
    if args.offset_json_file is not None:
        if args.topic is not None or args.partition is not None or args.offset is not None:
            raise ValueError("use --offset-json-file or --topic/--partition/--offset, not both")
        try:
            raw = json.loads(args.offset_json_file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read {args.offset_json_file}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{args.offset_json_file} is not JSON: {exc}") from None
        try:
            entries = raw["partitions"]
            offsets = {(str(e["topic"]), int(e["partition"])): int(e["offset"]) for e in entries}
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f'{args.offset_json_file}: expected {{"partitions": [{{"topic": T, "partition": P, "offset": O}}], '
                '"version": 1}'
            ) from None
        if len(offsets) != len(entries):
            raise ValueError(f"{args.offset_json_file}: a partition is listed twice")
    else:
        if args.topic is None or args.partition is None or args.offset is None:
            raise ValueError("name the records with --offset-json-file FILE, or --topic T --partition P --offset O")
        offsets = {(args.topic, args.partition): args.offset}
    if not offsets:
        raise ValueError("no partitions to delete records from")
    return offsets


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        offsets = read_offsets(args)
        with AdminClient(args.bootstrap_server, client_id="kgc-delete-records", timeout=args.timeout) as admin:
            print("Executing records delete operation", file=out)
            results = admin_ops.delete_records(admin, offsets)
    except ValueError as exc:
        print(f"kgc delete-records: {exc}", file=err)
        return COMMAND_FAILED
    except KafkaError as exc:
        print(f"kgc delete-records: the broker refused the command: {exc}", file=err)
        return COMMAND_FAILED
    except (ConnectionError, OSError) as exc:
        print(f"kgc delete-records: cannot reach {args.bootstrap_server}: {exc}", file=err)
        return COMMAND_FAILED
    print("Records delete operation completed:", file=out)
    status = 0
    for (topic, partition), (low, error) in sorted(results.items()):
        if error is None:
            print(f"partition: {topic}-{partition}\tlow_watermark: {low}", file=out)
        else:
            print(f"partition: {topic}-{partition}\terror: {error[0]}", file=out)
            print(f"kgc delete-records: {topic}-{partition}: the broker refused it: {error[0]}", file=err)
            status = COMMAND_FAILED
    return status
