"""`kgc transcript` as text: one line per event of a transcript file.

Time is relative to the first shown event: `->` a request (who sent it and the parts that matter:
the group's, or topic-partitions with offsets and byte counts on the data path), `<-` its response
(result, or each error with the reason the coordinator recorded), `==` a state transition and its
cause, `++` a record written to __consumer_offsets, `xx` a connection closed and why, `>>` a
partition's leader (a group coordinator, for __consumer_offsets) moving and why, `..` a group
waiting for a timer of a manual clock (and any other event, by its fields). Member ids are
shortened to `<client>-<first 8 of the uuid>`. The command itself is transcript_cli.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TextIO

from coordinator.tools.share_render import SHARE_APIS, share_request_text, share_response_text
from coordinator.tools.transcript_events import Selection, malformed, numbered

_UUID_TAIL = re.compile(r"-([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def short(member_id: str | None) -> str:
    if not member_id:
        return "-"
    return _UUID_TAIL.sub(lambda m: "-" + m.group(1), member_id)


def _partitions(assigned: list[dict[str, Any]]) -> str:
    return " ".join(f"{tp['topic']}({','.join(str(p) for p in tp['partitions'])})" for tp in assigned) or "nothing"


def _assignment(blob: Any) -> str:
    if isinstance(blob, dict) and "assignment" in blob:
        return _partitions(blob["assignment"]["assigned_partitions"])
    return "(opaque)" if blob else "nothing"


_TIMESTAMPS = {-1: "latest", -2: "earliest", -3: "max timestamp", -4: "earliest local", -5: "latest tiered"}


def _tp(p: dict[str, Any]) -> str:
    return f"{p['topic']}-{p['partition']}"


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _when(timestamp: int | None) -> str:
    return "?" if timestamp is None else _TIMESTAMPS.get(timestamp, f"time {timestamp}")


def data_request_text(api: str, partitions: list[dict[str, Any]]) -> str:
    if api in SHARE_APIS:
        return share_request_text(partitions)
    if api == "Produce":
        return ", ".join(f"{_tp(p)}: {_count(p['records'], 'record')}, {p['bytes']} bytes" for p in partitions)
    if api == "Fetch":
        return ", ".join(f"{_tp(p)} from offset {p['offset']}" for p in partitions) or "(session: no changes)"
    return ", ".join(f"{_tp(p)} at {_when(p['timestamp'])}" for p in partitions)


def data_response_text(api: str, partitions: list[dict[str, Any]]) -> str:
    if api in SHARE_APIS:
        return share_response_text(partitions)

    def one(p: dict[str, Any]) -> str:
        if p.get("error"):
            return f"{_tp(p)}: {p['error']}"
        if api == "Produce":
            return f"{_tp(p)} at base offset {p['base_offset']}"
        if api == "Fetch":
            got = f"{_count(p['records'], 'record')}, {p['bytes']} bytes" if p["bytes"] else "nothing new"
            return f"{_tp(p)}: {got}, high watermark {p['high_watermark']}"
        return f"{_tp(p)}: {_when(p['timestamp'])} -> offset {p['offset']}"

    return "; ".join(one(p) for p in partitions) or "(session: no changes)"


def request_text(api: str, body: dict[str, Any], partitions: list[dict[str, Any]] | None = None) -> str:
    if partitions is not None:
        return data_request_text(api, partitions)
    member = short(body.get("member_id"))
    if api == "JoinGroup":
        topics = sorted(
            {
                t
                for p in body["protocols"]
                for t in (
                    p["metadata"].get("subscription", {}).get("topics", []) if isinstance(p["metadata"], dict) else []
                )
            }
        )
        return (
            f"member {member}, protocols {[p['name'] for p in body['protocols']]}, topics {topics}, "
            f"session {body['session_timeout_ms']} ms"
        )
    if api == "SyncGroup":
        given = "; ".join(f"{short(a['member_id'])}: {_assignment(a['assignment'])}" for a in body["assignments"])
        return f"member {member}, generation {body['generation_id']}" + (f", assigns {given}" if given else "")
    if api == "Heartbeat":
        return f"member {member}, generation {body['generation_id']}"
    if api == "FindCoordinator":
        return f"where is group {(body.get('coordinator_keys') or [body.get('key')])[0]!r}?"
    if api == "OffsetFetch":
        groups = body.get("groups") or [body]
        topics = groups[0].get("topics")
        return (
            "all committed offsets"
            if topics is None
            else "offsets of " + ", ".join(f"{_topic(t)}{t.get('partition_indexes', '')}" for t in topics)
        )
    if api == "LeaveGroup":
        leaving = [short(m["member_id"]) for m in body.get("members") or []] or [member]
        return f"members {', '.join(leaving)}"
    if api == "OffsetCommit":
        offsets = ", ".join(
            f"{_topic(t)}-{p['partition_index']}={p['committed_offset']}"
            for t in body["topics"]
            for p in t["partitions"]
        )
        return f"member {member}, generation {body['generation_id_or_member_epoch']}: {offsets}"
    return ""


def _topic(t: dict[str, Any]) -> str:
    """A topic as a request names it: OffsetCommit/OffsetFetch v10 by id only."""
    return t.get("name") or f"topic id {t.get('topic_id')}"


def response_text(api: str, event: dict[str, Any]) -> str:
    if event["errors"]:
        return "; ".join(f"{e['error']}: {e['reason'] or '(no reason recorded)'}" for e in event["errors"])
    if event.get("partitions") is not None:
        return data_response_text(api, event["partitions"])
    body = event["body"] or {}
    if api == "JoinGroup":
        members = f", members {[short(m['member_id']) for m in body['members']]}" if body["members"] else ""
        return (
            f"generation {body['generation_id']}, protocol {body['protocol_name']}, "
            f"leader {short(body['leader'])}, you are {short(body['member_id'])}{members}"
        )
    if api == "SyncGroup":
        return f"your assignment: {_assignment(body['assignment'])}"
    if api == "FindCoordinator":
        node = (body.get("coordinators") or [body])[0]
        return f"coordinator is node {node['node_id']} at {node['host']}:{node['port']}"
    if api == "OffsetFetch":
        topics = body["groups"][0]["topics"] if body.get("groups") else body.get("topics", [])
        found = [
            f"{_topic(t)}-{p['partition_index']}={p['committed_offset']}"
            for t in topics
            for p in t["partitions"]
            if p["committed_offset"] >= 0
        ]
        return "committed " + ", ".join(found) if found else "nothing committed yet"
    return "ok"


# Kafka's CoordinatorRecordType ids of the records beside offsets (0, 1) and classic groups (2).
_RECORDS = {
    "3": "consumer group metadata",
    "4": "consumer group partition metadata",
    "5": "consumer group member",
    "6": "consumer group target assignment",
    "7": "consumer group target assignment of member",
    "8": "consumer group current assignment of member",
    "9": "share group partition metadata",
    "10": "share group member",
    "11": "share group metadata",
    "12": "share group target assignment",
    "13": "share group target assignment of member",
    "14": "share group current assignment of member",
    "15": "consumer group regular expression",
    "16": "share group state partition metadata",
}


def record_text(event: dict[str, Any]) -> str:
    where = f"{event['topic']}-{event['partition']}@{event['offset']}"
    key, value = event["key"], event["value"]
    data = key.get("data", {}) if isinstance(key, dict) else {}
    kind = str(key.get("type")) if isinstance(key, dict) else None
    if kind in _RECORDS:  # a consumer or share group's record: its name, member and plain fields
        member = f" {short(data['memberId'])}" if data.get("memberId") else ""
        if not isinstance(value, dict):
            return f"{where} tombstone: {_RECORDS[kind]}{member} deleted"
        fields = ", ".join(f"{k} {v}" for k, v in value["data"].items() if isinstance(v, (int, str)) and v != "")
        return f"{where} {_RECORDS[kind]}{member}" + (f": {fields}" if fields else "")
    if value == "<DELETE>":
        what = f"offset {data['topic']}-{data['partition']}" if "topic" in data else "group"
        return f"{where} tombstone: {what} deleted"
    if not isinstance(value, dict):
        return f"{where} {key}"
    v = value["data"]
    if "topic" in data:
        return f"{where} offset {data['topic']}-{data['partition']} = {v['offset']}"
    members = (
        "; ".join(
            f"{short(m['memberId'])}: "
            + (_partitions(m["assignment"]["assignedPartitions"]) if isinstance(m["assignment"], dict) else "nothing")
            for m in v["members"]
        )
        or "no members"
    )
    return (
        f"{where} group metadata: generation {v['generation']}, protocol {v['protocol']}, "
        f"leader {short(v['leader'])}, {members}"
    ).replace("protocol None", "no protocol")


def waits_text(waits: list[dict[str, Any]]) -> str:
    """Timers of a manual clock a group waits for: `initial rebalance delay: advance >= 100 ms`."""
    return "; ".join(
        f"{w['timer']}{' of ' + short(w['member']) if w.get('member') else ''}: advance >= {w['advance_ms']} ms"
        for w in waits
    )


def note_text(event: dict[str, Any]) -> str:
    """An event without a shape of its own in words: a wait on the manual clock, or its fields."""
    if event["type"] == "waiting":
        return f"waiting for the clock (clock.mode=manual): {waits_text(event['waits'])}"
    fields = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.items() if k not in ("ts", "type", "group")
    )
    return f"{event['type']}: {fields}"


def line(e: dict[str, Any], start: int) -> str:
    """One event as the text timeline shows it, at its time since `start` (ms)."""
    t = f"{(e['ts'] - start) / 1000:8.3f}"
    kind = e["type"]
    if kind == "request":
        asked = request_text(e["api"], e["body"], e.get("partitions"))
        text = f"{e['client']:<12} -> {e['api']} v{e['version']}  {asked}"
    elif kind == "response":
        text = f"{e['client']:<12} <- {e['api']}  {response_text(e['api'], e)}"
    elif kind == "disconnect":
        text = f"{'[conn ' + str(e['conn']) + ']':<12} xx connection closed: {e['reason']}"
    elif kind == "authenticated":
        again = "re-authenticated" if e["reauthentication"] else "authenticated"
        text = f"{'[conn ' + str(e['conn']) + ']':<12} ** {again} as {e['principal']} ({e['mechanism']})"
    elif kind == "sasl":
        outcome = e["error"] or "ok"
        text = f"{'[conn ' + str(e['conn']) + ']':<12} ** {e['api']} v{e['version']} {e['mechanism'] or ''}: {outcome}"
    elif kind == "transition":
        text = (
            f"{'[' + e['group'] + ']':<12} == {e['from']} -> {e['to']} (generation {e['generation']})"
            f"  because {e['reason'] or 'unknown'}"
        )
    elif kind == "transaction":
        text = (
            f"{'[txn ' + e['transactional_id'] + ']':<12} == {e['from']} -> {e['to']} (producer "
            f"{e['producer_id']} epoch {e['producer_epoch']})  because {e['reason'] or 'unknown'}"
        )
    elif kind == "leader":
        to = f"broker {e['to']}" if e["to"] >= 0 else "no leader"
        text = (
            f"{'[cluster]':<12} >> {e['topic']}-{e['partition']} leader broker {e['from']} -> {to} "
            f"(epoch {e['epoch']})  because {e['reason']}"
        )
    elif kind == "record":
        text = f"{'[log]':<12} ++ {record_text(e)}"
    else:
        who = f"[{e['group']}]" if isinstance(e.get("group"), str) else f"[{kind}]"
        text = f"{who:<12} .. {note_text(e)}"
    return f"{t}  {short(text).rstrip()}"


def render(lines: Iterable[str], group: str | Selection | None, out: TextIO, source: str = "transcript") -> int:
    """Print the selected events of `lines`; 0 if any was shown, else 1. Raises BadTranscript."""
    selection = group if isinstance(group, Selection) else Selection(group)
    start: int | None = None
    shown = 0
    for number, e in numbered(lines, source):
        try:
            if not selection.keep(e):
                continue
            start = e["ts"] if start is None else start
            text = line(e, start)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise malformed(source, number, e, exc) from None
        print(text, file=out)
        shown += 1
    out.flush()  # a closed pipe (`| head`) is raised here, inside the caller's handler
    return 0 if shown else 1
