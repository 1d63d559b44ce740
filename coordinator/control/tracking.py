"""RequestLog: the last N requests each broker answered, for GET /v1/requests and `.requests()`.

Recording appends one tuple to a fixed-size ring (the decoded request and response objects are
kept as they are); JSON is rendered only when someone reads a page, with the transcript's
renderer. Every entry has a cursor (its sequence number since start); cursors keep counting
across wrap-around and `clear()`, so a reader that fell behind is told how many it missed
instead of silently skipping them. Cost: the ring holds references, so capacity bounds memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.control.errors import bad_request
from coordinator.control.request_fields import API_NAMES, api_key_of, request_groups
from coordinator.observe.transcript import error_codes, error_name, to_json
from protocol.codec import decode_response
from protocol.errors import DecodeError

# One entry: (cursor, api_key, version, broker, connection_id, client_id, received_ms,
#             answered_ms, request, response, fault_id)
Entry = tuple[int, int, int, int, int, str, int, "int | None", Any, Any, "int | None"]


@dataclass(frozen=True, slots=True)
class RequestsPage:
    next: int  # pass as `since` to read on from here
    missed: int  # entries after `since` that the ring no longer holds
    requests: list[dict[str, Any]]


class RequestLog:
    def __init__(self, capacity: int = 1000) -> None:
        if capacity < 0:
            raise ValueError("capacity must be 0 (tracking off) or more")
        self.capacity = capacity
        self.enabled = capacity > 0  # control.requests.max=0: nothing is kept, the hook skips it
        self._ring: list[Entry | None] = [None] * capacity
        self._next = 0  # cursor of the next entry recorded
        self._oldest = 0  # cursor of the oldest entry still held

    @property
    def next_cursor(self) -> int:
        return self._next

    def record(
        self,
        api_key: int,
        version: int,
        broker: int,
        connection_id: int,
        client_id: str,
        received_ms: int,
        answered_ms: int | None,
        request: Any,
        response: Any,
        fault_id: int | None = None,
    ) -> None:
        """One answered (or dropped: answered_ms None) request. A tuple into the ring, nothing else."""
        if not self.enabled:
            return
        cursor = self._next
        self._ring[cursor % self.capacity] = (
            cursor,
            api_key,
            version,
            broker,
            connection_id,
            client_id,
            received_ms,
            answered_ms,
            request,
            response,
            fault_id,
        )
        self._next = cursor + 1
        if cursor - self._oldest >= self.capacity:
            self._oldest = cursor - self.capacity + 1

    def clear(self) -> None:
        """Forget what is held; cursors go on counting."""
        self._ring = [None] * self.capacity
        self._oldest = self._next

    def page(
        self, since: int = 0, api: str | int | None = None, group: str | None = None, limit: int = 100
    ) -> RequestsPage:
        """Entries from cursor `since` on that match the filters, at most `limit`, oldest first."""
        if since < 0 or since > self._next:
            raise bad_request(f"cursor {since} is outside 0..{self._next}")
        if limit < 1:
            raise bad_request("limit must be at least 1")
        api_key = None if api is None else api_key_of(api)
        start = max(since, self._oldest)
        out: list[dict[str, Any]] = []
        cursor = start
        while cursor < self._next and len(out) < limit:
            entry = self._ring[cursor % self.capacity]
            cursor += 1
            if entry is None:
                continue
            if api_key is not None and entry[1] != api_key:
                continue
            if group is not None and group not in request_groups(entry[8]):
                continue
            out.append(render(entry))
        return RequestsPage(cursor, start - since, out)


def render(entry: Entry) -> dict[str, Any]:
    """One entry as JSON (the request and response through the transcript's renderer)."""
    cursor, api_key, version, broker, connection_id, client_id, received, answered, request, response, fault = entry
    if isinstance(response, (bytes, bytearray)):  # a handler's pre-encoded body: decode it for reading
        try:
            response = decode_response(api_key, version, bytes(response))
        except DecodeError:
            pass
    groups = request_groups(request)
    codes = error_codes(response) if response is not None and not isinstance(response, bytes) else {}
    return {
        "cursor": cursor,
        "api": API_NAMES.get(api_key, str(api_key)),
        "api_key": api_key,
        "version": version,
        "broker": broker,
        "connection": connection_id,
        "client_id": client_id,
        "group": groups[0] if groups else None,
        "errors": [{"code": code, "name": error_name(code), "message": message} for code, message in codes.items()],
        "received_ms": received,
        "answered_ms": answered,
        "fault": fault,
        "request": to_json(request),
        "response": None if response is None else to_json(response),
    }
