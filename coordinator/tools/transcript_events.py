"""Reading a transcript file: lines -> events, and the selection `kgc transcript` filters by.

`numbered` yields (line number, event) per non-blank line and raises `BadTranscript` (with the
line number) at the first line that is not a transcript event, so callers can say so in one
line; a half-written last line of a live file is left for later. `Selection`
keeps the events of a group, a member, a client and some APIs. It is stateful: a response is
kept exactly when its request was (matched by connection and correlation id), so a response that
does not name its member still follows it; it must see the events in file order.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from protocol.api import ApiKey

# What coordinator/observe/transcript.py (and the tap's disconnect line) always write per type.
REQUIRED = {
    "request": ("conn", "client", "api", "version", "correlation_id", "body"),
    "response": ("conn", "client", "api", "version", "correlation_id", "errors", "body"),
    "transition": ("group", "from", "to", "generation", "reason"),
    "record": ("topic", "partition", "offset", "key", "value"),
    "disconnect": ("conn", "reason"),
    "authenticated": ("conn", "principal", "mechanism", "reauthentication"),  # TLS/SASL (security)
    "sasl": ("conn", "api", "version", "mechanism", "error"),
    "leader": ("topic", "partition", "from", "to", "epoch", "reason"),
    "transaction": ("transactional_id", "from", "to", "producer_id", "producer_epoch", "reason"),
    "waiting": ("group", "waits"),  # a group waiting for timers of a manual clock
}


class BadTranscript(ValueError):
    """A line that is not a transcript event, or a filter that cannot match anything."""


def api_names() -> list[str]:
    """Every API by the name the transcript uses (`JoinGroup`), as observe.transcript.api_name."""
    return ["".join(part.capitalize() for part in key.name.split("_")) for key in ApiKey]


def numbered(lines: Iterable[str], source: str = "transcript") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, event) for each non-blank line. A last line without its newline that does not
    parse is the server still writing it (the file is live): it ends the events quietly."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            if not line.endswith("\n") and number > 1:
                return
            raise BadTranscript(
                f"{source} line {number} is not JSON: expected a file written by kgc serve --transcript"
            ) from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str) or "ts" not in event:
            raise BadTranscript(
                f"{source} line {number} is not a transcript event (no type or ts): "
                "expected a file written by kgc serve --transcript"
            )
        missing = [name for name in REQUIRED.get(event["type"], ()) if name not in event]
        if missing:
            raise malformed(source, number, event, KeyError(missing[0]))
        yield number, event


def malformed(source: str, number: int, event: dict[str, Any], exc: Exception) -> BadTranscript:
    """The one-line error for an event that lacks what its type promises."""
    what = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
    return BadTranscript(f"{source} line {number}: a {event['type']} event the transcript never writes ({what})")


def member_ids(event: dict[str, Any]) -> list[str]:
    """The member ids a request or response names: its own member id, LeaveGroup's members,
    OffsetFetch v8+'s groups; a JoinGroup response names the id it gave (KIP-394 too)."""
    body = event.get("body")
    if not isinstance(body, dict):
        return []
    ids = [body.get("member_id")]
    if event["type"] == "request":
        ids += [m.get("member_id") for m in body.get("members") or () if isinstance(m, dict)]
        ids += [g.get("member_id") for g in body.get("groups") or () if isinstance(g, dict)]
    return [i for i in ids if isinstance(i, str) and i]


@dataclass
class Selection:
    """What `--group`, `--member` (substring of a member id), `--client` and `--api` keep.

    Requests and responses must match every filter given. A state transition is kept when its
    group matches and its cause names the member, the client and one of the APIs given. Records
    follow --group only, closed connections --client and --member (through their connection);
    under --api, and under --member/--client for records, they are left out."""

    group: str | None = None
    member: str | None = None
    client: str | None = None
    apis: frozenset[str] = frozenset()  # lower case
    _requests: dict[tuple[Any, Any], bool] = field(default_factory=dict, repr=False)
    _conns: dict[Any, bool] = field(default_factory=dict, repr=False)  # conn -> seen matching

    @classmethod
    def of(
        cls, group: str | None = None, member: str | None = None, client: str | None = None, apis: Iterable[str] = ()
    ) -> Selection:
        known = {name.lower(): name for name in api_names()}
        for api in apis:
            if api.lower() not in known:
                close = difflib.get_close_matches(api.lower(), known, n=1)
                hint = f": did you mean {known[close[0]]}?" if close else " (kgc transcript --help)"
                raise BadTranscript(f"no API is called {api!r}{hint}")
        return cls(group, member, client, frozenset(a.lower() for a in apis))

    @property
    def narrowed(self) -> bool:
        return bool(self.member or self.client or self.apis)

    def keep(self, event: dict[str, Any]) -> bool:
        kind = event["type"]
        if kind == "request":
            kept = self._exchange(event)
            self._requests[(event.get("conn"), event.get("correlation_id"))] = kept
            return kept
        if kind == "response":
            asked = self._requests.pop((event.get("conn"), event.get("correlation_id")), None)
            return self._exchange(event) if asked is None else asked
        if kind == "transition":
            return self._transition(event)
        if kind in ("disconnect", "authenticated", "sasl"):
            return self.group is None and not self.apis and self._conns.get(event.get("conn"), not self.narrowed)
        if kind == "leader":  # the cluster moving under everyone: kept unless one client is followed
            return not self.narrowed
        if kind == "transaction":  # a transactional id's state: kept unless a group or a client is followed
            return not self.narrowed and self.group is None
        return not self.narrowed and (
            self.group is None or event.get("group") == self.group or self.group in event.get("groups", ())
        )

    def _exchange(self, event: dict[str, Any]) -> bool:
        if self.group is not None and self.group not in event.get("groups", ()):
            return False
        if self.apis and str(event.get("api", "")).lower() not in self.apis:
            return False
        if self.client is not None and event.get("client") != self.client:
            return False
        if self.member is not None and not any(self.member in m for m in member_ids(event)):
            return False
        if self.narrowed:
            self._conns[event.get("conn")] = True
        return True

    def _transition(self, event: dict[str, Any]) -> bool:
        if self.group is not None and event.get("group") != self.group:
            return False
        cause = event.get("reason") or ""
        if self.apis and cause.split(" ", 1)[0].lower() not in self.apis:
            return False
        if self.client is not None and f"client '{self.client}'" not in cause:
            return False
        return self.member is None or self.member in cause
