"""`kgc configs`: kafka-configs.sh for topics, brokers and groups, over the Kafka protocol.

--entity-type topics|brokers|groups, --entity-name N (or --entity-default for brokers: the
cluster-wide default); --describe [--all] prints ConfigCommand's layout ("Dynamic configs for
topic T are:", then `  name=value sensitive=false synonyms={SOURCE:name=value, ...}`; only what
is set on the entity unless --all; without --entity-name every entity of the type); --alter
--add-config k1=v1,k2=[a,b] --delete-config k3,k4 sends IncrementalAlterConfigs (SET and DELETE,
as Kafka 4's tool does) and prints "Completed updating config for topic T.". Every failure is one
line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from coordinator.cli_parser import COMMAND_FAILED
from coordinator.tools import admin_ops
from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.kafka_connection import KafkaError

TYPES = {
    "topics": (admin_ops.TOPIC, "topic"),
    "brokers": (admin_ops.BROKER, "broker"),
    "groups": (admin_ops.GROUP, "group"),
}
# ConfigCommand: what --describe shows without --all, per entity type (the entity's own level).
_OWN_SOURCE = {admin_ops.TOPIC: 1, admin_ops.BROKER: 2, admin_ops.GROUP: 8}
DEFAULT_BROKER_SOURCE = 3


def add_parser(commands: Any) -> None:
    p = commands.add_parser("configs", help="describe and change topic, broker and group configs (kafka-configs.sh)")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    actions = p.add_mutually_exclusive_group(required=True)
    actions.add_argument("--describe", action="store_true")
    actions.add_argument("--alter", action="store_true")
    p.add_argument("--entity-type", required=True, choices=sorted(TYPES))
    p.add_argument("--entity-name")
    p.add_argument("--entity-default", action="store_true", help="brokers: the cluster-wide default")
    p.add_argument("--all", action="store_true", help="--describe: every config, not only those set on the entity")
    p.add_argument("--add-config", metavar="K1=V1,K2=[A,B]")
    p.add_argument("--delete-config", metavar="K1,K2")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        rtype, label = TYPES[args.entity_type]
        if args.entity_default and rtype != admin_ops.BROKER:
            raise ValueError("--entity-default is for --entity-type brokers (the cluster-wide default)")
        if args.entity_default and args.entity_name is not None:
            raise ValueError("use --entity-name or --entity-default, not both")
        name = "" if args.entity_default else args.entity_name
        with AdminClient(args.bootstrap_server, client_id="kgc-configs", timeout=args.timeout) as admin:
            if args.describe:
                return _describe(admin, rtype, label, name, args.all, out)
            return _alter(admin, rtype, label, name, args, out, err)
    except ValueError as exc:
        print(f"kgc configs: {exc}", file=err)
    except KafkaError as exc:
        print(f"kgc configs: the broker refused the command: {exc}", file=err)
    except (ConnectionError, OSError) as exc:
        print(
            f"kgc configs: cannot reach {args.bootstrap_server}: {exc} (is a broker listening there? "
            "--bootstrap-server HOST:PORT)",
            file=err,
        )
    return COMMAND_FAILED


def _header(rtype: int, label: str, name: str, everything: bool) -> str:
    if rtype == admin_ops.BROKER and name == "":
        return "Default configs for brokers in the cluster are:"
    return f"{'All' if everything else 'Dynamic'} configs for {label} {name} are:"


def _describe(admin: AdminClient, rtype: int, label: str, name: str | None, everything: bool, out: TextIO) -> int:
    if name is None:
        if rtype == admin_ops.TOPIC:
            names = [t.name for t in admin_ops.describe_topics(admin, None)]
        elif rtype == admin_ops.BROKER:
            names = [str(b.node_id) for b in admin.brokers()]
        else:
            names = admin_ops.config_resources(admin, rtype)
    else:
        names = [name]
    for entity in names:
        wanted = DEFAULT_BROKER_SOURCE if rtype == admin_ops.BROKER and entity == "" else _OWN_SOURCE[rtype]
        print(_header(rtype, label, entity, everything), file=out)
        for c in admin_ops.describe_configs(admin, rtype, entity):
            if not everything and c.config_source != wanted:
                continue
            synonyms = ", ".join(f"{admin_ops.SOURCES.get(s.source, s.source)}:{s.name}={s.value}" for s in c.synonyms)
            value = "null" if c.value is None else c.value
            print(f"  {c.name}={value} sensitive={str(c.is_sensitive).lower()} synonyms={{{synonyms}}}", file=out)
    return 0


def _alter(
    admin: AdminClient, rtype: int, label: str, name: str | None, args: argparse.Namespace, out: TextIO, err: TextIO
) -> int:
    if name is None:
        raise ValueError("--alter needs --entity-name (or --entity-default for brokers)")
    add = parse_add_config(args.add_config or "")
    delete = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
    if not add and not delete:
        raise ValueError("--alter needs --add-config and/or --delete-config")
    both = sorted(set(add) & set(delete))
    if both:
        raise ValueError(f"a config cannot be both added and deleted: {', '.join(both)}")
    result = admin_ops.alter_configs(admin, rtype, name, add, delete)
    if result is not None:
        code, message = result
        print(f"kgc configs: the broker refused the change: {code}" + (f": {message}" if message else ""), file=err)
        return COMMAND_FAILED
    if rtype == admin_ops.BROKER and name == "":
        print("Completed updating default config for brokers in the cluster.", file=out)
    else:
        print(f"Completed updating config for {label} {name}.", file=out)
    return 0


def parse_add_config(text: str) -> dict[str, str]:
    """ConfigCommand.parseConfigsToBeAdded: k1=v1,k2=[a,b] (square brackets keep a list's commas)."""
    configs: dict[str, str] = {}
    depth, start, pieces = 0, 0, []
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        key, sep, value = piece.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--add-config expects K=V[,K=V...], got {piece!r}")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        configs[key.strip()] = value
    return configs
