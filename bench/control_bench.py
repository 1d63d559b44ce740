"""Benchmark: the per-request cost of fault rules (coordinator/control/faults.py).

Measures, per OffsetCommit request, what the dispatcher pays:
  - no rule: the `rules.active` check alone (what it does before anything else);
  - no rule, calling match() anyway (building the RequestInfo too);
  - 100 rules on other APIs (the index has no entry for OffsetCommit);
  - 100 OffsetCommit rules for other groups (each evaluated, none matches);
  - 100 rules for any API naming other client ids;
  - and, for scale, recording one entry in the request log (tracking.RequestLog.record);
  - the whole hook (control/hook.py ControlHook.handle) around a handler that answers at once,
    with no rule, minus the same handler awaited directly: what turning control on costs a
    request in process (the rule check, the cause for transitions, two clock reads, tracking).
Prints microseconds per request (best of --repeat runs of --n requests); figures only.

    .venv/bin/python bench/control_bench.py --n 200000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import trio

from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultRules, RequestInfo
from coordinator.control.hook import ControlHook
from coordinator.control.tracking import RequestLog
from coordinator.runtime.clock import FakeClock, TrioClock
from protocol.api import ApiKey
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic

REQUEST = OffsetCommitRequest(
    group_id="bench",
    member_id="m",
    topics=[
        OffsetCommitRequestTopic(
            name="t", partitions=[OffsetCommitRequestPartition(partition_index=p) for p in range(4)]
        )
    ],
)
KEY = int(ApiKey.OFFSET_COMMIT)


def per_request_us(step: Callable[[], object], n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def dispatcher_step(rules: FaultRules) -> Callable[[], object]:
    """What the dispatcher does per request: the check, then (only with rules) info + match."""

    def step() -> object:
        if rules.active:
            return rules.match(RequestInfo(KEY, 8, 0, "client", 1, REQUEST))
        return None

    return step


def hook_overhead_us(n: int, repeat: int, tracked: int = 1000) -> tuple[float, float]:
    """(direct, through the hook) µs per request for a handler that answers at once."""

    async def handler(ctx: object, request: object) -> object:
        return request

    async def run() -> tuple[float, float]:
        wall = TrioClock()
        hook = ControlHook(FaultRules(wall), RequestLog(tracked), wall, lambda group: None, lambda ref: None, None)
        ctx = _Ctx()
        best_direct = best_hook = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(n):
                await handler(ctx, REQUEST)
            best_direct = min(best_direct, time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(n):
                await hook.handle(handler, ctx, REQUEST)  # type: ignore[arg-type]
            best_hook = min(best_hook, time.perf_counter() - start)
        return best_direct / n * 1e6, best_hook / n * 1e6

    return trio.run(run)


class _Header:
    api_key, api_version = KEY, 8


class _Broker:
    node_id = 0


class _Ctx:
    header, broker, connection_id, client_id = _Header(), _Broker(), 1, "client"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    clock = FakeClock(0)

    empty = FaultRules(clock)
    cases: list[tuple[str, Callable[[], object]]] = [
        ("no rule (rules.active check)", dispatcher_step(empty)),
        ("no rule, match() called anyway", lambda: empty.match(RequestInfo(KEY, 8, 0, "client", 1, REQUEST))),
    ]
    other_apis = FaultRules(clock)
    for i in range(100):
        other_apis.add(FaultSpec(api="Produce" if i % 2 else "Fetch", delay_ms=1))
    cases.append(("100 rules on other APIs", dispatcher_step(other_apis)))
    other_groups = FaultRules(clock)
    for i in range(100):
        other_groups.add(FaultSpec(api="OffsetCommit", group=f"group-{i}", error="NOT_COORDINATOR"))
    cases.append(("100 OffsetCommit rules, other groups", dispatcher_step(other_groups)))
    other_clients = FaultRules(clock)
    for i in range(100):
        other_clients.add(FaultSpec(client_id=f"client-{i}", delay_ms=1))
    cases.append(("100 any-API rules, other client ids", dispatcher_step(other_clients)))

    log = RequestLog(1000)
    cases.append(("request log: record one entry", lambda: log.record(KEY, 8, 0, 1, "client", 0, 1, REQUEST, None)))

    print(f"fault rules: per-request cost, best of {args.repeat} x {args.n} OffsetCommit requests")
    for name, step in cases:
        print(f"  {name:<40} {per_request_us(step, args.n, args.repeat):8.3f} us")
    for label, tracked in (("the whole hook, no rule", 1000), ("the hook, no rule, tracking off", 0)):
        direct, hooked = hook_overhead_us(args.n, args.repeat, tracked)
        print(
            f"  {label:<40} {hooked - direct:8.3f} us   (minus the handler awaited directly: {direct:.3f} us"
            f" vs {hooked:.3f} us)"
        )
    assert all(
        rules.match(RequestInfo(KEY, 8, 0, "client", 1, REQUEST)) is None
        for rules in (empty, other_apis, other_groups, other_clients)
    )


if __name__ == "__main__":
    main()
