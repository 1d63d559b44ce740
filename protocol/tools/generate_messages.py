"""Generate protocol/messages/<api>.py from Kafka's message JSON definitions.

Usage:  python -m protocol.tools.generate_messages [--json-dir DIR] [--check]

The Kafka 4.3 JSON files (Apache-2.0) come from kafka-python's vendored copy
(`kafka/protocol/schemas/resources`, a test-only dependency here); the APIs kafka-python does not
vendor (ConsumerGroupHeartbeat/Describe, the share-group APIs at Kafka 4.2's versions, client
telemetry) are in protocol/tools/schemas/.
The generated modules import nothing but `dataclasses`, `typing` and protocol/, and are committed,
so the server never needs this script or kafka-python. `--check` exits non-zero if a module is
stale.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from pathlib import Path

from protocol.tools.class_source import Attr, Json, StructDef, dataclass_source, import_lines

HERE = Path(__file__).resolve().parent
PROTOCOL_DIR = HERE.parent
MESSAGES_DIR = PROTOCOL_DIR / "messages"
EXTRA_JSON_DIR = HERE / "schemas"

# API name (JSON "name" minus Request/Response) -> module name; the order is the API key order.
APIS: dict[str, str] = {
    "Produce": "produce",
    "Fetch": "fetch",
    "ListOffsets": "list_offsets",
    "Metadata": "metadata",
    "OffsetCommit": "offset_commit",
    "OffsetFetch": "offset_fetch",
    "FindCoordinator": "find_coordinator",
    "JoinGroup": "join_group",
    "Heartbeat": "heartbeat",
    "LeaveGroup": "leave_group",
    "SyncGroup": "sync_group",
    "DescribeGroups": "describe_groups",
    "ListGroups": "list_groups",
    "ApiVersions": "api_versions",
    "CreateTopics": "create_topics",
    "DeleteTopics": "delete_topics",
    "InitProducerId": "init_producer_id",
    "OffsetForLeaderEpoch": "offset_for_leader_epoch",
    "DeleteGroups": "delete_groups",
    "OffsetDelete": "offset_delete",
    "AddPartitionsToTxn": "add_partitions_to_txn",
    "AddOffsetsToTxn": "add_offsets_to_txn",
    "EndTxn": "end_txn",
    "WriteTxnMarkers": "write_txn_markers",
    "TxnOffsetCommit": "txn_offset_commit",
    "DescribeCluster": "describe_cluster",
    "DescribeProducers": "describe_producers",
    "DescribeTransactions": "describe_transactions",
    "ListTransactions": "list_transactions",
    "ConsumerGroupHeartbeat": "consumer_group_heartbeat",
    "ConsumerGroupDescribe": "consumer_group_describe",
    # admin
    "DeleteRecords": "delete_records",
    "DescribeConfigs": "describe_configs",
    "AlterConfigs": "alter_configs",
    "DescribeLogDirs": "describe_log_dirs",
    "CreatePartitions": "create_partitions",
    "ElectLeaders": "elect_leaders",
    "IncrementalAlterConfigs": "incremental_alter_configs",
    "ListConfigResources": "list_config_resources",
    "DescribeTopicPartitions": "describe_topic_partitions",
    # security
    "SaslHandshake": "sasl_handshake",
    "SaslAuthenticate": "sasl_authenticate",
    "DescribeAcls": "describe_acls",
    "CreateAcls": "create_acls",
    "DeleteAcls": "delete_acls",
    "DescribeUserScramCredentials": "describe_user_scram_credentials",
    "AlterUserScramCredentials": "alter_user_scram_credentials",
    # client telemetry (KIP-714)
    "GetTelemetrySubscriptions": "get_telemetry_subscriptions",
    "PushTelemetry": "push_telemetry",
    # share groups (KIP-932)
    "ShareGroupHeartbeat": "share_group_heartbeat",
    "ShareGroupDescribe": "share_group_describe",
    "ShareFetch": "share_fetch",
    "ShareAcknowledge": "share_acknowledge",
    "DescribeShareGroupOffsets": "describe_share_group_offsets",
    "AlterShareGroupOffsets": "alter_share_group_offsets",
    "DeleteShareGroupOffsets": "delete_share_group_offsets",
}

HINTS = {
    "int8": "int",
    "int16": "int",
    "uint16": "int",
    "int32": "int",
    "uint32": "int",
    "int64": "int",
    "float64": "float",
    "bool": "bool",
    "string": "str",
    "bytes": "bytes",
    "records": "bytes",
    "uuid": "uuid.UUID",
}
ZEROS = {
    "int8": "0",
    "int16": "0",
    "uint16": "0",
    "int32": "0",
    "uint32": "0",
    "int64": "0",
    "float64": "0.0",
    "bool": "False",
    "string": '""',
    "bytes": 'b""',
    "records": "None",
    "uuid": "ZERO_UUID",
}
_COMMENT_LINE = re.compile(r"^\s*//.*$", re.MULTILINE)


def snake(name: str) -> str:
    """Kafka JSON name -> Python attribute (the rule kafka-python uses: GroupId -> group_id)."""
    out = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    assert out.isidentifier() and not keyword.iskeyword(out), name
    return out


def default_json_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("kafka.protocol.schemas.resources")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("kafka-python is not installed; pass --json-dir")
    return Path(next(iter(spec.submodule_search_locations)))


def load(path: Path) -> tuple[Json, list[str]]:
    text = path.read_text()
    # comment lines between the license block and "fields" carry the version history
    history: list[str] = []
    body_started = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("{"):
            body_started = True
        if body_started and s.startswith('"fields"'):
            break
        if body_started and s.startswith("//"):
            history.append(s[2:].strip())
    data: Json = json.loads(_COMMENT_LINE.sub("", text))
    return data, history


def py_default(f: Json, struct_name: str | None) -> str:
    """Python source for the dataclass default of JSON field `f`."""
    t: str = f["type"]
    d = f.get("default")
    if t.startswith("[]"):
        return "None" if d == "null" else "[]"
    if struct_name is not None:
        return "None" if d == "null" else struct_name + "()"
    if d is None or d == "":
        return '""' if (t == "string" and d == "") else ZEROS[t]
    if d == "null":
        return "None"
    if t == "bool":
        return {"true": "True", "false": "False"}[str(d).lower()]
    if t in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return str(int(str(d), 0))
    if t == "float64":
        return repr(float(d))
    if t == "string":
        return repr(str(d))
    raise ValueError(f"unsupported default {d!r} for {t}")


class ModuleBuilder:
    def __init__(self, api: str) -> None:
        self.api = api
        self.structs: dict[str, StructDef] = {}  # class name -> def, in definition order
        self.order: list[str] = []

    def hint(self, f: Json, cls: str | None) -> str:
        t: str = f["type"]
        nullable = "nullableVersions" in f or f.get("default") == "null" or t == "records"
        if t.startswith("[]"):
            inner = t[2:]
            h = f"list[{cls if cls else HINTS[inner]}]"
        else:
            h = cls if cls else HINTS[t]
        return h + " | None" if nullable else h

    def register(self, msg_name: str, type_name: str, fields: list[Json], common: dict[str, list[Json]]) -> str:
        """Register the struct class for JSON struct type `type_name`; return its class name."""
        attrs = self.attributes(msg_name, fields, common)
        name = type_name
        existing = self.structs.get(name)
        if existing is not None and existing.attrs != attrs:
            name = msg_name + type_name
            existing = self.structs.get(name)
            assert existing is None or existing.attrs == attrs, name
        if existing is None:
            existing = self.structs[name] = StructDef(name, fields, attrs=attrs)
            self.order.append(name)
        if msg_name not in existing.owners:
            existing.owners.append(msg_name)
        return name

    def struct_class(self, msg_name: str, f: Json, common: dict[str, list[Json]]) -> str | None:
        t: str = f["type"]
        inner = t.removeprefix("[]")
        if inner in HINTS:
            return None
        return self.register(msg_name, inner, struct_fields(f, common), common)

    def attributes(self, msg_name: str, fields: list[Json], common: dict[str, list[Json]]) -> list[Attr]:
        out: list[Attr] = []
        for f in fields:
            check_field(f)
            cls = self.struct_class(msg_name, f, common)
            out.append((snake(f["name"]), self.hint(f, cls), py_default(f, cls), f.get("about", "")))
        return out

    def table(self, msg_name: str, fields: list[Json], common: dict[str, list[Json]], indent: int) -> list[str]:
        pad = " " * indent
        lines: list[str] = []
        for f in fields:
            cls = self.struct_class(msg_name, f, common)
            args = [repr(snake(f["name"])), repr(f["type"]), repr(f["versions"])]
            if "nullableVersions" in f:
                args.append(f"nullable={f['nullableVersions']!r}")
            d = py_default(f, cls)
            zero = "[]" if f["type"].startswith("[]") else (cls + "()" if cls else ZEROS[f["type"]])
            if d != zero:
                args.append(f"default={d}")
            if "tag" in f:
                args.append(f"tag={f['tag']}")
                args.append(f"tagged={f['taggedVersions']!r}")
            if cls is None:
                lines.append(f"{pad}F({', '.join(args)}),")
            else:
                sub = self.table(msg_name, struct_fields(f, common), common, indent + 4)
                lines.append(f"{pad}F({', '.join(args)}, struct=Struct({cls}, (")
                lines.extend(sub)
                lines.append(f"{pad}))),")
        return lines


def struct_fields(f: Json, common: dict[str, list[Json]]) -> list[Json]:
    """The fields of struct-typed field `f`: inline, or a commonStruct named by its type."""
    t: str = f["type"]
    inner = t.removeprefix("[]")
    fields: list[Json] | None = f.get("fields") or common.get(inner)
    assert fields is not None, f"no fields for struct {inner}"
    return fields


def check_field(f: Json) -> None:
    known = {
        "name",
        "type",
        "versions",
        "about",
        "ignorable",
        "default",
        "fields",
        "entityType",
        "nullableVersions",
        "mapKey",
        "taggedVersions",
        "tag",
        "zeroCopy",
    }
    unknown = set(f) - known
    assert not unknown, (f["name"], unknown)
    if "tag" in f:
        assert f["taggedVersions"] == f["versions"], f["name"]


def generate(api: str, json_dir: Path) -> str:
    builder = ModuleBuilder(api)
    msgs: list[tuple[Json, list[str], dict[str, list[Json]], list[Attr], str]] = []
    for kind in ("Request", "Response"):
        path = json_dir / f"{api}{kind}.json"
        if not path.exists():
            path = EXTRA_JSON_DIR / f"{api}{kind}.json"
        data, history = load(path)
        assert data["name"] == api + kind
        common = {s["name"]: s["fields"] for s in data.get("commonStructs", [])}
        attrs = builder.attributes(data["name"], data["fields"], common)
        msgs.append((data, history, common, attrs, path.name))

    req = msgs[0][0]
    flex = req["flexibleVersions"]
    first_flex = "never flexible" if flex == "none" else f"flexible from {flex.rstrip('+')}"
    out = [
        f"# Generated by protocol/tools/generate_messages.py from Kafka 4.3's {msgs[0][4]} and",
        f"# {msgs[1][4]} (Apache License 2.0). Do not edit: change the generator and re-run it.",
        f'"""{api} (API key {req["apiKey"]}): valid versions {req["validVersions"]}, {first_flex}.',
    ]
    for data, history, *_rest in msgs:
        if history:
            out.append("")
            out.append(f"{data['name']}:")
            out.extend(("    " + h).rstrip() for h in history)
    out.append('"""')
    # structs first (innermost first), then the two messages
    body: list[str] = []
    for name in builder.order:
        body += dataclass_source(builder.structs[name], "")
    for data, _history, _common, attrs, _ in msgs:
        sd = StructDef(data["name"], data["fields"], attrs=attrs)
        body += dataclass_source(sd, f"{api} {data['type']}, versions {data['validVersions']}.")
    for data, _history, common, _attrs, _ in msgs:
        const = data["type"].upper()
        body += [
            "",
            "",
            (
                f"{const} = Message({data['name']}, api_key={data['apiKey']}, kind={data['type']!r}, "
                f"valid={data['validVersions']!r}, flexible={data['flexibleVersions']!r}, fields=("
            ),
        ]
        body += builder.table(data["name"], data["fields"], common, 4)
        body.append("))")
    out += ["", "from __future__ import annotations", "", *import_lines("\n".join(body))]
    out += ["", f"API_KEY = {req['apiKey']}"]
    out += body
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json-dir", type=Path, default=None)
    ap.add_argument("--check", action="store_true", help="fail if a generated module is out of date")
    args = ap.parse_args(argv)
    json_dir = args.json_dir or default_json_dir()
    stale = []
    for api, module in APIS.items():
        src = generate(api, json_dir)
        target = MESSAGES_DIR / f"{module}.py"
        if args.check:
            if not target.exists() or target.read_text() != src:
                stale.append(target.name)
        else:
            target.write_text(src)
    if stale:
        print("stale:", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
