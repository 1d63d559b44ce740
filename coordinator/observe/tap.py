"""The tap: what the transcript and the metrics see of a running server, wired in one place.

`open_tap(config)` returns None when neither `transcript.file` nor `metrics.port` is set, and
then nothing on the request path changes (dispatch checks for the tap once per request).
Otherwise it registers itself as the state-transition observer for the server task and every
task started after it, and `handle` wraps each handler: cause named, reasons collected, request,
response and latency recorded. The __consumer_offsets writer reports to it as its observer
(records written, durability waits, cleaning rounds). Under clock.mode=manual `waits` is set
(control/waits.py): after a group's transition and after each request about it, the transcript
also says which timers the group now waits on and how far to advance the clock (a `waiting`
event, written when they change).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from coordinator.observe import reasons
from coordinator.observe.logs import get_logger
from coordinator.observe.transcript import RecordFields, Transcript, group_ids
from protocol.api import api_name
from protocol.codec import decode_response

_log = get_logger("tap")


class Tap:
    def __init__(self, transcript: Transcript | None, metrics: Any | None) -> None:
        self.transcript = transcript
        self.metrics = metrics
        self.waits: Callable[[str], list[Any]] | None = None  # group id -> TimerWaits (manual clock)
        self._waits_said: dict[str, list[Any]] = {}
        self._waits_due: set[str] = set()  # groups that moved since their waits were last looked at

    async def handle(self, handler: Callable[[Any, Any], Awaitable[Any]], ctx: Any, request: Any) -> Any:
        h = ctx.header
        name = api_name(h.api_key)
        reasons.because_request(name, ctx.client_id, request)
        if self.transcript is not None:
            self._safely(self.transcript.request, ctx, request)
        start = time.perf_counter()
        with reasons.collecting() as explained:
            response = await handler(ctx, request)
        elapsed = time.perf_counter() - start
        self._safely(self._record, ctx, request, response, explained, name, elapsed)
        if self.waits is not None and self.transcript is not None:  # the request's operation is done
            for group_id in group_ids(request):
                self._safely(self._write_waits, group_id)
        return response

    def _record(
        self, ctx: Any, request: Any, response: Any, explained: list[tuple[int, str]], name: str, elapsed: float
    ) -> None:
        h = ctx.header
        decoded = response
        if isinstance(response, bytes):  # a handler's pre-encoded body (ApiVersions)
            decoded = decode_response(h.api_key, h.api_version, response)
        if self.metrics is not None:
            self.metrics.request(name, elapsed, decoded)
        if self.transcript is not None:
            self.transcript.response(ctx, request, decoded, explained, elapsed * 1000)

    def _safely(self, record: Callable[..., None], *args: Any) -> None:
        """Seeing inside must never break the service: a failure is logged, the request served."""
        try:
            record(*args)
        except Exception:
            _log.exception("transcript/metrics failed to record an event")

    def transition(self, group_id: str, old: str, new: str, generation: int, reason: str | None) -> None:
        if self.transcript is not None:
            self._safely(self.transcript.transition, group_id, old, new, generation, reason)
            if self.waits is not None:  # once the operation that moved the group has set its timers
                if not self._waits_due:
                    trio.lowlevel.spawn_system_task(self._say_waits)
                self._waits_due.add(group_id)
        if self.metrics is not None:
            self._safely(self.metrics.transition, old, new)

    async def _say_waits(self) -> None:
        self.flush_waits()

    def flush_waits(self) -> None:
        """Write the waits of the groups that moved (also called before a manual clock moves, so
        they are said before a timer that fires changes them)."""
        while self._waits_due:
            self._safely(self._write_waits, self._waits_due.pop())

    def _write_waits(self, group_id: str) -> None:
        assert self.waits is not None and self.transcript is not None
        waits = [dataclasses.asdict(w) for w in self.waits(group_id)]
        if waits == self._waits_said.get(group_id, []):
            return
        self._waits_said[group_id] = waits
        if waits:
            self.transcript.write({"type": "waiting", "group": group_id, "waits": waits}, True)

    def transaction(
        self, transactional_id: str, old: str, new: str, producer_id: int, producer_epoch: int, reason: str | None
    ) -> None:
        """A transactional id changed state (txn/shard.py replay): the transcript says why."""
        if self.transcript is not None:
            self._safely(
                self.transcript.write,
                {
                    "type": "transaction",
                    "transactional_id": transactional_id,
                    "from": old,
                    "to": new,
                    "producer_id": producer_id,
                    "producer_epoch": producer_epoch,
                    "reason": reason,
                },
                True,
            )

    def records(self, partition: int, base_offset: int, records: list[Any]) -> None:
        if self.transcript is not None:
            self._safely(self.transcript.records, partition, base_offset, records)
        if self.metrics is not None:
            self._safely(self.metrics.records, len(records))

    def leader_changed(self, change: Any) -> None:
        """A partition's leader moved (cluster/controller.py): the transcript says why."""
        if self.transcript is not None:
            self._safely(
                self.transcript.write,
                {
                    "type": "leader",
                    "topic": change.topic,
                    "partition": change.partition,
                    "from": change.old_leader,
                    "to": change.new_leader,
                    "epoch": change.epoch,
                    "reason": change.cause,
                },
                True,
            )

    def closed(self, connection_id: int, host: str, reason: str) -> None:
        if self.transcript is not None:
            self._safely(
                self.transcript.write,
                {"type": "disconnect", "conn": connection_id, "host": host, "reason": reason},
                True,
            )

    def authenticated(
        self, connection_id: int, host: str, principal: str, mechanism: str, reauthentication: bool, lifetime_ms: int
    ) -> None:
        """A connection authenticated (SASL, or a client certificate: mechanism "SSL")."""
        if self.transcript is not None:
            event = {
                "type": "authenticated",
                "conn": connection_id,
                "host": host,
                "principal": principal,
                "mechanism": mechanism,
                "reauthentication": reauthentication,
                "session_lifetime_ms": lifetime_ms,
            }
            self._safely(self.transcript.write, event, True)

    def sasl(
        self, connection_id: int, host: str, api: str, version: int, error: int, mechanism: str | None, reauth: bool
    ) -> None:
        """One SaslHandshake or SaslAuthenticate answered while authenticating (never its tokens)."""
        if self.transcript is not None:
            from coordinator.observe.transcript import error_name

            event = {
                "type": "sasl",
                "conn": connection_id,
                "host": host,
                "api": api,
                "version": version,
                "mechanism": mechanism,
                "reauthentication": reauth,
                "error": error_name(error) if error else None,
            }
            self._safely(self.transcript.write, event, True)

    def durable_wait(self, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.durable_wait(seconds)

    def cleaned(self, partition: int, stats: Any) -> None:
        if self.metrics is not None:
            self._safely(self.metrics.cleaned, partition, stats)

    def close(self) -> None:
        if self.transcript is not None:
            self.transcript.close()


def open_tap(config: Any, record_fields: RecordFields) -> Tap | None:
    path = config.transcript_file
    if not path and config.metrics_port < 0:
        return None
    metrics = None
    if config.metrics_port >= 0:
        from coordinator.observe.metrics import Metrics  # prometheus_client only when asked for

        metrics = Metrics()
    tap = Tap(Transcript(path, record_fields) if path else None, metrics)
    reasons.observe(tap)
    return tap
