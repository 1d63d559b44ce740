"""`kgc topics`: kafka-topics.sh over the Kafka protocol, against ours or any Kafka.

--list [--exclude-internal], --describe [--topic T]... (Kafka 4's TopicCommand layout: a topic
line with id, counts and the topic's non-default configs, then one line per partition), --create
--topic T [--partitions N] [--replication-factor R] [--config k=v]... [--if-not-exists], --alter
--topic T --partitions N (CreatePartitions: a topic only grows), --delete --topic T [--if-exists].
Output follows TopicCommand ("Created topic T."); every failure is one line on stderr and exit 2
(Kafka's tool prints "Error while executing topic command" and exits 1).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from coordinator.cli_parser import COMMAND_FAILED
from coordinator.tools import admin_ops
from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.kafka_connection import KafkaError


def add_parser(commands: Any) -> None:
    p = commands.add_parser("topics", help="list, describe, create, grow and delete topics (kafka-topics.sh)")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    actions = p.add_mutually_exclusive_group(required=True)
    for flag in ("--list", "--describe", "--create", "--alter", "--delete"):
        actions.add_argument(flag, action="store_true")
    p.add_argument("--topic", action="append", default=[])
    p.add_argument("--partitions", type=int, help="--create: the count (default: the broker's); --alter: the new count")
    p.add_argument("--replication-factor", type=int, default=-1, help="default: the broker's")
    p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE", help="a topic config (--create)")
    p.add_argument("--exclude-internal", action="store_true")
    p.add_argument("--if-exists", action="store_true")
    p.add_argument("--if-not-exists", action="store_true")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")


class Refused(Exception):
    """A request the broker refused: the line to print."""


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        with AdminClient(args.bootstrap_server, client_id="kgc-topics", timeout=args.timeout) as admin:
            return _run(admin, args, out)
    except (Refused, ValueError) as exc:
        print(f"kgc topics: {exc}", file=err)
    except KafkaError as exc:
        print(f"kgc topics: the broker refused the command: {exc}", file=err)
    except (ConnectionError, OSError) as exc:
        print(
            f"kgc topics: cannot reach {args.bootstrap_server}: {exc} (is a broker listening there? "
            "--bootstrap-server HOST:PORT)",
            file=err,
        )
    return COMMAND_FAILED


def _one_topic(args: argparse.Namespace) -> str:
    if len(args.topic) != 1:
        raise ValueError("name one topic with --topic")
    return str(args.topic[0])


def _check(result: tuple[str, str | None] | None, what: str) -> None:
    if result is not None:
        name, message = result
        raise Refused(f"{what}: {name}" + (f": {message}" if message else ""))


def _run(admin: AdminClient, args: argparse.Namespace, out: TextIO) -> int:
    if args.list:
        for topic in admin_ops.describe_topics(admin, None):
            if not (args.exclude_internal and topic.internal):
                print(topic.name, file=out)
        return 0
    if args.describe:
        return _describe(admin, args, out)
    name = _one_topic(args)
    if args.create:
        configs = dict(_pair(c) for c in args.config)
        partitions = -1 if args.partitions is None else args.partitions
        result = admin_ops.create_topic(admin, name, partitions, args.replication_factor, configs)
        if result is not None and result[0] == "TOPIC_ALREADY_EXISTS" and args.if_not_exists:
            return 0
        _check(result, f"cannot create topic '{name}'")
        print(f"Created topic {name}.", file=out)
        return 0
    if args.alter:
        if args.partitions is None:
            raise ValueError("--alter needs --partitions N (the topic's new partition count)")
        result = admin_ops.create_partitions(admin, name, args.partitions)
        if result is not None and result[0] == "UNKNOWN_TOPIC_OR_PARTITION" and args.if_exists:
            return 0
        _check(result, f"cannot grow topic '{name}' to {args.partitions} partitions")
        return 0
    result = admin_ops.delete_topic(admin, name)
    if result is not None and result[0] == "UNKNOWN_TOPIC_OR_PARTITION" and args.if_exists:
        return 0
    _check(result, f"cannot delete topic '{name}'")
    return 0


def _describe(admin: AdminClient, args: argparse.Namespace, out: TextIO) -> int:
    topics = admin_ops.describe_topics(admin, args.topic or None)
    for topic in topics:
        if args.exclude_internal and topic.internal:
            continue
        configs = admin_ops.describe_configs(admin, admin_ops.TOPIC, topic.name)
        overrides = ",".join(
            f"{c.name}={c.value}" for c in configs if c.config_source == 1 and c.value is not None
        )  # DYNAMIC_TOPIC_CONFIG: what TopicCommand prints
        factor = len(topic.partitions[0].replicas) if topic.partitions else 0
        print(
            f"Topic: {topic.name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(topic.partitions)}\t"
            f"ReplicationFactor: {factor}\tConfigs: {overrides}",
            file=out,
        )
        for p in topic.partitions:
            leader = "none" if p.leader < 0 else str(p.leader)
            print(
                f"\tTopic: {topic.name}\tPartition: {p.partition}\tLeader: {leader}\t"
                f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}\t"
                "Elr: \tLastKnownElr: ",
                file=out,
            )
    return 0


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--config expects NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()
