"""The garbage collector's policy for a `kgc serve` process (a process that embeds kgc keeps its own).

CPython starts a full collection once the objects promoted to its oldest generation since the last
one exceed a quarter of that generation. A server with thousands of connections promotes every
request's waiting coroutines (they live until the connection's next request, seconds later) and
they die in the oldest generation soon after: the counter grows while the heap does not, and with
10,000 members full collections ran every ~2 s, each walking the whole heap (most of the server's
CPU and pauses of 0.3-2 s, bench/soak_bench.py). So here: what is alive once the server serves is
frozen (modules, loaded state: never walked again) and automatic full collections are off.
`govern` then collects the oldest generation every 10 minutes and freezes what survives (cyclic
garbage made since the last one is freed; the frozen objects are not walked, so each of these
pauses only for what the last 10 minutes left alive), and walks everything, the frozen objects
too, when the process has really grown (resident memory up by a quarter and at least 32 MiB since
the last such walk, looked at every 10 s: one read of /proc, where counting the oldest
generation's objects would itself walk them): frozen objects that became cyclic garbage are freed
there, so they cost memory only until it shows. The young generations keep CPython's thresholds.
"""

from __future__ import annotations

import gc
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

import trio

NO_AUTOMATIC_FULL = 1 << 30  # gen-1 collections between automatic full ones: never, in practice


@dataclass(frozen=True, slots=True)
class GcPolicy:
    check_every_s: float = 10.0
    growth: float = 1.25  # CPython's own ratio, applied to what the process really holds
    min_growth_bytes: int = 32 << 20  # a small process's few megabytes are not worth a collection
    collect_every_s: float = 600.0


def install() -> None:
    """Freeze what is alive now and turn automatic full collections off: before start-up (the
    modules; a load of __consumer_offsets then runs no full collection) and once serving (what
    the load built). No collection first: it would cost ~50 ms for a few kilobytes of garbage."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """The process's resident memory now (Linux); elsewhere its peak, which also grows with it."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def periodic_collection() -> None:
    """The oldest generation without the frozen objects (what lived on since the last freeze),
    then freeze the survivors: a pause for what is new, not for the whole heap."""
    gc.collect(2)
    gc.freeze()


def full_collection() -> None:
    """Everything, the frozen objects included (a frozen group deleted since, in a reference
    cycle, is freed here and not never), then freeze the survivors again."""
    gc.unfreeze()
    gc.collect(2)
    gc.freeze()


def grown(size: int, size_after_last_full: int, policy: GcPolicy) -> bool:
    """Has the process grown enough since the last full collection to walk everything again?"""
    return size > size_after_last_full * policy.growth and size - size_after_last_full >= policy.min_growth_bytes


async def govern(
    policy: GcPolicy = GcPolicy(),
    *,
    measure: Callable[[], int] = resident_bytes,
    periodic: Callable[[], None] = periodic_collection,
    full: Callable[[], None] = full_collection,
) -> None:
    """Run a full collection when the process has `grown`, and a periodic one when
    `collect_every_s` passed without any, for ever (a task of the serving process)."""
    size_after_full, last = measure(), trio.current_time()
    while True:
        await trio.sleep(policy.check_every_s)
        if grown(measure(), size_after_full, policy):
            full()
            size_after_full, last = measure(), trio.current_time()
        elif trio.current_time() - last >= policy.collect_every_s:
            periodic()
            last = trio.current_time()
