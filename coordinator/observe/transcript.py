"""The protocol transcript: one JSON line per request, response, state transition and record.

`kgc serve --transcript FILE` (setting `transcript.file`) opens one `Transcript` per server.
Requests and responses are written fully decoded (dataclasses -> JSON objects; consumer-protocol
subscriptions and assignments decoded; other bytes base64, record batches by size only). Every
non-zero error code in a response is listed under "errors" with the reason the coordinator
recorded for it (coordinator/reasons.py), else the response's own error message, else null. Records are shown as
`kgc dump --offsets-decoder` shows them. Lines are flushed as written, so the file can be tailed.
Produce, Fetch and ListOffsets events also carry "partitions": one summary per topic-partition
(topic by name even where the request names it by id; records and bytes, offsets, high
watermark). Nothing here runs unless a transcript is configured.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coordinator.observe.share_summary import share_request, share_response
from coordinator.observe.telemetry_summary import push_summary
from protocol.api import ApiKey, api_name
from protocol.consumer_protocol import decode_assignment, decode_subscription
from protocol.errors import DecodeError, ErrorCode
from storage.batch import HEADER_SIZE, decode_header

_SUBSCRIPTIONS = frozenset({"metadata", "member_metadata"})
_ASSIGNMENTS = frozenset({"assignment", "member_assignment"})
_BATCHES = frozenset({"records"})


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


_SCALARS = (str, int, float, bool, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}  # dataclass -> field names (dataclasses.fields is slow)


def _field_names(cls: type) -> tuple[str, ...] | None:
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def to_json(value: Any, field: str = "") -> Any:
    """A decoded protocol object as plain JSON values."""
    if isinstance(value, _SCALARS):
        return value
    names = _field_names(type(value))
    if names is not None:
        return {name: to_json(getattr(value, name), name) for name in names}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _blob(bytes(value), field)
    if isinstance(value, (list, tuple)):
        return [to_json(v, field) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


# Request fields that carry secrets (SASL tokens, SCRAM salted passwords): never written.
_SECRETS = frozenset({"auth_bytes", "salted_password"})


def _blob(blob: bytes, field: str) -> Any:
    if field in _SECRETS:
        return "[hidden]"
    try:
        if field in _SUBSCRIPTIONS and blob:
            return {"subscription": to_json(decode_subscription(blob))}
        if field in _ASSIGNMENTS:
            return {"assignment": to_json(decode_assignment(blob))}
    except DecodeError:
        pass
    if field in _BATCHES:
        return {"record_batch_bytes": len(blob)}
    if field == "metrics":  # PushTelemetry's OTLP payload: summarised under "telemetry"
        return {"telemetry_bytes": len(blob)}
    return base64.b64encode(blob).decode("ascii")


def error_codes(value: Any) -> dict[int, str | None]:
    """Every non-zero `error_code` anywhere in a response, in order, without repeats, with the
    `error_message` Kafka put next to it (None if the struct has none)."""
    found: dict[int, str | None] = {}

    def walk(v: Any) -> None:
        names = _field_names(type(v))
        if names is not None:
            for name in names:
                item = getattr(v, name)
                if name == "error_code":
                    if item and not found.get(item):
                        found[item] = getattr(v, "error_message", None) or None
                elif isinstance(item, list) or _field_names(type(item)) is not None:
                    walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return found


def group_ids(request: Any) -> list[str]:
    """The groups a request is about (to follow one group through a transcript)."""
    ids: list[str] = []
    for name in ("group_id", "groups", "groups_names", "coordinator_keys", "key"):
        value = getattr(request, name, None)
        if name in ("key", "coordinator_keys") and getattr(request, "key_type", 0) != 0:
            continue
        if isinstance(value, str) and value:
            ids.append(value)
        elif isinstance(value, list):
            ids.extend(v if isinstance(v, str) else getattr(v, "group_id", "") for v in value)
    return [g for g in dict.fromkeys(ids) if g]


# -- data-path summaries ----------------------------------------------------------------------------
_DATA_PATH = frozenset(
    {ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE}
)
_SHARE = frozenset({ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE})


def batch_counts(blob: bytes | None) -> tuple[int, int]:
    """(records, bytes) of the RecordBatch v2 run in a Produce or Fetch: the headers' record
    counts, stopping at a torn last batch (a Fetch may end mid-batch, as Kafka's may)."""
    if not blob:
        return 0, 0
    count, pos = 0, 0
    while len(blob) - pos >= HEADER_SIZE:
        header = decode_header(blob, pos)
        if header.size < HEADER_SIZE or pos + header.size > len(blob):
            break
        count += header.records_count
        pos += header.size
    return count, len(blob)


def _topic(ctx: Any, name: str, topic_id: Any) -> str:
    """A topic's name; Fetch v13+ and Produce v13 name it by id, resolved through the registry."""
    if name:
        return name
    topics = getattr(getattr(ctx, "broker", None), "topics", None)
    found = topics.by_id(topic_id) if topics is not None and topic_id is not None else None
    return found.name if found is not None else str(topic_id)


def data_request(ctx: Any, api_key: int, request: Any) -> list[dict[str, Any]]:
    """Per partition: Produce (records, bytes), Fetch (offset), ListOffsets (timestamp asked),
    ShareFetch and ShareAcknowledge (acknowledgements: observe/share_summary.py)."""
    if api_key in _SHARE:
        return share_request(lambda tid: _topic(ctx, "", tid), request)
    if api_key == ApiKey.PRODUCE:
        out = []
        for t in request.topic_data:
            for p in t.partition_data:
                records, size = batch_counts(p.records)
                out.append(
                    {"topic": _topic(ctx, t.name, t.topic_id), "partition": p.index, "records": records, "bytes": size}
                )
        return out
    if api_key == ApiKey.FETCH:
        return [
            {"topic": _topic(ctx, t.topic, t.topic_id), "partition": p.partition, "offset": p.fetch_offset}
            for t in request.topics
            for p in t.partitions
        ]
    return [
        {"topic": t.name, "partition": p.partition_index, "timestamp": p.timestamp}
        for t in request.topics
        for p in t.partitions
    ]


def data_response(ctx: Any, api_key: int, request: Any, response: Any) -> list[dict[str, Any]]:
    """Per partition: Produce (base offset assigned), Fetch (records and bytes returned, high
    watermark), ListOffsets (timestamp asked -> offset); an error by name where there is one."""
    if api_key in _SHARE:
        return share_response(lambda tid: _topic(ctx, "", tid), response, error_name, batch_counts)
    out: list[dict[str, Any]] = []
    if api_key == ApiKey.PRODUCE:
        for t in response.responses:
            for p in t.partition_responses:
                out.append(
                    {
                        "topic": _topic(ctx, t.name, t.topic_id),
                        "partition": p.index,
                        "base_offset": p.base_offset,
                        "error": p.error_code,
                    }
                )
    elif api_key == ApiKey.FETCH:
        for t in response.responses:
            for p in t.partitions:
                records, size = batch_counts(p.records)
                out.append(
                    {
                        "topic": _topic(ctx, t.topic, t.topic_id),
                        "partition": p.partition_index,
                        "records": records,
                        "bytes": size,
                        "high_watermark": p.high_watermark,
                        "error": p.error_code,
                    }
                )
    else:
        asked = {(t.name, p.partition_index): p.timestamp for t in request.topics for p in t.partitions}
        for t in response.topics:
            for p in t.partitions:
                out.append(
                    {
                        "topic": t.name,
                        "partition": p.partition_index,
                        "timestamp": asked.get((t.name, p.partition_index)),
                        "offset": p.offset,
                        "error": p.error_code,
                    }
                )
    for summary in out:
        summary["error"] = error_name(summary["error"]) if summary["error"] else None
    return out


# (offset, key, value) of a record written -> its JSON fields ("group", "key", "value"): the
# coordinator's own renderer, handed in by the composition root (observe/ knows no record types).
RecordFields = Callable[[int, "bytes | None", "bytes | None"], dict[str, Any]]


class Transcript:
    def __init__(
        self, path: str | Path, record_fields: RecordFields, wall_ms: Callable[[], float] = lambda: time.time() * 1000
    ) -> None:
        self.path = Path(path)
        self._record_fields = record_fields
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")
        self._wall_ms = wall_ms

    def write(self, event: dict[str, Any], flush: bool = False) -> None:
        self._file.write(_dumps({"ts": int(self._wall_ms()), **event}) + "\n")
        if flush:  # once per response: the file can be tailed, at one write call per request
            self._file.flush()

    def request(self, ctx: Any, request: Any) -> None:
        h = ctx.header
        self.write(
            {
                "type": "request",
                "conn": ctx.connection_id,
                "client": ctx.client_id,
                "host": ctx.client_host,
                "principal": ctx.principal,
                "api": api_name(h.api_key),
                "version": h.api_version,
                "correlation_id": h.correlation_id,
                "groups": group_ids(request),
                "body": to_json(request),
                **({"partitions": data_request(ctx, h.api_key, request)} if h.api_key in _DATA_PATH else {}),
                **({"telemetry": push_summary(ctx, request)} if h.api_key == ApiKey.PUSH_TELEMETRY else {}),
            }
        )

    def response(
        self, ctx: Any, request: Any, response: Any, reasons: list[tuple[int, str]], elapsed_ms: float
    ) -> None:
        h = ctx.header
        explained: dict[int, str] = {}
        for code, text in reasons:
            explained.setdefault(code, text)  # the first reason for a code is the one that decided it
        # The coordinator's own reason first; else the error message the response carries.
        errors = [
            {"code": code, "error": error_name(code), "reason": explained.get(code) or message}
            for code, message in error_codes(response).items()
        ]
        self.write(
            {
                "type": "response",
                "conn": ctx.connection_id,
                "client": ctx.client_id,
                "api": api_name(h.api_key),
                "version": h.api_version,
                "correlation_id": h.correlation_id,
                "groups": group_ids(request),
                "elapsed_ms": round(elapsed_ms, 3),
                "errors": errors,
                "body": None if response is None else to_json(response),
                **(
                    {"partitions": data_response(ctx, h.api_key, request, response)}
                    if h.api_key in _DATA_PATH and response is not None
                    else {}
                ),
            },
            flush=True,
        )

    def transition(self, group_id: str, old: str, new: str, generation: int, reason: str | None) -> None:
        self.write(
            {
                "type": "transition",
                "group": group_id,
                "from": old,
                "to": new,
                "generation": generation,
                "reason": reason,
            },
            flush=True,
        )

    def records(self, partition: int, base_offset: int, records: list[Any]) -> None:
        for i, r in enumerate(records):
            self.write(
                {
                    "type": "record",
                    "topic": "__consumer_offsets",
                    "partition": partition,
                    "offset": base_offset + i,
                    **self._record_fields(base_offset + i, r.key, r.value),
                }
            )

    def close(self) -> None:
        self._file.close()


_dumps = json.JSONEncoder(ensure_ascii=False).encode
